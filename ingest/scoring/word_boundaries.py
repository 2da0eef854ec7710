"""Word boundaries, defined once: which tokens start a word, the probability B that a word boundary comes next,
and a word's log-probability over its tokens, leading-whitespace (LW) and whitespace-trailing (WT).

Oh & Schuler (2024, sec. 3, eqs. 5-6). A tokenizer that marks word starts with leading whitespace puts a word's
boundary on the token AFTER the word: a word w of tokens t_1..t_n after a context c has

    ln p_LW(w | c) = sum_i ln p(t_i | c, t_<i)                      (the common practice)
    ln p_WT(w | c) = ln p_LW(w | c) + ln B(c, t_1..t_n) - ln B(c)    (the word ends where the next one starts)

where B(x) = the probability, after x, of a word-initial token or end-of-text (`word_initial_mask`). A text's
first word has no boundary before it (its ln B(c) term is 0); its last word's boundary after is at the position
after the text's last token.

What runs at scale computes these where it is fast and is tested against the definitions here
(tests/test_word_boundaries.py): the scorer's ln B at every position in float32 (`engine.Scorer`,
`logprob_word_initial_nats`), the top-1 search (`word_search`, which uses `log_boundary_mass` itself), the cloze
scorer's one-pass ln B over a chunk of logits (`log_normalizer_and_boundary`, here, which it calls), and the dbt
macro that aligns a corpus's words to their tokens and sums LW and WT (dbt_project/macros/word_surprisal.sql;
`word_logprobs` is its arithmetic, word by word).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level vocabulary character -> byte (the inverse of transformers' `bytes_to_unicode`)."""
    try:  # transformers 4
        from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
    except ImportError:  # transformers 5 keeps it with the tokenizer converters
        from transformers.convert_slow_tokenizer import bytes_to_unicode
    return {ch: b for b, ch in bytes_to_unicode().items()}


def token_text_start(s: str | None, byte_level: bool) -> str:
    """The first character a vocabulary string decodes to (no decoder-side stripping)."""
    if not s:
        return ""
    if byte_level:
        table = byte_decoder()
        raw = bytes(table.get(ch, 0x3F) for ch in s[:4])
        return raw.decode("utf-8", errors="replace")[:1]
    if len(s) == 6 and s.startswith("<0x") and s.endswith(">"):
        try:
            return bytes([int(s[3:5], 16)]).decode("utf-8", errors="replace")
        except ValueError:
            return s[:1]
    return s[:1].replace("\u2581", " ")


def word_initial_mask(
    strings: list[str | None], byte_level: bool, special: frozenset[int], end_of_text: frozenset[int]
) -> np.ndarray:
    """True for vocabulary items whose text begins with whitespace (str.isspace), and for end-of-text ids.

    Byte-level BPE: the string is mapped back to bytes (`Ġ` space, `Ċ` newline, `Âł` no-break
    space, ...) and decoded. SentencePiece: `▁`, a literal whitespace character, or a byte-fallback
    token `<0x20>`, `<0x0A>` ... Special tokens other than end-of-text are not word-initial.
    """
    mask = np.zeros(len(strings), dtype=bool)
    for i, s in enumerate(strings):
        if s and i not in special and token_text_start(s, byte_level).isspace():
            mask[i] = True
    for e in end_of_text:
        if 0 <= e < len(mask):
            mask[e] = True
    return mask


def log_boundary_mass(logprobs: np.ndarray, word_initial: np.ndarray) -> float:
    """ln B at one position from its log-probabilities over the vocabulary (float64): the log of the mass on the
    word-initial tokens (`word_initial_mask`), -inf when it is 0."""
    x = logprobs[word_initial]
    m = float(np.max(x)) if x.size else -math.inf
    return m + math.log(float(np.exp(x - m).sum())) if m > -math.inf else -math.inf


def log_boundary_mass_of_logits(logits: np.ndarray, word_initial: np.ndarray) -> np.ndarray:
    """ln B at each row of logits [rows, vocab], in float64: logsumexp over the word-initial entries minus
    logsumexp over all. The definition the faster computations are tested against."""
    x = np.asarray(logits, dtype=np.float64)
    top = x.max(axis=1, keepdims=True)
    total = np.log(np.exp(x - top).sum(axis=1))
    inside = np.log(np.where(word_initial[None, :], np.exp(x - top), 0.0).sum(axis=1))
    return inside - total


def log_normalizer_and_boundary(logits, word_initial):
    """(ln Z, ln B) of each row of logits [rows, vocab] (torch, float32 or float64; OVERWRITTEN): ln Z = max +
    ln sum exp(logit - max) and ln B = ln sum_{word-initial} - ln sum, from one in-place exp pass, the sums in
    the logits' dtype (pairwise; float32: error ~1e-7 nats, below a float32 model's own), the logs in float64.
    `word_initial`: the mask as a torch bool tensor. (The cloze scorer's form: its chunks' logits are used once.)"""
    top = logits.max(dim=-1, keepdim=True).values
    logits.sub_(top).exp_()
    log_total = logits.sum(dim=-1).double().log()
    log_z = top.squeeze(1).double() + log_total
    ln_b = logits.masked_fill_(~word_initial, 0.0).sum(dim=-1).double().log() - log_total
    return log_z, ln_b


def word_logprobs(token_logprobs, lnb_before: float | None, lnb_after: float) -> tuple[float, float]:
    """(ln p_LW, ln p_WT) of one word from its tokens' log-probabilities and the boundary terms around it
    (`lnb_before` None for a text's first word)."""
    lw = float(sum(token_logprobs))
    return lw, lw + lnb_after - (lnb_before or 0.0)
