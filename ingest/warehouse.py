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
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .config import DBT_PROJECT_DIR, Paths
from .errors import IngestError
from .failpoints import failpoint
from .fsutil import file_mode, temp_prefix

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
    if select and not (getattr(res.result, "results", None) or []):
        raise IngestError("--select", f"{select!r} matches no dbt model, seed or test; see `dbt ls` "
                                      "or dbt_project/models for the names")
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


#: the table `publish` adds to every snapshot: its own id (what the dashboard keys its cache on)
SNAPSHOT_INFO = "snapshot_info"
#: columns whose values name what a mart covers; a value present in the published snapshot and
#: missing from the new marts is a lost corpus, model or dataset
IDENTITY_COLUMNS = ("corpus", "model_key", "dataset", "predictor")


@dataclass(frozen=True)
class MartProfile:
    rows: int
    identities: dict[str, frozenset]  # column -> distinct values


def _profile(con: duckdb.DuckDBPyConnection, qualified: str) -> MartProfile:
    cols = [r[0] for r in con.execute(f"DESCRIBE {qualified}").fetchall()]
    rows = con.execute(f"SELECT count(*) FROM {qualified}").fetchone()[0]
    ids = {}
    for c in IDENTITY_COLUMNS:
        if c in cols:
            ids[c] = frozenset(str(r[0]) for r in con.execute(f'SELECT DISTINCT "{c}" FROM {qualified} '
                                                               f'WHERE "{c}" IS NOT NULL').fetchall())
    return MartProfile(int(rows), ids)


def _profiles(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, names: list[str]) -> dict[str, MartProfile]:
    return {n: _profile(con, f'{catalog}.{schema}."{n}"') for n in names}


def shrinkage(old: dict[str, MartProfile], new: dict[str, MartProfile]) -> list[str]:
    """What publishing `new` over `old` would lose: marts, all rows of a mart, or a corpus/model/dataset."""
    lost = []
    for name, before in sorted(old.items()):
        after = new.get(name)
        if after is None:
            lost.append(f"{name} missing")
            continue
        if before.rows > 0 and after.rows == 0:
            lost.append(f"{name} emptied ({before.rows} -> 0 rows)")
            continue
        for col, values in before.identities.items():
            gone = sorted(values - after.identities.get(col, frozenset()))
            if gone:
                shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
                lost.append(f"{name} lost {col} {shown}")
    return lost


def published_tables(marts: Path) -> list[str] | None:
    """The marts of the published snapshot (None when there is none or it cannot be read)."""
    if not marts.exists():
        return None
    try:
        with duckdb.connect(":memory:") as con:
            con.execute(f"ATTACH '{_quote(marts)}' AS snap (READ_ONLY)")
            rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'snap' "
                               "AND table_schema = 'main' ORDER BY 1").fetchall()
    except duckdb.Error:
        return None
    return [r[0] for r in rows if r[0] != SNAPSHOT_INFO]


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def publish(paths: Paths, allow_shrink: bool = False) -> Path:
    """Copy every mart into a new DuckDB file and atomically replace `paths.marts` with it.

    The snapshot holds the marts as tables of its `main` schema, named as in dbt
    (`mart_model_perplexity`, ...), plus `snapshot_info` (its id, when and from which build).
    Readers holding the old file keep reading it; the next open sees the new one. The working
    warehouse is opened read-only and only for the copy.

    Guard: unless `allow_shrink`, a snapshot that would lose a mart, empty a mart that has rows,
    or drop a corpus, model, dataset or predictor the published one covers is refused
    (IngestError) and the published snapshot stays as it was. A build over a missing or partly
    ingested warehouse produces exactly such marts.
    """
    if not paths.duckdb.exists():
        raise IngestError(paths.duckdb, "no warehouse to publish; run `predictabase build` first")
    names = mart_names(paths)
    if not names:
        raise IngestError(paths.duckdb, f"no tables in schema {MARTS_SCHEMA}; run dbt build first")
    tmp = paths.warehouse / f"{temp_prefix('marts')}new.duckdb"
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(tmp)) as con:
            con.execute(f"ATTACH '{_quote(paths.duckdb)}' AS wh (READ_ONLY)")
            old_names = published_tables(paths.marts)
            if old_names is not None and not allow_shrink:
                con.execute(f"ATTACH '{_quote(paths.marts)}' AS old (READ_ONLY)")
                lost = shrinkage(_profiles(con, "old", "main", old_names), _profiles(con, "wh", MARTS_SCHEMA, names))
                con.execute("DETACH old")
                if lost:
                    shown = "; ".join(lost[:6]) + (f"; and {len(lost) - 6} more" if len(lost) > 6 else "")
                    raise IngestError(paths.marts, f"refusing to publish marts that lose what the published "
                                                   f"snapshot has ({shown}); is the warehouse missing or partly "
                                                   "ingested? Pass --allow-shrink to publish them anyway")
            build = _build_info(con)
            con.execute("BEGIN TRANSACTION")
            for name in names:
                con.execute(f'CREATE TABLE main."{name}" AS SELECT * FROM wh.{MARTS_SCHEMA}."{name}"')
            con.execute(f"CREATE TABLE main.{SNAPSHOT_INFO} AS SELECT ? AS snapshot_id, "
                        "now()::TIMESTAMPTZ AS published_at, ? AS dbt_invocation_id, ? AS n_marts, "
                        "? AS allowed_shrink", [uuid.uuid4().hex, build, len(names), allow_shrink])
            con.execute("COMMIT")
            con.execute("DETACH wh")
            con.execute("CHECKPOINT")
        os.chmod(tmp, file_mode())
        failpoint("publish.copied")
        os.replace(tmp, paths.marts)
        failpoint("publish.replaced")
    except Exception as exc:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        if isinstance(exc, IngestError):
            raise
        raise IngestError(paths.marts, f"publishing the marts failed: {exc}") from exc
    return paths.marts


def _build_info(con: duckdb.DuckDBPyConnection) -> str | None:
    try:
        row = con.execute(f"SELECT invocation_id FROM wh.{MARTS_SCHEMA}.mart_build_info LIMIT 1").fetchone()
    except duckdb.Error:
        return None
    return str(row[0]) if row else None
