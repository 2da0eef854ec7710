"""Benchmark the `entropy` step: words per second of the Monte-Carlo word entropy for each N, on real texts.

    python bench/entropy.py --warehouse WH --corpus meco_en --texts 3 --samples 16 64 --pairs 3

WH: a warehouse with the corpus ingested (`predictabase ingest meco_en`). One model load; then, pair by pair, the
step's own per-text work (`anticipation.entropy_text`: one forward pass per window, then every word's N samples in
shared-cache trees, the estimates) on the first `--texts` texts for each N, alternating the order of the N values
between pairs (other work on the machine changes between pairs). A row per N: words, each pair's words per second,
their median, the mean tokens per sampled word, and the ratio of its median time per word to the smallest N's.
Prints a Markdown table (and the machine, torch threads, date and commit) for bench/RESULTS.md.
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
    ap.add_argument("--corpus", default="meco_en")
    ap.add_argument("--texts", type=int, default=3, help="the first N texts of the corpus, 1..100")
    ap.add_argument("--samples", type=int, nargs="+", default=[16, 64], help="the N values, each 2..4096")
    ap.add_argument("--pairs", type=int, default=3, help="rounds over every N, 1..20")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    if not 1 <= args.texts <= 100 or not 1 <= args.pairs <= 20 or not all(2 <= n <= 4096 for n in args.samples):
        ap.error("--texts 1..100, --pairs 1..20, --samples each 2..4096")

    import torch

    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.scoring import anticipation as an
    from predictabase.ingest.scoring.models import load_model
    from predictabase.ingest.scoring.profile import TokenizerProfile

    p = make_paths(args.warehouse)
    texts, _ = an.read_texts(p, args.corpus, args.texts)
    lm = load_model(args.model, p, args.device)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, args.model)
    word_initial = torch.as_tensor(profile.word_initial[: lm.vocab_size])
    n_words = sum(len(t.words) for t in texts)
    rates: dict[int, list[float]] = {n: [] for n in args.samples}
    lengths: dict[int, float] = {}
    for pair in range(args.pairs):
        order = args.samples if pair % 2 == 0 else list(reversed(args.samples))
        for n in order:
            settings = an.EntropySettings(samples=n)
            window = an.window_length(lm, settings)
            t0 = time.perf_counter()
            rows = [r for t in texts for r in an.entropy_text(lm, profile, t, settings, window, word_initial)]
            rates[n].append(n_words / (time.perf_counter() - t0))
            ok = [r["mean_sample_tokens"] for r in rows if r["status"] == "ok"]
            lengths[n] = sum(ok) / len(ok)
    base = statistics.median(rates[min(args.samples)])
    print(
        f"{platform.node()} · {platform.processor() or platform.machine()} · {os.cpu_count()} cores · "
        f"torch threads {torch.get_num_threads()} · {lm.device} · {datetime.date.today()} · commit {_commit()}"
    )
    print(f"\n{args.model} on the first {len(texts)} texts of {args.corpus} ({n_words} words), {args.pairs} pairs\n")
    print(
        "| N | words | words/s per pair | median words/s | tokens per sampled word | time per word vs N = "
        f"{min(args.samples)} |"
    )
    print("|---|---|---|---|---|---|")
    for n in args.samples:
        med = statistics.median(rates[n])
        pairs = ", ".join(f"{r:.1f}" for r in rates[n])
        print(f"| {n} | {n_words} | {pairs} | {med:.1f} | {lengths[n]:.2f} | {base / med:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
