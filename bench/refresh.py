"""Benchmark `predictabase refresh`: what a refresh with nothing to do costs, and what adding a model runs.

    python bench/refresh.py --warehouse warehouse                        # the full default warehouse
    python bench/refresh.py --warehouse DIR --models models.toml --add-model gemma3-270m --add-corpora ucl

The warehouse is copied to a temporary directory first (symlinks kept as links, e.g. a `models/` link to a
shared model cache; pass --model-cache DIR so that a model converted for the added entry goes there, not
into that cache) and never written in place. Then, each through the real CLI (`.venv/bin/predictabase`):

1. catch-up: one refresh with `--models` (brings the copy up to date; on a warehouse built before
   `predictabase refresh` existed it records raw.ingest_log by ingesting every job once and builds once);
2. no change: `--repeat` refreshes (default 3), each of which must report "nothing changed"; the median;
3. add a model: the models file plus `[[model]] name = --add-model, corpora = --add-corpora`: one refresh,
   its steps (what ran, seconds) and its wall time;
4. no change again, once.

Prints a markdown table of the wall seconds, then each refresh's step table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / ".venv" / "bin" / "predictabase"


def run(warehouse: Path, models: Path, env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    res = subprocess.run(
        [str(CLI), "refresh", "--warehouse", str(warehouse), "--models", str(models)],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"refresh failed ({res.returncode}):\n{res.stdout}\n{res.stderr[-3000:]}")
    return seconds, res.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", type=Path, required=True, help="the warehouse to copy and refresh")
    ap.add_argument("--models", type=Path, default=ROOT / "models.toml", help="models file (default: models.toml)")
    ap.add_argument("--add-model", default="gemma3-270m", help="the model added for step 3 (default gemma3-270m)")
    ap.add_argument("--add-corpora", nargs="+", default=["ucl"], help="its corpora (default: ucl)")
    ap.add_argument("--repeat", type=int, default=3, help="no-change refreshes timed (median reported)")
    ap.add_argument("--model-cache", type=Path, help="PREDICTABASE_MODEL_CACHE for the refreshes")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = ap.parse_args()
    if not (args.warehouse / "predictabase.duckdb").exists():
        sys.exit(f"{args.warehouse}: not a warehouse (no predictabase.duckdb)")

    env = {k: v for k, v in os.environ.items() if k not in {"PREDICTABASE_WAREHOUSE", "PREDICTABASE_MODELS"}}
    env.update(HF_HUB_OFFLINE="1", COLUMNS="200")
    if args.model_cache:
        env["PREDICTABASE_MODEL_CACHE"] = str(args.model_cache.resolve())
    tmp = Path(tempfile.mkdtemp(prefix="bench-refresh-"))
    wh = tmp / "warehouse"
    t0 = time.perf_counter()
    shutil.copytree(
        args.warehouse, wh, symlinks=True, ignore=shutil.ignore_patterns(".writer.lock", ".marts-*", "runs.jsonl")
    )
    print(f"copied {args.warehouse} to {wh} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    try:
        models = tmp / "models.toml"
        shutil.copyfile(args.models, models)
        rows, reports = [], []
        s, out = run(wh, models, env)
        rows.append(("catch-up refresh (brings the copy up to date)", f"{s:.1f}"))
        reports.append(("catch-up", out))
        times = []
        for i in range(args.repeat):
            s, out = run(wh, models, env)
            if "nothing changed" not in out:
                sys.exit(f"no-change refresh {i + 1} changed something:\n{out}")
            times.append(s)
        rows.append(
            (
                f"no-change refresh (median of {args.repeat}: {', '.join(f'{t:.1f}' for t in times)})",
                f"{statistics.median(times):.1f}",
            )
        )
        reports.append(("no change", out))
        with open(models, "a", encoding="utf-8") as fh:
            fh.write(
                f'\n[[model]]\nname = "{args.add_model}"\ncorpora = {list(args.add_corpora)!r}\n'.replace("'", '"')
            )
        s, out = run(wh, models, env)
        rows.append((f"add a model ({args.add_model} on {', '.join(args.add_corpora)})", f"{s:.1f}"))
        reports.append((f"add {args.add_model}", out))
        s, out = run(wh, models, env)
        rows.append(("no-change refresh after it", f"{s:.1f}"))
        reports.append(("no change after", out))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}", file=sys.stderr)
    print(f"\nrefresh on a copy of {args.warehouse} ({os.cpu_count()} CPUs)\n")
    print("| refresh | wall s |\n|---|---:|")
    for what, s in rows:
        print(f"| {what} | {s} |")
    for what, out in reports:
        print(f"\n{what}:\n```\n{out}\n```")


if __name__ == "__main__":
    main()
