"""Run dbt over the warehouse. Nothing here computes a metric: `dbt_build` runs the dbt project
(`dbt_project/`), which derives everything."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path


from predictabase.core.config import DBT_PROJECT_DIR, Paths, cache_dir
from predictabase.core.errors import BuildError, OptionError
from predictabase.core.failpoints import failpoint

_ENV_LOCK = threading.Lock()


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block, then restore them (unset ones are removed again)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the duration of a dbt invocation (dbt's env_var reads os.environ);
    one invocation at a time per process."""
    with _ENV_LOCK, environ(values):
        yield


def declarations() -> dict:
    """The shipped corpora (ingest/corpora.toml) and the reading measures (ingest/corpus_declarations.py), in
    their declared order, and what is made of them (the wide scoreboard's comparisons: scoreboard_contract), as
    the dbt project reads them (macros/declarations.sql): its SQL names no corpus or measure of its own. A user's
    corpora reach dbt as rows of raw.corpora instead."""
    from predictabase.ingest import corpus_table
    from predictabase.ingest.corpus_declarations import MEASURE_LABELS, MEASURES, SHIPPED_MEASURES, shipped_measures
    from predictabase.warehouse.scoreboard_contract import wide_comparisons
    return {"corpora": [{"key": c.key, "title": c.title, "language": c.language, "texts": c.texts,
                         "cloze": c.cloze, "cloze_norms": c.cloze_norms, "game": c.game, "reading": list(c.reading),
                         "measures": [m for m in MEASURES if m in shipped_measures(c)]}
                        for c in corpus_table.CORPORA.values()],
            "measures": list(MEASURES), "measure_labels": {m: MEASURE_LABELS[m][0] for m in MEASURES},
            "kind_measures": SHIPPED_MEASURES,
            "exclusions": [{"corpus": c.key, **vars(e)} for c in corpus_table.CORPORA.values()
                           for e in c.exclusions],
            "scoreboard_wide": [name for name, _ in wide_comparisons()]}


def dbt_env(paths: Paths) -> dict[str, str]:
    """The environment the dbt project reads (profiles.yml, the token-score and top-1 sources, the
    declarations)."""
    return {"PREDICTABASE_DUCKDB": str(paths.duckdb), "PREDICTABASE_TOKEN_SCORES": str(paths.token_scores),
            "PREDICTABASE_TOP1_PREDICTIONS": str(paths.top1_predictions),
            "PREDICTABASE_CLOZE_SCORES": str(paths.cloze_model_scores),
            "PREDICTABASE_WORD_ENTROPY": str(paths.word_entropy),
            "PREDICTABASE_TEMPERATURE_SCORES": str(paths.temperature_scores),
            "PREDICTABASE_DECLARATIONS": json.dumps(declarations(), sort_keys=True)}


def dbt_args(paths: Paths, command: str = "build", select: str | None = None,
             project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None,
             extra: list[str] | None = None) -> list[str]:
    """CLI arguments for `dbt <command>` (`command` may be two words: "source freshness"); target/ and
    logs/ live in the warehouse, so builds of different warehouses never share dbt state. `extra`:
    more dbt arguments (e.g. `--state DIR`)."""
    args = [*command.split(), "--project-dir", str(project_dir), "--profiles-dir", str(project_dir),
            "--target-path", str(paths.warehouse / "dbt" / "target"),
            "--log-path", str(paths.warehouse / "dbt" / "logs"),
            "--log-level", "none", "--log-level-file", "debug", "--no-use-colors"]
    if select:
        args += ["--select", select]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars)]
    return args + list(extra or [])


#: dbt's own log (every event at debug level) and what dbt and its Python models print, per warehouse
LOG_FILE = "dbt.log"
CONSOLE_FILE = "dbt-console.log"


def log_dir(paths: Paths) -> Path:
    return paths.warehouse / "dbt" / "logs"


def _first_line(text: str) -> str:
    """The line of a dbt message that says what went wrong: dbt prefixes the error's own lines with
    'Runtime Error in model X (path)' and follows them with the compiled SQL's location; the cause is the
    first line that is neither."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    for ln in lines:
        lower = ln.lower().rstrip(":")
        if lower in ("runtime error", "database error", "compilation error", "encountered an error",
                     "dbtruntimeerror: runtime error"):
            continue
        if not lower.startswith(("runtime error in", "database error in", "compilation error in", "failure in",
                                 "compiled code at", "in macro", "> in macro", "called by")):
            return ln
    return lines[0] if lines else ""


DISK_FULL = ("no space left on device", "disk full", "errno 28", "not enough space")


def _failure(res, log: Path) -> tuple[str, str]:
    """The first failing node's file, and one line: its cause, how many more failed, where dbt's full log is. A
    full disk says so first (every model after it fails the same way)."""
    failing, texts = [], []
    for r in getattr(res.result, "results", None) or []:
        if str(getattr(r, "status", "")).lower() in {"error", "fail", "runtime error"}:
            node = r.node
            where = getattr(node, "original_file_path", None) or node.unique_id
            failing.append((where, f"{node.name}: {_first_line(r.message or '') or r.status}"))
            texts.append(r.message or "")
    if res.exception is not None:
        texts.append(str(res.exception))
        if not failing:
            failing.append(("dbt", _first_line(str(res.exception)) or type(res.exception).__name__))
    if not failing:
        failing.append(("dbt", "failed without a message"))
    where, cause = failing[0]
    disk = next((ln.strip() for t in texts for ln in t.splitlines() if any(m in ln.lower() for m in DISK_FULL)), None)
    if disk is not None:  # every model after it fails the same way: the one thing to say
        cause = f"the disk is full: {disk[:300]}"
    more = f" (and {len(failing) - 1} more failing)" if len(failing) > 1 else ""
    return where, f"{cause}{more}; dbt's full log: {log}"


class _Sink:
    """Where dbt's console output goes while it runs: appended to a file; a write that fails (a full disk)
    is dropped, never raised into dbt or printed."""

    def __init__(self, path: Path):
        self.file = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            big = path.exists() and path.stat().st_size > 10_000_000  # kept to the last runs, like dbt's own log
            self.file = open(path, "w" if big else "a", encoding="utf-8", errors="replace")
        except OSError:
            pass

    def write(self, text: str) -> int:
        if self.file is not None:
            try:
                self.file.write(text)
            except (OSError, ValueError):
                pass
        return len(text)

    def flush(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError, ValueError):
                self.file.flush()

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError, ValueError):
                self.file.close()


class _dbt_console:
    """dbt's console output (its event log, tracebacks of its threads, `--- Logging error ---` blocks when its
    log file cannot be written, what Python models print) goes to `<warehouse>/dbt/logs/dbt-console.log`, not
    the terminal: the terminal gets predictabase's progress and its one-line outcome. `with` gives the
    terminal's stderr (for the progress bar). A class, not a generator: the terminal is given back as the first thing
    its exit does, so that a second Ctrl-C arriving as the first unwinds cannot leave the command's one line
    in dbt's log (a generator's exit runs contextlib's Python code before the restoring `finally`)."""

    def __init__(self, paths: Paths):
        self.paths = paths

    def __enter__(self):
        import logging
        self.saved = sys.stdout, sys.stderr, logging.raiseExceptions
        self.sink = _Sink(log_dir(self.paths) / CONSOLE_FILE)
        sys.stdout = sys.stderr = self.sink
        logging.raiseExceptions = False  # a log record that cannot be written is dropped, not printed
        return self.saved[1]

    def __exit__(self, *exc) -> None:
        sys.stdout, sys.stderr = self.saved[:2]
        import logging
        logging.raiseExceptions = self.saved[2]
        self.sink.close()


class _Progress:
    """A dbt event callback: a progress bar of the nodes dbt finished (on a terminal only), and the
    `build.dbt_node` failpoint after each."""

    def __init__(self, command: str, terminal):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(file=terminal), transient=True, disable=not terminal.isatty())
        self.task = self.bar.add_task(f"dbt {command}", total=None)
        self.command = command

    def __call__(self, event) -> None:
        name = event.info.name
        try:  # a progress bar never breaks dbt
            if name in ("LogStartLine", "LogTestResult", "LogModelResult", "LogSeedResult", "LogNodeResult"):
                total = getattr(event.data, "total", 0)
                if total:
                    self.bar.update(self.task, total=total)
            if name == "NodeFinished":
                node = getattr(getattr(event.data, "node_info", None), "node_name", "")
                self.bar.update(self.task, advance=1, description=f"dbt {self.command}: {node}")
        except Exception:  # noqa: BLE001
            pass
        if name == "NodeFinished":
            failpoint("build.dbt_node")

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)


def run_dbt(paths: Paths, command: str = "build", select: str | None = None,
            project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None, extra: list[str] | None = None):
    """Run a dbt command programmatically (`dbt_vars`: --vars); return dbt's result. dbt's output goes to its
    log files (`_dbt_console`). Raises BuildError (one line) on failure, KeyboardInterrupt when interrupted
    (dbt catches Ctrl-C, cancels its queries and returns it as its result's exception)."""
    from dbt.cli.main import dbtRunner

    paths = Paths(paths.warehouse.resolve())
    if not paths.duckdb.parent.exists():
        paths.duckdb.parent.mkdir(parents=True, exist_ok=True)
    paths.token_scores.mkdir(parents=True, exist_ok=True)
    args = dbt_args(paths, command, select, Path(project_dir).resolve(), dbt_vars, extra)
    # dbt runs in the warehouse's folder, with the database named relative to it: dbt keys its saved parse to the
    # profile, and the database's absolute path there tied the parse to one warehouse, so a copied or moved
    # warehouse (every fault test's) parsed the whole project again (11 s of CPU) instead of reusing the parse its
    # target/ holds. The Parquet roots stay absolute: the warehouse's views keep them (a query of the warehouse
    # from any folder reads the same files), and dbt parses again only the files that read them.
    env = {**dbt_env(paths), "PREDICTABASE_DUCKDB": paths.duckdb.name}
    target = paths.warehouse / "dbt" / "target"
    _seed_parse(target, project_dir)
    with _env(env), contextlib.chdir(paths.warehouse), _dbt_console(paths) as terminal, \
            _Progress(command, terminal) as progress:
        try:
            res = dbtRunner(callbacks=[progress]).invoke(args)
        finally:
            _release_duckdb()
    if res.success:
        _keep_parse(target, project_dir)
    if isinstance(res.exception, KeyboardInterrupt) or isinstance(getattr(res.exception, "exception", None),
                                                                   KeyboardInterrupt):
        raise KeyboardInterrupt
    if not res.success:
        where, problem = _failure(res, log_dir(paths) / LOG_FILE)
        raise BuildError(where, f"dbt {command} failed: {problem}")
    return res


PARSE_FILE = "partial_parse.msgpack"  # dbt's saved parse of the project, in its target path


def _parse_cache(project_dir: Path) -> Path:
    """Where this machine keeps the project's last parse: one file per dbt version and project folder."""
    import hashlib

    from dbt.version import __version__
    key = hashlib.sha256(f"{__version__} {Path(project_dir).resolve()}".encode()).hexdigest()[:16]
    return cache_dir() / "dbt" / f"{key}-{PARSE_FILE}"


def _seed_parse(target: Path, project_dir: Path) -> None:
    """A warehouse without a parse of its own starts from the last one made on this machine: dbt checks it (its
    version, the project's files, the profile, the env vars and vars each file read) and parses again whatever
    differs, so a stale one costs a full parse, as none would. A new warehouse's first build then skips the
    project's parse (11 s of CPU)."""
    cached = _parse_cache(project_dir)
    if not (target / PARSE_FILE).exists() and cached.is_file():
        with contextlib.suppress(OSError):
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cached, target / PARSE_FILE)


def _keep_parse(target: Path, project_dir: Path) -> None:
    """After a successful run, its parse becomes the machine's last one (written whole under a temporary name,
    then renamed: another process reads the old file or the new one). A cache that cannot be written is
    skipped."""
    cached = _parse_cache(project_dir)
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        shutil.copyfile(target / PARSE_FILE, tmp)
        os.replace(tmp, cached)


def _release_duckdb() -> None:
    """dbt-duckdb keeps its DuckDB connection open in-process after a programmatic run; close it so
    the warehouse file is released (publish opens it read-only, other processes may write it)."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # pragma: no cover
        return
    DuckDBConnectionManager.close_all_connections()


BACKUP = ".predictabase.duckdb.before-build"  # the working database as it was before the build in progress


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def restore_interrupted_build(paths: Paths) -> bool:
    """Put back the working database a killed build had started to change (its `BACKUP` is there only while a
    build runs): the writer that takes the lock next calls this (`lock.clean_leftovers`). True when it did."""
    backup, live = paths.warehouse / BACKUP, paths.duckdb
    if not backup.is_file():
        return False
    _wal(live).unlink(missing_ok=True)  # the killed build's log must not be replayed onto the restored file
    os.replace(backup, live)
    return True


@contextlib.contextmanager
def kept_unless_built(paths: Paths) -> Iterator[None]:
    """The working database changes only when the block (dbt) succeeds. Before it, a copy of the database is
    saved beside it (`BACKUP`, complete before it gets that name); a failed or interrupted build puts the copy
    back, a killed one is put back by the next writer, a successful one drops it. dbt itself builds
    `predictabase.duckdb` under its own name: the catalog name dbt writes into every view and the profile that
    keeps its partial parsing valid stay those of every other dbt command. Needs the writer lock (every caller
    holds it) and room for the copy: about 0.2 s and 195 MB for the main job's warehouse (README)."""
    import duckdb
    from predictabase.core.fsutil import temp_prefix
    live, backup = paths.duckdb, paths.warehouse / BACKUP
    restore_interrupted_build(paths)
    saved = False
    if live.exists():
        with duckdb.connect(str(live)) as con:
            con.execute("CHECKPOINT")  # everything in the file, no .wal beside it
        tmp = paths.warehouse / f"{temp_prefix('before-build')}predictabase.duckdb"
        try:
            shutil.copyfile(live, tmp)
            os.replace(tmp, backup)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise BuildError(paths.warehouse, f"cannot copy the working database before the build ({exc.strerror}; "
                                              f"a build needs room for a copy of it, {live.stat().st_size / 1e6:.0f} MB"
                                              "); nothing was changed") from None
        saved = True
    try:
        yield
    except BaseException:
        if saved:
            restore_interrupted_build(paths)
        raise
    if saved:
        backup.unlink(missing_ok=True)


def dbt_build(paths: Paths, select: str | None = None, extra: list[str] | None = None) -> list[str]:
    """`dbt build` (seeds, models, schema tests) over `paths.duckdb`, reading `paths.token_scores`.

    Raises BuildError naming the failing node(s) and dbt's message when a model or test fails.
    Returns the warnings (tests of severity warn that found rows), also printed to stderr.
    """
    with kept_unless_built(paths):
        res = run_dbt(paths, "build", select, extra=extra)
    if select and not (getattr(res.result, "results", None) or []):
        raise OptionError("--select", f"{select!r} matches no dbt model, seed or test; see `dbt ls` "
                                      "or dbt_project/models for the names")
    warnings = [f"{r.node.unique_id}: {(r.message or '').strip()}"
                for r in (getattr(res.result, "results", None) or []) if str(r.status).lower() == "warn"]
    for w in warnings:
        print(f"dbt warning: {w}", file=sys.stderr)
    return warnings
