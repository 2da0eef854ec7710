"""`predictabase refresh`: bring the warehouse and the published snapshot up to date, doing only what changed.

Four steps, each deciding from durable state (never from what an earlier, possibly killed, refresh meant
to do), all under the warehouse's writer lock (docs/guides/scheduling.md explains each decision):

1. fetch   - every catalog file; a file present with the catalog's sha256 is not fetched again, and
             raw.source_files rows are rewritten only for files fetched now (`fetch_and_record`).
2. ingest  - the jobs whose raw.ingest_log row is missing, whose inputs' sha256 no longer match the
             catalog (its references.toml and the user's corpora.toml included), whose catalog datasets changed, whose loader code changed (`code_version`), whose
             tables are missing, or that depend on such a job (Job.after): ONE `run_ingest` call.
3. score   - every models.toml entry x corpus (+ top-1 / cloze): a task is done when the ledger
             `<warehouse>/refresh/scored.json` maps its plan key (model fingerprint, data version, code
             versions, settings; computed without loading the model) to a run that is still complete.
             Other tasks go to score_corpora / run_top1 / run_cloze, which skip complete runs themselves.
4. build   - dbt on what changed since the last successful build: `source:<src>.<table>+` for every raw
             table or Parquet run set that changed, `state:modified+` (against the manifest of that build)
             when the dbt project changed, plus the inventory marts; a full build when there is no earlier
             build. Then publish. `<warehouse>/refresh/state.json` records the inputs of the last
             successful dbt build ("built") and of the last publish ("published"): a refresh killed after
             dbt publishes without rebuilding, one killed after publishing only records it.

Nothing changed: no write anywhere, no dbt invocation, no publish (a few seconds: no torch, no dbt import).

The modules: `plans` (fetch and ingest), `scoring` (the model stages' tasks and ledger), `build` (fingerprints,
the dbt selection, the build state), `state` (reports and the JSON state files), `run` (the refresh itself).
"""

from __future__ import annotations

from predictabase.refresh.build_selection import build_step, dbt_selection, fingerprints, load_state, record_full_build
from predictabase.refresh.plans import fetch_plan, plan_ingest
from predictabase.refresh.run import format_report, refresh
from predictabase.refresh.scoring import ScoringTask, plan_key, plan_scoring, run_scoring_task
from predictabase.refresh.state import RefreshReport, StepReport

__all__ = [
    "build_step",
    "dbt_selection",
    "fingerprints",
    "load_state",
    "record_full_build",
    "fetch_plan",
    "plan_ingest",
    "format_report",
    "refresh",
    "ScoringTask",
    "plan_key",
    "plan_scoring",
    "run_scoring_task",
    "RefreshReport",
    "StepReport",
]
