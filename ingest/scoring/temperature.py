"""The `temperature` model step: every token's log-probability and the word boundary's probability under the
temperature-scaled distribution softmax(logits / T), for a grid of T, from one forward pass per window.

Liu, Škrjanec & Demberg (2024, "Temperature-scaling surprisal estimates improve fit to human reading times"): a
word's surprisal from p_T(v | c) = exp(z_v / T) / sum_u exp(z_u / T), z the model's logits, with T > 1 flattening
the distribution. The step stores, per token and T, ln p_T(token) and ln B_T before and after the token (B_T: the
tempered mass on word-initial tokens and end-of-text, `word_boundaries`), so dbt's one word-surprisal definition
(macros/word_surprisal.sql) gives each word's LW and whitespace-trailing surprisal under every T, and the
regressions give ΔLL as a function of T. T = 1 is the score step's distribution (tested to 1e-4 nats).

The texts, their tokens and the windows are the score step's (`pipeline.load_documents`, `effective_lengths`,
`engine.make_windows`): the same context for every token. Runs: `<parquet>/temperature_scores/model=<key>/
corpus=<corpus>/run=<id>/`, one `part-<n>.parquet` per group of texts (resumable: a stopped run scores only the
groups without a part), `_run.json` written last (a run is complete exactly when it exists). The run id is a hash
of the step's version, the model's revision, tokenizer, separator and dtype, the corpus version, the windows and
the grid.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError
from predictabase.core.fsutil import atomic_path
from predictabase.ingest import corpus_table
from predictabase.ingest.raw import now_iso
from predictabase.ingest.scoring import engine, pipeline
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.steps import TEMPERATURES

SCORER_VERSION = 1
RUN_FILE = "_run.json"
#: the corpora the step runs on: those with reading times (the regressions it feeds)
CORPORA = tuple(k for k, c in corpus_table.CORPORA.items() if c.texts and c.reading)
MAX_TEMPERATURES = 32
T_RANGE = (0.05, 100.0)
#: rows of logits per block (32 MiB of float32): the LM head and the T passes over whole blocks; at 8 MiB the head's small
#: matrix products made the step 1.36 times the score step's time, at 32 MiB 1.18 (bench/temperature.py)
BLOCK_BYTES = 1 << 25
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("model_key", pa.string()),
        ("corpus", pa.string()),
        ("doc_id", pa.string()),
        ("token_index", pa.int32()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("temperature", pa.float64()),
        ("logprob_nats", pa.float64()),  # ln p_T(token | context)
        ("logprob_word_initial_nats", pa.float64()),  # ln B_T before the token
        ("logprob_word_initial_after_nats", pa.float64()),  # ln B_T after it (after the last: the text's end)
    ]
)


def parse_temperatures(text: str) -> tuple[float, ...]:
    """A comma-separated grid (`--temperatures 0.5,1,2`) as numbers; a bad item is an --temperatures error."""
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise OptionError("--temperatures", f"{text!r} is not a comma-separated list of numbers") from exc


@dataclass(frozen=True)
class TemperatureSettings:
    temperatures: tuple[float, ...] = field(default=TEMPERATURES)
    context_length: int | None = None  # the score step's (None: the model's, capped; see pipeline)
    stride: int | None = None
    limit: int | None = None  # the first N texts only (quick runs; never in the marts)

    def check(self) -> None:
        ts = self.temperatures
        lo, hi = T_RANGE
        if not 1 <= len(ts) <= MAX_TEMPERATURES:
            raise OptionError("--temperatures", f"{len(ts)} values given; from 1 to {MAX_TEMPERATURES}")
        if not all(math.isfinite(t) and lo <= t <= hi for t in ts):
            raise OptionError("--temperatures", f"{', '.join(map(str, ts))}: each T must be from {lo:g} to {hi:g}")
        if 1.0 not in ts:
            raise OptionError("--temperatures", "the grid must hold 1 (the model's own distribution, the reference)")
        if len(set(ts)) != len(ts):
            raise OptionError("--temperatures", "a temperature is listed twice")
        if self.limit is not None and not 1 <= self.limit <= 10**6:
            raise OptionError("--limit", f"{self.limit} is not allowed; an integer >= 1 (leave it out for every text)")

    @property
    def grid(self) -> tuple[float, ...]:
        return tuple(sorted(self.temperatures))


class TemperatureScorer(engine.Scorer):
    """The score step's windows and forward passes; per position, for each T of the grid, ln p_T(target) and
    ln B_T, the [positions, T] arrays `score_windows` fills (its BOS, windows and end-of-text position alike)."""

    def __init__(self, model, profile: TokenizerProfile, temperatures: tuple[float, ...], device: str = "cpu"):
        super().__init__(model, profile, top_k=0, device=device, probe=False)
        self.temperatures = tuple(temperatures)
        self._one = self.temperatures.index(1.0)
        self._word_initial = self.torch.nonzero(self.wi_mask > 0).flatten()
        self.check_probe()  # T = 1 must be the model's own distribution

    def _result_arrays(self, n: int, k: int) -> dict:
        g = len(self.temperatures)
        return {
            "logprob_nats": np.full((n, g), np.nan, np.float64),
            "logprob_word_initial_nats": np.zeros((n, g), np.float64),
            "logprob_word_initial_after_nats": np.full((n, g), np.nan, np.float64),
            "context_tokens": np.full(n, -1, np.int32),
        }

    def _copied_stats(self, k: int) -> tuple[str, ...]:
        return ("logprob_nats", "logprob_word_initial_nats")

    def _probe_logprobs(self, result: dict) -> np.ndarray:
        return result["logprob_nats"][:, self._one]

    def _stats(self, sel, targets):
        """ln p_T(target) = (z_t - max z) / T - ln sum_v exp((z_v - max z) / T) and ln B_T = ln sum over the
        word-initial v of the same terms - that log sum, from float32 logits (whatever the weights' dtype), per block
        of rows: each T's exponentials go into one reused buffer, summed once and multiplied by the word-initial mask
        once (a matrix-vector product), the logs in float64. A row whose word-initial terms all underflow (a sharp
        T < 1) is recomputed with a log-sum-exp over the word-initial logits."""
        torch = self.torch
        head = self.model.get_output_embeddings()
        v = self.vocab_size
        rows = max(2, BLOCK_BYTES // (4 * v))
        lp, wi = [], []
        for s in range(0, sel.shape[0], rows):
            with self._buffers_lock:  # the buffers are this scorer's (as in engine.Scorer._stats)
                lp_s, wi_s = self._block(sel[s : s + rows], targets[s : s + rows], head, v)
            lp.append(lp_s)
            wi.append(wi_s)
        return {
            "logprob_nats": torch.cat(lp).cpu().numpy(),
            "logprob_word_initial_nats": torch.cat(wi).cpu().numpy(),
        }

    def _block(self, x, targets, head, v):
        """One block's [rows, T] ln p_T(target) and ln B_T (`_stats`)."""
        torch = self.torch
        if self._split:
            if self._head_fp32 is not None:
                x = self._head_fp32(x)
            else:  # on the CPU into a reused buffer: fresh memory per block costs page faults (engine.Scorer)
                x = head(x) if self.gpu else self._head_into_buffer(x)
        x = x.float()
        n = x.shape[0]
        centred = torch.sub(x, x.max(dim=1, keepdim=True).values, out=self._buffer("centred", n, v))
        target = centred.gather(1, targets[:, None])[:, 0].double()
        e = self._buffer("tempered", n, v)
        lp_t, wi_t = [], []
        for temp in self.temperatures:
            torch.mul(centred, 1.0 / temp, out=e)
            e.exp_()
            log_total = e.sum(dim=1).double().log()
            inside = e @ self.wi_mask
            # B_T <= 1: the word-initial sum (a matrix-vector product) and the total (a sum) add in different orders
            lnb = (inside.double().log() - log_total).clamp_(max=0.0)
            tiny = inside < 1e-30
            if bool(tiny.any()):
                z = centred[tiny] / temp
                lnb[tiny] = (
                    torch.logsumexp(z.index_select(1, self._word_initial), dim=1) - torch.logsumexp(z, dim=1)
                ).double()
            lp_t.append(target / temp - log_total)
            wi_t.append(lnb)
        return torch.stack(lp_t, dim=1), torch.stack(wi_t, dim=1)


def run_dir(paths: Paths, model_key: str, corpus: str, run_id: str) -> Path:
    return paths.temperature_scores / f"model={model_key}" / f"corpus={corpus}" / f"run={run_id}"


def make_run_id(
    lm, profile: TokenizerProfile, corpus_version: str, settings: TemperatureSettings, ctx: int, stride: int
) -> str:
    key = {
        "scorer_version": SCORER_VERSION,
        "model_revision": lm.model_revision,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "bos_token_id": profile.bos.token_id,
        "dtype": lm.dtype,
        "corpus_version": corpus_version,
        "context_length": ctx,
        "stride": stride,
        "temperatures": list(settings.grid),
        "limit": settings.limit,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def part_table(run_id: str, model_key: str, corpus: str, docs, encoded, results, grid) -> pa.Table:
    """The long rows (token x T) of scored documents."""
    g = len(grid)
    cols: dict[str, list] = {n: [] for n in SCHEMA.names[3:]}
    for d, (doc, (ids, spans)) in enumerate(zip(docs, encoded)):
        n = len(ids)
        if n == 0:
            continue
        r = results[d]
        if np.isnan(r["logprob_nats"]).any():
            raise AssertionError(f"document {doc.doc_id}: a token was left unscored")
        sp = np.asarray(spans, dtype=np.int32).reshape(n, 2)
        cols["doc_id"].append(np.full(n * g, doc.doc_id, dtype=object))
        cols["token_index"].append(np.repeat(np.arange(n, dtype=np.int32), g))
        cols["char_start"].append(np.repeat(sp[:, 0], g))
        cols["char_end"].append(np.repeat(sp[:, 1], g))
        cols["temperature"].append(np.tile(np.asarray(grid, dtype=np.float64), n))
        for name in ("logprob_nats", "logprob_word_initial_nats", "logprob_word_initial_after_nats"):
            cols[name].append(r[name].reshape(-1))
    if not cols["doc_id"]:
        return SCHEMA.empty_table()
    cat = {name: np.concatenate(v) for name, v in cols.items()}
    m = len(cat["doc_id"])
    return pa.table({"run_id": [run_id] * m, "model_key": [model_key] * m, "corpus": [corpus] * m, **cat}).cast(SCHEMA)


def temperature_corpus(
    paths: Paths,
    lm,
    scorer: TemperatureScorer,
    corpus: str,
    settings: TemperatureSettings,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Every token of one corpus under every T; returns the run record. A complete run is not redone; a stopped
    one scores only its missing parts."""
    if tuple(scorer.temperatures) != settings.grid:
        raise ValueError(f"the scorer's temperatures {scorer.temperatures} are not the settings' grid {settings.grid}")
    docs, version = pipeline.load_documents(paths, corpus, pipeline.ScoreSettings(limit=settings.limit))
    score_settings = pipeline.ScoreSettings(context_length=settings.context_length, stride=settings.stride)
    ctx, stride = pipeline.effective_lengths(lm, score_settings)
    run_id = make_run_id(lm, scorer.profile, version, settings, ctx, stride)
    directory = run_dir(paths, lm.model_key, corpus, run_id)
    if (directory / RUN_FILE).exists():
        return {**json.loads((directory / RUN_FILE).read_text()), "skipped": True}
    directory.mkdir(parents=True, exist_ok=True)
    encoded = scorer.profile.encode([d.text for d in docs])
    counts = [len(ids) for ids, _ in encoded]
    groups = pipeline.plan_groups(counts, iter(lambda: pipeline.FIRST_PART_TOKENS, None))
    batch_tokens = pipeline.default_batch_tokens(lm, ctx)
    started, t0, resumed, total = now_iso(), time.perf_counter(), 0, sum(counts)
    done = 0
    for number, group in enumerate(groups):
        path = directory / f"part-{number:06d}.parquet"
        if path.exists():
            resumed += 1
        else:
            g_enc = [encoded[i] for i in group]
            windows = [w for d, (ids, _) in enumerate(g_enc) for w in engine.make_windows(d, len(ids), ctx, stride)]
            results = scorer.score_windows([ids for ids, _ in g_enc], engine.make_batches(windows, batch_tokens))
            table = part_table(run_id, lm.model_key, corpus, [docs[i] for i in group], g_enc, results, settings.grid)
            with atomic_path(path, suffix=".parquet") as tmp:
                pq.write_table(table, tmp, compression="zstd")
        done += sum(counts[i] for i in group)
        if progress:
            progress(done, total)
    run = dict(
        run_id=run_id,
        model_key=lm.model_key,
        model_id=lm.model_id,
        model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name,
        tokenizer_sha256=lm.tokenizer_sha256,
        dtype=lm.dtype,
        device=lm.device,
        bos_token_id=scorer.profile.bos.token_id,
        scorer_version=SCORER_VERSION,
        corpus=corpus,
        corpus_version=version,
        context_length=ctx,
        stride=stride,
        temperatures=list(settings.grid),
        limit=settings.limit,
        n_texts=len(docs),
        n_tokens=total,
        parts_resumed=resumed,
        started_at=started,
        finished_at=now_iso(),
        seconds=round(time.perf_counter() - t0, 2),
    )
    with atomic_path(directory / RUN_FILE, suffix=".json") as tmp:  # a run is complete when the whole file is there
        tmp.write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
    return run


def run_temperature(
    paths: Paths,
    model_spec: str,
    corpora: list[str],
    settings: TemperatureSettings = TemperatureSettings(),
    device: str | None = None,
    dtype: str | None = None,
    show_progress: bool = True,
) -> list[dict]:
    """`predictabase temperature`: load the model once and score every token of each corpus under every T."""
    from predictabase.ingest.scoring.steps import check_corpora, run_corpora

    settings.check()
    check_corpora(corpora, CORPORA, "a corpus with reading times")
    for corpus in corpora:
        pipeline.load_documents(paths, corpus, pipeline.ScoreSettings(limit=1))  # fail before loading a model

    def loaded(lm, profile):
        pipeline.effective_lengths(
            lm, pipeline.ScoreSettings(context_length=settings.context_length, stride=settings.stride)
        )  # windows out of the model's range: one line, before any corpus
        scorer = TemperatureScorer(lm.model, profile, settings.grid, lm.device)
        return lambda corpus, progress: temperature_corpus(paths, lm, scorer, corpus, settings, progress)

    return run_corpora(paths, model_spec, corpora, device, dtype, "temperature", show_progress, loaded, "tokens")


# --- the `temperature` step (predictabase.ingest.scoring.steps): its code version and its runner ---------------------


def code_version() -> list:
    return [SCORER_VERSION]


def run_step(paths: Paths, entry, corpora: list[str | None], show_progress: bool = False, engine=None) -> list:
    """The `temperature` step of one models.toml entry: one run per corpus with reading times, with the entry's
    windows (`context_length`, `stride`) and its `temperatures` grid."""
    from predictabase.ingest.scoring.steps import corpus_step_runs

    settings = TemperatureSettings(
        temperatures=tuple(getattr(entry, "temperatures", None) or TEMPERATURES),
        context_length=entry.context_length,
        stride=entry.stride,
    )
    wanted = [c for c in corpora if c is not None] or list(CORPORA)
    runs = run_temperature(paths, entry.name, wanted, settings, entry.device, entry.dtype, show_progress)
    return corpus_step_runs(runs, lambda model, corpus, run: run_dir(paths, model, corpus, run))
