"""Run dbt over the warehouse and publish the marts snapshot the dashboard reads.

Nothing here computes a metric: `dbt_build` runs the dbt project (`dbt_project/`), which
derives everything; `publish` copies the finished marts, as they are, into a fresh DuckDB
file and atomically swaps it onto `paths.marts`.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb

from .config import DBT_PROJECT_DIR, Paths
from .errors import IngestError

MARTS_SCHEMA = "marts"  # schema of the marts in predictabase.duckdb (see macros/generate_schema_name.sql)

_ENV_LOCK = threading.Lock()


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the duration of a dbt invocation (dbt's env_var reads os.environ)."""
    with _ENV_LOCK:
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


def dbt_env(paths: Paths) -> dict[str, str]:
    """The environment the dbt project reads (profiles.yml and the token-score sources)."""
    return {"PREDICTABASE_DUCKDB": str(paths.duckdb), "PREDICTABASE_TOKEN_SCORES": str(paths.token_scores)}


def dbt_args(paths: Paths, command: str = "build", select: str | None = None,
             project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None) -> list[str]:
    """CLI arguments for `dbt <command>`; target/ and logs/ live in the warehouse, so builds of
    different warehouses never share dbt state."""
    args = [command, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir),
            "--target-path", str(paths.warehouse / "dbt" / "target"),
            "--log-path", str(paths.warehouse / "dbt" / "logs"),
            "--quiet", "--no-use-colors"]
    if select:
        args += ["--select", select]
    if dbt_vars:
        args += ["--vars", json.dumps(dbt_vars)]
    return args


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
            project_dir: Path = DBT_PROJECT_DIR, dbt_vars: dict | None = None):
    """Run a dbt command programmatically (`dbt_vars`: --vars); return dbt's result. Raises IngestError on failure."""
    from dbt.cli.main import dbtRunner

    if not paths.duckdb.parent.exists():
        paths.duckdb.parent.mkdir(parents=True, exist_ok=True)
    paths.token_scores.mkdir(parents=True, exist_ok=True)
    with _env(dbt_env(paths)):
        try:
            res = dbtRunner().invoke(dbt_args(paths, command, select, project_dir, dbt_vars))
        finally:
            _release_duckdb()
    if not res.success:
        raise IngestError(project_dir, f"dbt {command} failed: {_failure_message(res)}")
    return res


def _release_duckdb() -> None:
    """dbt-duckdb keeps its DuckDB connection open in-process after a programmatic run; close it so
    the warehouse file is released (publish opens it read-only, other processes may write it)."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:  # pragma: no cover
        return
    DuckDBConnectionManager.close_all_connections()


def dbt_build(paths: Paths, select: str | None = None) -> list[str]:
    """`dbt build` (seeds, models, schema tests) over `paths.duckdb`, reading `paths.token_scores`.

    Raises IngestError naming the failing node(s) and dbt's message when a model or test fails.
    Returns the warnings (tests of severity warn that found rows), also printed to stderr.
    """
    res = run_dbt(paths, "build", select)
    warnings = [f"{r.node.unique_id}: {(r.message or '').strip()}"
                for r in (getattr(res.result, "results", None) or []) if str(r.status).lower() == "warn"]
    for w in warnings:
        print(f"dbt warning: {w}", file=sys.stderr)
    return warnings


def mart_names(paths: Paths) -> list[str]:
    """The mart tables in the working warehouse."""
    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name",
            [MARTS_SCHEMA]).fetchall()
    return [r[0] for r in rows]


def publish(paths: Paths) -> Path:
    """Copy every mart into a new DuckDB file and atomically replace `paths.marts` with it.

    The snapshot holds the marts as tables of its `main` schema, named as in dbt
    (`mart_model_perplexity`, ...). Readers holding the old file keep reading it; the next
    open sees the new one. The working warehouse is opened read-only and only for the copy.
    """
    if not paths.duckdb.exists():
        raise IngestError(paths.duckdb, "no warehouse to publish; run `predictabase build` first")
    names = mart_names(paths)
    if not names:
        raise IngestError(paths.duckdb, f"no tables in schema {MARTS_SCHEMA}; run dbt build first")
    tmp = paths.warehouse / f".marts-{os.getpid()}.duckdb"
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(tmp)) as con:
            src = str(paths.duckdb).replace("'", "''")
            con.execute(f"ATTACH '{src}' AS wh (READ_ONLY)")
            con.execute("BEGIN TRANSACTION")
            for name in names:
                con.execute(f'CREATE TABLE main."{name}" AS SELECT * FROM wh.{MARTS_SCHEMA}."{name}"')
            con.execute("COMMIT")
            con.execute("DETACH wh")
            con.execute("CHECKPOINT")
        os.replace(tmp, paths.marts)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, IngestError):
            raise
        raise IngestError(paths.marts, f"publishing the marts failed: {exc}") from exc
    return paths.marts
