"""Token scoring: sliding windows, length-sorted batching, per-position statistics.

Every window starts with the BOS id. For a document of n real tokens, windows
hold up to W = context_length - 1 real tokens; window k covers real tokens
[k*stride, min(k*stride + W, n)) and scores only the tokens no earlier window
scored (the Hugging Face perplexity recipe), so every token is scored exactly
once, with the longest context this window layout gives it.

The per-token statistics are returned under the names of their token-score columns
(`STATS`): logprob_nats, rank, entropy_nats, logprob_word_initial_nats,
topk_logprobs_nats, topk_token_ids, and context_tokens (per document), plus
logprob_word_initial_after_nats: ln B after each token, the next token's ln B and, after a
document's last token, the boundary mass at the end of the text (one more head row of the
document's last window; no extra forward pass).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from predictabase.ingest.scoring.models import max_positions
from predictabase.ingest.scoring.profile import InvariantError, TokenizerProfile

# the statistics of one scored position, named as their token-score columns (predictabase.ingest.scoring.store.SCHEMA)
STATS = ("logprob_nats", "rank", "entropy_nats", "logprob_word_initial_nats", "topk_logprobs_nats", "topk_token_ids")
# a short fixed text scored when a model loads: its log-probabilities must sum to the model's own loss
PROBE_TEXT = "The old bakery was closed, so we walked on past it and into the rain. Nobody spoke."
PROBE_TOKENS = 16
# |sum of the scorer's log-probs - (-loss * n)| allowed per probe token, by the model's dtype
PROBE_TOLERANCE = {"float32": 1e-3, "float64": 1e-6}
PROBE_TOLERANCE_HALF = 5e-2  # bfloat16 / float16

# rows of the float32 [rows x vocab] logits handled at once: ~128 MiB (682 rows at a 49k vocabulary;
# larger head matmuls, measured best on 2 CPU cores among 64-1365 rows)
SOFTMAX_BYTES = 1 << 27
# the CPU statistics of a chunk can run on blocks of rows whose float32 [rows x vocab] temporaries (log-softmax,
# probabilities, their product) stay in the cache (`_cpu_chunk_stats`, the same bits as whole-chunk operations).
# Measured on 2 shared cores: ~4 MiB blocks (21 rows of SmolLM2) cut SmolLM2's statistics ~4x while the cores
# were free, but made them ~3x slower under other jobs' load (each block's ops are OpenMP regions whose barriers
# wait for a preempted thread), and Gemma 3's 1 MiB rows gained nothing. So the default is one block per chunk.
STATS_BLOCK_BYTES = SOFTMAX_BYTES
# on a GPU: ~1 GiB (5,461 rows at 49k, 1,024 at Gemma 3's 262k): fewer, larger head matmuls and fewer host
# syncs; the temporaries of one chunk (logits, log-softmax, probabilities) stay under ~4 GiB
SOFTMAX_BYTES_GPU = 1 << 30


@dataclass(frozen=True)
class Window:
    doc: int  # index into the group's documents
    begin: int  # first real token in the window
    end: int  # one past the last real token
    score_from: int  # first real token this window scores

    @property
    def length(self) -> int:  # input length incl. BOS
        return self.end - self.begin + 1


def make_windows(doc: int, n_tokens: int, context_length: int, stride: int) -> list[Window]:
    """Overlapping windows over n real tokens (never disjoint)."""
    span = context_length - 1
    if span < 1 or not 1 <= stride <= span:
        raise ValueError(
            f"need context_length >= 2 and 1 <= stride <= context_length - 1 (got {context_length}, {stride})"
        )
    out: list[Window] = []
    prev_end = 0
    begin = 0
    while prev_end < n_tokens:
        end = min(begin + span, n_tokens)
        out.append(Window(doc, begin, end, prev_end))
        prev_end = end
        begin += stride
    return out


def make_batches(windows: list[Window], batch_tokens: int) -> list[list[Window]]:
    """Sort windows by length (longest first) and group them under a padded-token budget."""
    order = sorted(windows, key=lambda w: -w.length)
    batches: list[list[Window]] = []
    cur: list[Window] = []
    for w in order:
        width = cur[0].length if cur else w.length
        if cur and width * (len(cur) + 1) > batch_tokens:
            batches.append(cur)
            cur = []
        cur.append(w)
    if cur:
        batches.append(cur)
    return batches


# memory-sized GPU batches (`memory_batch_tokens`): this share of the device's total memory for weights,
# activations and the statistics' chunk; padded tokens per batch within [MIN, MAX]
GPU_MEMORY_SHARE = 0.6
GPU_BATCH_TOKENS_MIN = 2048
GPU_BATCH_TOKENS_MAX = 1 << 16


def memory_batch_tokens(model, total_bytes: int, context_length: int, full_logits: bool = False) -> int:
    """Padded tokens per forward batch for a device with `total_bytes` of memory (its total, not what is
    free now: the batches must not depend on the moment, see pipeline.PART_SECONDS).

    Per padded token: the activations of one decoder layer at a time (inference keeps no others:
    residual, normed input, q, k, v, attention output, MLP gate, up and product), the attention mask
    ([batch, 1, L, L]: L entries per token) and, with `full_logits` (a plain forward that keeps
    [tokens, vocab] logits, a float32 copy and its log-softmax), 10 bytes per vocabulary entry. The
    scorer's split head needs only one ~1 GiB chunk of logits (SOFTMAX_BYTES_GPU) at a time."""
    cfg = getattr(model, "config", None)
    cfg = getattr(cfg, "text_config", None) or cfg
    p = next(model.parameters())
    e = p.element_size()
    d = int(getattr(cfg, "hidden_size", 0) or 1024)
    f = int(getattr(cfg, "intermediate_size", 0) or 4 * d)
    heads = int(getattr(cfg, "num_attention_heads", 0) or 1)
    hd = int(getattr(cfg, "head_dim", 0) or d // heads)
    kv = int(getattr(cfg, "num_key_value_heads", 0) or heads) * hd
    per_token = e * (4 * d + heads * hd + 2 * kv + 3 * f) + 4 * int(context_length)
    if full_logits:
        per_token += 10 * int(model.get_output_embeddings().weight.shape[0])
    weights = sum(t.numel() * t.element_size() for t in model.parameters())
    budget = GPU_MEMORY_SHARE * total_bytes - weights - 6 * SOFTMAX_BYTES_GPU
    tokens = int(budget // per_token) // 256 * 256
    return max(GPU_BATCH_TOKENS_MIN, min(GPU_BATCH_TOKENS_MAX, tokens))


def fused_stats(x, t, wi_mask, k: int):
    """The statistics of `_stats` for logits x [rows, V] and targets t [rows] as reductions over x alone
    (float32), written so that torch.compile fuses them into a few passes over the vocabulary (the GPU
    path; eager, it is the same numbers more slowly). With lse = logsumexp(x) and lp = x - lse:
    log p(t) = lp_t; rank = 1 + #{v : lp_v > lp_t}; entropy = -sum_v p_v lp_v (0 where p_v = 0, so -inf
    logits need no second pass); ln(word-initial mass) = logsumexp of x over the word-initial ids - lse
    (no underflow, no host sync); top-k of lp from the top-k of x. Returns
    (logprob, rank int32, entropy, word-initial log-mass, top-k log-probs, top-k ids)."""
    import torch

    x = x.float()
    m = x.amax(dim=1, keepdim=True)
    lse = m + (x - m).exp().sum(dim=1, keepdim=True).log()
    tlp = x.gather(1, t[:, None]) - lse
    lp = x - lse
    p = lp.exp()
    ent = -torch.where(p > 0, p * lp, torch.zeros_like(lp)).sum(dim=1)
    xm = x.masked_fill(wi_mask[None, :] == 0, float("-inf"))
    mm = xm.amax(dim=1, keepdim=True).clamp_min(torch.finfo(torch.float32).min)
    wi = mm + (xm - mm).exp().sum(dim=1, keepdim=True).log() - lse
    rank = (lp > tlp).sum(dim=1, dtype=torch.int32) + 1
    topv, topi = x.topk(max(k, 1), dim=1)
    return tlp[:, 0], rank, ent, wi[:, 0], (topv - lse)[:, :k], topi[:, :k]


_COMPILED = {}


def compiled_fused_stats():
    """torch.compile(fused_stats) for a CUDA device (Triton kernels), or None where it cannot be had
    (no Triton), or not asked for: opt-in with PREDICTABASE_COMPILE_STATS=1 until it is measured on a GPU
    (eager on a CPU it gives the eager path's numbers: tests/test_scoring_gpu_path.py). Compiled once per
    process, on first use."""
    import os

    if os.environ.get("PREDICTABASE_COMPILE_STATS", "0") != "1":
        return None
    if "fn" not in _COMPILED:
        try:
            import importlib.util

            import torch

            if importlib.util.find_spec("triton") is None:  # inductor's GPU backend (a CUDA build of torch has it)
                raise ImportError("triton")
            _COMPILED["fn"] = torch.compile(fused_stats, dynamic=True)
        except Exception:  # noqa: BLE001
            _COMPILED["fn"] = None
    return _COMPILED["fn"]


RANK_TOP = 10  # the top-k is computed at least this far (a tie's order of ids is topk's for this size)


def count_above(lp, tlp, buf):
    """#{v : lp_v > lp_target} per row, as int32: the comparison written into `buf` (float32 [rows, vocab],
    a buffer the caller reuses) as 1.0 / 0.0 and summed per row. Exact: a float32 sum of at most 2^24 ones is
    an integer whatever its order, and ~5x faster on the CPU than summing the booleans into an int32."""
    import torch

    if lp.shape[1] >= 1 << 24:
        return (lp > tlp).sum(dim=1, dtype=torch.int64).to(torch.int32)
    return torch.gt(lp, tlp, out=buf).sum(dim=1).to(torch.int32)


class Scorer:
    """Scores token sequences with one model; the vocabulary tables come from its tokenizer profile."""

    def __init__(self, model, profile: TokenizerProfile, top_k: int = 10, device: str = "cpu", probe: bool = True):
        import torch

        self.torch = torch
        self.model = model
        self.profile = profile
        self.bos_id = int(profile.bos.token_id)
        self.top_k = int(top_k)
        self.device = torch.device(device)
        head = model.get_output_embeddings()
        self.vocab_size = int(head.weight.shape[0])
        if self.vocab_size != profile.vocab_size:
            raise InvariantError(
                profile.name,
                f"the LM head has {self.vocab_size} rows but the tokenizer profile was built for {profile.vocab_size}",
            )
        self.wi_mask = torch.tensor(profile.word_initial, dtype=torch.float32, device=self.device)
        # the CPU statistics' chunk buffers are this scorer's: one chunk at a time, whatever thread asks (the
        # dashboard's sentence box shares one scorer between sessions)
        self._buffers_lock = threading.Lock()
        self._buffers: dict = {}  # name -> [rows, vocab] float32 (`_buffer`)
        self._split = self._check_split_head()
        self.set_gpu_path(self.device.type == "cuda")
        if probe:
            self.check_probe()

    # --- the model ---------------------------------------------------------
    def _check_split_head(self) -> bool:
        """Can we run the body, then the LM head on only the scored positions?

        Verified numerically against the model's own logits on a short input;
        models with extra logit processing fall back to full logits.
        """
        torch = self.torch
        base = getattr(self.model, "base_model", None)
        head = self.model.get_output_embeddings()
        if base is None or base is self.model or head is None:
            return False
        ids = torch.tensor(
            [[self.bos_id] + [min(5 + i * 7, self.vocab_size - 1) for i in range(7)]], device=self.device
        )
        try:
            with torch.inference_mode():
                full = self.model(input_ids=ids).logits.float()
                split = head(base(input_ids=ids).last_hidden_state).float()
            return full.shape == split.shape and torch.allclose(full, split, atol=1e-4, rtol=1e-4)
        except Exception:  # noqa: BLE001
            return False

    def set_gpu_path(self, on: bool) -> None:
        """The GPU path of `_stats` (on by default on a CUDA device): ~1 GiB chunks, the LM head's output in
        float32 (`_check_head_fp32`), and the statistics as one torch.compile'd function (`fused_stats`: a
        few fused passes over the vocabulary, no host sync), else eagerly: log-softmax straight from the
        logits' dtype and the rank as one count over the vocabulary. The same statistics (to the last bits);
        the CPU default keeps its own path and its numbers unchanged; tests turn this on to run the GPU path
        on a CPU (and set `_fused = fused_stats` to run the compiled function's math eagerly)."""
        self.gpu = bool(on)
        self.chunk_rows = max(16, (SOFTMAX_BYTES_GPU if self.gpu else SOFTMAX_BYTES) // (4 * self.vocab_size))
        self._head_fp32 = self._check_head_fp32() if self.gpu else None
        # on CUDA: the statistics as one compiled function (`fused_stats`); None: the eager GPU path
        self._fused = compiled_fused_stats() if self.gpu and self.device.type == "cuda" else None

    def _check_head_fp32(self):
        """On a GPU with half-precision weights: the LM head as one matmul with float32 output
        (`torch.mm(..., out_dtype=torch.float32)`: bf16/fp16 inputs, float32 accumulation, and no rounding
        of the logits to 8 (bf16) or 11 (fp16) mantissa bits before the float32 log-softmax). None (use
        the head module) for float32 weights, a head with a bias, or where the op is missing."""
        torch = self.torch
        head = self.model.get_output_embeddings()
        w = getattr(head, "weight", None)
        if (
            not self._split
            or not isinstance(head, torch.nn.Linear)
            or head.bias is not None
            or w is None
            or w.dtype not in (torch.bfloat16, torch.float16)
        ):
            return None
        if self.device.type == "cuda":

            def fn(x):
                return torch.mm(x, w.t(), out_dtype=torch.float32)
        else:  # (tests on a CPU) the same numbers without the CUDA-only op: exact products, float32 sums

            def fn(x):
                return x.float() @ w.float().t()

        try:
            x = torch.linspace(-2, 2, 4 * w.shape[1], device=self.device).reshape(4, -1).to(w.dtype)
            with torch.inference_mode():
                ok = torch.allclose(fn(x), head(x).float(), rtol=2e-2, atol=2e-2)
        except Exception:  # noqa: BLE001 - an older torch without out_dtype: the head module
            return None
        return fn if ok else None

    def check_probe(self, text: str = PROBE_TEXT) -> float:
        """The scorer's log-probabilities of a short text (BOS + up to PROBE_TOKENS tokens, one window)
        must sum to -n times the model's own mean loss (`model(input_ids, labels=input_ids).loss`).
        Returns the difference in nats; raises InvariantError naming the model when it is too large."""
        torch = self.torch
        [(ids, _)] = self.profile.encode([text])
        maxpos = max_positions(self.model.config) or PROBE_TOKENS + 1
        ids = ids[: min(PROBE_TOKENS, maxpos - 1)]
        n = len(ids)
        ours = float(self._probe_logprobs(self.score_windows([ids], [[Window(0, 0, n, 0)]])[0]).sum())
        inp = torch.tensor([[self.bos_id] + ids], device=self.device)
        from transformers.utils import logging as hf_logging

        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # "loss_type=None ... Using the default loss: ForCausalLMLoss"
        try:
            with torch.inference_mode():
                loss = self.model(input_ids=inp, labels=inp).loss
        finally:
            hf_logging.set_verbosity(verbosity)
        if loss is None:
            raise InvariantError(
                self.profile.name,
                "the model returns no loss for labels; the scorer's log-probabilities cannot be checked against it",
            )
        theirs = -float(loss) * n
        dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
        tol = PROBE_TOLERANCE.get(dtype, PROBE_TOLERANCE_HALF) * n
        diff = ours - theirs
        if not abs(diff) <= tol:
            raise InvariantError(
                self.profile.name,
                f"on the probe text ({n} tokens after BOS id {self.bos_id}) "
                f"the scorer's log-probabilities sum to {ours:.6f} nats but "
                f"the model's own loss gives {theirs:.6f} (tolerance {tol:g}, "
                f"{dtype}): the scorer does not compute this model's "
                "log-probabilities",
            )
        return diff

    def _position_logits(self, input_ids, attention_mask, rows, cols):
        """Logits [N, V] at (row, col) positions of the batch (model dtype)."""
        if self._split:
            hidden = self.model.base_model(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False
            ).last_hidden_state
            return hidden[rows, cols]  # the head is applied chunk by chunk
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
        return logits[rows, cols]

    def _stats(self, sel, targets):
        """Per-position statistics from selected hidden states (split) or logits, chunked.

        From one float32 log-softmax lp (whatever the weights' dtype): log p(t) = lp_t;
        rank = 1 + #{v : lp_v > lp_t}; entropy H = -sum_v p_v lp_v; word-initial mass
        log sum_v p_v m_v; top-k of lp. Each is one fused pass over the vocabulary. On the CPU
        (`_cpu_chunk_stats`) the passes after the log-softmax read cache-sized blocks of rows and
        the rank is a count over the vocabulary into a reused buffer (`count_above`), so
        the bookkeeping stays close to the plain log_softmax + gather loop (bench/score.py).
        """
        torch = self.torch
        head = self.model.get_output_embeddings()
        k = min(self.top_k, self.vocab_size)
        out = {name: [] for name in STATS}
        for s in range(0, sel.shape[0], self.chunk_rows):
            x = sel[s : s + self.chunk_rows]
            t = targets[s : s + self.chunk_rows]
            if not self.gpu:
                with self._buffers_lock:
                    logits = self._head_into_buffer(x) if self._split else x
                    for name, v in self._cpu_chunk_stats(logits, t, k).items():
                        out[name].append(v)
                continue
            x = self._head_fp32(x) if self._head_fp32 is not None else head(x) if self._split else x
            if self._fused is not None:
                try:
                    parts = self._fused(x, t, self.wi_mask, k)
                except Exception as exc:  # noqa: BLE001 - a compile failure: the eager GPU path from here on
                    import warnings

                    warnings.warn(
                        f"compiled statistics failed ({type(exc).__name__}: {exc}); eager from now on", stacklevel=2
                    )
                    self._fused = None
                else:
                    for name, v in zip(STATS, parts):
                        if k or not name.startswith("topk_"):
                            out[name].append(v)
                    continue
            # the eager GPU path: the whole chunk at once, no host sync but the rare fix-ups below
            lp = torch.log_softmax(x, dim=-1, dtype=torch.float32)  # no separate float copy of x
            tlp = lp.gather(1, t[:, None])
            out["logprob_nats"].append(tlp[:, 0])
            topv, topi = lp.topk(min(max(k, RANK_TOP), self.vocab_size), dim=1)
            # one pass over the vocabulary, no host sync (the same count as count_above)
            out["rank"].append((lp > tlp).sum(dim=1, dtype=torch.int32) + 1)
            p = lp.exp()
            ent = -torch.linalg.vecdot(p, lp)
            bad = ~torch.isfinite(ent)  # -inf logits (a masked vocabulary): 0 * -inf, recompute those rows
            if bool(bad.any()):
                ent[bad] = -(p[bad] * lp[bad]).nan_to_num_(0.0, 0.0, 0.0).sum(dim=1)
            out["entropy_nats"].append(ent)
            mass = p @ self.wi_mask
            wi = mass.log()
            tiny = mass < 1e-30
            if bool(tiny.any()):
                wi[tiny] = torch.logsumexp(lp[tiny].masked_fill(self.wi_mask[None, :] == 0, float("-inf")), dim=1)
            out["logprob_word_initial_nats"].append(wi)
            if k:
                out["topk_logprobs_nats"].append(topv[:, :k])
                out["topk_token_ids"].append(topi[:, :k])
        res = {}
        for name, parts in out.items():
            res[name] = torch.cat(parts).cpu().numpy() if parts else np.zeros((0, k))
        return res

    def _cpu_chunk_stats(self, x, t, k: int) -> dict:
        """`_stats` of one chunk on the CPU: the same operations as on the whole chunk (float32 log-softmax,
        gather, top-k, rank, p = exp(lp), entropy = -vecdot(p, lp), ln(p @ mask)), applied to blocks of rows
        (STATS_BLOCK_BYTES; one block per chunk by default), each written into a [rows, vocab] buffer kept
        between chunks (`_buffer`). A fresh tensor of a chunk's size (~128 MiB) is memory the allocator maps
        anew every time, and its page faults cost as much as the operation itself: the log-softmax takes ~40 ms
        of a Gemma 3 chunk into fresh memory, ~9 ms into the buffer. The entropy's product goes over the
        log-probabilities, which nothing reads after it, and the rank is a count of ones in the probability
        buffer before the probabilities are written there (`count_above`).

        The same bits as the whole-chunk operations: each is computed row by row, and a reduction's order
        within a row does not depend on how many rows it is given, except for a single row (split across
        threads): no block has one row unless the chunk has. The word-initial mass is the one exception to
        that rule (MKL's matrix-vector product sums a row in an order that depends on the row count), so the
        probabilities of the whole chunk go into one buffer and the product is taken once per chunk, as on
        the whole chunk. Rows with -inf logits (entropy) or a word-initial mass under 1e-30 are recomputed
        over the whole chunk's such rows, as there."""
        torch = self.torch
        x = x.float()
        n, v = x.shape
        p = self._buffer("p", n, v)
        lps = self._buffer("lp", n, v)
        rows = max(2, STATS_BLOCK_BYTES // (4 * v))
        starts = list(range(0, n, rows))[: max(1, n // rows)]  # the last block takes the remainder
        ends = starts[1:] + [n]
        parts = {name: [] for name in STATS}
        for a, z in zip(starts, ends):
            lp = torch.log_softmax(x[a:z], dim=-1, out=lps[a:z])
            tlp = lp.gather(1, t[a:z, None])
            parts["logprob_nats"].append(tlp[:, 0])
            if k:  # at least RANK_TOP, as on the GPU path: the order of tied ids is topk's for that size
                topv, topi = lp.topk(min(max(k, RANK_TOP), v), dim=1)
                parts["topk_logprobs_nats"].append(topv[:, :k])
                parts["topk_token_ids"].append(topi[:, :k])
            parts["rank"].append(count_above(lp, tlp, p[a:z]) + 1)
            pb = torch.exp(lp, out=p[a:z])
            parts["entropy_nats"].append(-torch.mul(pb, lp, out=lp).sum(dim=-1))
        res = {name: torch.cat(vals) for name, vals in parts.items() if vals}
        ent = res["entropy_nats"]
        bad = ~torch.isfinite(ent)  # -inf logits (a masked vocabulary): 0 * -inf, recompute those rows
        if bool(bad.any()):
            lpb = torch.log_softmax(x[bad], dim=-1)
            ent[bad] = -(p[bad] * lpb).nan_to_num_(0.0, 0.0, 0.0).sum(dim=1)
        mass = p @ self.wi_mask
        wi = mass.log()
        tiny = mass < 1e-30
        if bool(tiny.any()):
            lpt = torch.log_softmax(x[tiny], dim=-1)
            wi[tiny] = torch.logsumexp(lpt.masked_fill(self.wi_mask[None, :] == 0, float("-inf")), dim=1)
        res["logprob_word_initial_nats"] = wi
        return res

    def _buffer(self, name: str, n: int, v: int):
        """[n, v] float32, kept between chunks under `name` (see `_cpu_chunk_stats`)."""
        buf = self._buffers.get(name)
        if buf is None or buf.shape[0] < n or buf.shape[1] != v:
            buf = self._buffers[name] = self.torch.empty(max(n, self.chunk_rows), v, dtype=self.torch.float32)
        return buf[:n]

    def _head_into_buffer(self, hidden):
        """The LM head of a chunk's hidden states into the "logits" buffer: the same matrix product as
        `head(hidden)` (an nn.Linear without bias: x @ W^T), so the same bits, without a fresh chunk-sized
        tensor per chunk. Any other head (a bias, a subclass, half precision) is called as it is."""
        torch = self.torch
        head = self.model.get_output_embeddings()
        w = head.weight
        plain = type(head) is torch.nn.Linear and head.bias is None and hidden.dim() == 2
        if not plain or hidden.dtype != torch.float32 or w.dtype != torch.float32:
            return head(hidden)
        return torch.mm(hidden, w.t(), out=self._buffer("logits", hidden.shape[0], w.shape[0]))

    def _result_arrays(self, n: int, k: int) -> dict:
        """A document's result arrays (n real tokens), filled by `score_windows`."""
        return {
            "logprob_nats": np.full(n, np.nan, np.float64),
            "rank": np.zeros(n, np.int32),
            "entropy_nats": np.zeros(n, np.float64),
            "logprob_word_initial_nats": np.zeros(n, np.float64),
            "logprob_word_initial_after_nats": np.full(n, np.nan, np.float64),
            "topk_logprobs_nats": np.zeros((n, k), np.float64),
            "topk_token_ids": np.zeros((n, k), np.int32),
            "context_tokens": np.full(n, -1, np.int32),
        }

    def _copied_stats(self, k: int) -> tuple[str, ...]:
        """The statistics `_stats` returns per scored position that `score_windows` keeps."""
        return tuple(name for name in STATS if k or not name.startswith("topk_"))

    def _probe_logprobs(self, result: dict) -> np.ndarray:
        """The log-probability of each token of a scored document (`check_probe` sums them)."""
        return result["logprob_nats"]

    def score_windows(self, token_ids: list[list[int]], batches: list[list[Window]], on_batch=None) -> dict:
        """Score the windows; returns per-document arrays indexed by real-token position."""
        torch = self.torch
        k = min(self.top_k, self.vocab_size)
        results = {d: self._result_arrays(len(ids), k) for d, ids in enumerate(token_ids)}
        copied = self._copied_stats(k)
        with torch.inference_mode():
            for batch in batches:
                width = batch[0].length
                inp = np.full((len(batch), width), self.bos_id, dtype=np.int64)
                att = np.zeros((len(batch), width), dtype=np.int64)
                rows, cols, tgts = [], [], []
                ends = []  # windows that reach their document's end: one more position, after the last token
                for r, w in enumerate(batch):
                    seq = token_ids[w.doc][w.begin : w.end]
                    inp[r, 1 : 1 + len(seq)] = seq
                    att[r, : 1 + len(seq)] = 1
                    # the logits at input position j predict real token begin + j
                    js = np.arange(w.score_from - w.begin, w.end - w.begin)
                    rows.append(np.full(len(js), r))
                    cols.append(js)
                    tgts.append(np.asarray(seq, dtype=np.int64)[js])
                    if w.end == len(token_ids[w.doc]) and w.end > w.begin:
                        ends.append((r, w))
                # after the scored positions: the position after each document's last token (the word
                # boundary after the text; its target is a placeholder, only the boundary mass is kept)
                for r, w in ends:
                    rows.append(np.array([r]))
                    cols.append(np.array([w.end - w.begin]))
                    tgts.append(np.array([0], dtype=np.int64))
                rows_t = torch.from_numpy(np.concatenate(rows)).to(self.device)
                cols_t = torch.from_numpy(np.concatenate(cols)).to(self.device)
                tg = torch.from_numpy(np.concatenate(tgts)).to(self.device)
                sel = self._position_logits(
                    torch.from_numpy(inp).to(self.device), torch.from_numpy(att).to(self.device), rows_t, cols_t
                )
                st = self._stats(sel, tg)
                pos = 0
                for w in batch:
                    m = w.end - w.score_from
                    sl = slice(pos, pos + m)
                    dst = slice(w.score_from, w.end)
                    r = results[w.doc]
                    for name in copied:
                        r[name][dst] = st[name][sl]
                    r["context_tokens"][dst] = np.arange(w.score_from - w.begin, w.end - w.begin)
                    pos += m
                for _, w in ends:
                    results[w.doc]["logprob_word_initial_after_nats"][-1] = st["logprob_word_initial_nats"][pos]
                    pos += 1
                if on_batch is not None:
                    on_batch(int(len(tg)) - len(ends))
        for r in results.values():
            # ln B after token i = ln B before token i + 1 (the same number, so word terms telescope)
            r["logprob_word_initial_after_nats"][:-1] = r["logprob_word_initial_nats"][1:]
        return results
