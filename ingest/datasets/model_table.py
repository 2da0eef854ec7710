"""The model table (`predictabase.ingest.scoring.model_table`) as a raw table, so dbt and the marts take every
model's name for people, family and size from the one place they are written: `raw.model_table`, one row per model,
with the table's own checksum as provenance. No source file: the table ships with the code."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import polars as pl

from predictabase.core.config import Paths
from predictabase.ingest.scoring.model_table import MODELS

TABLE = "model_table"
SOURCE = "predictabase.ingest.scoring.model_table"
SCHEMA = {
    "model_key": pl.String,
    "display_name": pl.String,
    "family": pl.String,
    "n_parameters": pl.Int64,
    "parameters_source": pl.String,
    "hub_id": pl.String,
    "alias_package": pl.String,
    "sort_order": pl.Int32,
    "source": pl.String,
    "source_sha256": pl.String,
}


def load(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    rows = [asdict(m) for m in MODELS]
    sha = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    frame = pl.DataFrame(
        [
            {
                "model_key": m["key"],
                "display_name": m["display_name"],
                "family": m["family"],
                "n_parameters": m["n_parameters"],
                "parameters_source": m["parameters_source"],
                "hub_id": m["hub_id"],
                "alias_package": m["package"],
                "sort_order": i,
                "source": SOURCE,
                "source_sha256": sha,
            }
            for i, m in enumerate(rows, start=1)
        ],
        schema=SCHEMA,
    )
    return {TABLE: frame}
