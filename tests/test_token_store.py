"""The token-score store: one schema and one run record, agreeing with what dbt reads and with the
files already written; tables, parts and records (no model needed)."""

from __future__ import annotations

import json
import re
import typing
from dataclasses import fields

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.core.errors import WarehouseError
from predictabase.ingest.scoring import store
from tests.scoring_helpers import IMPORTED_RUN_KEYS, SCORED_RUN_KEYS

# --- what dbt reads --------------------------------------------------------------------------------

# `select_external_or_empty(..., '<glob ending in part-*.parquet or _run.json>', [['name', 'type'], ...])`
_CALL = re.compile(
    r"""select_external_or_empty\(\s*'[^']*'\s*,\s*'[^']*'\s*,\s*(?P<glob>[^\[]*?)\s*,\s*\[(?P<cols>.*?)\]\s*\)""", re.S
)
_PAIR = re.compile(r"""\[\s*'([^']+)'\s*,\s*'([^']+)'\s*\]""")
# columns DuckDB adds to every row of read_parquet/read_json: not in the files (filename=true; the hive
# partitions of a part file's directories model=<key>/corpus=<c>/run=<id>, the run columns store.write_part
# does not store per row)
PSEUDO = {"filename", "model", "run"}


def dbt_texts() -> dict[str, str]:
    files = [
        p
        for pat in ("*.sql", "*.yml", "*.yaml")
        for p in DBT_PROJECT_DIR.rglob(pat)
        if "target" not in p.parts and "dbt_packages" not in p.parts
    ]
    return {str(p.relative_to(DBT_PROJECT_DIR)): p.read_text() for p in sorted(files)}


def dbt_columns(glob_end: str) -> dict[str, dict[str, str]]:
    """file -> {column: DuckDB type} for every typed column list dbt reads from files matching glob_end:
    the staging SQL's column lists, and any `columns:` with `data_type` of a source whose
    external_location reads such files."""
    found: dict[str, dict[str, str]] = {}
    for name, text in dbt_texts().items():
        if name.endswith(".sql"):
            for m in _CALL.finditer(text):
                if glob_end in m.group("glob"):
                    found[f"{name}:{m.start()}"] = {c: t for c, t in _PAIR.findall(m.group("cols"))}
        else:
            doc = yaml.safe_load(text) or {}
            for src in doc.get("sources", []) or []:
                for table in src.get("tables", []) or []:
                    location = str((table.get("meta") or {}).get("external_location", "")) + str(
                        ((table.get("config") or {}).get("meta") or {}).get("external_location", "")
                    )
                    cols = {c["name"]: c["data_type"] for c in table.get("columns", []) or [] if c.get("data_type")}
                    if glob_end in location and cols:
                        found[f"{name}:{table['name']}"] = cols
                    # read_json(..., columns={name: 'TYPE', ...}) in the location itself
                    inline = re.search(r"columns\s*=\s*\{(.*?)\}\s*\)", location, re.S)
                    if glob_end in location and inline:
                        found[f"{name}:{table['name']}:columns"] = {
                            c.strip('"'): t for c, t in re.findall(r"""("?\w+"?)\s*:\s*'([^']+)'""", inline.group(1))
                        }
    return found


def arrow_fits(arrow: pa.DataType, duck: str) -> bool:
    """Does a Parquet column of this Arrow type cast to the DuckDB type without loss?"""
    duck = duck.strip().lower()
    if duck.endswith("[]"):
        return pa.types.is_list(arrow) and arrow_fits(arrow.value_type, duck[:-2])
    if pa.types.is_list(arrow):
        return False
    ints = {"tinyint": 8, "smallint": 16, "integer": 32, "int": 32, "int4": 32, "bigint": 64, "int8": 64}
    if duck in ints:
        return (
            pa.types.is_integer(arrow)
            and arrow.bit_width <= ints[duck]
            and (pa.types.is_signed_integer(arrow) or arrow.bit_width < ints[duck])
        )
    if duck in ("double", "float8"):
        return pa.types.is_floating(arrow)
    if duck in ("float", "real", "float4"):
        return pa.types.is_float32(arrow) or pa.types.is_float16(arrow)
    if duck in ("varchar", "text", "string"):
        return pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
    if duck == "boolean":
        return pa.types.is_boolean(arrow)
    raise AssertionError(f"add DuckDB type {duck!r} to arrow_fits")


def python_fits(annotation: str, duck: str) -> bool:
    """Does a RunRecord field of this annotation read as the DuckDB type from JSON?"""
    base = {a.strip() for a in annotation.split("|")} - {"None"}
    duck = duck.strip().lower()
    want = {
        "varchar": {"str"},
        "bigint": {"int"},
        "integer": {"int"},
        "boolean": {"bool"},
        "json": {"dict"},
        "double": {"float", "int"},
        "bigint[]": {"list[int]"},
        "varchar[]": {"list[str]"},
    }[duck]
    return bool(base) and base <= want


def test_every_token_column_dbt_reads_is_in_the_store_schema():
    reads = dbt_columns("part-*.parquet")
    assert reads, f"no typed column list for the token-score Parquet found under {DBT_PROJECT_DIR}"
    for where, cols in reads.items():
        assert cols, where
        if "word_entropy" in where or "temperature" in where:  # the entropy and temperature steps' parts
            continue  # (checked in tests/test_anticipation.py and tests/test_temperature.py)
        for name, duck in cols.items():
            if name in PSEUDO:
                continue
            assert name in store.SCHEMA.names, f"{where}: dbt reads {name!r}, which the store schema lacks"
            typ = store.SCHEMA.field(name).type
            assert arrow_fits(typ, duck), f"{where}: dbt reads {name!r} as {duck}, the store writes {typ}"


def test_every_run_column_dbt_reads_is_in_the_run_record():
    reads = dbt_columns("_run.json")
    assert reads, f"no typed column list for _run.json found under {DBT_PROJECT_DIR}"
    hints = {f.name: f.type for f in fields(store.RunRecord)}
    for where, cols in reads.items():
        if any(s in where for s in ("top1", "cloze", "word_entropy", "temperature")):  # those steps' own records
            continue  # (checked in test_top1_marts.py, test_cloze_vs_model.py, test_anticipation.py, test_temperature.py)
        for name, duck in cols.items():
            if name in PSEUDO:
                continue
            assert name in hints, f"{where}: dbt reads {name!r}, which RunRecord lacks"
            assert python_fits(str(hints[name]), duck), f"{where}: {name!r} is {duck} in dbt, {hints[name]} here"


def test_arrow_fits_is_strict():
    assert arrow_fits(pa.int32(), "integer") and arrow_fits(pa.int32(), "bigint")
    assert not arrow_fits(pa.int64(), "integer") and not arrow_fits(pa.float64(), "integer")
    assert arrow_fits(pa.list_(pa.int32()), "integer[]") and not arrow_fits(pa.list_(pa.string()), "integer[]")
    assert not arrow_fits(pa.string(), "double") and not arrow_fits(pa.int32(), "integer[]")


def test_dbt_fixture_writes_the_store_schema(tmp_path):
    """The dbt tests' fixture writes run directories the scorer's store reads as its own: the part files
    have the store's schema, field by field, and the store counts their documents and rows. (It once compared
    TOKEN_SCHEMA with store.SCHEMA, its own definition.)"""
    from predictabase.core.config import paths as make_paths
    from tests.dbt_fixtures import Fixture, token_rows, write_run

    fx = Fixture(make_paths(tmp_path / "warehouse"))
    rows = token_rows(
        "r1", "m", "ucl", "1", "A cat sat.", [(0, 1), (1, 5), (5, 9), (9, 10)], [None, -1.5, -2.0, -0.5]
    ) + token_rows("r1", "m", "ucl", "2", "Dogs run.", [(0, 4), (4, 8), (8, 9)], [None, -3.0, -0.25])
    run = write_run(fx, "r1", "m", "ucl", rows, meta={})
    parts = store.part_files(run)
    assert len(parts) == 2
    for part in parts:
        written = pq.read_schema(part).remove_metadata()
        assert [(f.name, f.type, f.nullable) for f in written] == [
            (f.name, f.type, f.nullable) for f in store.SCHEMA.remove_metadata()
        ]
    assert store.done_doc_ids(run) == {"1", "2"}
    assert store.count_rows(run)[1] == len(rows) == 7
    assert store.read_run(run).n_tokens == 7


# --- the run record ---------------------------------------------------------------------------------


def _record(**extra) -> store.RunRecord:
    base = dict(
        run_id="r1",
        model_key="m",
        model_id="org/m",
        model_revision="abc",
        tokenizer="T",
        tokenizer_sha256=None,
        vocab_size=10,
        dtype="float32",
        device="cpu",
        bos_policy="endoftext",
        bos_token_id=0,
        bos_token="<|endoftext|>",
        corpus="ucl",
        corpus_version="v",
        context_length=8,
        stride=4,
        top_k=3,
        batch_tokens=100,
        limit=None,
        full=False,
        n_docs=2,
        n_tokens=5,
        source="scored",
        started_at="2024-01-01T00:00:00+00:00",
        finished_at="2024-01-01T00:01:00+00:00",
        package_versions={"torch": "2"},
    )
    return store.RunRecord(**{**base, **extra})


def test_run_record_keys_are_the_ones_always_written(tmp_path):
    scored = _record(
        n_docs_with_tokens=2, scorer_version=2, end_of_text_ids=[50256], end_of_text_tokens=["<|endoftext|>"]
    )
    assert set(scored.to_json()) == SCORED_RUN_KEYS
    imported = _record(
        source="imported",
        source_path="x.csv",
        source_sha256="0" * 64,
        doc_id_mapping="doc_id = story + 1",
        text_differences_chars={},
    )
    assert set(imported.to_json()) == IMPORTED_RUN_KEYS  # an empty dict is written, only None is left out
    assert set(_record(limit=None, tokenizer_sha256=None).to_json()) >= {"limit", "tokenizer_sha256"}
    d = tmp_path / "run"
    written = store.finish_run(d, scored)
    text = (d / store.RUN_FILE).read_text()
    assert text == json.dumps(written, indent=2, sort_keys=True) + "\n"
    assert store.read_run(d) == scored and store.read_run(tmp_path / "none") is None


def test_a_bad_run_record_names_its_file(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    (d / store.RUN_FILE).write_text(json.dumps({**_record().to_json(), "surprise": 1}))
    with pytest.raises(WarehouseError, match=r"_run\.json: not a run record: unknown keys \['surprise'\]"):
        store.read_run(d)
    (d / store.RUN_FILE).write_text("{not json")
    with pytest.raises(WarehouseError, match=r"_run\.json"):
        store.read_run(d)


# --- tables and parts -------------------------------------------------------------------------------


def test_token_table_fills_run_columns_and_nulls():
    t = store.token_table(
        "r1",
        "m",
        "c",
        {
            "doc_id": ["1", "1"],
            "token_index": np.arange(2, dtype=np.int32),
            "logprob_nats": [None, -1.5],
            "topk_token_ids": np.array([[1, 2], [3, 4]], dtype=np.int32),
        },
    )
    assert t.schema == store.SCHEMA and t.num_rows == 2
    assert t.column("run_id").to_pylist() == ["r1", "r1"] and t.column("corpus").to_pylist() == ["c", "c"]
    assert t.column("logprob_nats").to_pylist() == [None, -1.5]
    assert t.column("topk_token_ids").to_pylist() == [[1, 2], [3, 4]]
    assert t.column("rank").null_count == 2 and t.column("topk_tokens").null_count == 2
    empty = store.token_table("r1", "m", "c", {"doc_id": ["1"], "topk_token_ids": np.zeros((1, 0), np.int32)})
    assert empty.column("topk_token_ids").to_pylist() == [[]]
    with pytest.raises(ValueError, match="surprisal"):
        store.token_table("r1", "m", "c", {"doc_id": ["1"], "surprisal": [1.0]})
    with pytest.raises(ValueError, match="run_id"):
        store.token_table("r1", "m", "c", {"doc_id": ["1"], "run_id": ["x"]})
    with pytest.raises(ValueError, match="char_end: 1 values for 2 rows"):
        store.token_table("r1", "m", "c", {"doc_id": ["1", "2"], "char_end": [3]})


def test_parts_resume_and_restart(tmp_path):
    rdir = store.run_dir(tmp_path, "m", "c", "r1")
    assert rdir == tmp_path / "model=m" / "corpus=c" / "run=r1"
    assert store.resume_run(rdir) == set()
    for docs in (["1", "2"], ["3"]):
        store.write_part(rdir, store.token_table("r1", "m", "c", {"doc_id": docs}))
    (rdir / ".tmp-1-x.parquet").write_text("half")
    assert [p.name for p in store.part_files(rdir)] == ["part-00000.parquet", "part-00001.parquet"]
    assert pq.read_schema(store.part_files(rdir)[0]).names == list(store.PART_COLUMNS)
    assert (
        store.read_part(store.part_files(rdir)[1]).to_pylist()
        == store.token_table("r1", "m", "c", {"doc_id": ["3"]}).to_pylist()
    )
    assert store.resume_run(rdir) == {"1", "2", "3"} and not list(rdir.glob(".tmp-*"))
    assert store.count_rows(rdir) == (3, 3)
    store.restart_run(rdir)
    assert store.part_files(rdir) == [] and store.next_part_number(rdir) == 0


def test_run_record_annotations_are_plain():
    """python_fits reads the annotations as text (`from __future__ import annotations`)."""
    for f in fields(store.RunRecord):
        assert isinstance(f.type, str) and re.fullmatch(
            r"(str|int|bool|dict|list\[int\]|list\[str\])( \| None)?", f.type
        ), f
    assert typing.get_type_hints(store.RunRecord)  # and they resolve
