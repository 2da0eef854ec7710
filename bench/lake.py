"""Benchmark the token lake at scale: a synthetic token-score lake of 10^6..10^8 rows,
then the dbt build of the perplexity marts on it, an ad-hoc aggregate over every row, and peak memory.

    python bench/lake.py --rows 1e6 1e7 1e8 [--keep DIR] [--memory-limit 4GB] [--repeat-largest 2]
                         [--spans-test first|all|none] [--project-dir DIR]

The lake is written in exactly the layout the scorer writes (ingest/scoring/store.py): one directory
`<root>/model=<key>/corpus=<c>/run=<id>/` per run, holding `part-NNNNN.parquet` files (store.write_part,
whole documents per part; the first part ~2,048 tokens, later ones ~65,536, as pipeline.PartSizer gives on
a GPU) and `_run.json` (store.RunRecord via store.finish_run, written last). A part file stores the
per-token columns of store.SCHEMA only (store.PART_COLUMNS): run_id, model_key and corpus are the directory's
names (hive partitions to DuckDB, one constant per file; also the file's key-value metadata); the float
columns as float32 (every value here is a float32 number, as the scorer's are: store.file_table keeps a
column double when one is not), without a dictionary, the scalar ones PLAIN and uncompressed (what a scan
decodes fastest: bench/RESULTS.md), the top-k lists BYTE_STREAM_SPLIT; the other columns zstd; one row
group per file. Part files of the older layout (every SCHEMA column per row, doubles, dictionaries) are what the
previous GEN_VERSION wrote; the same views read both (tests/test_token_lake_layout.py).

What it holds (all vectorised numpy/pyarrow, seeded, so a size is always the same lake):
* 12 models in 3 tokenizer families (GPT-2 BPE 50,257, SentencePiece 32,000, SmolLM 49,152 tokens) x 6
  corpora; models of a family share the tokenization of a document (same tokenizer), their values differ.
  Per (model, corpus): the run the marts use; for 1 in 4 an older full run (other context length,
  superseded), for 1 in 6 a `--limit 20` run, plus one interrupted run (part files, no `_run.json`).
* documents of realistic length: tokens per document lognormal, medians 250..3,000 by corpus (clipped
  to 40..12,000); the number of documents per corpus grows with the size asked for (the grid does not),
  so 10^8 rows also means 100x the documents of 10^6 (what the bootstrap scales with).
* vocabulary strings with real-looking lengths (mean ~4.3 characters per token, a leading space on most
  word-initial tokens: Ġ / ▁ in `token`, a space in `token_text`, ~4% with a non-ASCII character so that
  bytes > characters), Zipf-distributed ids; spans tile each document exactly. Every tokenizer cuts
  the same texts (the GPT-2 family's tokens write them); raw.documents (the texts) and raw.words (maximal
  non-space runs, ~0.55 per token) go into the warehouse: int_doc_scores' n_words and the chain's singular
  tests read them.
* logprob = -surprisal, surprisal ~ Gamma(0.9, 3.9) nats (mean ~3.5) stored as float32 numbers
  like the scorer's; rank ~ exp(0.8 surprisal + noise) clipped to the vocabulary; entropy correlated with
  surprisal; word-initial mass ln B near 0 before word-initial tokens and ~-3 inside words, the `after`
  column the next row's (end of text after the last); context_tokens from 2048/1024 sliding windows.
* top-k lists: DISK IS BOUNDED by giving only the default model's runs (smollm2-135m, 1 of 12 models, ~8%
  of the rows) the scorer's default top_k = 10 (ids, strings, log-probabilities); every other run was
  "scored with --top-k 0" (empty lists, as the scorer writes them). ~41 bytes/row on disk overall (~56 in the
  older layout).

Measured per size (each in a fresh child process, DuckDB memory_limit set, spilling allowed into a
temp_directory under the work dir):
  (a) `dbt build --select +mart_model_perplexity +mart_models stg_documents --exclude
      assert_token_spans_match_documents` (the chain's models AND their data tests, as `predictabase build`
      runs them) on a fresh warehouse after a `dbt parse` (parse timed apart), wall and CPU seconds, with
      the slowest nodes from dbt's results. The one excluded test, a warn-level check comparing every
      token's text with substr() of its document, is timed alone (`dbt test --select ...`) on the first
      try of sizes up to --spans-test-max-rows: DuckDB's substr on a non-ASCII text scans the text, so
      it costs tokens x document length (bench/RESULTS.md, "The token lake at scale": the numbers, and a linear rewrite);
  (b) `select model_key, corpus, sum(surprisal_bits) from intermediate.int_token_scores group by all` on
      the built warehouse: cold = first run in a fresh process and connection (the OS page cache is left
      as it is: not dropped; the lake was just written or read), warm = the second run in the same
      connection; and, for reference, the same sum straight from read_parquet over the lake (model and
      corpus from the directories' names; no completeness check): the floor for a per-token scan;
  (c) peak RSS (getrusage ru_maxrss of the child: Python + dbt + DuckDB) of the build and of the query.
Then a table (rows, files, lake size, build, aggregate cold/warm, peak memory, ...) and growth ratios.
The lake goes under a temp dir that is deleted afterwards unless --keep DIR (then kept and reused when
present, with each measurement appended to DIR/rows-N/results.jsonl). --project-dir builds another copy
of the dbt project (e.g. the one before a change) on the same lake.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

GEN_VERSION = 3  # bump when the generator changes: a kept lake of another version is regenerated
SELECT = "+mart_model_perplexity +mart_models stg_documents"  # stg_documents: the chain's singular tests join it
# the chain's warn-level singular test that compares every token's text with substr() of its document text:
# timed apart from the build (see the docstring and bench/RESULTS.md)
SPANS_TEST = "assert_token_spans_match_documents"
AGGREGATE = "select model_key, corpus, sum(surprisal_bits) from intermediate.int_token_scores group by all"
# the same sum straight from the part files (model and corpus: the directories' names, hive partitions)
AGGREGATE_LAKE = (
    "select model, corpus, sum(-logprob_nats / ln(2)) "
    "from read_parquet('{root}/*/*/*/part-*.parquet', hive_partitioning=true) group by all"
)

# family -> (tokenizer, vocab size, word-initial marker, bos id, bos token, end-of-text id, token)
FAMILIES = {
    "gpt2": ("openai-community/gpt2", 50257, "Ġ", 50256, "<|endoftext|>", 50256, "<|endoftext|>"),
    "sp": ("meta-llama/Llama-2-7b-hf", 32000, "▁", 1, "<s>", 2, "</s>"),
    "smol": ("HuggingFaceTB/SmolLM2-135M", 49152, "Ġ", 0, "<|endoftext|>", 0, "<|endoftext|>"),
}
# model key -> (family, model id, parameters)
MODELS = {
    "gpt2": ("gpt2", "openai-community/gpt2", 124e6),
    "gpt2-medium": ("gpt2", "openai-community/gpt2-medium", 355e6),
    "gpt2-large": ("gpt2", "openai-community/gpt2-large", 774e6),
    "gpt-neo-125m": ("gpt2", "EleutherAI/gpt-neo-125m", 125e6),
    "llama2-7b": ("sp", "meta-llama/Llama-2-7b-hf", 6.7e9),
    "llama2-13b": ("sp", "meta-llama/Llama-2-13b-hf", 13e9),
    "mistral-7b": ("sp", "mistralai/Mistral-7B-v0.1", 7.2e9),
    "tinyllama-1.1b": ("sp", "TinyLlama/TinyLlama-1.1B", 1.1e9),
    "smollm2-135m": ("smol", "HuggingFaceTB/SmolLM2-135M", 135e6),
    "smollm2-360m": ("smol", "HuggingFaceTB/SmolLM2-360M", 360e6),
    "smollm2-1.7b": ("smol", "HuggingFaceTB/SmolLM2-1.7B", 1.7e9),
    "smollm-360m": ("smol", "HuggingFaceTB/SmolLM-360M", 360e6),
}
TOPK_MODELS = {"smollm2-135m": 10}  # every other run: top_k = 0 (see the docstring: disk)
# corpus -> median tokens per document
CORPORA = {"news": 450, "wiki": 900, "books": 3000, "stories": 1200, "papers": 2500, "forum": 250}
FIRST_PART_TOKENS, PART_TOKENS = 2048, 65536
LIMIT_DOCS = 20
CTX, STRIDE = 2048, 1024


def seed_of(*parts) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "little")


# --- vocabulary, documents, tokenizations ------------------------------------------------------------

NON_ASCII = list("éüöäçñåøß—“”’…")
PUNCT = list(".,;:!?'\"()-")


def make_vocab(family: str):
    """(token strings, token_text strings, char lengths, id sampling cdf, {length: an id of that length})."""
    _, V, marker, *_ = FAMILIES[family]
    rng = np.random.default_rng(seed_of("vocab", family))
    lens = np.clip(np.rint(rng.gamma(3.4, 1.8, V)), 1, 16).astype(np.int64)
    space = (rng.random(V) < 0.6) & (lens >= 2)
    accent = rng.random(V) < 0.04
    letters = rng.integers(97, 123, size=(V, 16)).astype(np.uint8)
    texts, toks = [], []
    for i in range(V):  # per vocabulary entry (50k), not per row
        n = int(lens[i])
        if n == 1 and i % 3 == 0:
            body = PUNCT[i % len(PUNCT)]
        else:
            body = letters[i, : n - int(space[i])].tobytes().decode()
            if accent[i] and body:
                j = i % len(body)
                body = body[:j] + NON_ASCII[i % len(NON_ASCII)] + body[j + 1 :]
        texts.append((" " if space[i] else "") + body)
        toks.append((marker if space[i] else "") + body)
    # frequent ids tend to be the short ones (" the", ",", "."): order by length + noise, Zipf over that order
    order = np.argsort(lens + rng.normal(0, 8.0, V), kind="stable")  # weighted mean ~4.2 chars
    p = 1.0 / (np.arange(V) + 10.0) ** 1.05
    cdf_by_rank = np.cumsum(p / p.sum())
    fix = {}
    for i in range(V):  # an ASCII, no-space id of each length (to end a document exactly)
        if not space[i] and not accent[i] and texts[i].isalpha():
            fix.setdefault(len(texts[i]), i)
    for n in range(1, 17):
        if n not in fix:  # make one
            texts[n] = "a" * n
            toks[n] = "a" * n
            lens[n] = n
            fix[n] = n
    return (
        pa.array(toks, pa.string()),
        pa.array(texts, pa.string()),
        np.array([len(t) for t in texts], np.int64),
        (order, cdf_by_rank),
        fix,
    )


def draw_ids(rng, sampler, n: int) -> np.ndarray:
    order, cdf = sampler
    r = np.searchsorted(cdf, rng.random(n), side="right")
    return order[np.minimum(r, len(order) - 1)].astype(np.int32)


def doc_lengths(corpus: str, n_docs: int) -> np.ndarray:
    """Characters per document (the same text for every tokenizer)."""
    rng = np.random.default_rng(seed_of("docs", corpus))
    tokens = np.clip(rng.lognormal(np.log(CORPORA[corpus]), 0.6, n_docs), 40, 12000)
    return np.rint(tokens * 4.3).astype(np.int64)


def tokenize(family: str, corpus: str, L: np.ndarray, vocab) -> dict:
    """Token ids and spans tiling each document of lengths L exactly (vectorised over all documents)."""
    _, _, vlen, sampler, fix = vocab
    rng = np.random.default_rng(seed_of("tok", family, corpus, len(L)))
    mean = float(vlen.mean())
    est = np.ceil(L / 2.0 + 32).astype(np.int64)  # >= 2x the tokens needed at ~4 chars/token
    starts_est = np.concatenate([[0], np.cumsum(est)[:-1]])
    ids = draw_ids(rng, sampler, int(est.sum()))
    lens = vlen[ids]
    doc = np.repeat(np.arange(len(L)), est)
    cs = np.cumsum(lens)
    base = np.concatenate([[0], cs])[starts_est]
    end_in_doc = cs - base[doc]
    start_in_doc = end_in_doc - lens
    if (end_in_doc[np.cumsum(est) - 1] < L).any():
        raise AssertionError(f"too few draws for {family}/{corpus} (mean {mean:.2f} chars/token)")
    keep = start_in_doc < L[doc]
    ids, doc, start, end = ids[keep], doc[keep], start_in_doc[keep], end_in_doc[keep]
    last = end > L[doc]  # the token crossing the end: replaced by one of exactly the rest's length
    ids[last] = np.array([fix[int(n)] for n in (L[doc[last]] - start[last])], np.int32)
    end = np.where(last, L[doc], end)
    assert (end - start == vlen[ids]).all()
    n_per_doc = np.bincount(doc, minlength=len(L))
    first = np.concatenate([[0], np.cumsum(n_per_doc)[:-1]])
    return dict(
        ids=ids,
        doc=doc.astype(np.int32),
        start=start.astype(np.int32),
        end=end.astype(np.int32),
        token_index=(np.arange(len(ids)) - first[doc]).astype(np.int32),
        n_per_doc=n_per_doc,
        first=first,
    )


REFERENCE_FAMILY = "gpt2"  # the corpus texts are written by this family's tokens; every tokenizer tiles them


def corpus_text(corpus: str, n_docs: int) -> dict:
    """The texts of a corpus (concatenated, doc after doc), as a string, UTF-8 bytes and the char -> byte map."""
    L = doc_lengths(corpus, n_docs)
    vocab = make_vocab(REFERENCE_FAMILY)
    tk = tokenize(REFERENCE_FAMILY, corpus, L, vocab)
    text = "".join(vocab[1].take(pa.array(tk["ids"])).to_pylist())
    cp = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    blen = 1 + (cp >= 0x80).astype(np.int64) + (cp >= 0x800) + (cp >= 0x10000)
    doc0 = np.concatenate([[0], np.cumsum(L)])
    assert len(text) == doc0[-1]
    return dict(
        L=L,
        text=text,
        data=pa.py_buffer(text.encode("utf-8")),
        cp=cp,
        bmap=np.concatenate([[0], np.cumsum(blen)]),
        doc0=doc0,
        doc_ids=pa.array([f"{corpus}-{i:06d}" for i in range(n_docs)], pa.string()),
        version=hashlib.sha256(f"{corpus}:{n_docs}:{GEN_VERSION}".encode()).hexdigest(),
    )


def slices(ct: dict, char_bounds: np.ndarray) -> pa.Array:
    """Consecutive slices of the corpus text between char_bounds (n + 1 increasing positions), zero-copy."""
    offsets = ct["bmap"][char_bounds].astype(np.int32)
    return pa.StringArray.from_buffers(len(char_bounds) - 1, pa.py_buffer(offsets), ct["data"])


def documents_table(corpus: str, ct: dict) -> pa.Table:
    """raw.documents of a corpus (the texts every run tiles; corpus_version = the runs')."""
    n = len(ct["L"])
    text = slices(ct, ct["doc0"])
    return pa.table(
        {
            "corpus": pa.array(np.full(n, corpus, dtype=object), pa.string()),
            "doc_id": ct["doc_ids"],
            "doc_index": pa.array(np.arange(n, dtype=np.int32)),
            "text": text,
            "n_chars": pa.array(ct["L"]),
            "n_bytes": pa.array(np.diff(ct["bmap"][ct["doc0"]])),
            "score_prefix_chars": pa.nulls(n, pa.int32()),
            "corpus_version": pa.array(np.full(n, ct["version"], dtype=object), pa.string()),
            "source_path": pa.array(np.full(n, f"bench/{corpus}.txt", dtype=object), pa.string()),
            "source_sha256": pa.array(np.full(n, "0" * 64, dtype=object), pa.string()),
        }
    )


def words_table(corpus: str, ct: dict) -> pa.Table:
    """raw.words of a corpus: maximal runs of non-space characters of each text (the lm_game rule)."""
    cp, doc0 = ct["cp"], ct["doc0"]
    sp = cp == 32
    prev_sp = np.concatenate([[True], sp[:-1]])
    next_sp = np.concatenate([sp[1:], [True]])
    prev_sp[doc0[:-1]] = True
    next_sp[doc0[1:] - 1] = True
    starts = np.flatnonzero(~sp & prev_sp)
    ends = np.flatnonzero(~sp & next_sp) + 1
    doc = np.searchsorted(doc0, starts, side="right") - 1
    n_per_doc = np.bincount(doc, minlength=len(ct["L"]))
    first = np.concatenate([[0], np.cumsum(n_per_doc)[:-1]])
    n = len(starts)
    widx = np.arange(n) - first[doc]
    # word strings: slices of the text (the spaces between words are dropped by taking every other slice)
    bounds = np.empty(2 * n, np.int64)
    bounds[0::2], bounds[1::2] = starts, ends
    word = slices(ct, bounds).take(pa.array(np.arange(0, 2 * n - 1, 2)))
    return pa.table(
        {
            "corpus": pa.array(np.full(n, corpus, dtype=object), pa.string()),
            "doc_id": ct["doc_ids"].take(pa.array(doc)),
            "word_index": pa.array(widx.astype(np.int32)),
            "word": word,
            "char_start": pa.array((starts - doc0[doc]).astype(np.int32)),
            "char_end": pa.array((ends - doc0[doc]).astype(np.int32)),
            "native_id": pa.array(widx + 1).cast(pa.string()),
            "source_path": pa.array(np.full(n, f"bench/{corpus}.txt", dtype=object), pa.string()),
            "source_sha256": pa.array(np.full(n, "0" * 64, dtype=object), pa.string()),
        }
    )


# --- runs ------------------------------------------------------------------------------------------


def plan(rows: int) -> dict:
    """Documents per corpus and the runs, for about `rows` token rows."""
    runs = []
    keys = list(MODELS)
    for ci, corpus in enumerate(CORPORA):
        for mi, model in enumerate(keys):
            runs.append(dict(model=model, corpus=corpus, kind="used"))
            if (mi + ci) % 4 == 0:
                runs.append(dict(model=model, corpus=corpus, kind="older"))
            if (mi + 2 * ci) % 6 == 1:
                runs.append(dict(model=model, corpus=corpus, kind="limit"))
    runs.append(dict(model=keys[0], corpus=list(CORPORA)[0], kind="interrupted"))
    # documents per corpus: an equal share of the rows per corpus, from the (seeded) document lengths at ~4.2
    # characters per token, counting the full runs and the --limit runs of the corpus
    n_docs = {}
    for c in CORPORA:
        full = sum(1 for r in runs if r["corpus"] == c and r["kind"] in ("used", "older"))
        limited = sum(1 for r in runs if r["corpus"] == c and r["kind"] == "limit")
        n = max(2, int(rows / len(CORPORA) / full / (CORPORA[c] * 1.2)))
        for _ in range(3):
            L = doc_lengths(c, n) / 4.2
            expected = full * L.sum() + limited * L[:LIMIT_DOCS].sum()
            n = max(2, int(round(n * rows / len(CORPORA) / expected)))
        n_docs[c] = n
    return dict(runs=runs, n_docs=n_docs)


def run_id_of(r: dict) -> str:
    return hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()[:16]


def run_values(
    rng,
    n: int,
    vocab_size: int,
    word_initial: np.ndarray,
    doc_last: np.ndarray,
    ctx: int,
    stride: int,
    token_index: np.ndarray,
) -> dict:
    s = (rng.gamma(0.9, 3.9, n) + 1e-4).astype(np.float32).astype(np.float64)  # float32 numbers, like the scorer's
    rank = np.clip(np.floor(np.exp(0.8 * s + rng.normal(0, 0.7, n))), 1, vocab_size).astype(np.int32)
    entropy = (0.45 * s + rng.gamma(2.0, 1.0, n)).astype(np.float32).astype(np.float64)
    lnb = (
        np.where(word_initial, -rng.exponential(0.15, n), -rng.gamma(2.0, 1.5, n)).astype(np.float32).astype(np.float64)
    )
    after = np.empty(n)
    after[:-1] = lnb[1:]
    after[doc_last] = -rng.exponential(3.0, int(doc_last.sum())).astype(np.float32)  # ln B at the end of the text
    context = np.where(token_index < ctx, token_index, (ctx - stride) + (token_index - ctx) % stride).astype(np.int32)
    return dict(
        logprob_nats=-s,
        rank=rank,
        entropy_nats=entropy,
        logprob_word_initial_nats=lnb,
        logprob_word_initial_after_nats=after,
        context_tokens=context,
    )


def list_column(flat: pa.Array, n: int, k: int) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32) * np.int32(k)), flat)


def write_group(args) -> list[dict]:
    """Every run of one (tokenizer family, corpus): tokenize the corpus once, write each run's parts."""
    from predictabase.ingest.scoring import store

    root, family, corpus, n_docs, runs = args
    root = Path(root)
    vocab = make_vocab(family)
    tokenizer, V, marker, bos_id, bos_tok, eot_id, eot_tok = FAMILIES[family]
    ct = corpus_text(corpus, n_docs)
    L, doc_ids = ct["L"], ct["doc_ids"]
    tk = tokenize(family, corpus, L, vocab)
    # token_text: the text at each span (zero-copy slices of the corpus text)
    token_text = slices(ct, np.concatenate([ct["doc0"][tk["doc"]] + tk["start"], [ct["doc0"][-1]]]))
    if family == REFERENCE_FAMILY:  # the text was written with these very tokens
        token_ids = tk["ids"]
        token = vocab[0].take(pa.array(token_ids))
        assert token_text.equals(vocab[1].take(pa.array(token_ids)))
    else:  # the same text cut by another tokenizer: an id per distinct piece, the vocabulary string with its marker
        idx = pc.dictionary_encode(token_text).indices.to_numpy()
        token_ids = ((idx.astype(np.int64) * 7919 + 13) % V).astype(np.int32)
        token = pc.replace_substring_regex(token_text, "^ ", marker)
    word_initial = pc.starts_with(token_text, " ").to_numpy(zero_copy_only=False)
    out = []
    for r in runs:
        model, kind = r["model"], r["kind"]
        _, model_id, _ = MODELS[model]
        ctx = CTX if kind != "older" else 1024
        stride = STRIDE if kind != "older" else 512
        top_k = TOPK_MODELS.get(model, 0)
        limit = LIMIT_DOCS if kind == "limit" else None
        n_run_docs = min(limit, n_docs) if limit else (max(1, n_docs // 2) if kind == "interrupted" else n_docs)
        rid = run_id_of(dict(r, ctx=ctx))
        rdir = store.run_dir(root, model, corpus, rid)
        rdir.mkdir(parents=True, exist_ok=True)
        n = int(tk["n_per_doc"][:n_run_docs].sum())
        rng = np.random.default_rng(seed_of("values", model, corpus, kind, n_docs))
        doc = tk["doc"][:n]
        doc_last = np.zeros(n, bool)
        doc_last[(tk["first"][:n_run_docs] + tk["n_per_doc"][:n_run_docs] - 1)] = True
        vals = run_values(rng, n, V, word_initial[:n], doc_last, ctx, stride, tk["token_index"][:n])
        if top_k:
            tk_ids = draw_ids(rng, vocab[3], n * top_k)
            top1 = -rng.exponential(0.6, n)
            gaps = rng.exponential(0.5, (n, top_k)).cumsum(axis=1)
            tk_lp = (top1[:, None] - gaps + gaps[:, :1]).astype(np.float32).astype(np.float64)
        # parts: consecutive whole documents, the first >= FIRST_PART_TOKENS, later >= PART_TOKENS (pipeline._groups)
        bounds, size, target, lo = [], 0, FIRST_PART_TOKENS, 0
        for d in range(n_run_docs):
            size += int(tk["n_per_doc"][d])
            if size >= target or d == n_run_docs - 1:
                hi = int(tk["first"][d] + tk["n_per_doc"][d])
                bounds.append((lo, hi))
                lo, size, target = hi, 0, PART_TOKENS
        started = dt.datetime(2025, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=seed_of(rid) % 5000)
        if kind == "older":
            started -= dt.timedelta(days=60)
        for lo, hi in bounds:
            m = hi - lo
            sl = slice(lo, hi)
            cols = {
                "run_id": pa.array(np.full(m, rid, dtype=object), pa.string()),
                "model_key": pa.array(np.full(m, model, dtype=object), pa.string()),
                "corpus": pa.array(np.full(m, corpus, dtype=object), pa.string()),
                "doc_id": doc_ids.take(pa.array(doc[sl])),
                "token_index": pa.array(tk["token_index"][sl]),
                "token_id": pa.array(token_ids[sl]),
                "token": token.slice(lo, m),
                "token_text": token_text.slice(lo, m),
                "char_start": pa.array(tk["start"][sl]),
                "char_end": pa.array(tk["end"][sl]),
                "logprob_nats": pa.array(vals["logprob_nats"][sl]),
                "rank": pa.array(vals["rank"][sl]),
                "entropy_nats": pa.array(vals["entropy_nats"][sl]),
            }
            if top_k:
                fl = tk_ids[lo * top_k : hi * top_k]
                cols["topk_token_ids"] = list_column(pa.array(fl), m, top_k)
                cols["topk_tokens"] = list_column(vocab[0].take(pa.array(fl)), m, top_k)
                cols["topk_logprobs_nats"] = list_column(pa.array(tk_lp[sl].reshape(-1)), m, top_k)
            else:  # --top-k 0: empty lists, as the scorer writes them
                for c, t in (
                    ("topk_token_ids", pa.int32()),
                    ("topk_tokens", pa.string()),
                    ("topk_logprobs_nats", pa.float64()),
                ):
                    cols[c] = list_column(pa.array([], t), m, 0)
            for c in ("logprob_word_initial_nats", "logprob_word_initial_after_nats", "context_tokens"):
                cols[c] = pa.array(vals[c][sl])
            store.write_part(rdir, pa.table({f.name: cols[f.name] for f in store.SCHEMA}, schema=store.SCHEMA))
        if kind == "interrupted":  # killed before `_run.json`: dbt must ignore these rows
            out.append(dict(run_id=rid, rows=n, complete=False))
            continue
        finished = started + dt.timedelta(seconds=n / 5000.0)
        record = store.RunRecord(
            run_id=rid,
            model_key=model,
            model_id=model_id,
            model_revision=hashlib.sha1(model_id.encode()).hexdigest(),
            tokenizer=tokenizer,
            tokenizer_sha256=hashlib.sha256(tokenizer.encode()).hexdigest(),
            vocab_size=V,
            dtype="bfloat16",
            device="cuda",
            bos_policy="prepend",
            bos_token_id=bos_id,
            bos_token=bos_tok,
            corpus=corpus,
            corpus_version=ct["version"],
            context_length=ctx,
            stride=stride,
            top_k=top_k,
            batch_tokens=8192,
            limit=limit,
            full=False,
            n_docs=n_run_docs,
            n_docs_with_tokens=n_run_docs,
            n_tokens=n,
            source="scored",
            started_at=started.isoformat(),
            finished_at=finished.isoformat(),
            package_versions={"torch": "2.5.1", "transformers": "4.46.0", "bench": f"lake/{GEN_VERSION}"},
            scorer_version=2,
            end_of_text_ids=[eot_id],
            end_of_text_tokens=[eot_tok],
        )
        store.finish_run(rdir, record)
        out.append(dict(run_id=rid, rows=n, complete=True))
    return out


def generate(root: Path, rows: int, raw_dir: Path, workers: int = 2) -> dict:
    p = plan(rows)
    root.mkdir(parents=True, exist_ok=True)
    groups = {}
    for r in p["runs"]:
        groups.setdefault((MODELS[r["model"]][0], r["corpus"]), []).append(r)
    tasks = [(str(root), fam, c, p["n_docs"][c], rs) for (fam, c), rs in groups.items()]
    tasks.sort(key=lambda t: -t[3] * CORPORA[t[2]] * len(t[4]))  # biggest first
    t0 = time.perf_counter()
    with ProcessPoolExecutor(workers) as ex:
        results = [x for res in ex.map(write_group, tasks) for x in res]
    import pyarrow.parquet as pq

    words, documents = [], []
    for c in CORPORA:
        ct = corpus_text(c, p["n_docs"][c])
        words.append(words_table(c, ct))
        documents.append(documents_table(c, ct))
    words = pa.concat_tables(words)
    pq.write_table(words, raw_dir / "words.parquet")
    pq.write_table(pa.concat_tables(documents), raw_dir / "documents.parquet")
    info = dict(
        version=GEN_VERSION,
        rows_asked=rows,
        rows=sum(r["rows"] for r in results),
        complete_rows=sum(r["rows"] for r in results if r["complete"]),
        runs=len(results),
        docs=sum(p["n_docs"].values()),
        words=words.num_rows,
        seconds=time.perf_counter() - t0,
    )
    (root.parent / "lake.json").write_text(json.dumps(info, indent=1))
    return info


# --- measurements (children) -------------------------------------------------------------------------


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process, DuckDB's included
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def bench_profiles(profiles_dir: Path, memory_limit: str, temp_dir: Path, project_dir: Path) -> None:
    """The project's profiles.yml with DuckDB's memory_limit and temp_directory added (spilling allowed).

    As `config_options` (set once, when dbt-duckdb opens the database), not `settings` (SET again on every
    cursor): DuckDB refuses to SET temp_directory once it has been used, so with `settings` a build that
    spilled fails in the next cursor (the on-run-end hook's)."""
    import yaml

    prof = yaml.safe_load((project_dir / "profiles.yml").read_text())
    for out in prof["predictabase"]["outputs"].values():
        out.setdefault("config_options", {}).update({"memory_limit": memory_limit, "temp_directory": str(temp_dir)})
    profiles_dir.mkdir(parents=True, exist_ok=True)
    (profiles_dir / "profiles.yml").write_text(yaml.safe_dump(prof))


def child_build(warehouse: Path, profiles_dir: Path, project_dir: Path, spans_test: bool) -> dict:
    """dbt parse, then the build of the chain without SPANS_TEST, then (when asked) SPANS_TEST alone."""
    from dbt.cli.main import dbtRunner

    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse.dbt import dbt_args, dbt_env, environ

    p = make_paths(warehouse)
    out = {}
    steps = [("parse", "parse", None, None), ("build", "build", SELECT, ["--exclude", SPANS_TEST])]
    if spans_test:
        steps.append(("spans_test", "test", SPANS_TEST, None))
    with environ(dbt_env(p)):
        for name, command, select, extra in steps:
            args = dbt_args(p, command, select, project_dir=project_dir, extra=extra)
            args[args.index("--profiles-dir") + 1] = str(profiles_dir)
            t0, c0 = time.perf_counter(), cpu_s()
            res = dbtRunner().invoke(args)
            out[f"{name}_s"], out[f"{name}_cpu_s"] = time.perf_counter() - t0, cpu_s() - c0
            if not res.success:
                raise SystemExit(
                    f"dbt {command} failed: {res.exception or ''} "
                    + "; ".join(
                        f"{r.node.unique_id}: {r.message}"
                        for r in (res.result or [])
                        if str(r.status).lower() in ("error", "fail")
                    )
                )
            if name == "build":
                out["nodes"] = sorted(
                    ((r.node.unique_id.split(".", 2)[-1], round(r.execution_time, 2)) for r in res.result),
                    key=lambda x: -x[1],
                )
                out["n_nodes"] = len(res.result)
                out["peak_rss_mb"] = peak_rss_mb()  # of parse + build (ru_maxrss only grows)
    out["peak_rss_with_spans_test_mb"] = peak_rss_mb()
    return out


def child_query(warehouse: Path, memory_limit: str, temp_dir: Path, sql: str) -> dict:
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect(str(warehouse / "predictabase.duckdb"), read_only=True)
    con.execute(f"set memory_limit = '{memory_limit}'")
    con.execute(f"set temp_directory = '{temp_dir}'")
    connect_s = time.perf_counter() - t0
    times, cpus, result = [], [], None
    for _ in range(3):
        t0, c0 = time.perf_counter(), cpu_s()
        result = con.execute(sql).fetchall()
        times.append(time.perf_counter() - t0)
        cpus.append(cpu_s() - c0)
    return dict(
        connect_s=connect_s,
        cold_s=times[0],
        warm_s=times[1],
        warm_runs=times[1:],
        warm_cpu_s=cpus[1],  # CPU seconds of all threads: steadier than wall time on a shared machine
        groups=len(result),
        total_bits=float(sum(r[2] for r in result)),
        peak_rss_mb=peak_rss_mb(),
    )


def run_child(*args: str) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"child {' '.join(args[:2])} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --- driver ------------------------------------------------------------------------------------------


def disk_bytes(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, _, names in os.walk(root):
        for n in names:
            st = os.stat(os.path.join(dirpath, n))
            size += st.st_blocks * 512
            files += n.endswith(".parquet")
    return files, size


def measure(size_dir: Path, rows: int, a: argparse.Namespace, tries: int) -> list[dict]:
    memory_limit = a.memory_limit
    import duckdb

    lake_parent = size_dir / "lake"
    root = lake_parent / "token_scores"
    info_path = lake_parent / "lake.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else None
    if info and info.get("version") == GEN_VERSION and info.get("rows_asked") == rows:
        print(f"  reusing the lake in {lake_parent}", flush=True)
        info["seconds"] = None
    else:
        shutil.rmtree(lake_parent, ignore_errors=True)
        info = generate(root, rows, lake_parent)
        print(
            f"  generated {info['rows']:,} rows ({info['runs']} runs, {info['docs']:,} documents, "
            f"{info['words']:,} words) in {info['seconds']:.0f} s",
            flush=True,
        )
    files, nbytes = disk_bytes(root)
    out = []
    for attempt in range(tries):
        wh = size_dir / f"warehouse{attempt}"
        shutil.rmtree(wh, ignore_errors=True)
        (wh / "parquet").mkdir(parents=True)
        os.symlink(root, wh / "parquet" / "token_scores")
        with duckdb.connect(str(wh / "predictabase.duckdb")) as con:  # raw.documents and raw.words of the corpora
            con.execute("create schema raw")
            for t in ("documents", "words"):
                con.execute(f"create table raw.{t} as select * from read_parquet('{lake_parent / t}.parquet')")
        tmp = size_dir / "duckdb_tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        prof = size_dir / "profiles"
        bench_profiles(prof, memory_limit, tmp, a.project_dir)
        spans = (a.spans_test == "all" or (a.spans_test == "first" and attempt == 0)) and rows <= a.spans_test_max_rows
        build = run_child("--child-build", str(wh), str(prof), str(a.project_dir), "1" if spans else "0")
        q = run_child("--child-query", str(wh), memory_limit, str(tmp), AGGREGATE)
        ql = run_child("--child-query", str(wh), memory_limit, str(tmp), AGGREGATE_LAKE.format(root=root))
        with duckdb.connect(str(wh / "predictabase.duckdb"), read_only=True) as con:
            marts = con.execute(
                "select count(*), sum(n_tokens), sum(n_docs) from marts.mart_model_perplexity"
            ).fetchone()
        out.append(
            dict(
                rows=info["rows"],
                complete_rows=info["complete_rows"],
                files=files,
                bytes=nbytes,
                gen_s=info["seconds"],
                build=build,
                query=q,
                query_lake=ql,
                marts=marts,
            )
        )
        with open(size_dir / "results.jsonl", "a") as f:
            f.write(json.dumps(dict(out[-1], when=dt.datetime.now().isoformat(timespec="seconds"))) + "\n")
        out[-1]
        spans_s = f", {SPANS_TEST} {build['spans_test_s']:.1f} s" if "spans_test_s" in build else ""
        print(
            f"  try {attempt + 1}: parse {build['parse_s']:.1f} s, build {build['build_s']:.1f} s "
            f"(CPU {build['build_cpu_s']:.0f} s){spans_s} "
            f"({build['n_nodes']} nodes; slowest {build['nodes'][:8]}), build peak RSS {build['peak_rss_mb']:.0f} MB; "
            f"aggregate cold {q['cold_s']:.3f} s warm {q['warm_s']:.3f} s (runs {[round(x, 3) for x in q['warm_runs']]}), "
            f"peak RSS {q['peak_rss_mb']:.0f} MB; read_parquet direct cold {ql['cold_s']:.3f} warm {ql['warm_s']:.3f}; "
            f"mart rows/tokens/docs {marts}",
            flush=True,
        )
        if not a.keep or attempt < tries - 1:
            shutil.rmtree(wh, ignore_errors=True)
    return out


def machine() -> str:
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import dbt.version
    import duckdb

    return (
        f"{platform.platform()}, {os.cpu_count()} CPU cores ({cpu}), {mem:.0f} GiB RAM; Python "
        f"{platform.python_version()}, DuckDB {duckdb.__version__}, dbt-core {dbt.version.__version__}"
    )


def table(results: dict[int, list[dict]], memory_limit: str) -> str:
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    lines = [
        "| rows | files | lake on disk | bytes/row | dbt build (s) | aggregate cold (s) | aggregate warm (s) | "
        "aggregate warm CPU (s) | peak RSS build / query (MB) | dbt parse (s) | spans test (s) | "
        "read_parquet warm (s) | read_parquet warm CPU (s) |",
        "|" + "---|" * 13,
    ]
    first = {}
    for n, tries in results.items():
        for i, r in enumerate(tries):
            tag = f" (try {i + 1})" if len(tries) > 1 else ""
            b, q = r["build"], r["query"]
            lines.append(
                f"| {r['rows']:,}{tag} | {r['files']:,} | {r['bytes'] / 2**30:.2f} GiB | {r['bytes'] / r['rows']:.1f} | "
                f"{b['build_s']:.1f} | "
                f"{q['cold_s']:.3f} | {q['warm_s']:.3f} | {f(q.get('warm_cpu_s'), '.3f')} | "
                f"{b['peak_rss_mb']:.0f} / {q['peak_rss_mb']:.0f} | "
                f"{b['parse_s']:.1f} | {f(b.get('spans_test_s'), '.1f')} | {r['query_lake']['warm_s']:.3f} | "
                f"{f(r['query_lake'].get('warm_cpu_s'), '.3f')} |"
            )
        first[n] = tries[0]
    keys = list(first)
    if len(keys) > 1:
        lines += [
            "",
            "Growth (each figure over the previous size's; first try):",
            "",
            "| from -> to | rows | files | lake | build | agg cold | agg warm | RSS build | RSS query | spans test |",
            "|" + "---|" * 10,
        ]
        for a, b in zip(keys, keys[1:]):
            x, y = first[a], first[b]
            sx, sy = x["build"].get("spans_test_s"), y["build"].get("spans_test_s")
            g = [
                y["rows"] / x["rows"],
                y["files"] / x["files"],
                y["bytes"] / x["bytes"],
                y["build"]["build_s"] / x["build"]["build_s"],
                y["query"]["cold_s"] / x["query"]["cold_s"],
                y["query"]["warm_s"] / x["query"]["warm_s"],
                y["build"]["peak_rss_mb"] / x["build"]["peak_rss_mb"],
                y["query"]["peak_rss_mb"] / x["query"]["peak_rss_mb"],
                sy / sx if sx and sy else None,
            ]
            lines.append(f"| {a:.0e} -> {b:.0e} | " + " | ".join("-" if v is None else f"{v:.1f}x" for v in g) + " |")
    lines += [
        "",
        f"dbt build = `dbt build --select {SELECT} --exclude {SPANS_TEST}` (models + their data tests, "
        f"after `dbt parse`); spans test = `dbt test --select {SPANS_TEST}` alone. DuckDB memory_limit = "
        f"{memory_limit} (dbt profile config_options and the query connection), temp_directory set (spilling allowed).",
    ]
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-build":
        print(json.dumps(child_build(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5] == "1")))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child-query":
        print(json.dumps(child_query(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), sys.argv[5])))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    ap.add_argument("--keep", type=Path, help="write (and reuse) the lakes under DIR and keep them")
    ap.add_argument("--memory-limit", default="4GB", help="DuckDB memory_limit (default 4GB)")
    ap.add_argument("--repeat-largest", type=int, default=2, help="measure the largest size this many times")
    ap.add_argument(
        "--spans-test",
        choices=["first", "all", "none"],
        default="first",
        help=f"time {SPANS_TEST} alone on the first try of each size (default), every try, or never",
    )
    ap.add_argument(
        "--spans-test-max-rows",
        type=float,
        default=2e7,
        help="...only up to this many rows (default 2e7: it grows with rows x document length, ~20 min "
        "at 10^8 on 2 cores)",
    )
    ap.add_argument(
        "--project-dir",
        type=Path,
        default=None,
        help="the dbt project to build (default: this checkout's dbt_project; e.g. a copy before a change)",
    )
    a = ap.parse_args()
    if a.project_dir is None:
        from predictabase.core.config import DBT_PROJECT_DIR

        a.project_dir = DBT_PROJECT_DIR
    a.project_dir = a.project_dir.resolve()
    work = a.keep.resolve() if a.keep else Path(tempfile.mkdtemp(prefix="predictabase-lake-"))
    print(machine(), flush=True)
    results = {}
    try:
        sizes = sorted(int(r) for r in a.rows)
        for n in sizes:
            print(f"{n:.0e} rows:", flush=True)
            d = work / f"rows-{n:.0e}"
            d.mkdir(parents=True, exist_ok=True)
            results[n] = measure(d, n, a, a.repeat_largest if n == sizes[-1] else 1)
            if not a.keep:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(results, a.memory_limit))


if __name__ == "__main__":
    main()
