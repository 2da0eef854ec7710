"""One transaction helper for the warehouse's two databases (DuckDB and the live games' SQLite store)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TypeVar

C = TypeVar("C")


@contextlib.contextmanager
def transaction(con: C, begin: str = "BEGIN TRANSACTION") -> Iterator[C]:
    """`begin` ... COMMIT, or ROLLBACK when the block raises (the database stays as it was). `con`: a DuckDB or
    sqlite3 connection; SQLite's writers pass "BEGIN IMMEDIATE" to take the write lock at once."""
    con.execute(begin)
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
