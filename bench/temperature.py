"""Benchmark the `temperature` step against the score step: tokens per second on the same texts, pair by pair.

    python bench/temperature.py --warehouse WH --corpus natural_stories --texts 2 --grid 12 --pairs 3

WH: a warehouse with the corpus ingested. One model load; then, pair by pair, the score step's per-part work
(`pipeline.score_part`: the windows' forward passes and its statistics: log-probability, rank, entropy, top-10,
boundary mass) and the temperature step's (`TemperatureScorer.score_windows` on the same windows: ln p_T and ln B_T
for each T of the grid), on the first `--texts` texts, alternating which goes first between pairs (other work on the
machine changes between pairs). A row per step: tokens, each pair's tokens per second, their median, and the ratio
of its median time to the score step's. Prints a Markdown table (with the machine, torch threads, date and commit)
for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--corpus", default="natural_stories")
    ap.add_argument("--texts", type=int, default=2, help="the first N texts of the corpus, 1..100")
    ap.add_argument("--grid", type=int, default=12, help="the first G temperatures of the default grid, 1..12")
    ap.add_argument("--pairs", type=int, default=3, help="rounds over both steps, 1..20")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    if not 1 <= args.texts <= 100 or not 1 <= args.pairs <= 20 or not 1 <= args.grid <= 12:
        ap.error("--texts 1..100, --pairs 1..20, --grid 1..12")

    import torch

    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.scoring import engine, pipeline
    from predictabase.ingest.scoring import temperature as tp
    from predictabase.ingest.scoring.models import load_model
    from predictabase.ingest.scoring.profile import TokenizerProfile
    from predictabase.ingest.scoring.steps import TEMPERATURES

    p = make_paths(args.warehouse)
    settings = pipeline.ScoreSettings(limit=args.texts)
    docs, version = pipeline.load_documents(p, args.corpus, settings)
    lm = load_model(args.model, p, args.device)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, args.model)
    grid = tuple(sorted({1.0, *TEMPERATURES[: args.grid]}))
    scorer = engine.Scorer(lm.model, profile, settings.top_k, lm.device)
    tscorer = tp.TemperatureScorer(lm.model, profile, grid, lm.device)
    plan = pipeline.plan_run(lm, profile, args.corpus, docs, version, settings)
    encoded = profile.encode([d.text for d in docs])
    batches = plan.windows_and_batches(encoded)
    ids = [i for i, _ in encoded]
    n_tokens = sum(len(i) for i in ids)

    def score():
        pipeline.score_part(plan, scorer, docs)

    def temperature():
        tscorer.score_windows(ids, batches)

    steps = {
        "score (statistics: ln p, rank, entropy, top-10, ln B)": score,
        f"temperature ({len(grid)} T)": temperature,
    }
    rates: dict[str, list[float]] = {name: [] for name in steps}
    for pair in range(args.pairs):
        order = list(steps) if pair % 2 == 0 else list(reversed(steps))
        for name in order:
            t0 = time.perf_counter()
            steps[name]()
            rates[name].append(n_tokens / (time.perf_counter() - t0))
    base = statistics.median(rates[next(iter(steps))])
    print(
        f"{platform.node()} · {platform.processor() or platform.machine()} · {os.cpu_count()} cores · "
        f"torch threads {torch.get_num_threads()} · {lm.device} · {datetime.date.today()} · commit {_commit()}"
    )
    print(f"\n{args.model} on the first {len(docs)} texts of {args.corpus} ({n_tokens} tokens), {args.pairs} pairs\n")
    print("| step | tokens | tokens/s per pair | median tokens/s | time vs the score step |")
    print("|---|---|---|---|---|")
    for name in steps:
        med = statistics.median(rates[name])
        pairs = ", ".join(f"{r:.0f}" for r in rates[name])
        print(f"| {name} | {n_tokens} | {pairs} | {med:.0f} | {base / med:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
