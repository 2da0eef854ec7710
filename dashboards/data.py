"""Read-only access to the published marts snapshot (`warehouse/marts.duckdb`).

The dashboard never touches the working warehouse (`predictabase.duckdb`) and never
writes: every read opens its own short-lived connection to the snapshot and closes it
right away, so `predictabase build` can publish a new snapshot (an atomic `os.replace`)
at any time.

Two DuckDB details decide how a read finds the current file:

- `duckdb.connect(path)` reuses the database instance of any connection to that path still
  open in this process, i.e. the *old*, replaced file for as long as some session holds a
  connection to it. So every read opens an in-memory database and `ATTACH`es the snapshot
  read-only, which always opens the file the path names now.
- Query results are cached with `st.cache_data` keyed by the snapshot's own id, read from
  inside the file (`snapshot_info.snapshot_id`, written by `publish`), and every cached read
  checks that the file it opened carries the id it is cached under; a read that finds another
  id (a publish landed in between) is retried under the new id. A republished snapshot is
  therefore picked up on the next rerun, and an old result is never stored under a new key.

Pages compute no metrics here or anywhere else: they select, filter and format the
columns the marts already hold.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
import streamlit as st

SNAPSHOT_INFO = "snapshot_info"  # predictabase.warehouse.SNAPSHOT_INFO (the dashboard does not import ingest)
# predictabase.warehouse.SNAPSHOT_META: the metadata tables publish writes beside the marts. Which marts a
# snapshot holds is read from the snapshot itself (`snapshot_marts`, see `marts()`), never listed here.
SNAPSHOT_MARTS = "snapshot_marts"
SNAPSHOT_META = (SNAPSHOT_INFO, SNAPSHOT_MARTS, "snapshot_columns", "source_freshness")


def marts_path() -> Path:
    """The snapshot the dashboard reads.

    `PREDICTABASE_WAREHOUSE` (the warehouse directory, as everywhere in predictabase)
    wins; it may also name the `.duckdb` snapshot itself. Otherwise `predictabase.core.config.paths()`.
    """
    value = os.environ.get("PREDICTABASE_WAREHOUSE")
    if value:
        p = Path(value)
        return (p if p.suffix == ".duckdb" else p / "marts.duckdb").resolve()
    try:
        from predictabase.core.config import paths
    except ImportError:  # the dashboard run outside the installed package
        return Path(__file__).resolve().parent.parent / "warehouse" / "marts.duckdb"
    return paths().marts


@dataclass(frozen=True)
class Snapshot:
    path: str
    snapshot_id: str  # from inside the file; "stat:<mtime>:<size>" for snapshots without snapshot_info


class _Moved(Exception):
    """The file at the path is no longer the snapshot a read was asked for."""


@contextlib.contextmanager
def _open(path: str) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET TimeZone = 'UTC'")  # a session setting: timestamps with time zone come back in UTC
        con.execute(f"ATTACH '{path.replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
        con.execute("USE snap")
        yield con
    finally:
        con.close()


def _snapshot_id(con: duckdb.DuckDBPyConnection, path: str) -> str:
    try:
        rows = con.execute(f"SELECT snapshot_id FROM main.{SNAPSHOT_INFO} LIMIT 1").fetchall()  # all: the result done
        row = rows[0] if rows else None
    except duckdb.CatalogException:
        row = None
    if row:
        return str(row[0])
    s = os.stat(path)
    return f"stat:{s.st_mtime_ns}:{s.st_size}"


# the last identity read of each snapshot file, by the file's (inode, mtime, size): a page run reads the marts
# a dozen times or more, and opening the file to read its id took ~30 ms each time (with several
# players at once that was most of each answer's time). publish replaces the file by a rename, so a new snapshot
# is a new inode and mtime; a read still checks, inside the file it opens, the id it was asked for
_IDENTITY: dict[str, tuple[tuple[int, int, int], Snapshot]] = {}


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    return (s.st_ino, s.st_mtime_ns, s.st_size)


def snapshot() -> Snapshot | None:
    """The current snapshot's identity (None while nothing has been published)."""
    path = marts_path()
    for attempt in range(3):
        key = _stat_key(path)
        if key is None:
            return None
        known = _IDENTITY.get(str(path))
        if known is not None and known[0] == key:
            return known[1]
        try:
            with _open(str(path)) as con:
                snap = Snapshot(str(path), _snapshot_id(con, str(path)))
        except duckdb.IOException:  # replaced or removed between the check and the open: look again
            if attempt == 2:
                raise
            continue
        if _stat_key(path) == key:  # the file did not change while it was read
            _IDENTITY[str(path)] = (key, snap)
        return snap
    return None


def _read(path: str, snapshot_id: str, sql: str, params: list | None = None, arrow: bool = False):
    """The query's result as a pandas DataFrame, or with `arrow` as a pyarrow Table (the marts' own types: an
    integer column with NULLs stays integer)."""
    with _open(path) as con:
        if _snapshot_id(con, path) != snapshot_id:
            raise _Moved
        if arrow:
            return con.sql(sql, params=params or None).to_arrow_table()
        return con.execute(sql, params or []).fetchdf()


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_tables(path: str, snapshot_id: str) -> list[str]:
    df = _read(
        path,
        snapshot_id,
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_catalog = 'snap' AND table_schema = 'main' ORDER BY table_name",
    )
    return df["table_name"].tolist()


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_table(path: str, snapshot_id: str, name: str) -> pd.DataFrame:
    return _read(path, snapshot_id, f'SELECT * FROM main."{name}"')


def _quote(column: str) -> str:
    """A column name as a quoted SQL identifier."""
    return '"' + column.replace('"', '""') + '"'


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_rows(
    path: str,
    snapshot_id: str,
    name: str,
    columns: tuple[str, ...],
    where: tuple[tuple[str, object], ...],
    order_by: tuple[str, ...],
    arrow: bool = False,
):
    cols = ", ".join(map(_quote, columns)) if columns else "*"
    cond = " AND ".join(f"{_quote(c)} = ?" for c, _ in where) or "true"
    order = f" ORDER BY {', '.join(map(_quote, order_by))}" if order_by else ""
    return _read(
        path, snapshot_id, f'SELECT {cols} FROM main."{name}" WHERE {cond}{order}', [v for _, v in where], arrow
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_marts(path: str, snapshot_id: str) -> list[str]:
    present = _cached_tables(path, snapshot_id)
    if SNAPSHOT_MARTS in present:
        return sorted(_read(path, snapshot_id, f"SELECT mart FROM main.{SNAPSHOT_MARTS}")["mart"].tolist())
    return [t for t in present if t not in SNAPSHOT_META]  # a snapshot from before snapshot_marts


def _stable(fn, *args):
    """Run a cached read under the current snapshot's id; if a publish replaced the file between
    taking the id and reading, take the new id and read again."""
    for _ in range(5):
        snap = snapshot()
        if snap is None:
            return None
        try:
            return fn(snap.path, snap.snapshot_id, *args)
        except _Moved:
            _IDENTITY.pop(snap.path, None)  # read the id from the file again
            continue
    raise RuntimeError("the snapshot kept changing while it was read; reload the page")


def tables() -> list[str] | None:
    """Tables in the snapshot's `main` schema (None when there is no snapshot)."""
    return _stable(_cached_tables)


def marts() -> list[str] | None:
    """The snapshot's marts, as publish listed them in `snapshot_marts` (for a snapshot from before it,
    its tables less the metadata tables); None when there is no snapshot."""
    return _stable(_cached_marts)


def _readable(name: str) -> bool:
    """Whether `name` is a mart or a metadata table of the current snapshot (the only names read)."""
    listed, present = marts(), tables()
    return listed is not None and present is not None and name in present and (name in listed or name in SNAPSHOT_META)


def table(name: str) -> pd.DataFrame | None:
    """A whole mart (or metadata table) as a DataFrame; None when the snapshot does not hold it."""
    if not _readable(name):
        return None
    return _stable(_cached_table, name)


@st.cache_resource(show_spinner=False, max_entries=16)
def _shared_table(path: str, snapshot_id: str, name: str, columns: tuple[str, ...]) -> pd.DataFrame:
    cols = ", ".join(map(_quote, columns)) if columns else "*"
    return _read(path, snapshot_id, f'SELECT {cols} FROM main."{name}"')


def shared(name: str, columns: list[str] | None = None) -> pd.DataFrame | None:
    """A mart (some columns of it) held ONCE for every session of the server: no copy per call, unlike
    `table` (st.cache_data hands each call its own copy, ~20-40 ms for a 50,000-row mart). For what every
    rerun of a game reads (many players at once); never change it, filter it into new frames."""
    if not _readable(name):
        return None
    return _stable(_shared_table, name, tuple(columns or ()))


def rows(
    name: str,
    columns: list[str] | None = None,
    where: dict | None = None,
    order_by: list[str] | None = None,
    *,
    arrow: bool = False,
):
    """Some columns of a mart's rows whose columns equal the values in `where` (a large mart read a slice
    at a time, e.g. one run's words); None when the snapshot or the table does not exist. A pandas DataFrame,
    or with `arrow` a pyarrow Table (for `predictabase.export`, which reads the marts' types as they are)."""
    if not _readable(name):
        return None
    return _stable(
        _cached_rows, name, tuple(columns or ()), tuple(sorted((where or {}).items())), tuple(order_by or ()), arrow
    )


def require_snapshot() -> Snapshot:
    """Stop the page with a friendly message when nothing has been published yet."""
    snap = snapshot()
    if snap is None:
        st.info(
            f"No warehouse snapshot yet: `{marts_path()}` does not exist.\n\n"
            "Build one with `predictabase all` (fetch, ingest, score, build) or, if the "
            "warehouse is already scored, `predictabase build`. This page picks it up on "
            "the next reload.",
            icon=":material/hourglass_empty:",
        )
        st.stop()
    return snap


def missing(name: str) -> None:
    st.warning(f"`{name}` is not in this snapshot yet; rebuild with `predictabase build`.", icon=":material/warning:")


def section(name: str) -> pd.DataFrame | None:
    """A page section's mart when the snapshot has rows of it, else None: with the "not in this snapshot yet"
    note when the snapshot lacks the mart, silently when the mart is empty (the section is left out)."""
    df = table(name)
    if df is None:
        missing(name)
        return None
    return None if df.empty else df


def page_table(name: str, empty_hint: str) -> pd.DataFrame:
    """A page's main mart. Stops the page with a message when nothing is published yet, when the
    snapshot lacks the mart, or when the mart is empty (`empty_hint` says how to fill it)."""
    require_snapshot()
    df = table(name)
    if df is None:
        missing(name)
        st.stop()
    if df.empty:
        st.info(empty_hint)
        st.stop()
    return df
