"""DuckDB access for ingest jobs: atomic, idempotent writes with provenance."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime, timezone

import duckdb
import polars as pl

from .config import Paths


@contextlib.contextmanager
def connect(paths: Paths, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    paths.warehouse.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(paths.duckdb), read_only=read_only)
    try:
        if not read_only:
            con.execute("CREATE SCHEMA IF NOT EXISTS raw")
        yield con
    finally:
        con.close()


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def replace_partition(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame,
                      where: dict[str, object]) -> int:
    """Replace the rows of `table` matching `where` with `frame`, in one transaction.

    Idempotent: re-running with the same frame leaves the same rows. The table is
    created from the frame's schema the first time. A failure rolls back, so the
    warehouse is never left half-written.
    """
    for col, val in where.items():
        if col not in frame.columns:
            raise ValueError(f"partition column {col} missing from frame for {table}")
        if frame.height and (frame[col].n_unique() != 1 or frame[col][0] != val):
            raise ValueError(f"frame for {table} holds rows outside partition {where}")
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("_incoming", frame.to_arrow())
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM _incoming LIMIT 0")
        cond = " AND ".join(f"{c} = ?" for c in where) or "TRUE"
        con.execute(f"DELETE FROM {table} WHERE {cond}", list(where.values()))
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        con.unregister("_incoming")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return frame.height


def replace_tables(paths: Paths, frames: dict[str, pl.DataFrame], schema: str = "raw") -> dict[str, int]:
    """Create or replace `schema.<name>` from each frame, all in one transaction.

    For datasets whose tables hold that dataset only (pairwise, wild): replacing them is
    the partition replace, so re-running never duplicates, and a failure leaves every
    table as it was. Returns rows per table.
    """
    with connect(paths) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            for name, frame in frames.items():
                con.register("_incoming", frame.to_arrow())
                con.execute(f"CREATE OR REPLACE TABLE {schema}.{name} AS SELECT * FROM _incoming")
                con.unregister("_incoming")
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    return {name: frame.height for name, frame in frames.items()}
