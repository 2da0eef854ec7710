"""Self-paced reading per reader -> raw.reading_times, measure spr: the checks and the writer the adapters share.

Each shipped corpus's self-paced reading is loaded by its adapter (Natural Stories: ingest/datasets/natural_stories.py;
UCL: ingest/datasets/ucl.py; a user corpus's: user_corpus.py), one row per upstream row, every row kept, each job
replacing only its corpus's rows (partition `corpus`). Only loading and validation here; the exclusions and means are
dbt models (mart_self_paced_reading*).
"""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.corpus_declarations import SHIPPED_MEASURES
from predictabase.ingest.datasets._common import READING_TIMES_SCHEMA, CorpusLoad, Source
from predictabase.ingest.sources import readers

TABLE = "raw.reading_times"

SCHEMA = READING_TIMES_SCHEMA  # raw.reading_times, every corpus's (ingest/datasets/_common.py)
MEASURE = SHIPPED_MEASURES["self_paced_reading"][0]  # spr
MAX_LISTED = 5
RETIRED = "raw.self_paced_reading"  # this table's former name (an older warehouse's copy, dropped)


def read_frame(spec, paths: Paths) -> tuple[Source, pl.DataFrame]:
    src = readers.source(spec, paths)
    df = pl.from_pandas(readers.rdata(src.local, src.path, spec))
    return src, df


def require(df: pl.DataFrame, name: str, ints: list[str], nonnull: list[str]) -> pl.DataFrame:
    """Integer columns cast strictly (a fractional or missing value is an error naming the first row)."""
    for col in nonnull:
        bad = df.with_row_index("row").filter(pl.col(col).is_null())
        if bad.height:
            raise IngestError(name, f"{bad.height} row(s) with no {col} (first: row {bad['row'][0] + 1})")
    for col in ints:
        v = df[col]
        if v.dtype.is_float():
            frac = df.with_row_index("row").filter(pl.col(col).is_not_null() & (pl.col(col) != pl.col(col).round()))
            if frac.height:
                raise IngestError(name, f"{col} is not an integer in row {frac['row'][0] + 1}: {frac[col][0]}")
    return df.with_columns([pl.col(c).cast(pl.Int32) for c in ints])


def join_words(rows: pl.DataFrame, words: pl.DataFrame, name: str, what: str) -> pl.DataFrame:
    """Attach word_index and the corpus word on (doc_id, native_id); a row that does not join is an error."""
    keys = words.select("doc_id", "native_id", "word_index", pl.col("word").alias("corpus_word"))
    out = rows.join(keys, on=["doc_id", "native_id"], how="left")
    missing = out.filter(pl.col("word_index").is_null())
    if missing.height:
        ids = missing.select(what).unique(maintain_order=True).head(MAX_LISTED)[what].to_list()
        raise IngestError(
            name,
            f"{missing.height} row(s) do not join raw.words: "
            + "; ".join(ids)
            + (" ..." if missing.height > MAX_LISTED else ""),
        )
    return out


def mismatches(out: pl.DataFrame) -> dict:
    bad = out.filter(pl.col("word") != pl.col("corpus_word"))
    pairs = bad.select("doc_id", "native_id", "word", "corpus_word").unique().sort("doc_id", "native_id")
    return dict(
        word_mismatch_rows=bad.height,
        word_mismatch_words=pairs.height,
        word_mismatch_examples=[f"{r[0]}:{r[1]} {r[2]!r} vs {r[3]!r}" for r in pairs.head(MAX_LISTED).iter_rows()],
    )


# --------------------------------------------------------------------------- Natural Stories


# --------------------------------------------------------------------------- UCL


def write(con, load: CorpusLoad) -> int:
    """Replace the corpus's rows of raw.reading_times (write_partitions), and drop the table these jobs wrote before
    every corpus's reading times were one table: nothing reads it, and it held a million rows."""
    from predictabase.ingest.datasets._common import write_partitions

    n = write_partitions(con, load)
    con.execute(f"DROP TABLE IF EXISTS {RETIRED}")
    return n
