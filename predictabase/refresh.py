"""`predictabase refresh`: bring the warehouse and the published snapshot up to date, doing only what changed.

Four steps, each deciding from durable state (never from what an earlier, possibly killed, refresh meant
to do), all under the warehouse's writer lock (docs/refresh.md explains each decision):

1. fetch   - every catalog file; a file present with the catalog's sha256 is not fetched again, and
             raw.source_files rows are rewritten only for files fetched now (`fetch_and_record`).
2. ingest  - the jobs whose raw.ingest_log row is missing, whose inputs' sha256 no longer match the
             catalog, whose catalog datasets changed, whose loader code changed (`code_version`), whose
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
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ingest.scoring import model_table
from predictabase.config import DBT_PROJECT_DIR, Paths, mirror_dir
from predictabase.failpoints import failpoint
from predictabase.fsutil import atomic_path
from predictabase.models_config import ModelEntry, load_models_config
from predictabase import runs
from predictabase.warehouse.lock import writer_lock

STATE_DIR = "refresh"          # <warehouse>/refresh/: the ledger and the build state
LEDGER = "scored.json"
STATE = "state.json"
#: marts that describe the build itself (row counts, invocation): rebuilt whenever dbt runs
INVENTORY_MARTS = ("mart_build_info", "mart_warehouse_tables")
#: the Parquet folders dbt reads as sources, found in a source's (rendered) external_location; the first
#: that occurs wins (the cloze runs' location goes through token_scores/..)
PARQUET_DIRS = ("cloze_model_scores", "top1_predictions", "token_scores")
#: the raw tables each model step reads (its data version is that of the jobs that wrote them)
STEP_READS = {"top1": ("raw.documents", "raw.top1_guesses", "raw.game_doc_tokens", "raw.game_vocabulary"),
              "cloze": ("raw.documents", "raw.words", "raw.cloze_responses", "raw.cloze_norms")}
STEPS = ("score", "top1", "cloze")
TASK_DIRS = {"score": "token_scores", "top1": "top1_predictions", "cloze": "cloze_model_scores"}


@dataclass
class StepReport:
    name: str      # fetch | ingest | score | build
    action: str    # what it did, or "nothing to do" / "would ..." (dry run)
    detail: str    # why: the files, jobs, tasks, dbt selection
    seconds: float


@dataclass
class RefreshReport:
    steps: list[StepReport] = field(default_factory=list)
    changed: bool = False           # whether anything was written
    dbt_select: str | None = None   # the dbt selection run ("" = everything); None: dbt did not run
    published: bool = False


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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict) -> None:
    """Write atomically (fsutil.atomic_path: a temporary beside it, then os.replace)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")


def _connect_ro(path: Path):
    import duckdb
    return duckdb.connect(str(path), read_only=True)


# =========================================================================== 1. fetch

def fetch_plan(paths: Paths) -> list[str]:
    """Catalog paths a fetch would copy or download (missing, or not the catalog's sha256)."""
    from predictabase.fsutil import sha256_of
    from ingest.sources.catalog import load_catalog
    out = []
    for sf in load_catalog():
        dest = paths.raw / sf.path
        if not dest.exists() or sha256_of(dest) != sf.sha256:
            out.append(sf.path)
    return out


# =========================================================================== 2. ingest

def _raw_tables(paths: Paths) -> set[str]:
    if not paths.duckdb.exists():
        return set()
    with _connect_ro(paths.duckdb) as con:
        return {f"raw.{r[0]}" for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'").fetchall()}


def plan_ingest(paths: Paths) -> dict[str, str]:
    """job -> why it must be (re-)ingested, in registry order; {} when every job is current."""
    from ingest.datasets.registry import JOBS, NAMES, catalog_versions, code_version, read_ingest_log
    from ingest.sources.catalog import load_catalog
    log = read_ingest_log(paths)
    catalog = {sf.path: sf.sha256 for sf in load_catalog()}
    tables = _raw_tables(paths)
    todo: dict[str, str] = {}
    for name in NAMES:
        row = log.get(name)
        if row is None:
            todo[name] = "never ingested"
            continue
        if row["code_version"] != code_version(name):
            todo[name] = "its loader code changed"
            continue
        changed = sorted(p for p, sha in row["inputs"].items() if catalog.get(p) != sha)
        if changed:
            todo[name] = f"{changed[0]} changed" + (f" (+{len(changed) - 1} more)" if len(changed) > 1 else "")
            continue
        now = catalog_versions(row["datasets"])
        moved = sorted(d for d, v in (row.get("datasets") or {}).items() if now.get(d) != v)
        if moved:
            todo[name] = f"the catalog of {', '.join(moved)} changed"
            continue
        missing = sorted(t for t in row["tables"] if t.startswith("raw.") and t not in tables)
        if missing:
            todo[name] = f"{missing[0]} is missing"
    for name in NAMES:  # registry order: a dependency comes first
        if name not in todo:
            deps = [d for d in JOBS[name].after if d in todo]
            if deps:
                todo[name] = f"it reads {deps[0]}, re-ingested"
    return {n: todo[n] for n in NAMES if n in todo}


# =========================================================================== 3. score

def _models(models) -> list[ModelEntry]:
    if isinstance(models, list):
        return models
    return load_models_config(models)




def _corpus_versions(paths: Paths) -> dict[str, str]:
    if not paths.duckdb.exists():
        return {}
    import duckdb
    with _connect_ro(paths.duckdb) as con:
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
    for step, reads in STEP_READS.items():
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
    return _sha({"model": entry.name, "fingerprint": fingerprint, "step": step, "corpus": corpus,
                 "data": data_version, "code": code[step], "settings": settings})


def _ledger(paths: Paths) -> dict:
    return _read_json(paths.warehouse / STATE_DIR / LEDGER).get("tasks", {})


def _complete(paths: Paths, rec: dict | None) -> bool:
    if not rec:
        return False
    if rec.get("run_dir") is None:  # top1 of a model with the game's tokenizer: dbt compares its tokens
        return bool(rec.get("exact_token"))
    return (paths.warehouse / rec["run_dir"] / "_run.json").exists()


def plan_scoring(paths: Paths, models=None) -> list[ScoringTask]:
    """Every (model, step, corpus) the models file asks for, in file order, each with `done` set when the
    ledger maps its plan key to a complete run. `models`: a list of ModelEntry, a models file, or None
    (--models / $PREDICTABASE_MODELS / models.toml). Loads no model."""
    entries = _models(models)
    data, code, ledger = _data_versions(paths), _code_versions(), _ledger(paths)
    tasks = []
    for e in entries:
        fp = model_table.fingerprint(e.name)
        wanted = [("score", c) for c in e.corpora] + ([("top1", "lm_game")] if e.top1 else []) + \
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
    data = _read_json(path)
    tasks = {k: v for k, v in data.get("tasks", {}).items() if _complete(paths, v)}  # drop superseded runs
    tasks[key] = {"model": task.model, "step": task.step, "corpus": task.corpus, "run_id": run_id,
                  "run_dir": str(run_dir.relative_to(paths.warehouse)) if run_dir is not None else None,
                  "exact_token": exact_token, "recorded_at": _now()}
    _write_json(path, {"version": 1, "tasks": tasks})
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


def _run_score(paths: Paths, tasks: list[ScoringTask], show_progress: bool) -> list[str]:
    """Score several corpora of one model (one model load); record each run."""
    from ingest.scoring import score_corpora, store
    e = tasks[0].entry
    done = score_corpora(paths, e.name, [t.corpus for t in tasks], _score_settings(e), show_progress=show_progress)
    out = []
    for t, run in zip(tasks, done):
        _record(paths, t, store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"]),
                run["run_id"])
        out.append(f"{t.label}: {run['status']}")
    return out


def run_scoring_task(paths: Paths, task: ScoringTask, show_progress: bool = False) -> str:
    """Run one task (a Dagster partition, or a step of `refresh`) and record it in the ledger; a task
    whose run is complete costs a model load and writes nothing but the ledger entry."""
    task = ScoringTask(task.model, task.step, task.corpus, _entry_of(task), task.key, task.done)
    e = task.entry
    if task.step == "score":
        return _run_score(paths, [task], show_progress)[0]
    if task.step == "top1":
        from ingest.scoring import top1
        run = top1.run_top1(paths, e.name, top1.Top1Settings(), device=e.device, dtype=e.dtype,
                            show_progress=show_progress)
        if run.get("method") == "exact_token":
            _record(paths, task, None, None, exact_token=True)
            return f"{task.label}: the game's tokenizer (dbt compares its scored tokens)"
        _record(paths, task, top1.run_dir(paths, run["model_key"], run["run_id"]), run["run_id"])
        return f"{task.label}: {'already complete' if run.get('skipped') else 'predicted'}"
    if task.step == "cloze":
        from ingest.scoring import cloze
        run = cloze.run_cloze(paths, e.name, device=e.device, dtype=e.dtype, show_progress=show_progress)
        _record(paths, task, cloze.run_dir(paths, run["model_key"], run["run_id"]), run["run_id"])
        return f"{task.label}: {'already complete' if run.get('skipped') else 'scored'}"
    raise ValueError(f"unknown scoring step {task.step!r}; one of {', '.join(STEPS)}")


# =========================================================================== 4. build

def _project_hash(project_dir: Path = DBT_PROJECT_DIR) -> str:
    """sha256 of every file of the dbt project (not its logs/, target/, dbt_packages/)."""
    h = hashlib.sha256()
    for f in sorted(project_dir.rglob("*")):
        rel = f.relative_to(project_dir)
        if not f.is_file() or rel.parts[0] in {"logs", "target", "dbt_packages"} or "__pycache__" in rel.parts \
                or f.name.startswith("."):
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _dbt_versions() -> str:
    out = []
    for pkg in ("dbt-core", "dbt-duckdb", "duckdb"):
        try:
            out.append(f"{pkg}=={metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            out.append(f"{pkg}==?")
    return " ".join(out)


def _runs_stamp(root: Path, pattern: str) -> str:
    """The complete runs under a Parquet folder: their `_run.json` files' paths (the run id is a hash of
    everything the run is made of) and sizes; not mtimes, so a copied warehouse is the same warehouse."""
    if not root.exists():
        return _sha([])
    return _sha([[str(f.relative_to(root)), f.stat().st_size] for f in sorted(root.glob(pattern))])


def fingerprints(paths: Paths) -> dict:
    """What the dbt models are built from, cheaply: per raw table the ingests that wrote it (raw.ingest_log),
    raw.source_files, the complete runs of each Parquet source, the dbt project's files, the dbt version."""
    from ingest.datasets.registry import read_ingest_log
    from ingest.scoring.cloze import scores_root
    tables: dict[str, list] = {}
    for job, row in sorted(read_ingest_log(paths).items()):
        for t in row["tables"]:
            if t.startswith("raw."):
                tables.setdefault(t, []).append([job, row["ingest_id"]])
    source_files = None
    if paths.duckdb.exists():
        import duckdb
        with _connect_ro(paths.duckdb) as con:
            try:
                source_files = _sha(con.execute("SELECT path, sha256, origin, fetched_at FROM raw.source_files "
                                                "ORDER BY path").fetchall())
            except duckdb.Error:
                source_files = None
    parquet = {"token_scores": _runs_stamp(paths.token_scores, "*/*/*/_run.json"),
               "top1_predictions": _runs_stamp(paths.top1_predictions, "*/*/_run.json"),
               "cloze_model_scores": _runs_stamp(scores_root(paths), "*/*/_run.json")}
    return {"raw": {t: _sha(v) for t, v in sorted(tables.items())}, "source_files": source_files,
            "parquet": parquet, "project": _project_hash(), "dbt": _dbt_versions()}


def _state_path(paths: Paths) -> Path:
    return paths.warehouse / STATE_DIR / STATE


def _manifest_dir(paths: Paths, name: str) -> Path:
    return paths.warehouse / "dbt" / "state" / name


def load_state(paths: Paths) -> dict:
    """The build state: {"built": {...}, "published": {...}} (either may be absent)."""
    return _read_json(_state_path(paths))


def _manifest_sources(manifest: dict) -> dict[str, list[dict]]:
    """table key -> the sources that read it: "raw.<table>" for DuckDB sources, the Parquet folder name for
    external ones ("?" for an external source this module does not know)."""
    out: dict[str, list[dict]] = {}
    for src in (manifest.get("sources") or {}).values():
        location = str((src.get("meta") or {}).get("external_location") or
                       (src.get("config") or {}).get("meta", {}).get("external_location") or "")
        if location:
            key = next((d for d in PARQUET_DIRS if f"/{d}/" in location), "?")
        else:
            key = f"{src.get('schema')}.{src.get('identifier') or src.get('name')}"
        out.setdefault(key, []).append(src)
    return out


def dbt_selection(paths: Paths, built: dict | None, now: dict) -> tuple[str | None, list[str], list[str]] | None:
    """(select, extra dbt args, reasons) for what changed since `built`; (None, [], [why]) for a full build;
    None when nothing dbt reads changed."""
    if not built or not built.get("fingerprints"):
        return None, [], ["no earlier build"]
    old = built["fingerprints"]
    mdir = _manifest_dir(paths, str(built.get("manifest")))
    manifest = _read_json(mdir / "manifest.json")
    if not manifest:
        return None, [], ["the manifest of the last build is missing"]
    if old.get("dbt") != now["dbt"]:
        return None, [], [f"dbt changed ({old.get('dbt')} -> {now['dbt']})"]
    sources = _manifest_sources(manifest)
    changed_tables = sorted(t for t in set(old.get("raw", {})) | set(now["raw"])
                            if old.get("raw", {}).get(t) != now["raw"].get(t))
    if old.get("source_files") != now["source_files"]:
        changed_tables.append("raw.source_files")
    changed_dirs = sorted(d for d in now["parquet"] if old.get("parquet", {}).get(d) != now["parquet"][d])
    project = old.get("project") != now["project"]
    selectors: list[str] = []
    reasons: list[str] = []
    for key in changed_tables + changed_dirs + (["?"] if changed_dirs else []):
        for src in sources.get(key, []):
            sel = f"source:{src['source_name']}.{src['name']}+"
            if sel not in selectors:
                selectors.append(sel)
    if changed_tables:
        reasons.append(f"{len(changed_tables)} raw table(s) changed: {', '.join(changed_tables[:4])}"
                       + (" ..." if len(changed_tables) > 4 else ""))
    if changed_dirs:
        reasons.append(f"new complete runs in {', '.join(changed_dirs)}")
    extra: list[str] = []
    if project:
        selectors.append("state:modified+")
        extra = ["--state", str(mdir)]
        reasons.append("the dbt project changed")
    if not selectors:
        return ("", [], reasons) if reasons else None  # changed, but nothing dbt reads
    nodes = {n.get("name") for n in (manifest.get("nodes") or {}).values()}
    selectors += [m for m in INVENTORY_MARTS if m in nodes]
    return " ".join(selectors), extra, reasons


def _warehouse_invocation(paths: Paths) -> str | None:
    import duckdb
    try:
        with _connect_ro(paths.duckdb) as con:
            row = con.execute("SELECT invocation_id FROM marts.mart_build_info LIMIT 1").fetchone()
    except duckdb.Error:
        return None
    return str(row[0]) if row else None


def _snapshot_info(paths: Paths) -> tuple[str | None, str | None]:
    """(snapshot_id, dbt_invocation_id) of the published snapshot; (None, None) when it cannot be read."""
    if not paths.marts.exists():
        return None, None
    import duckdb
    try:
        with duckdb.connect(":memory:") as con:
            con.execute(f"ATTACH '{str(paths.marts).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
            row = con.execute("SELECT snapshot_id, dbt_invocation_id FROM snap.main.snapshot_info").fetchone()
    except duckdb.Error:
        return None, None
    return (str(row[0]), None if row[1] is None else str(row[1])) if row else (None, None)


def _save_built(paths: Paths, now: dict, select: str | None) -> dict:
    """After a successful dbt build: keep its manifest (for the next `state:modified`) and record what it
    was built from. The manifest goes into a folder named by its hash first; the state file, replaced
    atomically, is what names it, so a kill in between leaves the previous build's state whole."""
    target = paths.warehouse / "dbt" / "target" / "manifest.json"
    data = target.read_bytes()
    name = hashlib.sha256(data).hexdigest()[:12]
    mdir = _manifest_dir(paths, name)
    if not (mdir / "manifest.json").exists():
        with atomic_path(mdir / "manifest.json") as tmp:
            tmp.write_bytes(data)
    built = {"fingerprints": now, "manifest": name, "invocation_id": _warehouse_invocation(paths),
             "select": select, "at": _now()}
    state = load_state(paths)
    state["built"] = built
    _write_json(_state_path(paths), state)
    for old in (paths.warehouse / "dbt" / "state").iterdir():  # earlier builds' manifests
        if old.is_dir() and old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return built


def _save_published(paths: Paths, now: dict) -> None:
    state = load_state(paths)
    state["published"] = {"fingerprints": now, "snapshot_id": _snapshot_info(paths)[0], "at": _now()}
    _write_json(_state_path(paths), state)
    failpoint("refresh.state_saved")


PENDING = "(pending)"


def _with_pending(now: dict, pending: dict | None) -> dict:
    """The fingerprints a dry run expects after the steps it did not run: the raw tables of the jobs it would
    ingest, raw.source_files when it would fetch, the Parquet folders of the tasks it would score."""
    if not pending:
        return now
    out = json.loads(json.dumps(now))
    for t in pending.get("raw", ()):
        out["raw"][t] = PENDING
    if pending.get("source_files"):
        out["source_files"] = PENDING
    for d in pending.get("parquet", ()):
        out["parquet"][d] = PENDING
    return out


def build_step(paths: Paths, dry_run: bool = False, pending: dict | None = None
               ) -> tuple[str, str, str | None, bool]:
    """Bring the warehouse's dbt models and the published snapshot up to date with the inputs;
    returns (action, detail, dbt selection run or None when dbt did not run ("" = everything), published).
    `pending` (dry runs): what the skipped steps would change (`_with_pending`)."""
    now = _with_pending(fingerprints(paths), pending if dry_run else None)
    state = load_state(paths)
    built, published = state.get("built"), state.get("published")
    snapshot_id, snapshot_invocation = _snapshot_info(paths)
    if published and published.get("fingerprints") == now and snapshot_id is not None:
        return "nothing to do", "the published snapshot was built from the current inputs", None, False
    invocation = _warehouse_invocation(paths) if paths.duckdb.exists() else None
    plan = dbt_selection(paths, built, now)
    # the warehouse's dbt models are current when nothing dbt reads changed since the last successful
    # build (a dbt run since over the same inputs and project, e.g. `predictabase build`, builds the same)
    current = bool(built and invocation and (plan is None or plan[0] == ""))
    if current:
        why = "no input dbt reads changed" if built.get("fingerprints") != now else "dbt already built them"
        if snapshot_invocation == invocation:  # e.g. killed after publishing, before recording it
            if not dry_run:
                _save_built_same(paths, built, now, invocation)
                _save_published(paths, now)
            return "recorded", f"{why}; the snapshot of that build is published", None, False
        if dry_run:
            return "would publish", why, None, False
        from predictabase.warehouse.publish import publish
        _save_built_same(paths, built, now, invocation)
        publish(paths)
        _save_published(paths, now)
        return "published", f"{why} (an earlier refresh stopped before publishing)", None, True
    select, extra, reasons = plan if plan is not None and plan[0] != "" else \
        (None, [], ["the warehouse holds no dbt build"])
    what = "(everything)" if select is None else select
    if dry_run:
        return "would build and publish", f"{'; '.join(reasons)}; dbt build --select {what}", select or "", False
    from predictabase.warehouse.build import build_and_publish
    # the build state is saved between dbt and publish, so a refresh killed after dbt publishes without
    # building again
    build_and_publish(paths, select=select, extra_dbt_args=extra, after_dbt=lambda: _save_built(paths, now, select))
    _save_published(paths, now)
    return "built and published", f"{'; '.join(reasons)}; dbt build --select {what}", select or "", True


def record_full_build(paths: Paths, now: dict) -> None:
    """`predictabase build` without --select just built and published everything from the inputs `now`
    (fingerprinted before dbt ran): the next refresh starts from that build instead of a full one."""
    _save_built(paths, now, None)
    _save_published(paths, now)


def _save_built_same(paths: Paths, built: dict, now: dict, invocation: str | None) -> None:
    """The last build stands for the current inputs (they moved only where dbt does not read)."""
    state = load_state(paths)
    state["built"] = {**built, "fingerprints": now, "invocation_id": invocation}
    _write_json(_state_path(paths), state)


# =========================================================================== the refresh

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


def refresh(paths: Paths, mirror: str | Path | None = None, models=None, *, dry_run: bool = False,
            show_progress: bool = True, parent_run_id: str | None = None, wait_s: float = 0.0) -> RefreshReport:
    """Fetch, ingest, score and build only what changed (module docstring). Holds the writer lock for the
    whole run (re-entrant: the CLI already holds it). `models`: list of ModelEntry, a models file or None.
    The refresh and each step are recorded in the runs log: inside `predictabase refresh` under that
    command's run, else as a `refresh` run of its own (child of `parent_run_id`, e.g. a Dagster run's)."""
    outer = runs.current()
    if outer is not None and outer.command == "refresh":
        return _refresh(paths, mirror, models, dry_run, show_progress, outer.run_id, wait_s)
    if not dry_run:
        paths.warehouse.mkdir(parents=True, exist_ok=True)
    args = {"mirror": str(mirror) if mirror else None, "dry_run": dry_run}
    with runs.recorded(paths.runs_log, "refresh", args, parent_run_id=parent_run_id) as run:
        report = _refresh(paths, mirror, models, dry_run, show_progress, run.run_id, wait_s)
        run.rows_out = sum(1 for st in report.steps if not st.action.startswith(("nothing", "would")))
        return report


def _refresh(paths: Paths, mirror, models, dry_run: bool, show_progress: bool, parent: str | None,
             wait_s: float) -> RefreshReport:
    entries = _models(models)  # a bad models file fails before anything
    report = RefreshReport()
    pending: dict = {"raw": [], "source_files": False, "parquet": []}  # dry run: what the skipped steps change
    log = paths.runs_log
    with writer_lock(paths, "refresh", wait_s):
        # 1. fetch
        with _step(report, "fetch", log, parent, {"mirror": str(mirror) if mirror else None, "dry_run": dry_run}) as s:
            if dry_run:
                todo = fetch_plan(paths)
                pending["source_files"] = bool(todo)
                s.update(action=f"would fetch {len(todo)} file(s)" if todo else "nothing to do",
                         detail=_short(todo) if todo else "every catalog file present with its sha256")
            else:
                from ingest.sources.fetch import fetch_and_record
                results = fetch_and_record(paths, mirror_dir(mirror), show_progress=show_progress)
                got = [r.file.path for r in results if r.status != "present"]
                s.update(rows_in=len(results), rows_out=len(got))
                if got:
                    report.changed = True
                    s.update(action=f"fetched {len(got)} file(s)", detail=_short(got))
                else:
                    s.update(detail=f"all {len(results)} catalog files present with their sha256")
        # 2. ingest
        with _step(report, "ingest", log, parent, {"dry_run": dry_run}) as s:
            plan = plan_ingest(paths)
            failpoint("refresh.planned")
            if not plan:
                s.update(detail="every job's inputs, code and tables are as ingested")
            elif dry_run:
                from ingest.datasets.registry import read_ingest_log
                logged = read_ingest_log(paths)
                pending["raw"] = sorted({t for j in plan for t in (logged.get(j) or {}).get("tables", ())} |
                                        {f"raw.<tables of {j}, known once ingested>" for j in plan if j not in logged})
                s.update(action=f"would ingest {len(plan)} job(s)", detail=_short([f"{j} ({why})" for j, why in plan.items()]))
            else:
                from ingest.datasets.registry import run_ingest
                counts = run_ingest(paths, list(plan), show_progress=show_progress)
                report.changed = True
                s.update(action=f"ingested {len(plan)} job(s)", detail=_short([f"{j} ({why})" for j, why in plan.items()]),
                         rows_out=sum(n for n in counts.values() if isinstance(n, int)))
        # 3. score
        with _step(report, "score", log, parent, {"models": [e.name for e in entries], "dry_run": dry_run}) as s:
            tasks = plan_scoring(paths, entries)
            todo = [t for t in tasks if not t.done]
            s.update(rows_in=len(tasks), rows_out=len(todo))
            if not todo:
                s.update(detail=f"all {len(tasks)} (model, corpus, settings) task(s) scored")
            elif dry_run:
                pending["parquet"] = sorted({TASK_DIRS[t.step] for t in todo})
                s.update(action=f"would score {len(todo)} task(s)", detail=_short([t.label for t in todo]))
            else:
                done: list[str] = []
                by_model: dict[str, list[ScoringTask]] = {}
                for t in todo:
                    if t.step == "score":
                        by_model.setdefault(t.model, []).append(t)
                for group in by_model.values():
                    done += _run_score(paths, group, show_progress)
                for t in todo:
                    if t.step != "score":
                        done.append(run_scoring_task(paths, t, show_progress=show_progress))
                report.changed = True
                s.update(action=f"ran {len(todo)} task(s)", detail=_short(done))
        # 4. dbt build + publish
        with _step(report, "build", log, parent, {"dry_run": dry_run}) as s:
            action, detail, select, published = build_step(paths, dry_run, pending)
            s.update(action=action, detail=detail)
            report.dbt_select, report.published = select, published
            report.changed = report.changed or published or action == "recorded"
    return report


def format_report(report: RefreshReport) -> str:
    """The steps as a short table: step, what it did (or why not), seconds."""
    rows = [(s.name, s.action + (f": {s.detail}" if s.detail else ""), f"{s.seconds:.1f} s") for s in report.steps]
    total = sum(s.seconds for s in report.steps)
    w0 = max(len(r[0]) for r in rows)
    lines = [f"{name:<{w0}}  {secs:>8}  {what}" for name, what, secs in rows]
    lines.append(f"{'total':<{w0}}  {total:>6.1f} s  " + ("changed the warehouse" if report.changed else
                                                          "nothing changed"))
    return "\n".join(lines)
