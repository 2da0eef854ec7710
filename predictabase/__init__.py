"""predictabase: the application around the ingest jobs (the `predictabase` command line, dbt build and
publish, ad-hoc SQL, the dashboard server, refresh, the Dagster definitions, the runs log).

The ingest jobs themselves (sources, datasets, scoring) are the `ingest` package; the dbt project, the
dashboard app and the default models.toml ship as package data (`predictabase.core.resources`).
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("predictabase")  # pyproject.toml's version, the one place it is written
except metadata.PackageNotFoundError:  # pragma: no cover - a checkout that was never installed
    __version__ = "0+unknown"
