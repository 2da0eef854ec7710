"""dbt source freshness over the fetched files (placeholder until the observability work lands)."""
from __future__ import annotations

from ingest.config import Paths


def source_freshness(paths: Paths) -> None:
    return None
