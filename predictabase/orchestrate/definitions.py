"""`defs`: the Dagster code location of predictabase (`dagster dev` from the repository root loads it through
[tool.dagster] in pyproject.toml). See docs/guides/scheduling.md.

- assets: `fetch`, `ingest/<job>` (one per ingest job, run together as one multi-asset), `token_scores`
  (one partition per model x corpus of models.toml), `top1_predictions` and `cloze_model_scores` (one per model; each model step's asset is
  declared by its step, `predictabase.ingest.scoring.steps`),
  every dbt model and seed (dagster-dbt; dbt tests as asset checks), `marts_snapshot` (publish);
- `refresh_job`: one op running `predictabase.refresh.refresh` (the incremental refresh: checksums, models not
  yet scored, dbt on the affected models), which logs an asset materialization for every asset it rebuilt
  (fetch, ingest jobs, scoring partitions, dbt models, the snapshot), launched by the `daily_refresh` schedule and by
  `source_catalog_sensor` when the source catalog, its references or models.toml change (cursor = their sha256).
"""

import hashlib
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource

from predictabase.orchestrate.assets import STEP_ASSETS, fetch, ingest, marts_snapshot, refresh_materializations
from predictabase.orchestrate.dbt import DBT_EXECUTABLE, PROJECT, dbt_project_assets
from predictabase.orchestrate.resources import PredictabaseResource

DAILY_CRON = "17 3 * * *"  # 03:17 every day (the cron line of docs/guides/scheduling.md)


class RefreshConfig(dg.Config):
    dry_run: bool = False  # say what a refresh would do, write nothing (`predictabase refresh --dry-run`)


@dg.op(
    description="`predictabase refresh`: re-fetch by checksum, re-ingest what changed, score the models.toml "
    "combinations not scored yet, dbt build of the affected models, publish."
)
def refresh(context: dg.OpExecutionContext, config: RefreshConfig, predictabase: PredictabaseResource) -> dict:
    from predictabase.refresh import refresh as run_refresh

    mirror = predictabase.mirror_dir()
    args = {"mirror": str(mirror) if mirror else None, "dry_run": config.dry_run}
    with predictabase.writing(context, "refresh", args, create=not config.dry_run) as paths:
        report = run_refresh(paths, mirror, dry_run=config.dry_run, show_progress=False)
    steps = [
        {"name": s.name, "action": s.action, "detail": s.detail, "seconds": round(s.seconds, 2)} for s in report.steps
    ]
    table = "\n".join(
        [
            "| step | action | detail | seconds |",
            "|---|---|---|---|",
            *(f"| {s['name']} | {s['action']} | {s['detail']} | {s['seconds']} |" for s in steps),
        ]
    )
    for event in refresh_materializations(report):  # so Dagster's asset view is current after a scheduled run
        context.log_event(event)
    context.add_output_metadata(
        {
            "changed": report.changed,
            "published": report.published,
            "dbt_select": report.dbt_select or "",
            "steps": dg.MetadataValue.md(table),
        }
    )
    return {"changed": report.changed, "published": report.published, "dbt_select": report.dbt_select, "steps": steps}


@dg.job(description="The incremental refresh of the warehouse (what `predictabase refresh` does).")
def refresh_job():
    refresh()


daily_refresh = dg.ScheduleDefinition(
    name="daily_refresh",
    job=refresh_job,
    cron_schedule=DAILY_CRON,
    description="The incremental refresh every day at 03:17.",
)


def watched_digest(files: list[Path]) -> str:
    """sha256 over the watched files' names and contents (a missing file counts as its own state)."""
    h = hashlib.sha256()
    for f in files:
        h.update(str(f).encode() + b"\0")
        try:
            h.update(hashlib.sha256(Path(f).read_bytes()).hexdigest().encode())
        except FileNotFoundError:
            h.update(b"missing")
        h.update(b"\n")
    return h.hexdigest()


@dg.sensor(
    job=refresh_job,
    minimum_interval_seconds=60,
    description="Starts the refresh when the source catalog (ingest/sources/catalog.toml), its references "
    "(references.toml) or the models file (models.toml) change; the cursor is their sha256, the "
    "run key too.",
)
def source_catalog_sensor(context: dg.SensorEvaluationContext, predictabase: PredictabaseResource):
    files = predictabase.watched()
    digest = watched_digest(files)
    if context.cursor == digest:
        return dg.SkipReason(f"unchanged: {', '.join(Path(f).name for f in files)} (sha256 {digest[:12]})")
    context.update_cursor(digest)
    return dg.RunRequest(run_key=digest, tags={"predictabase/watched_sha256": digest})


defs = dg.Definitions(
    assets=[fetch, ingest, *STEP_ASSETS, dbt_project_assets, marts_snapshot],
    jobs=[refresh_job],
    schedules=[daily_refresh],
    sensors=[source_catalog_sensor],
    resources={
        "predictabase": PredictabaseResource(),
        "dbt": DbtCliResource(project_dir=PROJECT, dbt_executable=DBT_EXECUTABLE),
    },
)
