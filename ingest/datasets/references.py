"""The references (ingest/sources/references.toml) as `raw.references`: one row per work the warehouse's numbers
come from, with its BibTeX entry and the title, authors, year and venue read from it. No catalog file: the
references ship with the code, beside the catalog; the file's sha256 is the job's recorded input (`INPUT_KEY`), so
`predictabase refresh` re-ingests them when the file changes."""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.ingest.sources import references as refs
from predictabase.ingest.sources.fetch import record_input

TABLE = "references"
SOURCE = "ingest/sources/references.toml"
SCHEMA = {
    "key": pl.String,
    "kind": pl.String,
    "datasets": pl.List(pl.String),
    "title": pl.String,
    "authors": pl.String,
    "author_short": pl.String,
    "year": pl.Int32,
    "venue": pl.String,
    "bibtex": pl.String,
    "source": pl.String,
    "source_sha256": pl.String,
}


def load(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    sha = refs.references_sha256()
    rows = [
        {
            "key": r.key,
            "kind": r.kind,
            "datasets": list(r.datasets),
            "title": r.title,
            "authors": r.authors,
            "author_short": r.author_short,
            "year": r.year,
            "venue": r.venue,
            "bibtex": r.bibtex,
            "source": SOURCE,
            "source_sha256": sha,
        }
        for r in refs.load_references()
    ]
    record_input(refs.INPUT_KEY, sha)
    return {TABLE: pl.DataFrame(rows, schema=SCHEMA)}
