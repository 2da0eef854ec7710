"""`build_and_publish`: the one build path of `predictabase build` and `predictabase refresh`.

dbt build (models and schema tests, optionally a selection and `--state`), then dbt source freshness
over the fetched files, then publish the marts snapshot. Nothing is published when dbt fails.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ingest.config import Paths
from ingest.failpoints import failpoint
from ingest.warehouse.dbt import dbt_build
from ingest.warehouse.freshness import source_freshness
from ingest.warehouse.publish import publish


@dataclass
class BuildResult:
    marts: Path
    warnings: list[str] = field(default_factory=list)


def build_and_publish(paths: Paths, select: str | None = None, allow_shrink: bool = False,
                      extra_dbt_args: list[str] | None = None) -> BuildResult:
    warnings = dbt_build(paths, select=select, extra=extra_dbt_args)
    source_freshness(paths)
    failpoint("build.dbt_done")
    marts = publish(paths, allow_shrink=allow_shrink)
    return BuildResult(marts, warnings)
