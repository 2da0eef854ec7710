"""Natural Stories per-word self-paced reading means over readers (processed_wordinfo.tsv).

The worked example of docs/architecture.md ("Adding a dataset"): the file, its format and its
columns are declared in ingest/sources/datasets.toml; this module only turns rows into the raw table
`raw.natural_stories_spr_means` (one row per story word: item = doc_id, zone = the word's native_id
in raw.words), with units in the column names. No metric is computed here.
"""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import to_float, to_int
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

NAME = "natural_stories_spr_means"
MEANS = dataset(NAME).file("means")
SCHEMA = {
    "doc_id": pl.String,
    "native_id": pl.String,
    "word": pl.String,
    "n_readers": pl.Int32,
    "mean_rt_ms": pl.Float64,
    "sd_rt_ms": pl.Float64,
    "geometric_mean_rt_ms": pl.Float64,
    "geometric_sd_factor": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def load(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(MEANS, paths)
    rows = readers.delimited(src.data, src.path, MEANS)
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        item, zone = to_int(r["item"], src.path, f"line {k} item"), to_int(r["zone"], src.path, f"line {k} zone")
        if (item, zone) in seen:
            raise IngestError(src.path, f"line {k}: story {item} zone {zone} appears twice")
        seen.add((item, zone))
        out.append(
            {
                "doc_id": str(item),
                "native_id": str(zone),
                "word": r["word"],
                "n_readers": to_int(r["nItem"], src.path, f"line {k} nItem"),
                "mean_rt_ms": to_float(r["meanItemRT"], src.path, f"line {k} meanItemRT"),
                "sd_rt_ms": to_float(r["sdItemRT"], src.path, f"line {k} sdItemRT"),
                "geometric_mean_rt_ms": to_float(r["gmeanItemRT"], src.path, f"line {k} gmeanItemRT"),
                "geometric_sd_factor": to_float(r["gsdItemRT"], src.path, f"line {k} gsdItemRT"),
                "source_path": src.path,
                "source_sha256": src.sha256,
            }
        )
    return {NAME: pl.DataFrame(out, schema=SCHEMA, strict=True)}
