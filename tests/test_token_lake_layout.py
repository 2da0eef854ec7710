"""The token lake's part-file layout (ingest/scoring/store.py): what a part file stores, that it reads back
bit for bit, that part files of the older layout read the same, and that a warehouse whose lake mixes both
layouts builds the same marts as one of the older layout alone."""

from __future__ import annotations

import shutil

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.ingest.scoring import store
from predictabase.warehouse import dbt_build, publish

# float32 numbers (the scorer's statistics), with a NULL, a NaN, -0.0, a subnormal and the extremes
F32 = np.array(
    [-1.5, -0.0, -3.4028234663852886e38, -1.401298464324817e-45, np.nan, -2.718281828459045],
    dtype=np.float32,
).astype(np.float64)


def _table(logprob: list, after: list) -> pa.Table:
    n = len(logprob)
    return store.token_table(
        "r1",
        "m-1.5b",
        "ucl",
        {
            "doc_id": ["d1"] * n,
            "token_index": np.arange(n, dtype=np.int32),
            "token_text": [" a"] * n,
            "logprob_nats": logprob,
            "entropy_nats": F32[:n],
            "logprob_word_initial_after_nats": after,
            "topk_logprobs_nats": np.stack([F32[:n], F32[:n]], axis=1),
        },
    )


def _bits(table: pa.Table, column: str) -> list:
    """A float column's values as their 64-bit patterns (NULL: None), so that NaN and -0.0 compare exactly."""
    col = table.column(column)
    if pa.types.is_list(col.type):
        return [None if v is None else [np.float64(x).view(np.uint64) for x in v] for v in col.to_pylist()]
    return [None if v is None else np.float64(v).view(np.uint64) for v in col.to_pylist()]


def test_part_stores_per_token_columns_float32_where_exact(tmp_path):
    logprob = [None, *F32[1:].tolist()]  # a NULL (an unscored token) among float32 numbers
    after = [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]  # decimals: not float32 numbers, kept as double
    table = _table(logprob, after)
    rdir = store.run_dir(tmp_path, "m-1.5b", "ucl", "r1")
    path = store.write_part(rdir, table)
    schema = pq.read_schema(path)
    assert schema.names == list(store.PART_COLUMNS)  # no run_id, model_key, corpus per row
    assert schema.field("logprob_nats").type == pa.float32() and schema.field("entropy_nats").type == pa.float32()
    assert schema.field("topk_logprobs_nats").type == pa.list_(pa.float32())
    assert schema.field("logprob_word_initial_after_nats").type == pa.float64()
    assert schema.field("logprob_word_initial_nats").type == pa.float32()  # all NULL
    assert schema.metadata[store.RUN_METADATA_KEY] == b'{"corpus": "ucl", "model_key": "m-1.5b", "run_id": "r1"}'
    meta = pq.ParquetFile(path).metadata.row_group(0)
    col = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
    assert col["logprob_nats"].encodings == ("RLE", "PLAIN") and col["logprob_nats"].compression == "UNCOMPRESSED"
    assert "BYTE_STREAM_SPLIT" in col["topk_logprobs_nats.list.element"].encodings
    assert col["topk_logprobs_nats.list.element"].compression == "ZSTD"
    assert "RLE_DICTIONARY" in col["token"].encodings and col["token"].compression == "ZSTD"

    back = store.read_part(path)
    assert back.schema == store.SCHEMA
    assert back.column("run_id").to_pylist() == ["r1"] * 6 and back.column("model_key").to_pylist() == ["m-1.5b"] * 6
    assert back.column("corpus").to_pylist() == ["ucl"] * 6
    for c in store.FLOAT_COLUMNS:
        assert _bits(back, c) == _bits(table, c), c
    assert back.drop_columns(list(store.FLOAT_COLUMNS)).equals(table.drop_columns(list(store.FLOAT_COLUMNS)))
    assert store.read_parts(rdir, ["doc_id", "logprob_nats"]).column("logprob_nats").null_count == 1
    assert store.count_rows(rdir) == (1, 6) and store.done_doc_ids(rdir) == {"d1"}


def test_duckdb_reads_float32_back_as_the_same_double(tmp_path):
    table = _table([None, *F32[1:].tolist()], F32.tolist())
    path = store.write_part(store.run_dir(tmp_path, "m-1.5b", "ucl", "r1"), table)
    got = duckdb.sql(
        f"select cast(logprob_nats as double) as x, -cast(logprob_nats as double) / ln(2) as bits "
        f"from read_parquet('{path}') order by token_index"
    ).fetchall()
    want = table.column("logprob_nats").to_pylist()
    for (x, bits), w in zip(got, want):
        if w is None:
            assert x is None
        elif np.isnan(w):
            assert np.isnan(x)
        else:
            assert np.float64(x).view(np.uint64) == np.float64(w).view(np.uint64)
            assert bits == -w / np.log(2)


def test_a_part_holds_one_run_named_by_its_directory(tmp_path):
    table = _table([-1.0, -2.0], [-1.0, -2.0])
    with pytest.raises(ValueError, match="run_id"):
        store.write_part(store.run_dir(tmp_path, "m-1.5b", "ucl", "other"), table)
    mixed = pa.concat_tables([table, table.set_column(0, "run_id", pa.array(["r2", "r2"]))])
    with pytest.raises(ValueError, match="one run: column run_id"):
        store.write_part(tmp_path / "anywhere", mixed)
    # a folder not named model=/corpus=/run=: the run columns come back from the file's metadata
    path = store.write_part(tmp_path / "anywhere", table)
    assert store.read_part(path).column("run_id").to_pylist() == ["r1", "r1"]


def test_migrating_an_older_part_keeps_its_rows(tmp_path):
    table = _table([None, *F32[1:].tolist()], [-0.1] * 6)
    rdir = store.run_dir(tmp_path, "m-1.5b", "ucl", "r1")
    rdir.mkdir(parents=True)
    old = rdir / store.part_name(0)
    pq.write_table(table, old, compression="zstd")  # the older layout: SCHEMA as is
    before = store.read_part(old)
    assert store.migrate_part(old) and not store.migrate_part(old)
    assert pq.read_schema(old).names == list(store.PART_COLUMNS)
    after = store.read_part(old)
    for c in store.SCHEMA.names:
        assert (_bits(after, c) == _bits(before, c)) if c in store.FLOAT_COLUMNS else after[c].equals(before[c]), c


def _rows(db, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_lake_of_both_layouts_builds_the_same_marts(dbt_fixture_built, tmp_path):
    """tests/dbt_fixtures.py's warehouse (part files of the older layout) copied, one part file of every run
    rewritten in the current layout (so a run holds both), rebuilt: every published mart and every row of
    int_token_scores (EXCEPT ALL both ways, floats bit for bit) are those of the build from the older files."""
    from scripts.compare_snapshots import compare
    from tests.test_dbt_marts import SELECT

    fx = dbt_fixture_built
    root = tmp_path / "warehouse"
    shutil.copytree(fx.paths.warehouse, root)
    p = make_paths(root)
    migrated = 0
    for rdir in sorted({part.parent for part in p.token_scores.glob("*/*/*/part-*.parquet")}):
        parts = store.part_files(rdir)
        migrated += store.migrate_part(parts[0])
        assert not store.migrate_part(parts[0])
    assert migrated >= 5
    assert dbt_build(p, select=SELECT) == []
    publish(p)
    assert compare(str(fx.paths.marts), str(p.marts), skip={"snapshot_info"}) == []

    cols = (
        "run_id, model_key, corpus, doc_id, token_index, token_id, token, token_text, char_start, char_end, "
        "logprob_nats, surprisal_nats, surprisal_bits, is_scored, n_chars, n_bytes, rank, entropy_nats, "
        "topk_token_ids, topk_tokens, topk_logprobs_nats, logprob_word_initial_nats, "
        "logprob_word_initial_after_nats, context_tokens"
    )
    with duckdb.connect(":memory:") as con:
        con.execute(f"attach '{fx.paths.duckdb}' as b (read_only)")
        con.execute(f"attach '{p.duckdb}' as a (read_only)")
        n = con.execute("select count(*) from b.intermediate.int_token_scores").fetchone()[0]
        assert n == con.execute("select count(*) from a.intermediate.int_token_scores").fetchone()[0] > 1000
        for x, y in (("a", "b"), ("b", "a")):
            diff = con.execute(
                f"select count(*) from (select {cols} from {x}.intermediate.int_token_scores "
                f"except all select {cols} from {y}.intermediate.int_token_scores)"
            ).fetchone()[0]
            assert diff == 0, (x, y)
        # the incomplete run's rows stay out in both
        runs = {r[0] for r in con.execute("select distinct run_id from a.intermediate.int_token_scores").fetchall()}
        assert runs == {r[0] for r in con.execute("select run_id from a.staging.stg_runs").fetchall()}
