"""UCL published per-word reading means (de Varda et al., ucl_devarda/all_measures.csv).

`ucl_published_measures` -> raw.ucl_published_word_measures: one row per all_measures.csv row (every word
but the first of each sentence: 1,726 rows), the eye-tracking means RTfirstfix, RTfirstpass, RTrightbound,
RTgopast and the self-paced reading mean, in ms, as published. Keys as the `ucl` corpus loader defines them
(ingest/datasets/ucl.py): doc_id = sent_id, word_index = context_length, native_id = context_length + 1;
every row is checked against its sentence by the same function. Only loads: the comparison with the means
derived from the fixations is dbt's (mart_reading_measures_agreement).
"""

from __future__ import annotations

import math

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import ucl
from predictabase.ingest.datasets._common import to_float, to_int
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

NAME = "ucl_published_measures"
TABLE = "ucl_published_word_measures"
MEASURES = dataset(NAME).file("measures")
# all_measures column -> raw column (ms)
COLUMNS = {
    "RTfirstfix": "rt_first_fixation_ms",
    "RTfirstpass": "rt_first_pass_ms",
    "RTrightbound": "rt_right_bounded_ms",
    "RTgopast": "rt_go_past_ms",
    "self_paced_reading_time": "self_paced_reading_time_ms",
}
SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    **{c: pl.Float64 for c in COLUMNS.values()},
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def build(src: readers.Source, rows: list[dict[str, str]]) -> dict[str, pl.DataFrame]:
    ucl.sentences(rows, src.path)  # every row's word and context match word context_length of its sentence
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        sid = to_int(r["sent_id"], src.path, f"line {k} sent_id")
        n = to_int(r["context_length"], src.path, f"line {k} context_length")
        if (sid, n) in seen:
            raise IngestError(src.path, f"line {k}: sentence {sid} word {n} appears twice")
        seen.add((sid, n))
        row = {"corpus": ucl.CORPUS, "doc_id": str(sid), "word_index": n, "native_id": str(n + 1), "word": r["word"]}
        for col, name in COLUMNS.items():
            v = to_float(r[col], src.path, f"line {k} {col}")
            if not math.isfinite(v) or v < 0:
                raise IngestError(src.path, f"line {k} {col}: {v} is not a finite time >= 0 ms")
            row[name] = v
        out.append({**row, "source_path": src.path, "source_sha256": src.sha256})
    return {TABLE: pl.DataFrame(out, schema=SCHEMA, strict=True)}


def load(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(MEASURES, paths)
    return build(src, readers.delimited(src.data, src.path, MEASURES))


# --------------------------------------------------------------------------- every numeric column, and their results

VALUES = dataset("ucl_published_predictors").file("measures")
VALUES_TABLE = "ucl_published_word_values"
#: all_measures.csv columns that are keys or text, not values
TEXT_COLUMNS = ("item", "word", "word2", "sentence", "context_length", "sent_id", "item_id", "list")
VALUES_SCHEMA = {
    "corpus": pl.String,
    "row_number": pl.Int32,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "word": pl.String,
    "column_name": pl.String,
    "value": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
RESULTS = dataset("ucl_published_results").file("tables")
RESULTS_TABLE = "ucl_published_results"
RESULTS_SCHEMA = {
    "table_name": pl.String,
    "row_number": pl.Int32,
    "row_label": pl.String,
    "column_label": pl.String,
    "statistic": pl.String,
    "value": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: result columns that are labels, not numbers (`colors` is their plot's colour)
RESULT_LABELS = ("", "dv", "iv", "colors")


def _value(v: str, path: str, what: str) -> float | None:
    if v in ("", "nan", "NaN", "NA"):
        return None
    x = to_float(v, path, what)
    return None if math.isnan(x) else x


def build_values(src: readers.Source, rows: list[dict[str, str]]) -> dict[str, pl.DataFrame]:
    ucl.sentences(rows, src.path)
    cols = [c for c in rows[0] if c not in TEXT_COLUMNS]
    out = {k: [] for k in VALUES_SCHEMA}
    for k, r in enumerate(rows, start=2):
        sid = str(to_int(r["sent_id"], src.path, f"line {k} sent_id"))
        n = to_int(r["context_length"], src.path, f"line {k} context_length")
        for c in cols:
            for key, v in (
                ("corpus", ucl.CORPUS),
                ("row_number", k - 2),
                ("doc_id", sid),
                ("word_index", n),
                ("word", r["word"]),
                ("column_name", c),
                ("value", _value(r[c], src.path, f"line {k} {c}")),
                ("source_path", src.path),
                ("source_sha256", src.sha256),
            ):
                out[key].append(v)
    return {VALUES_TABLE: pl.DataFrame(out, schema=VALUES_SCHEMA, strict=True)}


def load_values(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(VALUES, paths)
    return build_values(src, readers.delimited(src.data, src.path, VALUES))


def build_results(sources: list[tuple[readers.Source, list[dict[str, str]]]]) -> dict[str, pl.DataFrame]:
    """Long rows (table, row number, row label, column label, statistic, value): a correlation matrix's cell is
    (df_corr, row, row variable, column variable, pearson_r); a result row's statistic is (table, row, dv, iv,
    column). The row number (0-based, the file's own index) keeps apart the rows spillover_results.csv repeats
    for the same (dv, iv)."""
    out = {k: [] for k in RESULTS_SCHEMA}

    def add(*vals):
        for key, v in zip(RESULTS_SCHEMA, vals):
            out[key].append(v)

    for src, rows in sources:
        table = src.path.rsplit("/", 1)[-1].removesuffix(".csv")
        header = list(rows[0])
        if "dv" in header and "iv" in header:
            for k, r in enumerate(rows, start=2):
                for c in header:
                    if c not in RESULT_LABELS:
                        add(
                            table,
                            k - 2,
                            r["dv"],
                            r["iv"],
                            c,
                            _value(r[c], src.path, f"line {k} {c}"),
                            src.path,
                            src.sha256,
                        )
        elif header[0] == "" and [r[""] for r in rows] == header[1:]:
            for k, r in enumerate(rows, start=2):
                for c in header[1:]:
                    add(
                        table,
                        k - 2,
                        r[""],
                        c,
                        "pearson_r",
                        _value(r[c], src.path, f"line {k} {c}"),
                        src.path,
                        src.sha256,
                    )
        else:
            raise IngestError(src.path, "neither a (dv, iv) result table nor a square correlation matrix")
    return {RESULTS_TABLE: pl.DataFrame(out, schema=RESULTS_SCHEMA, strict=True)}


def load_results(paths: Paths) -> dict[str, pl.DataFrame]:
    return build_results(
        [(src, readers.delimited(src.data, src.path, RESULTS)) for src in readers.sources(RESULTS, paths)]
    )
