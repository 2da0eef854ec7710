"""Run dbt over the warehouse. Nothing here computes a metric: `dbt_build` runs the dbt project
(`dbt_project/`), which derives everything."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path


from predictabase.config import DBT_PROJECT_DIR, Paths
from predictabase.errors import BuildError, OptionError

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


def dbt_env(paths: Paths) -> dict[str, str]:
    """The environment the dbt project reads (profiles.yml, the token-score and top-1 sources)."""
    return {"PREDICTABASE_DUCKDB": str(paths.duckdb), "PREDICTABASE_TOKEN_SCORES": str(paths.token_scores),
            "PREDICTABASE_TOP1_PREDICTIONS": str(paths.top1_predictions),
            "PREDICTABASE_CLOZE_SCORES": str(paths.cloze_model_scores),
            "PREDICTABASE_DBT_MODULES": str(DBT_PROJECT_DIR / "python")}


def dbt_args(paths: Paths, command: str = "build", select: str | None = None,
             project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None,
             extra: list[str] | None = None) -> list[str]:
    """CLI arguments for `dbt <command>` (`command` may be two words: "source freshness"); target/ and
    logs/ live in the warehouse, so builds of different warehouses never share dbt state. `extra`:
    more dbt arguments (e.g. `--state DIR`)."""
    args = [*command.split(), "--project-dir", str(project_dir), "--profiles-dir", str(project_dir),
            "--target-path", str(paths.warehouse / "dbt" / "target"),
            "--log-path", str(paths.warehouse / "dbt" / "logs"),
            "--quiet", "--no-use-colors"]
    if select:
        args += ["--select", select]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars)]
    return args + list(extra or [])


def _failure_message(res) -> str:
    """The failing nodes of a dbt result, each with its path and dbt's message."""
    lines = []
    results = getattr(res.result, "results", None) or []
    for r in results:
        status = str(getattr(r, "status", "")).lower()
        if status in {"error", "fail", "runtime error"}:
            node = r.node
            where = getattr(node, "original_file_path", None) or node.unique_id
            msg = (r.message or "").strip() or status
            lines.append(f"{node.unique_id} ({where}): {status}: {msg}")
    if not lines and res.exception is not None:
        lines.append(f"{type(res.exception).__name__}: {res.exception}")
    return "; ".join(lines) or "dbt failed without a message"


def run_dbt(paths: Paths, command: str = "build", select: str | None = None,
            project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None, extra: list[str] | None = None):
    """Run a dbt command programmatically (`dbt_vars`: --vars); return dbt's result. Raises BuildError on failure."""
    from dbt.cli.main import dbtRunner

    if not paths.duckdb.parent.exists():
        paths.duckdb.parent.mkdir(parents=True, exist_ok=True)
    paths.token_scores.mkdir(parents=True, exist_ok=True)
    with _env(dbt_env(paths)):
        try:
            res = dbtRunner().invoke(dbt_args(paths, command, select, project_dir, dbt_vars, extra))
        finally:
            _release_duckdb()
    if not res.success:
        raise BuildError(project_dir, f"dbt {command} failed: {_failure_message(res)}")
    return res


def _release_duckdb() -> None:
    """dbt-duckdb keeps its DuckDB connection open in-process after a programmatic run; close it so
    the warehouse file is released (publish opens it read-only, other processes may write it)."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # pragma: no cover
        return
    DuckDBConnectionManager.close_all_connections()


def dbt_build(paths: Paths, select: str | None = None, extra: list[str] | None = None) -> list[str]:
    """`dbt build` (seeds, models, schema tests) over `paths.duckdb`, reading `paths.token_scores`.

    Raises BuildError naming the failing node(s) and dbt's message when a model or test fails.
    Returns the warnings (tests of severity warn that found rows), also printed to stderr.
    """
    res = run_dbt(paths, "build", select, extra=extra)
    if select and not (getattr(res.result, "results", None) or []):
        raise OptionError("--select", f"{select!r} matches no dbt model, seed or test; see `dbt ls` "
                                      "or dbt_project/models for the names")
    warnings = [f"{r.node.unique_id}: {(r.message or '').strip()}"
                for r in (getattr(res.result, "results", None) or []) if str(r.status).lower() == "warn"]
    for w in warnings:
        print(f"dbt warning: {w}", file=sys.stderr)
    return warnings
