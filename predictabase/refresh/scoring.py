"""The refresh's model stages: the scoring tasks the models file asks for, each keyed by what it is made of
(model fingerprint, data version, code version, settings), the ledger of finished tasks, and the task runner the
refresh and the Dagster scoring assets share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.failpoints import failpoint
from predictabase.ingest.scoring import model_table
from predictabase.ingest.scoring.steps import STEPS
from predictabase.models_config import ModelEntry, load_models_config
from predictabase.refresh.state import LEDGER, STATE_DIR, connect_ro, digest, read_json, utc_now, write_json


@dataclass(frozen=True)
class ScoringTask:
    model: str  # the models.toml name
    step: str  # score | top1 | cloze
    corpus: str | None  # score: the corpus; top1: lm_game; cloze: None (UCL + Provo)
    entry: ModelEntry | None = field(default=None, compare=False)
    key: str = field(default="", compare=False)  # the plan key (see `plan_key`)
    done: bool = field(default=False, compare=False)  # the ledger holds a complete run for the key

    @property
    def label(self) -> str:
        return f"{self.model} / {self.step}" + (f" {self.corpus}" if self.corpus and self.step == "score" else "")


def _models(models) -> list[ModelEntry]:
    if isinstance(models, list):
        return models
    return load_models_config(models)


def _corpus_versions(paths: Paths) -> dict[str, str]:
    if not paths.duckdb.exists():
        return {}
    import duckdb

    with connect_ro(paths.duckdb) as con:
        try:
            return dict(con.execute("SELECT corpus, min(corpus_version) FROM raw.documents GROUP BY 1").fetchall())
        except duckdb.Error:
            return {}


def _data_versions(paths: Paths) -> dict[str, object]:
    """step -> the version of the data it reads (score: per corpus; top1 / cloze: the raw.ingest_log rows of
    the jobs that wrote the tables it reads)."""
    from predictabase.ingest.datasets.registry import read_ingest_log

    log = read_ingest_log(paths)
    out: dict[str, object] = {"score": _corpus_versions(paths)}
    for step, reads in ((s.name, s.reads) for s in STEPS.values() if s.name != "score"):
        jobs = sorted(j for j, row in log.items() if set(row["tables"]) & set(reads))
        out[step] = {j: [log[j]["inputs"], log[j]["code_version"]] for j in jobs} or None
    return out


def _code_versions() -> dict[str, object]:
    return {name: step.code_version() for name, step in STEPS.items()}


def plan_key(entry: ModelEntry, step: str, corpus: str | None, data: dict, code: dict, fingerprint: dict) -> str:
    settings = {"dtype": entry.dtype, "device": entry.device}
    if step == "score":
        settings.update(context_length=entry.context_length, stride=entry.stride, top_k=entry.top_k)
        data_version = (data.get("score") or {}).get(corpus)
    elif step == "entropy":
        settings.update(samples=entry.entropy_samples, alpha=entry.entropy_alpha)
        data_version = data.get(step)
    elif step == "temperature":
        settings.update(context_length=entry.context_length, stride=entry.stride, temperatures=entry.temperatures)
        data_version = data.get(step)
    else:
        data_version = data.get(step)
    return digest(
        {
            "model": entry.name,
            "fingerprint": fingerprint,
            "step": step,
            "corpus": corpus,
            "data": data_version,
            "code": code[step],
            "settings": settings,
        }
    )


def _ledger(paths: Paths) -> dict:
    return read_json(paths.warehouse / STATE_DIR / LEDGER).get("tasks", {})


def _complete(paths: Paths, rec: dict | None) -> bool:
    if not rec:
        return False
    if rec.get("run_dir") is None:  # top1 of a model with the game's tokenizer: dbt compares its tokens
        return bool(rec.get("exact_token"))
    return (paths.warehouse / rec["run_dir"] / "_run.json").exists()


def plan_scoring(paths: Paths, models=None) -> list[ScoringTask]:
    """Every (model, step, corpus) the models file asks for (and every model on each user corpus of the warehouse),
    in file order, each with `done` set when the
    ledger maps its plan key to a complete run. `models`: a list of ModelEntry, a models file, or None
    (--models / $PREDICTABASE_MODELS / models.toml). Loads no model."""
    from predictabase.ingest.corpus_declarations import user_corpora

    entries = _models(models)
    data, code, ledger = _data_versions(paths), _code_versions(), _ledger(paths)
    # every corpus the user declared: a refresh ingests it before it scores, and a dry run lists the scoring of one
    # not ingested yet too (its data version unknown until then, so its tasks are not done)
    own = user_corpora(paths)
    tasks = []
    for e in entries:
        fp = model_table.fingerprint(e.name)
        # every model scores every user corpus (`corpus add`); `corpora` of models.toml picks the shipped ones
        wanted = [(step.name, c) for step in STEPS.values() for c in step.tasks_for(e, own)]
        for step, corpus in wanted:
            key = plan_key(e, step, corpus, data, code, fp)
            tasks.append(ScoringTask(e.name, step, corpus, e, key, _complete(paths, ledger.get(key))))
    return tasks


def _record(
    paths: Paths, task: ScoringTask, run_dir: Path | None, run_id: str | None, exact_token: bool = False
) -> None:
    """Note a finished task in the ledger under its plan key, recomputed now (a hub model that was not in the
    local cache before scoring has a revision now)."""
    entry = task.entry
    key = plan_key(
        entry, task.step, task.corpus, _data_versions(paths), _code_versions(), model_table.fingerprint(entry.name)
    )
    path = paths.warehouse / STATE_DIR / LEDGER
    data = read_json(path)
    tasks = {k: v for k, v in data.get("tasks", {}).items() if _complete(paths, v)}  # drop superseded runs
    tasks[key] = {
        "model": task.model,
        "step": task.step,
        "corpus": task.corpus,
        "run_id": run_id,
        "run_dir": str(run_dir.relative_to(paths.warehouse)) if run_dir is not None else None,
        "exact_token": exact_token,
        "recorded_at": utc_now(),
    }
    write_json(path, {"version": 1, "tasks": tasks})
    failpoint("refresh.scored")


def record_command_runs(
    paths: Paths,
    step: str,
    model: str,
    runs: list,
    *,
    context_length: int | None = None,
    stride: int | None = None,
    top_k: int = 10,
    dtype: str | None = None,
    device: str | None = None,
) -> None:
    """Note the runs that a `score`, `top1` or `cloze` command made or found complete (the main job's, `all`,
    among them) in the ledger, as the tasks of a models.toml entry naming the same model with the same settings:
    a refresh after the command knows them done, and neither its dry run lists them nor the refresh loads the
    model for them. The command passes only runs made as a refresh makes them (whole corpora, the step's
    defaults, the warehouse's own folders); `runs`: the step's StepRun objects."""
    entry = ModelEntry(
        name=model,
        top1=True,
        cloze=True,
        context_length=context_length,
        stride=stride,
        top_k=top_k,
        dtype=dtype,
        device=device,
    )
    for run in runs:
        corpus = run.corpus if step == "score" else STEPS[step].tasks_for(entry)[0]
        _record(paths, ScoringTask(model, step, corpus, entry), run.run_dir, run.run_id, exact_token=run.exact_token)


def _entry_of(task: ScoringTask, models=None) -> ModelEntry:
    if task.entry is not None:
        return task.entry
    for e in _models(models):
        if e.name == task.model:
            return e
    from predictabase.core.errors import OptionError

    raise OptionError("--models", f"no model {task.model!r} in the models file")


def run_tasks(paths: Paths, tasks: list[ScoringTask], show_progress: bool = False, engine=None) -> list[str]:
    """Run the tasks of one model and one step (one model load) through the step's own runner
    (`predictabase.ingest.scoring.steps`), recording each finished run in the ledger; what happened, one line per
    task."""
    tasks = [ScoringTask(t.model, t.step, t.corpus, _entry_of(t), t.key, t.done) for t in tasks]
    if len({(t.model, t.step) for t in tasks}) != 1:
        raise ValueError("run_tasks runs the tasks of one model and one step")
    step = STEPS.get(tasks[0].step)
    if step is None:
        raise ValueError(f"unknown scoring step {tasks[0].step!r}; one of {', '.join(STEPS)}")
    out = []
    for t, run in zip(tasks, step.run(paths, tasks[0].entry, [t.corpus for t in tasks], show_progress, engine)):
        _record(paths, t, run.run_dir, run.run_id, exact_token=run.exact_token)
        out.append(f"{t.label}: {run.status}")
    return out


def run_scoring_task(paths: Paths, task: ScoringTask, show_progress: bool = False, engine=None) -> str:
    """Run one task (a Dagster partition, or a step of `refresh`) and record it in the ledger; a task
    whose run is complete costs a model load and writes nothing but the ledger entry. `engine`: None
    (this process) or the Ray engine's options."""
    return run_tasks(paths, [task], show_progress, engine)[0]
