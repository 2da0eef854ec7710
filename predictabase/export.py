"""`predictabase export words`: the file researchers want, one row per word of a corpus with every model's
surprisal next to the word's length, frequency, reading-time means and cloze.

It reads `mart_words_export` of the published snapshot (one row per word and run, every value computed by dbt)
and only reshapes it: one row per word, and per model the columns `<model>__surprisal_lw_bits`,
`<model>__surprisal_lw_nats`, `<model>__surprisal_wt_bits`, `<model>__surprisal_wt_nats`,
`<model>__logprob_boundary_before_nats`, `<model>__logprob_boundary_after_nats` (<model> = the model key with
every character other than a letter or digit written `_`). Reading-time columns of measures the corpus does not
have are left out. The provenance (snapshot, corpus and its source sha256, each model's id, revision, run id
and scoring settings) is a header of `# ` lines in a CSV (R: `read.csv(f, comment.char = "#")`; pandas:
`read_csv(f, comment="#")`) and the file's key-value metadata `predictabase.provenance` (JSON) in a Parquet
file. The Word surprisal page downloads the same table (`words_csv`).
"""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import polars as pl

from predictabase.errors import OptionError, WarehouseError

MART = "mart_words_export"
#: the word's own columns, in the file's order (those of measures the corpus lacks are dropped)
WORD_COLUMNS = ["corpus", "doc_id", "word_index", "native_word_id", "word", "length_chars", "zipf_frequency",
                "frequency_source", "mean_rt_spr_ms", "mean_rt_first_fixation_ms", "mean_rt_gaze_duration_ms",
                "mean_rt_go_past_ms", "mean_rt_total_reading_time_ms", "cloze_probability", "cloze_surprisal_nats"]
OPTIONAL = {c for c in WORD_COLUMNS if c.startswith(("mean_rt_", "cloze_"))}
#: each model's columns, prefixed with the model
MODEL_COLUMNS = ["surprisal_lw_bits", "surprisal_lw_nats", "surprisal_wt_bits", "surprisal_wt_nats",
                 "logprob_boundary_before_nats", "logprob_boundary_after_nats"]
RUN_COLUMNS = ["model_key", "model_id", "model_revision", "run_id", "run_source", "context_length", "stride", "dtype",
               "bos_policy"]
FORMATS = (".csv", ".parquet")


def column_prefix(model_key: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", model_key).strip("_")


def wide(long: pl.DataFrame, corpus_info: dict | None = None) -> tuple[pl.DataFrame, dict]:
    """One row per word (every word of the corpus that any run covers, in text order) and the provenance."""
    keys = ["doc_id", "word_index"]
    words = (long.select([c for c in WORD_COLUMNS if c in long.columns]).unique(keys, keep="first")
             .sort(pl.col("doc_id").cast(pl.Int64, strict=False), "doc_id", "word_index", nulls_last=True))  # 2 < 10
    words = words.drop([c for c in OPTIONAL if c in words.columns and words[c].null_count() == words.height])
    runs = long.select(RUN_COLUMNS).unique("run_id").sort("model_key", "run_id")
    out = words
    for model_key, run_id in runs.select("model_key", "run_id").iter_rows():
        p = column_prefix(model_key)
        cols = long.filter(pl.col("run_id") == run_id).select(
            *keys, *[pl.col(c).alias(f"{p}__{c}") for c in MODEL_COLUMNS])
        out = out.join(cols, on=keys, how="left")
    prov = {"exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "corpus": corpus_info or {"corpus": long["corpus"][0] if long.height else None},
            "rows": out.height, "runs": runs.to_dicts(),
            "columns": "one row per word; per model <model>__surprisal_{lw,wt}_{bits,nats} (LW = leading-whitespace, "
                       "WT = whitespace-trailing, paper 001 eqs. 5-6) and the boundary terms ln B before/after the "
                       "word (nats); mean_rt_*_ms = per-word mean reading times; cloze_surprisal_nats = -ln "
                       "(smoothed) cloze probability; zipf_frequency = log10 frequency per billion words"}
    return out, prov


def header_lines(prov: dict) -> list[str]:
    lines = [f"# predictabase export words: {prov['rows']} words, exported {prov['exported_at']}"]
    c = prov.get("corpus") or {}
    lines.append("# corpus: " + ", ".join(f"{k}={v}" for k, v in c.items() if v is not None))
    if prov.get("snapshot"):
        lines.append("# snapshot: " + ", ".join(f"{k}={v}" for k, v in prov["snapshot"].items() if v is not None))
    for r in prov["runs"]:
        lines.append("# model " + column_prefix(r["model_key"]) + ": " +
                     ", ".join(f"{k}={v}" for k, v in r.items() if v is not None))
    lines.append(f"# columns: {prov['columns']}")
    return lines


def csv_bytes(table: pl.DataFrame, prov: dict) -> bytes:
    return ("\n".join(header_lines(prov)) + "\n").encode() + table.write_csv().encode()


@contextlib.contextmanager
def _snapshot(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    if not path.exists():
        raise WarehouseError(path, "no published snapshot yet; run `predictabase refresh` (or build)")
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
        con.execute("USE snap")
        yield con
    finally:
        con.close()


def read_long(con: duckdb.DuckDBPyConnection, corpus: str, models: list[str] | None) -> pl.DataFrame:
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_catalog = 'snap'").fetchall()}
    if MART not in tables:
        raise WarehouseError(MART, "not in the published snapshot; run `predictabase refresh` (or build)")
    corpora = [r[0] for r in con.execute(f"SELECT DISTINCT corpus FROM {MART} ORDER BY 1").fetchall()]
    if corpus not in corpora:
        raise OptionError("--corpus", f"{corpus!r} has no word surprisal in the snapshot; one of {', '.join(corpora)}")
    long = pl.from_arrow(con.sql(f"SELECT * FROM {MART} WHERE corpus = $1", params=[corpus]).to_arrow_table())
    if models:
        have = sorted(set(long["model_key"].to_list()))
        unknown = [m for m in models if m not in have]
        if unknown:
            raise OptionError("--models", f"{', '.join(unknown)} not scored on {corpus}; one of {', '.join(have)}")
        long = long.filter(pl.col("model_key").is_in(models))
    return long


CORPUS_PROVENANCE = ("corpus", "title", "origin", "published", "declared_at", "reading_measures", "frequency_source",
                     "declaration_sha256", "source_path", "source_sha256")


def _corpus_info(con: duckdb.DuckDBPyConnection, corpus: str) -> dict:
    """The corpus's provenance from mart_corpora (title, origin, its declaration and texts file with their sha256)."""
    try:
        rows = con.sql("SELECT * FROM mart_corpora WHERE corpus = $1", params=[corpus]).to_arrow_table().to_pylist()
    except duckdb.Error:
        rows = []
    if not rows:
        return {"corpus": corpus}
    return {k: rows[0][k] for k in CORPUS_PROVENANCE if rows[0].get(k) not in (None, [])}


def _snapshot_info(con: duckdb.DuckDBPyConnection) -> dict:
    try:
        rows = con.sql("SELECT * FROM snapshot_info LIMIT 1").to_arrow_table().to_pylist()
    except duckdb.Error:
        return {}
    return {k: str(v) for k, v in rows[0].items()} if rows else {}


def export_words(marts: Path, corpus: str, models: list[str] | None, out: Path) -> dict:
    """Write the one-row-per-word table of `corpus` to `out` (.csv or .parquet) with its provenance."""
    if out.suffix.lower() not in FORMATS:
        raise OptionError("--out", f"{out}: the file name must end in {' or '.join(FORMATS)}")
    if not out.parent.is_dir():
        raise OptionError("--out", f"{out.parent}: no such directory")
    with _snapshot(marts) as con:
        long = read_long(con, corpus, models)
        table, prov = wide(long, _corpus_info(con, corpus))
        prov["snapshot"] = _snapshot_info(con)
    tmp = out.with_name(f".{out.name}.tmp")
    if out.suffix.lower() == ".csv":
        tmp.write_bytes(csv_bytes(table, prov))
    else:
        table.write_parquet(tmp, metadata={"predictabase.provenance": json.dumps(prov, default=str)})
    tmp.replace(out)
    return {"corpus": corpus, "rows": table.height, "columns": table.columns, "out": str(out),
            "models": sorted({r["model_key"] for r in prov["runs"]})}
