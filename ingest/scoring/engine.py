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

from dataclasses import dataclass

import numpy as np

from ingest.scoring.models import max_positions
from ingest.scoring.profile import InvariantError, TokenizerProfile

# the statistics of one scored position, named as their token-score columns (ingest.scoring.store.SCHEMA)
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


@dataclass(frozen=True)
class Window:
    doc: int          # index into the group's documents
    begin: int        # first real token in the window
    end: int          # one past the last real token
    score_from: int   # first real token this window scores

    @property
    def length(self) -> int:  # input length incl. BOS
        return self.end - self.begin + 1


def make_windows(doc: int, n_tokens: int, context_length: int, stride: int) -> list[Window]:
    """Overlapping windows over n real tokens (never disjoint)."""
    span = context_length - 1
    if span < 1 or not 1 <= stride <= span:
        raise ValueError(f"need context_length >= 2 and 1 <= stride <= context_length - 1 "
                         f"(got {context_length}, {stride})")
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


RANK_TOP = 10  # the rank of a target among the top RANK_TOP needs no pass over the vocabulary


def rank_of_target(lp, tlp, topv):
    """1 + #{v : lp_v > lp_target} per row. `topv` holds each row's largest values in
    descending order: where the target's value is >= the last of them, every strictly
    larger value is among them; only the other rows count over the whole vocabulary
    (into int32: an int64 bool-sum is ~5x slower on CPU)."""
    import torch
    rank = (topv > tlp).sum(dim=1, dtype=torch.int32) + 1
    outside = tlp[:, 0] < topv[:, -1]
    if bool(outside.any()):
        rank[outside] = (lp[outside] > tlp[outside]).sum(dim=1, dtype=torch.int32) + 1
    return rank


class Scorer:
    """Scores token sequences with one model; the vocabulary tables come from its tokenizer profile."""

    def __init__(self, model, profile: TokenizerProfile, top_k: int = 10, device: str = "cpu",
                 probe: bool = True):
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
            raise InvariantError(profile.name, f"the LM head has {self.vocab_size} rows but the tokenizer "
                                               f"profile was built for {profile.vocab_size}")
        self.wi_mask = torch.tensor(profile.word_initial, dtype=torch.float32, device=self.device)
        self.chunk_rows = max(16, SOFTMAX_BYTES // (4 * self.vocab_size))
        self._split = self._check_split_head()
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
        ids = torch.tensor([[self.bos_id] + [min(5 + i * 7, self.vocab_size - 1) for i in range(7)]],
                           device=self.device)
        try:
            with torch.inference_mode():
                full = self.model(input_ids=ids).logits.float()
                split = head(base(input_ids=ids).last_hidden_state).float()
            return full.shape == split.shape and torch.allclose(full, split, atol=1e-4, rtol=1e-4)
        except Exception:  # noqa: BLE001
            return False

    def check_probe(self, text: str = PROBE_TEXT) -> float:
        """The scorer's log-probabilities of a short text (BOS + up to PROBE_TOKENS tokens, one window)
        must sum to -n times the model's own mean loss (`model(input_ids, labels=input_ids).loss`).
        Returns the difference in nats; raises InvariantError naming the model when it is too large."""
        torch = self.torch
        [(ids, _)] = self.profile.encode([text])
        maxpos = max_positions(self.model.config) or PROBE_TOKENS + 1
        ids = ids[:min(PROBE_TOKENS, maxpos - 1)]
        n = len(ids)
        ours = float(self.score_windows([ids], [[Window(0, 0, n, 0)]])[0]["logprob_nats"].sum())
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
            raise InvariantError(self.profile.name, "the model returns no loss for labels; the scorer's "
                                                    "log-probabilities cannot be checked against it")
        theirs = -float(loss) * n
        dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
        tol = PROBE_TOLERANCE.get(dtype, PROBE_TOLERANCE_HALF) * n
        diff = ours - theirs
        if not abs(diff) <= tol:
            raise InvariantError(self.profile.name, f"on the probe text ({n} tokens after BOS id {self.bos_id}) "
                                                    f"the scorer's log-probabilities sum to {ours:.6f} nats but "
                                                    f"the model's own loss gives {theirs:.6f} (tolerance {tol:g}, "
                                                    f"{dtype}): the scorer does not compute this model's "
                                                    "log-probabilities")
        return diff

    def _position_logits(self, input_ids, attention_mask, rows, cols):
        """Logits [N, V] at (row, col) positions of the batch (model dtype)."""
        if self._split:
            hidden = self.model.base_model(input_ids=input_ids, attention_mask=attention_mask,
                                           use_cache=False).last_hidden_state
            return hidden[rows, cols]  # the head is applied chunk by chunk
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
        return logits[rows, cols]

    def _stats(self, sel, targets):
        """Per-position statistics from selected hidden states (split) or logits, chunked.

        From one float32 log-softmax lp (whatever the weights' dtype): log p(t) = lp_t;
        rank = 1 + #{v : lp_v > lp_t}; entropy H = -sum_v p_v lp_v; word-initial mass
        log sum_v p_v m_v; top-k of lp. Each is one fused pass over the vocabulary, and the
        rank needs a pass only where the target is outside the top-k (`rank_of_target`), so
        the bookkeeping stays close to the plain log_softmax + gather loop (bench/score.py).
        """
        torch = self.torch
        head = self.model.get_output_embeddings()
        k = min(self.top_k, self.vocab_size)
        out = {name: [] for name in STATS}
        for s in range(0, sel.shape[0], self.chunk_rows):
            x = sel[s:s + self.chunk_rows]
            if self._split:
                x = head(x)
            lp = torch.log_softmax(x.float(), dim=-1)
            t = targets[s:s + self.chunk_rows]
            tlp = lp.gather(1, t[:, None])
            out["logprob_nats"].append(tlp[:, 0])
            topv, topi = lp.topk(min(max(k, RANK_TOP), self.vocab_size), dim=1)
            out["rank"].append(rank_of_target(lp, tlp, topv))
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

    def score_windows(self, token_ids: list[list[int]], batches: list[list[Window]], on_batch=None) -> dict:
        """Score the windows; returns per-document arrays indexed by real-token position."""
        torch = self.torch
        k = min(self.top_k, self.vocab_size)
        results = {}
        for d, ids in enumerate(token_ids):
            n = len(ids)
            results[d] = {"logprob_nats": np.full(n, np.nan, np.float64), "rank": np.zeros(n, np.int32),
                          "entropy_nats": np.zeros(n, np.float64),
                          "logprob_word_initial_nats": np.zeros(n, np.float64),
                          "logprob_word_initial_after_nats": np.full(n, np.nan, np.float64),
                          "topk_logprobs_nats": np.zeros((n, k), np.float64),
                          "topk_token_ids": np.zeros((n, k), np.int32),
                          "context_tokens": np.full(n, -1, np.int32)}
        with torch.inference_mode():
            for batch in batches:
                width = batch[0].length
                inp = np.full((len(batch), width), self.bos_id, dtype=np.int64)
                att = np.zeros((len(batch), width), dtype=np.int64)
                rows, cols, tgts = [], [], []
                ends = []  # windows that reach their document's end: one more position, after the last token
                for r, w in enumerate(batch):
                    seq = token_ids[w.doc][w.begin:w.end]
                    inp[r, 1:1 + len(seq)] = seq
                    att[r, :1 + len(seq)] = 1
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
                sel = self._position_logits(torch.from_numpy(inp).to(self.device),
                                            torch.from_numpy(att).to(self.device), rows_t, cols_t)
                st = self._stats(sel, tg)
                pos = 0
                for w in batch:
                    m = w.end - w.score_from
                    sl = slice(pos, pos + m)
                    dst = slice(w.score_from, w.end)
                    r = results[w.doc]
                    for name in STATS:
                        if k or not name.startswith("topk_"):
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
