"""Compare two published snapshots (marts.duckdb) table by table, row by row.

    python scripts/compare_snapshots.py BEFORE.duckdb AFTER.duckdb

Columns that record when or by which invocation something ran (built_at, finished_at, ...) are
left out; every other value must be equal, floats to 1e-9 relative (DuckDB's parallel sums differ
in the last bits from run to run: 1e-16 nats in the pairwise bootstrap). Rows are compared as
sorted lists, so a table's row order does not matter. Prints one line per table and exits 1 on any
difference.
"""

from __future__ import annotations

import math
import sys

import duckdb

VOLATILE = {
    "built_at",
    "finished_at",
    "started_at",
    "published_at",
    "last_fetched_at",
    "fetched_at",
    "invocation_id",
    "dbt_invocation_id",
    "snapshot_id",
    "max_loaded_at",
    "snapshotted_at",
    "age_s",
}  # source_freshness: when the files were fetched, and how long ago


def _norm(v):
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    return v


def _sort_key(row: tuple) -> str:
    return repr(tuple(f"{v:.6g}" if isinstance(v, float) else v for v in row))


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


def table_rows(con, catalog: str, table: str) -> tuple[list[str], list[tuple]]:
    cols = [r[0] for r in con.execute(f'DESCRIBE {catalog}.main."{table}"').fetchall() if r[0] not in VOLATILE]
    rows = con.execute(
        f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM {catalog}.main."{table}"'
    ).fetchall()
    return cols, sorted((tuple(_norm(v) for v in r) for r in rows), key=_sort_key)


def compare(before: str, after: str, skip: set[str] = frozenset()) -> list[str]:
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{before}' AS b (READ_ONLY)")
    con.execute(f"ATTACH '{after}' AS a (READ_ONLY)")

    def tables(cat):
        return {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables "
                f"WHERE table_catalog = '{cat}' AND table_schema = 'main'"
            ).fetchall()
        }

    tb, ta = tables("b") - skip, tables("a") - skip
    problems = [f"{t}: only in before" for t in sorted(tb - ta)] + [f"{t}: only in after" for t in sorted(ta - tb)]
    for t in sorted(tb & ta):
        cb, rb = table_rows(con, "b", t)
        ca, ra = table_rows(con, "a", t)
        if cb != ca:
            problems.append(
                f"{t}: columns differ: before-only {sorted(set(cb) - set(ca))}, after-only {sorted(set(ca) - set(cb))}"
            )
            print(f"DIFF  {t}: columns differ")
        elif len(rb) != len(ra) or not all(_close(x, y) for x, y in zip(rb, ra)):
            diff = [x for x, y in zip(rb, ra) if not _close(x, y)][:3]
            problems.append(f"{t}: {len(rb)} vs {len(ra)} rows; e.g. before-only {diff}")
            print(f"DIFF  {t}: {len(rb)} vs {len(ra)} rows")
        else:
            print(f"same  {t}: {len(rb)} rows x {len(cb)} columns")
    return problems


if __name__ == "__main__":
    found = compare(sys.argv[1], sys.argv[2], skip={"snapshot_info"})
    for p in found:
        print(p)
    print("identical" if not found else f"{len(found)} difference(s)")
    sys.exit(1 if found else 0)
