"""Benchmark the top-1 game's word-level predictions against one scoring pass.

    python bench/top1.py                        # SmolLM2-135M, 40 documents, 3 pairs
    python bench/top1.py -m gemma3-270m --docs 469 --pairs 1

For the first `--docs` documents of the top-1 game that have word-token questions, on the same
machine in one run, alternating pair by pair (machines are shared and noisy):

* scoring pass: the project's scorer (`predictabase.ingest.scoring.engine.Scorer.score_windows`, every
  statistic the token store keeps) over each document's prefix up to its last question, i.e. what
  `predictabase score -c lm_game` does for those documents;
* predictions: `WordPredictor.predict_documents` for every word-token question of the documents
  (its own prefix pass plus the best-first expansions).

Prints per pair: seconds of each, their ratio (goal: <= 3), questions, expansions per question,
milliseconds per question, and the share of predictions proven the argmax. The model loads and
the choice-set trie is built once, outside the timings.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from predictabase.core.config import Paths  # noqa: E402
from predictabase.ingest.scoring.engine import Scorer, make_batches, make_windows  # noqa: E402
from predictabase.ingest.scoring.models import load_model  # noqa: E402
from predictabase.ingest.scoring.pipeline import ScoreSettings, effective_lengths  # noqa: E402
from predictabase.ingest.scoring.profile import TokenizerProfile  # noqa: E402
from predictabase.ingest.scoring.top1_words import Top1Settings  # noqa: E402
from predictabase.ingest.scoring.word_search import Question, WordPredictor, build_trie, is_word_token  # noqa: E402


def game_inputs(mirror: Path, n_docs: int) -> tuple[list[tuple[str, list[Question]]], list[str], list[str]]:
    """(text, word-token questions) and the scoring prefix of the first n_docs documents with questions,
    and the choice-set words, straight from the mirror's files."""
    game = mirror / "lm_game"
    rows = json.loads((game / "analysis/results_raw/res_accuracy_anonym.json").read_text())
    positions = collections.defaultdict(set)
    for r in rows:
        positions[r[5]].add(r[4])
    inputs, prefixes = [], []
    for d in sorted(positions):
        doc = json.loads((game / f"server/docs/doc{d}.json").read_text())
        starts = [0]
        for t in doc:
            starts.append(starts[-1] + len(t))
        qs = [
            Question(str(d), i, starts[i - 1])
            for i in sorted(positions[d])
            if i < len(doc) and is_word_token(doc[i - 1]) and doc[i].startswith(" ")
        ]
        if not qs:
            continue
        text = "".join(doc)
        inputs.append((text, qs))
        prefixes.append(text[: starts[min(max(positions[d]), len(doc))]])
        if len(inputs) == n_docs:
            break
    vocab = ast.literal_eval((game / "server/tokens.json").read_text())
    return inputs, prefixes, sorted({t for t in vocab if is_word_token(t)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", default="smollm2-135m")
    ap.add_argument("--docs", type=int, default=40)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument(
        "--candidates",
        type=int,
        default=Top1Settings().n_candidates,
        help="words proven and kept per question (the search's k)",
    )
    ap.add_argument("--mirror", default=os.environ.get("PREDICTABASE_MIRROR", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--model-cache", default=None, help="converted-model cache (default: a temporary folder)")
    args = ap.parse_args()

    cache = Path(args.model_cache or tempfile.mkdtemp(prefix="bench-top1-"))
    paths = Paths(cache)
    lm = load_model(args.model, paths)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, args.model)
    ctx, stride = effective_lengths(lm, ScoreSettings())
    inputs, prefixes, words = game_inputs(Path(args.mirror), args.docs)
    trie = build_trie(profile, words)
    predictor = WordPredictor(
        lm.model, profile, trie, Top1Settings(n_candidates=args.candidates), device=lm.device, context_length=ctx
    )
    scorer = Scorer(lm.model, profile, top_k=10, device=lm.device)
    encoded = [ids for ids, _ in profile.encode(prefixes)]
    windows = [w for i, ids in enumerate(encoded) for w in make_windows(i, len(ids), ctx, stride)]
    batches = make_batches(windows, ScoreSettings().batch_tokens)
    n_q = sum(len(qs) for _, qs in inputs)
    n_tok = sum(map(len, encoded))
    # warm both paths once (first-call allocations, kernels)
    scorer.score_windows(encoded[:1], make_batches(windows[:1], ScoreSettings().batch_tokens))
    predictor.predict_documents(inputs[:1])

    print(
        f"model {lm.model_key}, top {args.candidates} words per question ({lm.device}, {lm.dtype}, {torch.get_num_threads()} threads), "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    )
    print(
        f"{len(inputs)} documents, {n_tok} prefix tokens, {n_q} word-token questions, "
        f"{len(words)} choice-set words ({sum(1 for n in trie.word_at if trie.depth[n] > 1)} of them multi-token)"
    )
    print()
    print(
        f"{'pair':>4} {'scoring pass s':>15} {'predictions s':>14} {'ratio':>6} {'expansions/q':>13} "
        f"{'ms/question':>12} {'proven argmax':>14} {'proven by mass':>15}"
    )
    ratios = []
    for k in range(args.pairs):
        t0 = time.perf_counter()
        scorer.score_windows(encoded, batches)
        t_score = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = predictor.predict_documents(inputs)
        t_pred = time.perf_counter() - t0
        ok = [r for r in res if r["candidate_logprobs_nats"]]
        proven = sum(math.exp(r["candidate_logprobs_nats"][0]) >= r["max_unexplored_bound"] for r in ok)
        by_mass = sum(math.exp(r["candidate_logprobs_nats"][0]) > r["unexplored_mass"] for r in ok)
        exp_q = sum(r["n_expanded"] for r in res) / len(res)
        ratios.append(t_pred / t_score)
        print(
            f"{k + 1:>4} {t_score:>15.2f} {t_pred:>14.2f} {t_pred / t_score:>6.2f} {exp_q:>13.2f} "
            f"{1000 * t_pred / n_q:>12.1f} {proven / len(ok):>14.3f} {by_mass / len(ok):>15.3f}"
        )
    print()
    print(f"median ratio predictions / scoring pass: {statistics.median(ratios):.2f} (goal <= 3)")


if __name__ == "__main__":
    main()
