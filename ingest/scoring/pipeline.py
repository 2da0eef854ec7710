"""score_corpora: read raw.documents, score with one model, write resumable token-score runs."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata

import duckdb
import numpy as np
import pyarrow as pa
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from predictabase.config import Paths
from ingest.raw import now_utc
from predictabase.errors import OptionError, ScoringError, WarehouseError
from predictabase.failpoints import failpoint
from ingest.scoring import store
from ingest.scoring.engine import STATS, Scorer, make_batches, make_windows
from ingest.scoring.models import LoadedModel, load_model
from ingest.scoring.profile import TokenizerProfile

# 2: the column logprob_word_initial_after_nats (ln B after each token, at the end of the text after the
#    last one) and end-of-text = the pre-training document separator only (not a chat turn end)
SCORER_VERSION = 2
# Documents are scored in groups; each group becomes one part file, the unit an interrupted run
# resumes from. The first group holds about FIRST_PART_TOKENS tokens; later ones about the tokens the
# model scores in PART_SECONDS on this device (within [MIN_PART_TOKENS, PART_TOKENS]), so a kill loses
# at most about that much work. The size is worked out from the model's parameter count, the device and
# the thread count, never from measured time: the groups decide which windows share a forward batch,
# and a different batch changes the last bits of a log-probability (timing-sized parts made two runs of
# the same job differ by up to 2e-5 nats on 1,001 of 27,258 lm_game tokens).
PART_TOKENS = 1 << 16
FIRST_PART_TOKENS = 2048
MIN_PART_TOKENS = 512
PART_SECONDS = 30.0
# tokens/s x parameters per CPU thread, measured: SmolLM2-135M scores ~180 tokens/s on 2 threads here
CPU_PARAM_TOKENS_PER_THREAD_S = 1.2e10
# Padded tokens per forward batch when not given. Measured on 2 CPU cores (SmolLM2-135M, 60 lm_game prefixes,
# one run each): 8192 -> 28 s, 2048 -> 10.5 s, 1024 -> 6.8 s of scoring: on a CPU large batches lose to cache
# misses; a GPU wants them large. The batch changes only the last bits of a log-probability (see above).
CPU_BATCH_TOKENS = 1024
GPU_BATCH_TOKENS = 8192
GPU_SPEEDUP = 100.0  # a GPU forward pass is at least this much faster; parts stay well under PART_SECONDS


@dataclass(frozen=True)
class ScoreSettings:
    context_length: int | None = None
    stride: int | None = None
    top_k: int = 10
    batch_tokens: int | None = None  # None: CPU_BATCH_TOKENS on CPU, GPU_BATCH_TOKENS on a GPU
    limit: int | None = None
    full: bool = False
    device: str | None = None
    dtype: str | None = None


@dataclass
class Document:
    doc_id: str
    doc_index: int
    text: str  # the characters to score (lm_game: the guessed prefix unless full)


def load_documents(paths: Paths, corpus: str, settings: ScoreSettings) -> tuple[list[Document], str]:
    if not paths.duckdb.exists():
        raise WarehouseError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        try:
            rows = con.execute(
                "SELECT doc_id, doc_index, text, score_prefix_chars, corpus_version FROM raw.documents "
                "WHERE corpus = ? ORDER BY doc_index", [corpus]).fetchall()
        except duckdb.Error as exc:
            raise ScoringError(paths.duckdb, f"cannot read raw.documents ({exc}); run `predictabase ingest` first")
    finally:
        con.close()
    if not rows:
        raise ScoringError(paths.duckdb, f"raw.documents has no documents for corpus {corpus!r}; "
                                        "run `predictabase ingest` first")
    versions = {r[4] for r in rows}
    if len(versions) != 1:
        raise ScoringError(paths.duckdb, f"corpus {corpus!r} has {len(versions)} corpus_version values")
    if settings.limit is not None:
        rows = rows[:settings.limit]
    docs = []
    for doc_id, doc_index, text, prefix, _ in rows:
        if prefix is not None and not settings.full:
            text = text[:prefix]
        docs.append(Document(str(doc_id), int(doc_index), text))
    return docs, versions.pop()


def package_versions() -> dict[str, str]:
    out = {}
    for name in ("predictabase", "torch", "transformers", "tokenizers", "gguf", "numpy", "pyarrow", "duckdb"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


DEFAULT_CONTEXT_CAP = 2048  # every Natural Story (<= ~1,300 tokens) fits one window; attention stays cheap


def effective_lengths(lm: LoadedModel, settings: ScoreSettings) -> tuple[int, int]:
    """Context length (incl. BOS) and stride: the user's, else the model's maximum capped
    at DEFAULT_CONTEXT_CAP with half of it as stride (each token keeps >= half a window of context)."""
    maxpos = lm.max_positions or 1024
    ctx = settings.context_length if settings.context_length is not None else min(maxpos, DEFAULT_CONTEXT_CAP)
    if ctx < 2 or ctx > maxpos:
        raise OptionError("--context-length", f"{ctx} is not allowed; an integer from 2 to {maxpos} "
                                              f"(the maximum of {lm.model_id})")
    stride = settings.stride if settings.stride is not None else max(1, ctx // 2)
    if not 1 <= stride <= ctx - 1:
        raise OptionError("--stride", f"{stride} is not allowed; an integer from 1 to {ctx - 1} (context length - 1)")
    return ctx, stride


def make_run_id(lm: LoadedModel, profile: TokenizerProfile, corpus: str, corpus_version: str, ctx: int,
                stride: int, settings: ScoreSettings) -> str:
    key = {"scorer_version": SCORER_VERSION, "model_revision": lm.model_revision,
           "tokenizer_sha256": lm.tokenizer_sha256, "bos_token_id": profile.bos.token_id, "dtype": lm.dtype,
           "end_of_text_ids": sorted(int(i) for i in profile.end_of_text_ids),
           "corpus": corpus, "corpus_version": corpus_version, "context_length": ctx, "stride": stride,
           "top_k": settings.top_k, "limit": settings.limit, "full": bool(settings.full)}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def build_table(run_id: str, model_key: str, corpus: str, docs: list[Document], encoded, results,
                scorer: Scorer) -> pa.Table:
    """The token rows of scored documents (`results`: Scorer.score_windows, keyed by column name)."""
    per_token = (*STATS, "logprob_word_initial_after_nats", "context_tokens")
    names = ("doc_id", "token_index", "token_id", "token_text", "char_start", "char_end", *per_token)
    cols: dict[str, list] = {n: [] for n in names}
    for d, (doc, (ids, spans)) in enumerate(zip(docs, encoded)):
        n = len(ids)
        if n == 0:
            continue
        r = results[d]
        if np.isnan(r["logprob_nats"]).any() or (r["context_tokens"] < 0).any():
            raise AssertionError(f"document {doc.doc_id}: a token was left unscored")
        cols["doc_id"].append(np.full(n, doc.doc_id, dtype=object))
        cols["token_index"].append(np.arange(n, dtype=np.int32))
        cols["token_id"].append(np.asarray(ids, dtype=np.int32))
        sp = np.asarray(spans, dtype=np.int32).reshape(n, 2)
        cols["char_start"].append(sp[:, 0])
        cols["char_end"].append(sp[:, 1])
        cols["token_text"].append(np.array([doc.text[s:e] for s, e in spans], dtype=object))
        for name in per_token:
            cols[name].append(r[name])
    if not cols["doc_id"]:
        return store.SCHEMA.empty_table()
    cat = {name: np.concatenate(v) for name, v in cols.items()}
    strings = scorer.profile.strings
    topi = cat["topk_token_ids"]
    return store.token_table(run_id, model_key, corpus, {
        **cat,
        "token": strings[cat["token_id"]],
        "topk_tokens": strings[topi.reshape(-1)].reshape(topi.shape),
    })


def _groups(encoded, sizes: Iterator[int]):
    """Consecutive documents, each group at least the next size from `sizes` tokens (the last may be
    smaller). `sizes` is asked once per group, so it can adapt to the speed measured so far."""
    cur: list[int] = []
    size = 0
    target = next(sizes)
    for i, (ids, _) in enumerate(encoded):
        cur.append(i)
        size += len(ids)
        if size >= target:
            yield cur
            cur, size = [], 0
            target = next(sizes)
    if cur:
        yield cur


class PartSizer:
    """Part sizes in tokens: FIRST_PART_TOKENS, then about PART_SECONDS of work each, estimated from the
    model size, the device and the thread count only (deterministic: see PART_SECONDS above)."""

    def __init__(self, n_params: int, device: str, threads: int) -> None:
        speed = CPU_PARAM_TOKENS_PER_THREAD_S * max(threads, 1) / max(n_params, 1)  # tokens per second
        if device.startswith("cuda"):
            speed *= GPU_SPEEDUP
        self.part = min(PART_TOKENS, max(MIN_PART_TOKENS, int(speed * PART_SECONDS) // 256 * 256))
        self.first = True

    def __iter__(self):
        return self

    def __next__(self) -> int:
        if self.first:
            self.first = False
            return min(FIRST_PART_TOKENS, PART_TOKENS)
        return self.part


def score_corpus(paths: Paths, lm: LoadedModel, scorer: Scorer, corpus: str, docs: list[Document],
                 corpus_version: str, settings: ScoreSettings, show_progress: bool = True) -> dict:
    profile = scorer.profile
    ctx, stride = effective_lengths(lm, settings)
    batch_tokens = settings.batch_tokens or (GPU_BATCH_TOKENS if str(lm.device).startswith("cuda") else CPU_BATCH_TOKENS)
    run_id = make_run_id(lm, profile, corpus, corpus_version, ctx, stride, settings)
    rdir = store.run_dir(paths.token_scores, lm.model_key, corpus, run_id)
    done_run = store.read_run(rdir)
    if done_run is not None:
        return {**done_run.to_json(), "status": "already complete"}
    started = now_utc().isoformat()
    done = store.resume_run(rdir)
    status = "resumed" if store.part_files(rdir) else "scored"
    todo = [d for d in docs if d.doc_id not in done]
    encoded = profile.encode([d.text for d in todo])
    total = sum(len(ids) for ids, _ in encoded)
    columns = [TextColumn(f"{lm.model_key} / {corpus}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("tokens"), TimeRemainingColumn()]
    with Progress(*columns, disable=not show_progress, transient=True) as progress:
        task = progress.add_task("score", total=total)
        import torch
        sizer = PartSizer(sum(p.numel() for p in lm.model.parameters()), str(lm.device), torch.get_num_threads())
        for group in _groups(encoded, sizer):
            g_docs = [todo[i] for i in group]
            g_enc = [encoded[i] for i in group]
            windows = [w for d, (ids, _) in enumerate(g_enc) for w in make_windows(d, len(ids), ctx, stride)]
            batches = make_batches(windows, batch_tokens)
            results = scorer.score_windows([ids for ids, _ in g_enc], batches,
                                           on_batch=lambda m: progress.advance(task, m))
            table = build_table(run_id, lm.model_key, corpus, g_docs, g_enc, results, scorer)
            if table.num_rows:
                store.write_part(rdir, table)
                failpoint("score.part_written")
    n_docs_written, n_tokens = store.count_rows(rdir) if rdir.exists() else (0, 0)
    record = store.RunRecord(
        run_id=run_id, model_key=lm.model_key, model_id=lm.model_id, model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name, tokenizer_sha256=lm.tokenizer_sha256, vocab_size=lm.vocab_size,
        dtype=lm.dtype, device=lm.device, bos_policy=profile.bos.policy, bos_token_id=profile.bos.token_id,
        bos_token=profile.bos.token, corpus=corpus, corpus_version=corpus_version, context_length=ctx,
        stride=stride, top_k=settings.top_k, batch_tokens=batch_tokens, limit=settings.limit,
        full=bool(settings.full), n_docs=len(docs), n_docs_with_tokens=n_docs_written, n_tokens=n_tokens,
        source="scored", started_at=started, finished_at=now_utc().isoformat(),
        package_versions=package_versions(), scorer_version=SCORER_VERSION,
        end_of_text_ids=sorted(int(i) for i in profile.end_of_text_ids),
        end_of_text_tokens=[str(profile.strings[i]) for i in sorted(profile.end_of_text_ids)],
    )
    return {**store.finish_run(rdir, record), "status": status}


def score_corpora(paths: Paths, model_spec: str, corpora: list[str], settings: ScoreSettings,
                  show_progress: bool = True) -> list[dict]:
    """Score every document of each corpus with one model; one run (directory) per corpus.

    Documents are read (and validated) for every corpus before the model loads, so a
    missing corpus or an unloadable model writes nothing. The model's tokenizer profile
    (BOS, end-of-text ids, word-initial mask) is built once, and the scorer checks its
    log-probabilities against the model's own loss on a probe text before scoring anything.
    """
    if settings.top_k < 0 or (settings.batch_tokens is not None and settings.batch_tokens < 1) or (settings.limit is not None and settings.limit < 1):
        raise OptionError(None, "top_k must be >= 0, batch_tokens >= 1 and limit (when given) >= 1")
    loaded = {c: load_documents(paths, c, settings) for c in corpora}
    lm = load_model(model_spec, paths, settings.device, settings.dtype)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, model_spec)
    if settings.top_k > lm.vocab_size:
        raise OptionError("--top-k", f"{settings.top_k} is not allowed; an integer from 0 to {lm.vocab_size} "
                                     f"(the vocabulary of {lm.model_id})")
    scorer = Scorer(lm.model, profile, settings.top_k, lm.device)
    return [score_corpus(paths, lm, scorer, c, docs, version, settings, show_progress)
            for c, (docs, version) in loaded.items()]
