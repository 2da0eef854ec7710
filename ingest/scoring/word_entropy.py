"""Contextual word entropy by Monte Carlo over whole words, and its Rényi generalisation.

A word's contextual entropy is H(W | c) = -sum_w p(w | c) ln p(w | c) over whole words w, with p(w | c) the
whitespace-trailing (WT) word probability that `word_boundaries` defines (Oh & Schuler 2024, eqs. 5-6):

    p(w | c) = p(t_1 | c) / B(c) * prod_{k>1} p(t_k | c, t_<k) * B(c, t_1..t_n)

(for a text's first word the B(c) term is 1). Clark, Oh & Schuler (2025) show that the next-token entropy at the
word's first token, the usual stand-in, is a biased approximation of it; they estimate H(W | c) by sampling whole
words. So does `sample_words`: the first token from the word-initial tokens (renormalised by B(c)), then each next
token from the full distribution, until a word-initial token (or end of text) comes next, which ends the word with
probability B. Every sample's ln p(w | c) is exact, so

    H ~ mean_i(-ln p(w_i | c)),  SE = sd_i(-ln p(w_i | c)) / sqrt(N)

and the Rényi entropy of order alpha (Pimentel et al. 2023 use alpha = 1/2),
H_alpha = ln(sum_w p(w)^alpha) / (1 - alpha) = ln E_p[p(w)^(alpha - 1)] / (1 - alpha), estimated by the sample mean
with a delta-method SE. A word is cut at `max_tokens` tokens: the truncated word keeps the probability of every
continuation (the distribution still sums to 1), and the number cut is reported.

The sampler is checked exactly in tests/test_word_entropy.py: on a model small enough to enumerate every word,
`exact_word_distribution` gives H and H_alpha, and the estimates fall within their standard errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

#: Rényi's order the anticipation literature uses (Pimentel et al. 2023: alpha = 1/2)
DEFAULT_ALPHA = 0.5


@dataclass(frozen=True)
class WordSamples:
    """N sampled words at one position: each word's ln p(w | c) (WT, nats), its length in tokens, whether it was
    cut at `max_tokens`, and its tokens ([N, max_tokens], -1 after the word's end)."""

    logp_nats: np.ndarray
    n_tokens: np.ndarray
    truncated: np.ndarray
    tokens: np.ndarray
    first_token_entropy_nats: float = math.nan  # the next-token entropy after the context (exact)
    first_token_word_entropy_nats: float = math.nan  # the entropy of the word's first token, drawn as above (exact)


@dataclass(frozen=True)
class Entropies:
    """The estimates at one position (nats): Shannon and Rényi (order `alpha`) with their standard errors, and the
    first-token entropy (exact)."""

    entropy_nats: float
    entropy_se_nats: float
    renyi_entropy_nats: float
    renyi_entropy_se_nats: float
    first_token_entropy_nats: float
    first_token_word_entropy_nats: float
    n_samples: int
    n_truncated: int


def shannon(logp: np.ndarray) -> tuple[float, float]:
    """(H, SE) from sampled words' ln p: the mean surprisal and its standard error."""
    s = -np.asarray(logp, dtype=np.float64)
    se = float(s.std(ddof=1) / math.sqrt(s.size)) if s.size > 1 else math.nan
    return float(s.mean()), se


def renyi(logp: np.ndarray, alpha: float) -> tuple[float, float]:
    """(H_alpha, SE) from sampled words' ln p: ln mean(p^(alpha-1)) / (1 - alpha), with the delta method's SE
    (sd(x) / (sqrt(N) mean(x)) / |1 - alpha| for x = p^(alpha-1), computed relative to its largest term)."""
    if alpha == 1.0:
        return shannon(logp)
    y = (alpha - 1.0) * np.asarray(logp, dtype=np.float64)
    top = float(y.max())
    x = np.exp(y - top)
    m = float(x.mean())
    h = (top + math.log(m)) / (1.0 - alpha)
    se = float(x.std(ddof=1) / (math.sqrt(x.size) * m) / abs(1.0 - alpha)) if x.size > 1 else math.nan
    return h, se


def first_token_entropy(logits: torch.Tensor) -> float:
    """The next-token entropy over the whole vocabulary (nats, float64): the usual first-token stand-in."""
    lp = torch.log_softmax(logits.double(), dim=-1)
    return float(-(lp.exp() * lp).sum())


def _draw(lp: torch.Tensor, generator: torch.Generator, n: int | None = None) -> torch.Tensor:
    """One token per row of log-probabilities [m, vocab] (float64), or `n` tokens from a single row [1, vocab], by
    the inverse of the cumulative distribution at uniform draws of `generator` (in row order): exact to float64, and
    far cheaper than torch.multinomial over a large vocabulary."""
    cdf = lp.exp().cumsum(dim=-1)
    k = lp.shape[0] if n is None else n
    u = torch.rand(k, generator=generator, dtype=torch.float64) * cdf[:, -1]
    found = torch.searchsorted(cdf, u[:, None], right=True).squeeze(1) if n is None else (
        torch.searchsorted(cdf[0], u, right=True))  # fmt: skip
    return found.clamp_(max=lp.shape[1] - 1)


def _step_logprobs(logits: torch.Tensor, word_initial: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-probabilities [rows, vocab], ln B [rows]) in float64 (never half precision)."""
    lp = torch.log_softmax(logits.double(), dim=-1)
    return lp, torch.logsumexp(lp.masked_fill(~word_initial, -math.inf), dim=-1)


def sample_words(
    next_logits,
    first_logits: torch.Tensor,
    word_initial: torch.Tensor,
    n: int,
    max_tokens: int,
    generator: torch.Generator,
    text_start: bool = False,
) -> WordSamples:
    """Sample `n` whole words after one context (see the module's docstring; `sample_positions` for several).

    `first_logits`: the logits [vocab] after the context. `next_logits(tokens [m], rows [m]) -> logits [m, vocab]`
    feeds one more token to each of the continuations `rows` (of the n; only those whose word has not ended) and
    returns the logits after it (`cached_continuations`). `word_initial`: bool [vocab], word-initial tokens and end of
    text (`word_boundaries.word_initial_mask`). `text_start`: the context is the start of a text (no boundary before
    the word: the first token is drawn from the whole vocabulary)."""
    [out] = sample_positions(next_logits, first_logits[None, :], word_initial, n, max_tokens, [generator], [text_start])
    return out


def sample_positions(
    next_logits,
    first_logits: torch.Tensor,
    word_initial: torch.Tensor,
    n: int,
    max_tokens: int,
    generators: list[torch.Generator],
    text_start: list[bool],
) -> list[WordSamples]:
    """`sample_words` at P positions at once (`first_logits` [P, vocab], one generator each): continuation row
    p * n + i is the i-th word sampled at position p, and each position's draws come from its own generator, so a
    position's words do not depend on which others it is sampled with."""
    n_pos = first_logits.shape[0]
    lp0, lnb0 = _step_logprobs(first_logits, word_initial)
    starts = torch.tensor(text_start, dtype=torch.bool)[:, None]
    first = torch.where(starts, lp0, lp0.masked_fill(~word_initial, -math.inf) - lnb0[:, None])
    tokens = torch.cat([_draw(first[q][None, :], generators[q], n) for q in range(n_pos)])
    entropies = (-(lp0.exp() * lp0).nan_to_num().sum(dim=-1)).tolist()  # 0 * -inf: an impossible token adds 0
    # the first token of a word (word-initial, renormalised by B): a lower bound on the word's entropy, since the
    # word fixes it
    first_entropies = (-(first.exp() * first).nan_to_num().sum(dim=-1)).tolist()
    total = n_pos * n
    logp = first.repeat_interleave(n, dim=0).gather(1, tokens[:, None]).squeeze(1)
    n_tokens = torch.ones(total, dtype=torch.int64)
    active = torch.ones(total, dtype=torch.bool)
    words = torch.full((total, max_tokens), -1, dtype=torch.int64)
    words[:, 0] = tokens
    for k in range(1, max_tokens):
        rows = active.nonzero().squeeze(1)
        lp, lnb = _step_logprobs(next_logits(tokens[rows], rows), word_initial)
        nxt = torch.empty(rows.numel(), dtype=torch.int64)
        owner = rows // n
        for q in owner.unique().tolist():
            mine = (owner == q).nonzero().squeeze(1)
            nxt[mine] = _draw(lp[mine], generators[q])
        ends = word_initial[nxt]  # the word ended: a boundary comes next, with probability B
        logp[rows[ends]] += lnb[ends]
        going = ~ends
        logp[rows[going]] += lp[going].gather(1, nxt[going][:, None]).squeeze(1)
        n_tokens[rows[going]] += 1
        words[rows[going], k] = nxt[going]
        tokens[rows] = nxt
        active[rows[ends]] = False
        if not bool(active.any()):
            break
    return [
        WordSamples(
            logp[q * n : (q + 1) * n].numpy(),
            n_tokens[q * n : (q + 1) * n].numpy(),
            active[q * n : (q + 1) * n].numpy(),
            words[q * n : (q + 1) * n].numpy(),
            entropies[q],
            first_entropies[q],
        )
        for q in range(n_pos)
    ]


def estimate(samples: WordSamples, alpha: float = DEFAULT_ALPHA) -> Entropies:
    h, se = shannon(samples.logp_nats)
    hr, ser = renyi(samples.logp_nats, alpha)
    return Entropies(h, se, hr, ser, samples.first_token_entropy_nats, samples.first_token_word_entropy_nats,
                     int(samples.logp_nats.size), int(samples.truncated.sum()))  # fmt: skip


def exact_word_distribution(
    next_logits_of, first_logits: torch.Tensor, word_initial: torch.Tensor, max_tokens: int, text_start: bool = False
) -> dict[tuple[int, ...], float]:
    """Every word of at most `max_tokens` tokens -> ln p(w | c), by enumeration (for tests: a vocabulary of a few
    tokens). `next_logits_of(prefix tokens tuple) -> logits [vocab]` after the context and that prefix. A word cut
    at `max_tokens` keeps the probability of every continuation, as in `sample_words`; the values sum to 1."""
    lp0, lnb0 = _step_logprobs(first_logits[None, :], word_initial)
    first = lp0[0] if text_start else lp0[0].masked_fill(~word_initial, -math.inf) - lnb0[0]
    out: dict[tuple[int, ...], float] = {}
    todo = [((int(t),), float(first[t])) for t in range(first.numel()) if first[t] > -math.inf]
    while todo:
        word, lp = todo.pop()
        if len(word) == max_tokens:
            out[word] = lp
            continue
        lps, lnb = _step_logprobs(next_logits_of(word)[None, :], word_initial)
        out[word] = lp + float(lnb[0])
        todo += [((*word, t), lp + float(lps[0, t])) for t in range(lps.shape[1]) if not bool(word_initial[t])]
    return out


def exact_entropies(dist: dict[tuple[int, ...], float], alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """(H, H_alpha) of an enumerated word distribution (nats)."""
    lp = np.array(list(dist.values()), dtype=np.float64)
    p = np.exp(lp)
    h = float(-(p * lp).sum())
    hr = float(np.log(np.exp(alpha * lp).sum()) / (1.0 - alpha)) if alpha != 1.0 else h
    return h, hr


def cached_continuations(model, layers: list[tuple[torch.Tensor, torch.Tensor]], n: int, contexts=None):
    """`next_logits` for `sample_words` / `sample_positions`: the continuations share the key/value cache of one
    text (`layers`, one (key, value) per layer, batch 1; never copied per continuation). Continuation row r belongs to
    position r // n, whose context is the cache's first `contexts[r // n]` entries (default: all of it). Each call
    feeds one token to each continuation still going, as one row of tokens whose attention mask lets each see its
    context and its own earlier tokens only (a tree), at the position after them, and returns the logits after
    each [m, vocab]."""
    from transformers import DynamicCache

    from predictabase.ingest.scoring.word_search import quiet_cache_argument

    length = int(layers[0][0].shape[-2])
    contexts = [length] if contexts is None else [int(c) for c in contexts]
    cache = DynamicCache(list(layers), config=model.config)
    weight = next(model.parameters())
    dtype, device = weight.dtype, weight.device
    slots: dict[int, list[int]] = {}  # each continuation's tokens' places in the cache, after the text's
    fed = 0

    def next_logits(tokens: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        nonlocal fed
        m = int(rows.numel())
        mask = torch.full((1, 1, m, length + fed + m), torch.finfo(dtype).min, dtype=dtype)
        positions = torch.empty((1, m), dtype=torch.long)
        for r, i in enumerate(rows.tolist()):
            ctx = contexts[i // n]
            own = slots.setdefault(i, [])
            own.append(fed + r)
            mask[0, 0, r, :ctx] = 0
            mask[0, 0, r, [length + j for j in own]] = 0
            positions[0, r] = ctx + len(own) - 1
        fed += m
        with torch.inference_mode(), quiet_cache_argument():
            out = model(
                input_ids=tokens.to(device=device, dtype=torch.long)[None, :],
                attention_mask=mask.to(device),
                position_ids=positions.to(device),
                past_key_values=cache,
                use_cache=True,
            )
        return out.logits[0].cpu()  # sampled on the CPU with the seeded generators, in float64

    return next_logits
