"""Eye tracking per reader: the two raw tables, their schemas and the checks every adapter's eye-tracking loader shares.

- `raw.eye_tracking_fixations`: one row per fixation, every upstream row kept, each corpus its own partition
  (Provo's: ingest/datasets/provo.py; UCL's: ingest/datasets/ucl.py).
- `raw.eye_tracking_measures_upstream`: per-reader measures as an upstream published them (UCL's).

No metric is computed here; the reading measures are derived in dbt. Every reading row must join raw.words of its
corpus by the corpus's own word key, else an IngestError listing the ids (`not_joined`).
"""

from __future__ import annotations

import polars as pl

from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import Source
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import FileSpec

FIXATIONS = "raw.eye_tracking_fixations"
MEASURES = "raw.eye_tracking_measures_upstream"
RT_COLUMNS = {
    "RTfirstfix": "first_fixation_ms",
    "RTfirstpass": "first_pass_ms",
    "RTrightbound": "right_bounded_ms",
    "RTgopast": "go_past_ms",
}

FIXATION_SCHEMA = {
    "corpus": pl.String,
    "reader_id": pl.String,
    "doc_id": pl.String,
    "fixation_index": pl.Int32,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "duration_ms": pl.Int32,
    "blink": pl.String,
    "x_px": pl.Float64,
    "y_px": pl.Float64,
    "upstream_word": pl.String,
    "trial_index": pl.Int32,  # Provo seq (the trial; NULL for UCL)
    "upstream_item": pl.String,  # the file's text / sentence id (Provo item; pangoling sent_id)
    "upstream_word_number": pl.Int32,  # the file's word number (Provo word_text; UCL word_n)
    "source_path": pl.String,
    "source_sha256": pl.String,
}
MEASURE_SCHEMA = {
    "corpus": pl.String,
    "reader_id": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    "first_fixation_ms": pl.Int32,
    "first_pass_ms": pl.Int32,
    "right_bounded_ms": pl.Int32,
    "go_past_ms": pl.Int32,
    "skipped": pl.Boolean,
    "comprehension_correct": pl.String,
    "sentence_order": pl.Int32,
    "answer_time_ms": pl.Float64,  # upstream answer_time (NULL where no question followed the sentence)
    "upstream_item": pl.String,  # pangoling sent_id
    "source_path": pl.String,
    "source_sha256": pl.String,
}


# --------------------------------------------------------------------------- shared checks


def listed(items: list, n: int | None = None) -> str:
    n = len(items) if n is None else n
    head = ", ".join(str(x) for x in items[:5])
    return f"{head}{', ...' if n > 5 else ''} ({n} in all)"


def rdata_frame(src: Source, spec: FileSpec) -> pl.DataFrame:
    """The declared R object as polars (categories as strings), with a 1-based `_row` (file row)."""
    pdf = readers.rdata(src.data, src.path, spec)
    cols = {}
    for c in spec.columns:
        s = pdf[c]
        if str(s.dtype) in ("category", "object") or "str" in str(s.dtype).lower():
            cols[c] = pl.Series(c, [None if v is None or v != v else str(v) for v in s.astype(object)], dtype=pl.String)
        else:
            cols[c] = pl.from_pandas(s.reset_index(drop=True)).rename(c)
    return pl.DataFrame(cols).with_row_index("_row", offset=1)


def no_nulls(df: pl.DataFrame, cols: list[str], name: str) -> None:
    for c in cols:
        bad = df.filter(pl.col(c).is_null())["_row"].to_list()
        if bad:
            raise IngestError(name, f"column {c} is missing in row(s) {listed(bad)}")


def whole_numbers(df: pl.DataFrame, col: str, name: str, minimum: int) -> pl.DataFrame:
    """`col` (float or int, NULL allowed) as Int32, refusing fractions and values below `minimum`."""
    v = pl.col(col).cast(pl.Float64)
    bad = df.filter(v.is_not_null() & (v.is_nan() | (v != v.round(0)) | (v < minimum)))
    if bad.height:
        raise IngestError(
            name,
            f"{col} must be a whole number >= {minimum}: row(s) "
            f"{listed([f'{r} ({x})' for r, x in zip(bad['_row'], bad[col])], bad.height)}",
        )
    return df.with_columns(pl.when(v.is_nan()).then(None).otherwise(v).cast(pl.Int32).alias(col))


def not_joined(name: str, corpus: str, ids: list[str]) -> IngestError:
    return IngestError(name, f"reading rows do not join raw.words ({corpus}): {listed(sorted(set(ids)))}")


# --------------------------------------------------------------------------- Provo


# --------------------------------------------------------------------------- UCL


# --------------------------------------------------------------------------- jobs
