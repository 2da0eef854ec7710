"""What keeping the working database safe costs a build: `kept_unless_built` saves a copy of
`predictabase.duckdb` before dbt runs and drops it after. This times that guard alone, around an empty block (the
copy, the rename, the drop), several times, against the last full `build` of the same warehouse from its runs log.

    python bench/build_guard.py --warehouse warehouse [--repeat 5]

Prints a table: the database's size, each guard's seconds, the build's seconds and the guard's share of it.
Takes the writer lock, so run it when nothing else writes the warehouse.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import datetime
from pathlib import Path

from predictabase.core.config import paths as make_paths
from predictabase.warehouse.dbt import kept_unless_built
from predictabase.warehouse.lock import writer_lock


def last_build_seconds(runs_log: Path) -> float | None:
    ends = [json.loads(x) for x in runs_log.read_text().splitlines() if '"end"' in x]
    builds = [
        r for r in ends if r["command"] == "build" and r["status"] == "ok" and not (r["args"] or {}).get("select")
    ]
    if not builds:
        return None
    r = builds[-1]
    return (datetime.fromisoformat(r["ended_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    p = make_paths(args.warehouse)
    size_mb = p.duckdb.stat().st_size / 1e6
    times = []
    with writer_lock(p, "bench", 0):
        for _ in range(args.repeat):
            t = time.perf_counter()
            with kept_unless_built(p):
                pass
            times.append(time.perf_counter() - t)
    build = last_build_seconds(p.runs_log)
    print("| working database | guard runs (s) | median (s) | last full build (s) | guard / build |")
    print("|---|---|---|---|---|")
    share = f"{statistics.median(times) / build:.2%}" if build else "n/a"
    print(
        f"| {size_mb:.0f} MB | {', '.join(f'{t:.2f}' for t in times)} | {statistics.median(times):.2f} | "
        f"{build if build is not None else 'n/a'} | {share} |"
    )


if __name__ == "__main__":
    main()
