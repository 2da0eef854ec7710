"""`refresh`: the stages of the pipeline plan (`predictabase.plan`), each doing only what changed, under the
writer lock, each recorded in the runs log and reported."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from predictabase import runs
from predictabase.core.config import Paths, mirror_dir
from predictabase.core.failpoints import failpoint
from predictabase.ingest.scoring.steps import STEPS
from predictabase.plan import PLAN
from predictabase.refresh.build_selection import build_step, built_models
from predictabase.refresh.plans import fetch_plan, plan_ingest
from predictabase.refresh.scoring import ScoringTask, _models, plan_scoring, run_tasks
from predictabase.refresh.state import RefreshReport, StepReport
from predictabase.warehouse.lock import writer_lock


@contextlib.contextmanager
def _step(report: RefreshReport, name: str, log: Path, parent: str | None, args: dict) -> Iterator[dict]:
    """Time a step, record it in the runs log (as a child of the refresh) and add its line to the report."""
    out = {"action": "nothing to do", "detail": "", "rows_in": None, "rows_out": None}
    t0 = time.perf_counter()
    with runs.recorded(log, name, args, parent_run_id=parent) as run:
        yield out
        run.rows_in, run.rows_out = out["rows_in"], out["rows_out"]
    report.steps.append(StepReport(name, out["action"], out["detail"], round(time.perf_counter() - t0, 2)))


def _short(items: list[str], n: int = 4) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def refresh(
    paths: Paths,
    mirror: str | Path | None = None,
    models=None,
    *,
    dry_run: bool = False,
    show_progress: bool = True,
    parent_run_id: str | None = None,
    wait_s: float = 0.0,
    engine=None,
) -> RefreshReport:
    """Fetch, ingest, score and build only what changed (module docstring). Holds the writer lock for the
    whole run (re-entrant: the CLI already holds it). `models`: list of ModelEntry, a models file or None.
    The refresh and each step are recorded in the runs log: inside `predictabase refresh` under that
    command's run, else as a `refresh` run of its own (child of `parent_run_id`, e.g. a Dagster run's).
    `engine`: where the model steps run, None (this process) or the Ray engine's options (RayOptions)."""
    outer = runs.current()
    if outer is not None and outer.command == "refresh":
        return _refresh(paths, mirror, models, dry_run, show_progress, outer.run_id, wait_s, engine)
    if not dry_run:
        paths.warehouse.mkdir(parents=True, exist_ok=True)
    args = {"mirror": str(mirror) if mirror else None, "dry_run": dry_run}
    with runs.recorded(paths.runs_log, "refresh", args, parent_run_id=parent_run_id) as run:
        report = _refresh(paths, mirror, models, dry_run, show_progress, run.run_id, wait_s, engine)
        run.rows_out = sum(1 for st in report.steps if not st.action.startswith(("nothing", "would")))
        return report


class _Run:
    """One refresh's context, shared by its stages: what they need, and what the skipped stages of a dry run
    would change (`pending`)."""

    def __init__(
        self, paths: Paths, mirror, entries, dry_run: bool, show_progress: bool, parent: str | None, engine=None
    ):
        self.paths, self.mirror, self.entries, self.engine = paths, mirror, entries, engine
        self.dry_run, self.show_progress, self.parent = dry_run, show_progress, parent
        self.report = RefreshReport()
        self.pending: dict = {"raw": [], "source_files": False, "parquet": []}

    def step(self, name: str, args: dict):
        return _step(self.report, name, self.paths.runs_log, self.parent, {**args, "dry_run": self.dry_run})


def _fetch(r: _Run) -> None:
    with r.step("fetch", {"mirror": str(r.mirror) if r.mirror else None}) as s:
        if r.dry_run:
            todo = fetch_plan(r.paths)
            r.pending["source_files"] = bool(todo)
            s.update(
                action=f"would fetch {len(todo)} file(s)" if todo else "nothing to do",
                detail=_short(todo) if todo else "every catalog file present with its sha256",
            )
            return
        from predictabase.ingest.sources.fetch import fetch_and_record

        results = fetch_and_record(r.paths, mirror_dir(r.mirror), show_progress=r.show_progress)
        got = [f.file.path for f in results if f.status != "present"]
        s.update(rows_in=len(results), rows_out=len(got))
        if got:
            r.report.changed = True
            r.report.fetched = got
            s.update(action=f"fetched {len(got)} file(s)", detail=_short(got))
        else:
            s.update(detail=f"all {len(results)} catalog files present with their sha256")


def _ingest(r: _Run) -> None:
    with r.step("ingest", {}) as s:
        plan = plan_ingest(r.paths)
        failpoint("refresh.planned")
        why = _short([f"{j} ({reason})" for j, reason in plan.items()])
        if not plan:
            s.update(detail="every job's inputs, code and tables are as ingested")
        elif r.dry_run:
            from predictabase.ingest.datasets.registry import read_ingest_log

            logged = read_ingest_log(r.paths)
            r.pending["raw"] = sorted(
                {t for j in plan for t in (logged.get(j) or {}).get("tables", ())}
                | {f"raw.<tables of {j}, known once ingested>" for j in plan if j not in logged}
            )
            s.update(action=f"would ingest {len(plan)} job(s)", detail=why)
        else:
            from predictabase.ingest.datasets.registry import run_ingest

            counts = run_ingest(r.paths, list(plan), show_progress=r.show_progress)
            r.report.changed = True
            r.report.ingested = list(plan)
            s.update(
                action=f"ingested {len(plan)} job(s)",
                detail=why,
                rows_out=sum(n for n in counts.values() if isinstance(n, int)),
            )


def _score(r: _Run) -> None:
    """Every model stage of the plan (score, top1, cloze): the tasks not done yet, the token scoring grouped
    by model (one model load for all its corpora)."""
    with r.step("score", {"models": [e.name for e in r.entries]}) as s:
        tasks = plan_scoring(r.paths, r.entries)
        todo = [t for t in tasks if not t.done]
        s.update(rows_in=len(tasks), rows_out=len(todo))
        if not todo:
            s.update(detail=f"all {len(tasks)} (model, corpus, settings) task(s) scored")
            return
        if r.dry_run:
            r.pending["parquet"] = sorted({STEPS[t.step].output for t in todo})
            s.update(action=f"would score {len(todo)} task(s)", detail=_short([t.label for t in todo]))
            return
        done: list[str] = []
        groups: dict[tuple[str, str], list[ScoringTask]] = {}  # one model load per (step, model), in step order
        for step in STEPS:
            for t in todo:
                if t.step == step:
                    groups.setdefault((step, t.model), []).append(t)
        for group in groups.values():
            done += run_tasks(r.paths, group, r.show_progress, r.engine)
        r.report.changed = True
        r.report.scored = [(t.step, t.model, t.corpus) for t in todo]
        s.update(action=f"ran {len(todo)} task(s)", detail=_short(done))


def _build(r: _Run) -> None:
    with r.step("build", {}) as s:
        action, detail, select, published = build_step(r.paths, r.dry_run, r.pending)
        s.update(action=action, detail=detail)
        r.report.dbt_select, r.report.published = select, published
        r.report.changed = r.report.changed or published or action == "recorded"
        if select is not None and not r.dry_run:
            r.report.dbt_models = built_models(r.paths)


#: the refresh's step for each kind of stage of the pipeline plan (the model stages share one step)
STAGE_STEPS = {"fetch": _fetch, "ingest": _ingest, "model": _score, "build": _build}


def _refresh(
    paths: Paths, mirror, models, dry_run: bool, show_progress: bool, parent: str | None, wait_s: float, engine=None
) -> RefreshReport:
    r = _Run(paths, mirror, _models(models), dry_run, show_progress, parent, engine)  # a bad models file fails first
    with writer_lock(paths, "refresh", wait_s, read_only_ok=dry_run):
        for kind in dict.fromkeys(stage.kind for stage in PLAN):
            STAGE_STEPS[kind](r)
    return r.report


def format_report(report: RefreshReport) -> str:
    """The steps as a short table: step, what it did (or why not), seconds."""
    rows = [(s.name, s.action + (f": {s.detail}" if s.detail else ""), f"{s.seconds:.1f} s") for s in report.steps]
    total = sum(s.seconds for s in report.steps)
    w0 = max(len(r[0]) for r in rows)
    lines = [f"{name:<{w0}}  {secs:>8}  {what}" for name, what, secs in rows]
    would = any(s.action.startswith("would") for s in report.steps)  # --dry-run with work to do
    outcome = (
        "changed the warehouse"
        if report.changed
        else "dry run: nothing written; a refresh would do the steps above"
        if would
        else "nothing changed"
    )
    lines.append(f"{'total':<{w0}}  {total:>6.1f} s  {outcome}")
    return "\n".join(lines)
