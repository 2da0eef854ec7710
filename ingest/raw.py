"""DuckDB access for ingest jobs: atomic, idempotent writes with provenance."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime

import duckdb
import polars as pl

from predictabase.core.config import Paths
from predictabase.core.db import transaction


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
    return datetime.now(UTC)


def now_iso() -> str:
    """UTC now in ISO 8601, to the second (the run records' started_at / finished_at)."""
    return now_utc().isoformat(timespec="seconds")


def replace_partitions_in(
    con: duckdb.DuckDBPyConnection, parts: list[tuple[str, pl.DataFrame, dict[str, object]]]
) -> int:
    """Replace the rows of each `table` matching `where` with `frame`, inside the caller's transaction.

    Idempotent: re-running with the same frames leaves the same rows. A table is created from
    its frame's schema the first time; a column the frame has and the table lacks (a warehouse
    ingested before the column existed) is added, NULL in the rows of the other partitions until
    they are re-ingested. Returns the rows written.
    """
    for table, frame, where in parts:
        for col, val in where.items():
            if col not in frame.columns:
                raise ValueError(f"partition column {col} missing from frame for {table}")
            if frame.height and (frame[col].n_unique() != 1 or frame[col][0] != val):
                raise ValueError(f"frame for {table} holds rows outside partition {where}")
    for table, frame, where in parts:
        con.register("_incoming", frame.to_arrow())
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} AS SELECT * FROM _incoming LIMIT 0")
        _add_missing_columns(con, table)
        cond = " AND ".join(f"{c} = ?" for c in where) or "TRUE"
        con.execute(f"DELETE FROM {table} WHERE {cond}", list(where.values()))
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        con.unregister("_incoming")
    return sum(frame.height for _, frame, _ in parts)


def _add_missing_columns(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Add to `table` (schema.name) every column of the registered `_incoming` frame it lacks, with its type."""
    schema, name = table.split(".", 1)
    have = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
            [schema, name],
        ).fetchall()
    }
    for column, dtype, *_ in con.execute("DESCRIBE SELECT * FROM _incoming").fetchall():
        if column not in have:
            con.execute(f'ALTER TABLE {table} ADD COLUMN "{column}" {dtype}')


def replace_partition(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame, where: dict[str, object]) -> int:
    """`replace_partitions_in` for one table, in a transaction of its own (all or nothing)."""
    with transaction(con):
        return replace_partitions_in(con, [(table, frame, where)])


def replace_tables_in(
    con: duckdb.DuckDBPyConnection, frames: dict[str, pl.DataFrame], schema: str = "raw"
) -> dict[str, int]:
    """Create or replace `schema.<name>` from each frame inside the caller's transaction."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    for name, frame in frames.items():
        con.register("_incoming", frame.to_arrow())
        con.execute(f"CREATE OR REPLACE TABLE {schema}.{name} AS SELECT * FROM _incoming")
        con.unregister("_incoming")
    return {name: frame.height for name, frame in frames.items()}


def replace_tables(paths: Paths, frames: dict[str, pl.DataFrame], schema: str = "raw") -> dict[str, int]:
    """Create or replace `schema.<name>` from each frame, all in one transaction.

    For datasets whose tables hold that dataset only (pairwise, wild): replacing them is
    the partition replace, so re-running never duplicates, and a failure leaves every
    table as it was. Returns rows per table.
    """
    with connect(paths) as con, transaction(con):
        return replace_tables_in(con, frames, schema)
