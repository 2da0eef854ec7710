"""`build_and_publish`: the one build path of `predictabase build` and `predictabase refresh`.

dbt build (models and schema tests, optionally a selection and `--state`), then dbt source freshness
over the fetched files, then publish the marts snapshot. Nothing is published when dbt fails.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.failpoints import failpoint
from predictabase.core.errors import BuildError
from predictabase.warehouse.dbt import dbt_build
from predictabase.warehouse.docs import docs_enabled, generate_docs
from predictabase.warehouse.freshness import source_freshness
from predictabase.warehouse.publish import publish


@dataclass
class BuildResult:
    marts: Path
    warnings: list[str] = field(default_factory=list)


def build_and_publish(paths: Paths, select: str | None = None, allow_shrink: bool = False,
                      extra_dbt_args: list[str] | None = None,
                      after_dbt: Callable[[], None] | None = None, docs: bool | None = None) -> BuildResult:
    """`after_dbt` runs once dbt and the freshness check succeeded, before publishing (refresh records its
    build state there, so a refresh killed before publishing publishes without building again). `docs`: also
    publish dbt's documentation site beside the snapshot (default: unless $PREDICTABASE_DBT_DOCS is 0); a
    failure there is a warning, never an unpublished snapshot."""
    warnings = dbt_build(paths, select=select, extra=extra_dbt_args)
    source_freshness(paths)
    if after_dbt is not None:
        after_dbt()
    failpoint("build.dbt_done")
    marts = publish(paths, allow_shrink=allow_shrink)
    if docs if docs is not None else docs_enabled():
        try:
            generate_docs(paths)
        except BuildError as exc:  # the snapshot is already published; the docs site is a by-product
            warnings.append(f"dbt docs: {exc}")
    return BuildResult(marts, warnings)
