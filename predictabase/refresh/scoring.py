"""The refresh's model stages: the scoring tasks the models file asks for, each keyed by what it is made of
(model fingerprint, data version, code version, settings), the ledger of finished tasks, and the task runner the
refresh and the Dagster scoring assets share."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ingest.scoring import model_table
from ingest.scoring.steps import STEPS
from predictabase.config import Paths
from predictabase.failpoints import failpoint
from predictabase.models_config import ModelEntry, load_models_config
from predictabase.refresh.state import LEDGER, STATE_DIR, connect_ro, digest, read_json, utc_now, write_json


@dataclass(frozen=True)
class ScoringTask:
    model: str                  # the models.toml name
    step: str                   # score | top1 | cloze
    corpus: str | None          # score: the corpus; top1: lm_game; cloze: None (UCL + Provo)
    entry: ModelEntry | None = field(default=None, compare=False)
    key: str = field(default="", compare=False)       # the plan key (see `plan_key`)
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
    from ingest.datasets.registry import read_ingest_log
    log = read_ingest_log(paths)
    out: dict[str, object] = {"score": _corpus_versions(paths)}
    for step, reads in ((s.name, s.reads) for s in STEPS.values() if s.name != "score"):
        jobs = sorted(j for j, row in log.items() if set(row["tables"]) & set(reads))
        out[step] = {j: [log[j]["inputs"], log[j]["code_version"]] for j in jobs} or None
    return out


def _code_versions() -> dict[str, object]:
    from ingest.scoring import cloze, pipeline, top1
    t1 = asdict(top1.Top1Settings())
    t1.pop("batch_tokens")  # speed only (top1.make_run_id)
    return {"score": [pipeline.SCORER_VERSION, pipeline.DEFAULT_CONTEXT_CAP], "top1": [top1.PREDICTOR_VERSION, t1],
            "cloze": [cloze.SCORER_VERSION]}


def plan_key(entry: ModelEntry, step: str, corpus: str | None, data: dict, code: dict, fingerprint: dict) -> str:
    settings = {"dtype": entry.dtype, "device": entry.device}
    if step == "score":
        settings.update(context_length=entry.context_length, stride=entry.stride, top_k=entry.top_k)
        data_version = (data.get("score") or {}).get(corpus)
    else:
        data_version = data.get(step)
    return digest({"model": entry.name, "fingerprint": fingerprint, "step": step, "corpus": corpus,
                 "data": data_version, "code": code[step], "settings": settings})


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
    from ingest.corpus_declarations import user_corpora
    entries = _models(models)
    data, code, ledger = _data_versions(paths), _code_versions(), _ledger(paths)
    # every corpus the user declared: a refresh ingests it before it scores, and a dry run lists the scoring of one
    # not ingested yet too (its data version unknown until then, so its tasks are not done)
    own = user_corpora(paths)
    tasks = []
    for e in entries:
        fp = model_table.fingerprint(e.name)
        # every model scores every user corpus (`corpus add`); `corpora` of models.toml picks the shipped ones
        wanted = [("score", c) for c in (*e.corpora, *own)] + ([("top1", "lm_game")] if e.top1 else []) + \
                 ([("cloze", None)] if e.cloze else [])
        for step, corpus in wanted:
            key = plan_key(e, step, corpus, data, code, fp)
            tasks.append(ScoringTask(e.name, step, corpus, e, key, _complete(paths, ledger.get(key))))
    return tasks


def _record(paths: Paths, task: ScoringTask, run_dir: Path | None, run_id: str | None, exact_token: bool = False
            ) -> None:
    """Note a finished task in the ledger under its plan key, recomputed now (a hub model that was not in the
    local cache before scoring has a revision now)."""
    entry = task.entry
    key = plan_key(entry, task.step, task.corpus, _data_versions(paths), _code_versions(), model_table.fingerprint(entry.name))
    path = paths.warehouse / STATE_DIR / LEDGER
    data = read_json(path)
    tasks = {k: v for k, v in data.get("tasks", {}).items() if _complete(paths, v)}  # drop superseded runs
    tasks[key] = {"model": task.model, "step": task.step, "corpus": task.corpus, "run_id": run_id,
                  "run_dir": str(run_dir.relative_to(paths.warehouse)) if run_dir is not None else None,
                  "exact_token": exact_token, "recorded_at": utc_now()}
    write_json(path, {"version": 1, "tasks": tasks})
    failpoint("refresh.scored")


def _entry_of(task: ScoringTask, models=None) -> ModelEntry:
    if task.entry is not None:
        return task.entry
    for e in _models(models):
        if e.name == task.model:
            return e
    from predictabase.errors import OptionError
    raise OptionError("--models", f"no model {task.model!r} in the models file")


def _score_settings(e: ModelEntry):
    from ingest.scoring import ScoreSettings
    return ScoreSettings(context_length=e.context_length, stride=e.stride, top_k=e.top_k, device=e.device,
                         dtype=e.dtype)


def _run_score(paths: Paths, tasks: list[ScoringTask], show_progress: bool, engine=None) -> list[str]:
    """Score several corpora of one model (one model load); record each run."""
    from ingest.scoring import score_corpora, store
    e = tasks[0].entry
    corpora = [t.corpus for t in tasks]
    if engine is None:
        done = score_corpora(paths, e.name, corpora, _score_settings(e), show_progress=show_progress)
    else:
        from ingest.scoring.pipeline import score_corpora_ray
        done = score_corpora_ray(paths, e.name, corpora, _score_settings(e), engine, show_progress=show_progress)
    out = []
    for t, run in zip(tasks, done):
        _record(paths, t, store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"]),
                run["run_id"])
        out.append(f"{t.label}: {run['status']}")
    return out


def run_scoring_task(paths: Paths, task: ScoringTask, show_progress: bool = False, engine=None) -> str:
    """Run one task (a Dagster partition, or a step of `refresh`) and record it in the ledger; a task
    whose run is complete costs a model load and writes nothing but the ledger entry. `engine`: None
    (this process) or the Ray engine's options."""
    task = ScoringTask(task.model, task.step, task.corpus, _entry_of(task), task.key, task.done)
    e = task.entry
    if task.step == "score":
        return _run_score(paths, [task], show_progress, engine)[0]
    if task.step == "top1":
        from ingest.scoring import top1
        run = top1.run_top1(paths, e.name, top1.Top1Settings(), device=e.device, dtype=e.dtype,
                            show_progress=show_progress, engine=engine)
        if run.get("method") == "exact_token":
            _record(paths, task, None, None, exact_token=True)
            return f"{task.label}: the game's tokenizer (dbt compares its scored tokens)"
        _record(paths, task, top1.run_dir(paths, run["model_key"], run["run_id"]), run["run_id"])
        return f"{task.label}: {'already complete' if run.get('skipped') else 'predicted'}"
    if task.step == "cloze":
        from ingest.scoring import cloze
        run = cloze.run_cloze(paths, e.name, device=e.device, dtype=e.dtype, show_progress=show_progress,
                              engine=engine)
        _record(paths, task, cloze.run_dir(paths, run["model_key"], run["run_id"]), run["run_id"])
        return f"{task.label}: {'already complete' if run.get('skipped') else 'scored'}"
    raise ValueError(f"unknown scoring step {task.step!r}; one of {', '.join(STEPS)}")
