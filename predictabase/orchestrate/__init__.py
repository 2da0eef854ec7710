"""Dagster definitions for the warehouse (optional extra: `pip install -e '.[orchestrate]'`).

`predictabase.orchestrate.definitions.defs` holds the fetch / ingest / scoring assets, the dbt project as
assets (dagster-dbt), the published snapshot, the refresh job with its daily schedule and the sensor
on the source catalog and models.toml. Nothing here computes or loads data itself: every asset calls
the same functions as the `predictabase` commands, under the same writer lock. See docs/guides/scheduling.md.
"""
