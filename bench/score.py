"""Benchmark the scorer against a plain batched forward loop and minicons, on the same model and texts.

    python bench/score.py [--model smollm2-135m] [--pairs 3] [--device cpu] [--ucl 205] [--stories 10]

A = the scorer (tokenize, windows, batches, forward, float32 log-softmax, rank,
entropy, top-k, word-initial mass, Arrow table; no Parquet write).
B = a plain loop over the same windows and batches: forward, float32
log_softmax over all positions, gather of the actual tokens, nothing else.
A and B alternate pair by pair; the table shows each pair's ratio and the median.
C = minicons IncrementalLMScorer.token_score on the same model object (full
context, batches of 8 texts), alternating with A pair by pair; agreement = max |logprob
difference| vs the scorer over tokens whose context is the same in both.
--bos-evidence: mean log-prob of SmolLM2 on UCL sentences with BOS id 0 vs id 1.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.config import paths as get_paths  # noqa: E402
from ingest.scoring.profile import TokenizerProfile, encode  # noqa: E402
from ingest.scoring.engine import Scorer, make_batches, make_windows  # noqa: E402
from ingest.scoring.models import load_model  # noqa: E402
from ingest.scoring.pipeline import Document, ScoreSettings, build_table, effective_lengths  # noqa: E402
from tests.scoring_helpers import natural_stories, ucl_sentences  # noqa: E402

MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data"))


def sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def run_scorer(scorer, tok, bos, texts, ctx, stride, batch_tokens):
    enc = encode(tok, texts, bos)
    windows = [w for d, (ids, _) in enumerate(enc) for w in make_windows(d, len(ids), ctx, stride)]
    res = scorer.score_windows([ids for ids, _ in enc], make_batches(windows, batch_tokens))
    docs = [Document(str(i), i, t) for i, t in enumerate(texts)]
    table = build_table("bench", "bench", "bench", docs, enc, res, scorer)
    return table


def run_plain(model, tok, bos, texts, ctx, stride, batch_tokens, device):
    """No bookkeeping: forward, float32 log_softmax, gather."""
    enc = encode(tok, texts, bos)
    ids_list = [ids for ids, _ in enc]
    windows = [w for d, ids in enumerate(ids_list) for w in make_windows(d, len(ids), ctx, stride)]
    out = []
    with torch.inference_mode():
        for batch in make_batches(windows, batch_tokens):
            width = batch[0].length
            inp = torch.full((len(batch), width), bos.token_id, dtype=torch.long)
            att = torch.zeros((len(batch), width), dtype=torch.long)
            for r, w in enumerate(batch):
                seq = ids_list[w.doc][w.begin:w.end]
                inp[r, 1:1 + len(seq)] = torch.tensor(seq)
                att[r, :1 + len(seq)] = 1
            inp, att = inp.to(device), att.to(device)
            logits = model(input_ids=inp, attention_mask=att, use_cache=False).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1)
            out.append(lp.gather(2, inp[:, 1:, None])[..., 0].cpu())
    return out


def run_minicons(lm, texts, bos_token, device):
    from minicons import scorer as mscorer
    s = mscorer.IncrementalLMScorer(lm.model, device=device, tokenizer=lm.tokenizer)
    scores = []
    for i in range(0, len(texts), 8):
        batch = [bos_token + t for t in texts[i:i + 8]]
        scores += s.token_score(batch, bos_token=False)
    return scores


def n_tokens(tok, texts):
    return sum(len(x) for x in tok(texts, add_special_tokens=False)["input_ids"])


def bos_evidence(lm, texts):
    model, tok = lm.model, lm.tokenizer
    rows = []
    for bos_id in (0, 1):
        tot, n = 0.0, 0
        for t in texts:
            ids = tok(t, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                lp = torch.log_softmax(model(torch.tensor([[bos_id] + ids], device=lm.device)).logits[0, :-1].float(), -1)
            tot += lp[torch.arange(len(ids)), torch.tensor(ids)].sum().item()
            n += len(ids)
        rows.append((bos_id, tok.convert_ids_to_tokens(bos_id), tot / n, n))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--ucl", type=int, default=205)
    ap.add_argument("--stories", type=int, default=10)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--no-minicons", action="store_true")
    ap.add_argument("--bos-evidence", action="store_true")
    args = ap.parse_args()

    lm = load_model(args.model, get_paths(), args.device, args.dtype)
    tok = lm.tokenizer
    profile = TokenizerProfile.build(tok, lm.model_type, lm.vocab_size, args.model)
    bos = profile.bos
    ctx, stride = effective_lengths(lm, ScoreSettings())  # the scorer's defaults
    scorer = Scorer(lm.model, profile, 10, lm.device)
    print(f"model {lm.model_key} ({lm.model_id}), {lm.dtype} on {lm.device}; torch threads {torch.get_num_threads()}, "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}"
          + (f", {torch.cuda.get_device_name()}" if lm.device.startswith("cuda") else ""))
    print(f"BOS {bos.policy} id {bos.token_id}; context {ctx}, stride {stride}, batch_tokens {args.batch_tokens}; "
          f"split LM head: {scorer._split}")
    sets = {"ucl": ucl_sentences(MIRROR, args.ucl),
            "natural_stories": list(natural_stories(MIRROR).values())[:args.stories]}
    if args.bos_evidence:
        for bos_id, name, mean, n in bos_evidence(lm, sets["ucl"]):
            print(f"BOS id {bos_id} {name}: mean logprob {mean:.4f} nats/token over {n} tokens")
    # warm-up
    run_scorer(scorer, tok, bos, sets["ucl"][:4], ctx, stride, args.batch_tokens)
    run_plain(lm.model, tok, bos, sets["ucl"][:4], ctx, stride, args.batch_tokens, lm.device)
    print(f"\n{'texts':16} {'tokens':>7} {'pair':>4} {'scorer tok/s':>13} {'plain tok/s':>12} {'ratio':>6}")
    for name, texts in sets.items():
        n = n_tokens(tok, texts)
        ratios = []
        for i in range(args.pairs):
            order = ("A", "B") if i % 2 == 0 else ("B", "A")
            t = {}
            for which in order:
                sync(lm.device)
                t0 = time.perf_counter()
                if which == "A":
                    table = run_scorer(scorer, tok, bos, texts, ctx, stride, args.batch_tokens)
                else:
                    run_plain(lm.model, tok, bos, texts, ctx, stride, args.batch_tokens, lm.device)
                sync(lm.device)
                t[which] = time.perf_counter() - t0
            ratios.append(t["B"] / t["A"])
            print(f"{name:16} {n:7d} {i + 1:4d} {n / t['A']:13.1f} {n / t['B']:12.1f} {ratios[-1]:6.3f}")
        lp = np.array(table.column("logprob_nats").to_pylist())
        print(f"{name:16} median scorer/plain throughput ratio {statistics.median(ratios):.3f}; "
              f"mean surprisal {-lp.mean():.3f} nats/token ({-lp.mean() / np.log(2):.3f} bits)")
        if not args.no_minicons:
            try:
                import minicons  # noqa: F401
            except ImportError:
                print("  minicons not installed (pip install minicons)")
                continue
            # the peer, also pair by pair: scorer (A) and minicons (C) alternate
            mratios = []
            for i in range(args.pairs):
                t = {}
                for which in (("A", "C") if i % 2 == 0 else ("C", "A")):
                    sync(lm.device)
                    t0 = time.perf_counter()
                    if which == "A":
                        run_scorer(scorer, tok, bos, texts, ctx, stride, args.batch_tokens)
                    else:
                        ms = run_minicons(lm, texts, bos.token, lm.device)
                    sync(lm.device)
                    t[which] = time.perf_counter() - t0
                mratios.append(t["C"] / t["A"])
                print(f"{name:16} {n:7d} {i + 1:4d} {n / t['A']:13.1f} {'minicons':>8} {n / t['C']:7.1f} tok/s "
                      f"{mratios[-1]:6.3f}")
            # minicons: full context, BOS given as text; compare where our context is the whole prefix
            doc = np.array(table.column("doc_id").to_pylist()).astype(int)
            idx = np.array(table.column("token_index").to_pylist())
            diffs = []
            for d, sc in enumerate(ms):
                ours = lp[doc == d]
                theirs = np.array([s for _, s in sc], dtype=np.float64)
                if len(theirs) == len(ours) + 1:  # minicons lists the BOS itself, with score 0
                    theirs = theirs[1:]
                k = min(len(ours), len(theirs), ctx - 1)
                if len(theirs) != len(ours):
                    print(f"  doc {d}: minicons {len(theirs)} tokens vs scorer {len(ours)}")
                diffs.append(np.abs(ours[:k] - theirs[:k]).max())
            print(f"{name:16} median minicons/scorer time ratio {statistics.median(mratios):.3f} (scorer is that many "
                  f"times as fast); "
                  f"max |logprob diff| vs scorer {max(diffs):.2e} (tokens with index < {ctx - 1})")


if __name__ == "__main__":
    main()
