"""The `entropy` model step: each corpus word's contextual entropy by Monte Carlo over whole words, its Rényi
entropy and the first-token entropy it is usually replaced by (`word_entropy` holds the estimator and its exact
test).

For every word of a corpus with reading times, the context is the text before the word's first token (after the
model's separator, as the scorer scores it), and N words are sampled after it, each to the next word boundary as
`word_boundaries` defines it (whitespace-trailing: the boundary's probability is part of the word's). One forward
pass per text (per window of a long text) gives the key/value cache every word of it samples from; the N samples
of a word share it (`word_entropy.cached_continuations`). Each word's generator is seeded from the run's seed, the
text and the word, so a run resumed after a stop, or a text scored again alone, samples the same words.

Runs: `<parquet>/word_entropy/model=<key>/corpus=<corpus>/run=<id>/`, one `part-<doc_index>.parquet` per text
(written as each text finishes: a stopped run resumes at the first text without one) and `_run.json` written last
(a run is complete exactly when it exists). The run id is a hash of the step's version, the model's revision,
tokenizer, separator and dtype, the corpus version and the settings that change results (N, alpha, the word cut,
the seed, the context window).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError, ScoringError
from predictabase.core.fsutil import atomic_path
from predictabase.ingest import corpus_table
from predictabase.ingest.raw import now_iso
from predictabase.ingest.scoring import word_entropy as we
from predictabase.ingest.scoring.profile import TokenizerProfile, encode

SCORER_VERSION = 3
RUN_FILE = "_run.json"
#: the corpora the step runs on: those with reading times (the regressions it feeds)
CORPORA = tuple(k for k, c in corpus_table.CORPORA.items() if c.texts and c.reading)
#: the longest context a word's samples attend to (tokens, the separator included); a longer text is read in
#: overlapping windows, each word with at least half of one before it
MAX_CONTEXT = 2048
#: continuations fed to the model in one call at most (positions of one text x N): enough tokens per forward pass
#: that the weights are read once for many (a pass of one token costs nearly as much as one of a hundred on a CPU)
ROWS_PER_CALL = 256
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("model_key", pa.string()),
        ("corpus", pa.string()),
        ("doc_id", pa.string()),
        ("word_index", pa.int32()),
        ("n_samples", pa.int32()),
        ("entropy_nats", pa.float64()),  # NULL: the word does not start at a token boundary (`status`)
        ("entropy_se_nats", pa.float64()),
        ("renyi_entropy_nats", pa.float64()),
        ("renyi_entropy_se_nats", pa.float64()),
        ("first_token_entropy_nats", pa.float64()),  # over the whole vocabulary: the usual stand-in
        ("first_token_word_entropy_nats", pa.float64()),  # of the word's first token: a lower bound on entropy_nats
        ("n_truncated", pa.int32()),  # samples cut at max_tokens
        ("mean_sample_tokens", pa.float64()),
        ("context_tokens", pa.int32()),
        ("status", pa.string()),  # ok | inside_token (a token spans the boundary before the word)
    ]
)


@dataclass(frozen=True)
class EntropySettings:
    samples: int = 16  # N whole words per position
    alpha: float = we.DEFAULT_ALPHA  # Rényi's order
    max_tokens: int = 8  # a sampled word is cut at this many tokens
    seed: int = 0
    limit: int | None = None  # the first N texts only (quick runs; never in the marts)

    def check(self) -> None:
        if not 2 <= self.samples <= 4096:
            raise OptionError("--samples", f"{self.samples} is not allowed; an integer from 2 to 4096")
        if not (0 < self.alpha <= 10) or self.alpha == 1.0:
            raise OptionError("--alpha", f"{self.alpha} is not allowed; a Rényi order > 0, at most 10, not 1")
        if not 1 <= self.max_tokens <= 64:
            raise OptionError("--max-tokens", f"{self.max_tokens} is not allowed; an integer from 1 to 64")
        if not 0 <= self.seed < 2**63:
            raise OptionError("--seed", f"{self.seed} is not allowed; an integer from 0 to 2^63 - 1")
        if self.limit is not None and not 1 <= self.limit <= 10**6:
            raise OptionError("--limit", f"{self.limit} is not allowed; an integer >= 1 (leave it out for every text)")


@dataclass(frozen=True)
class Text:
    doc_id: str
    doc_index: int
    text: str
    words: list[tuple[int, int]]  # (word_index, char_start)


def read_texts(paths: Paths, corpus: str, limit: int | None = None) -> tuple[list[Text], str]:
    """The corpus's texts and the character where each of its words starts, and the corpus version."""
    if not paths.duckdb.exists():
        raise ScoringError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        try:
            docs = con.execute(
                "SELECT doc_id, doc_index, text, corpus_version FROM raw.documents WHERE corpus = ? ORDER BY doc_index",
                [corpus],
            ).fetchall()
            words = con.execute(
                "SELECT doc_id, word_index, char_start FROM raw.words WHERE corpus = ? ORDER BY doc_id, word_index",
                [corpus],
            ).fetchall()
        except duckdb.Error as exc:
            raise ScoringError(paths.duckdb, f"cannot read raw.documents / raw.words ({exc})") from exc
    if not docs:
        raise ScoringError(paths.duckdb, f"raw.documents has no texts for corpus {corpus!r}; run `predictabase ingest`")
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, wi, start in words:
        by_doc.setdefault(str(doc_id), []).append((int(wi), int(start)))
    texts = [Text(str(d), int(i), t, by_doc.get(str(d), [])) for d, i, t, _ in docs]
    return texts[:limit] if limit else texts, str(docs[0][3])


def first_tokens(text: str, spans: list[tuple[int, int]], words: list[tuple[int, int]]) -> list[int | None]:
    """Each word's first token: the token whose span holds the word's first character, when everything of that
    token before the word is whitespace (a token's span carries its leading space); None when a token reaches
    across the boundary into the previous word (its context would hold part of the word)."""
    starts = [s for s, _ in spans]
    out: list[int | None] = []
    for _, c in words:
        k = int(np.searchsorted(starts, c, side="right")) - 1
        ok = 0 <= k < len(spans) and spans[k][0] <= c < max(spans[k][1], c + 1) and not text[spans[k][0] : c].strip()
        out.append(k if ok else None)
    return out


def word_seed(seed: int, doc_id: str, word_index: int) -> int:
    digest = hashlib.sha256(f"{seed}\0{doc_id}\0{word_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def window_length(lm, settings: EntropySettings) -> int:
    """The longest context (tokens, the separator included) the samples may attend to, leaving room for the
    sampled tokens: the model's positions and MAX_CONTEXT."""
    config = getattr(lm.model, "config", None)
    types = getattr(config, "layer_types", None)  # transformers' per-layer attention kinds, where a model mixes them
    sliding = (
        any(t == "sliding_attention" for t in types)
        if types
        else bool(getattr(config, "sliding_window", None)) and getattr(config, "use_sliding_window", True)
    )
    if sliding:
        # a sliding-window layer's cache drops its oldest keys as the samples' tokens are appended, which the
        # samples' attention mask does not follow
        raise ScoringError(lm.model_key, "models with sliding-window attention (Gemma 3, Mistral) are not supported "
                           "by the entropy step yet")  # fmt: skip
    return min(MAX_CONTEXT, lm.max_positions or MAX_CONTEXT) - settings.max_tokens


def _window_start(k: int, w: int) -> int:
    """The first text token of the window a word at token `k` samples in: 0 while [sep] + tokens[:k] fits in `w`,
    else a multiple of w // 2 leaving the word between w // 2 and w - 1 tokens of context."""
    if k <= w - 1:
        return 0
    half = max(1, w // 2)
    return -(-(k - (w - 1)) // half) * half


def entropy_text(
    lm, profile: TokenizerProfile, text: Text, settings: EntropySettings, window: int, word_initial: torch.Tensor
) -> list[dict]:
    """One text's rows: every word's estimates (see the module's docstring)."""
    [(ids, spans)] = encode(profile.tokenizer, [text.text], profile.bos, profile.name)
    firsts = first_tokens(text.text, spans, text.words)
    groups: dict[int, list[int]] = {}
    for j, k in enumerate(firsts):
        if k is not None:
            groups.setdefault(_window_start(k, window), []).append(j)
    rows: list[dict | None] = [None] * len(text.words)
    device = next(lm.model.parameters()).device
    for a, members in groups.items():
        last = max(firsts[j] for j in members)
        seq = torch.tensor([[profile.bos.token_id, *ids[a:last]]], device=device)
        with torch.inference_mode():
            out = lm.model(input_ids=seq, use_cache=True)
        layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        logits = out.logits[0].float().cpu()
        per_call = max(1, ROWS_PER_CALL // settings.samples)
        for c in range(0, len(members), per_call):
            chunk = members[c : c + per_call]
            contexts = [1 + firsts[j] - a for j in chunk]
            first = logits[[n - 1 for n in contexts]]
            sampled = we.sample_positions(
                we.cached_continuations(lm.model, layers, settings.samples, contexts),
                first,
                word_initial,
                settings.samples,
                settings.max_tokens,
                [torch.Generator().manual_seed(word_seed(settings.seed, text.doc_id, text.words[j][0])) for j in chunk],
                [firsts[j] == 0 for j in chunk],
            )
            for j, n_ctx, samples in zip(chunk, contexts, sampled):
                e = we.estimate(samples, settings.alpha)
                rows[j] = dict(
                    entropy_nats=e.entropy_nats,
                    entropy_se_nats=e.entropy_se_nats,
                    renyi_entropy_nats=e.renyi_entropy_nats,
                    renyi_entropy_se_nats=e.renyi_entropy_se_nats,
                    first_token_entropy_nats=e.first_token_entropy_nats,
                    first_token_word_entropy_nats=e.first_token_word_entropy_nats,
                    n_truncated=e.n_truncated,
                    mean_sample_tokens=float(samples.n_tokens.mean()),
                    context_tokens=n_ctx,
                    status="ok",
                )
    empty = dict.fromkeys(f.name for f in SCHEMA if f.name not in ("run_id", "model_key", "corpus", "doc_id",
                                                                    "word_index", "n_samples", "status"))  # fmt: skip
    return [
        {
            "doc_id": text.doc_id,
            "word_index": wi,
            "n_samples": settings.samples,
            **(r if r is not None else {**empty, "status": "inside_token"}),
        }  # fmt: skip
        for (wi, _), r in zip(text.words, rows)
    ]


def scores_root(paths: Paths) -> Path:
    return paths.word_entropy


def run_dir(paths: Paths, model_key: str, corpus: str, run_id: str) -> Path:
    return scores_root(paths) / f"model={model_key}" / f"corpus={corpus}" / f"run={run_id}"


def make_run_id(lm, profile: TokenizerProfile, corpus_version: str, settings: EntropySettings, window: int) -> str:
    key = {
        "scorer_version": SCORER_VERSION,
        "model_revision": lm.model_revision,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "bos_token_id": profile.bos.token_id,
        "dtype": lm.dtype,
        "corpus_version": corpus_version,
        "window": window,
        **asdict(settings),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def _write_part(directory: Path, text: Text, table: pa.Table) -> None:
    with atomic_path(directory / f"part-{text.doc_index:06d}.parquet", suffix=".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")


def entropy_corpus(
    paths: Paths,
    lm,
    profile: TokenizerProfile,
    corpus: str,
    settings: EntropySettings,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Every word of one corpus; returns the run record. A complete run is not redone; a stopped one resumes."""
    settings.check()
    texts, version = read_texts(paths, corpus, settings.limit)
    window = window_length(lm, settings)
    run_id = make_run_id(lm, profile, version, settings, window)
    directory = run_dir(paths, lm.model_key, corpus, run_id)
    if (directory / RUN_FILE).exists():
        return {**json.loads((directory / RUN_FILE).read_text()), "skipped": True}
    directory.mkdir(parents=True, exist_ok=True)
    word_initial = torch.as_tensor(profile.word_initial[: lm.vocab_size])
    started, t0, n_words, resumed = now_iso(), time.perf_counter(), 0, 0
    for i, text in enumerate(texts):
        n_words += len(text.words)
        if (directory / f"part-{text.doc_index:06d}.parquet").exists():
            resumed += 1
        else:
            rows = entropy_text(lm, profile, text, settings, window, word_initial)
            cols = {
                f.name: [r.get(f.name) for r in rows] for f in SCHEMA if f.name not in ("run_id", "model_key", "corpus")
            }
            n = len(rows)
            table = pa.table({"run_id": [run_id] * n, "model_key": [lm.model_key] * n, "corpus": [corpus] * n, **cols})
            _write_part(directory, text, table.cast(SCHEMA))
        if progress:
            progress(i + 1, len(texts))
    seconds = round(time.perf_counter() - t0, 2)
    run = dict(
        run_id=run_id,
        model_key=lm.model_key,
        model_id=lm.model_id,
        model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name,
        tokenizer_sha256=lm.tokenizer_sha256,
        dtype=lm.dtype,
        device=lm.device,
        bos_token_id=profile.bos.token_id,
        scorer_version=SCORER_VERSION,
        corpus=corpus,
        corpus_version=version,
        window=window,
        **asdict(settings),
        n_texts=len(texts),
        n_words=n_words,
        texts_resumed=resumed,
        started_at=started,
        finished_at=now_iso(),
        seconds=seconds,
    )
    with atomic_path(directory / RUN_FILE, suffix=".json") as tmp:  # a run is complete when the whole file is there
        tmp.write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
    return run


def run_entropy(
    paths: Paths,
    model_spec: str,
    corpora: list[str],
    settings: EntropySettings = EntropySettings(),
    device: str | None = None,
    dtype: str | None = None,
    show_progress: bool = True,
) -> list[dict]:
    """`predictabase entropy`: load the model once and estimate every word's entropies in each corpus."""
    from predictabase.ingest.scoring.steps import check_corpora, run_corpora

    settings.check()
    check_corpora(corpora, CORPORA, "a corpus with reading times")
    for corpus in corpora:
        read_texts(paths, corpus, 1)  # fail before loading a model
    return run_corpora(
        paths, model_spec, corpora, device, dtype, "entropy", show_progress,
        lambda lm, profile: lambda corpus, progress: entropy_corpus(paths, lm, profile, corpus, settings, progress),
    )  # fmt: skip


# --- the `entropy` step (predictabase.ingest.scoring.steps): its code version and its runner -------------------------


def code_version() -> list:
    return [SCORER_VERSION]


def run_step(paths: Paths, entry, corpora: list[str | None], show_progress: bool = False, engine=None) -> list:
    """The `entropy` step of one models.toml entry: one run per corpus with reading times, its settings the
    entry's `entropy_samples` and `entropy_alpha`."""
    from predictabase.ingest.scoring.steps import corpus_step_runs

    settings = EntropySettings(
        samples=getattr(entry, "entropy_samples", EntropySettings.samples),
        alpha=getattr(entry, "entropy_alpha", EntropySettings.alpha),
    )
    wanted = [c for c in corpora if c is not None] or list(CORPORA)
    runs = run_entropy(paths, entry.name, wanted, settings, entry.device, entry.dtype, show_progress)
    return corpus_step_runs(runs, lambda model, corpus, run: run_dir(paths, model, corpus, run))
