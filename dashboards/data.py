"""Read-only access to the published marts snapshot (`warehouse/marts.duckdb`).

The dashboard never touches the working warehouse (`predictabase.duckdb`) and never
writes: every query opens its own short-lived `read_only` DuckDB connection to the
snapshot and closes it right away, so `predictabase build` can publish a new snapshot
(an atomic `os.replace`) at any time. Query results are cached with `st.cache_data`
keyed by the snapshot's path, mtime and size, so a republished snapshot is picked up
on the next rerun without restarting the server.

Pages compute no metrics here or anywhere else: they select, filter and format the
columns the marts already hold.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
import streamlit as st

MARTS = ("mart_sources", "mart_models", "mart_model_perplexity", "mart_warehouse_tables", "mart_build_info",
         "mart_pairwise_perplexity",
         "mart_wild_loss", "mart_wild_effort", "mart_wild_cost", "mart_wild_correlations",
         "mart_wild_loss_by_difficulty", "mart_wild_texts")


def marts_path() -> Path:
    """The snapshot the dashboard reads.

    `PREDICTABASE_WAREHOUSE` (the warehouse directory, as everywhere in predictabase)
    wins; it may also name the `.duckdb` snapshot itself. Otherwise `ingest.config.paths()`.
    """
    value = os.environ.get("PREDICTABASE_WAREHOUSE")
    if value:
        p = Path(value)
        return (p if p.suffix == ".duckdb" else p / "marts.duckdb").resolve()
    try:
        from ingest.config import paths
    except ImportError:  # the dashboard run outside the installed package
        return (Path(__file__).resolve().parent.parent / "warehouse" / "marts.duckdb")
    return paths().marts


@dataclass(frozen=True)
class Snapshot:
    path: str
    mtime_ns: int
    size: int


def snapshot() -> Snapshot | None:
    """The current snapshot's identity (None while nothing has been published)."""
    path = marts_path()
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    return Snapshot(str(path), s.st_mtime_ns, s.st_size)


def _read(path: str, sql: str) -> pd.DataFrame:
    con = duckdb.connect(path, read_only=True)
    try:
        con.execute("SET TimeZone = 'UTC'")  # a session setting: timestamps with time zone come back in UTC
        return con.execute(sql).fetchdf()
    finally:
        con.close()


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_tables(path: str, mtime_ns: int, size: int) -> list[str]:
    df = _read(path, "SELECT table_name FROM information_schema.tables "
                     "WHERE table_schema = 'main' ORDER BY table_name")
    return df["table_name"].tolist()


@st.cache_data(show_spinner=False, max_entries=64)
def _cached_table(path: str, mtime_ns: int, size: int, name: str) -> pd.DataFrame:
    return _read(path, f'SELECT * FROM main."{name}"')


def _stable(fn, *args):
    """Run a cached read, retrying once if the snapshot was replaced while it ran.

    The cache key is taken before the file is opened; if a publish lands in between,
    the result may belong to the new file under the old key. Re-stat afterwards and,
    when the file changed, read again under the new key (the old key is never asked
    for again, since the mtime moved on).
    """
    for _ in range(3):
        snap = snapshot()
        if snap is None:
            return None
        result = fn(snap.path, snap.mtime_ns, snap.size, *args)
        if snapshot() == snap:
            return result
    return result


def tables() -> list[str] | None:
    """Tables in the snapshot's `main` schema (None when there is no snapshot)."""
    return _stable(_cached_tables)


def table(name: str) -> pd.DataFrame | None:
    """A whole mart as a DataFrame; None when the snapshot or the table does not exist."""
    if name not in MARTS:
        raise ValueError(f"not a mart the dashboard reads: {name}")
    present = tables()
    if present is None or name not in present:
        return None
    return _stable(_cached_table, name)


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
    st.warning(f"`{name}` is not in this snapshot yet; rebuild with `predictabase build`.",
               icon=":material/warning:")


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
