"""The rows of MECO's languages as Wilcox et al. (2023) regress them: shared by the dbt Python models
int_xlang_delta_loglik (their ΔLL, linear) and int_link_fits (the shape of the link, GAMs in R)."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the means' columns (<measure>_ms: ingest/datasets/meco.py names them after the declared measures) -> measure
MEASURE_SUFFIX = "_ms"
FREQS = ["unigram_surprisal_bits", "prev1_unigram_surprisal_bits", "prev2_unigram_surprisal_bits"]


def frequency_filter(g: pd.DataFrame) -> np.ndarray:
    """Their first step: freq, prev_freq, prev2_freq > 0 and finite (NA fails)."""
    f = g[FREQS].to_numpy(float)
    return (np.isfinite(f) & (f > 0)).all(axis=1)


def measure_columns(df: pd.DataFrame) -> dict[str, str]:
    """The columns of the eye-tracking means -> their measure."""
    return {c: c[: -len(MEASURE_SUFFIX)] for c in df.columns if c.endswith(MEASURE_SUFFIX)}


def our_words(theirs: pd.DataFrame, measures: dict[str, str]) -> pd.DataFrame:
    """One row per word of each MECO corpus: their freq, len and means (the same in every model's row)."""
    return theirs.sort_values(["corpus", "doc_id", "word_index", "model_key"]).drop_duplicates(
        ["corpus", "doc_id", "word_index"]
    )[["corpus", "doc_id", "word_index", "trialid", "ianum", "unigram_surprisal_bits", "length_chars", *measures]]


def with_previous(
    w: pd.DataFrame, columns: list[str], order: tuple[str, ...] = ("corpus", "trialid", "ianum")
) -> pd.DataFrame:
    """The previous two words' values of `columns` within each text (NULL across a text's start)."""
    w = w.sort_values(list(order)).copy()
    by_text = w.groupby(["corpus", "doc_id"], sort=False)
    for c in columns:
        w["prev1_" + c] = by_text[c].shift(1)
        w["prev2_" + c] = by_text[c].shift(2)
    return w


def scored_runs(word_surprisal_runs, corpora: list[str]) -> pd.DataFrame:
    """Our models' word surprisal (the relation of int_word_surprisal_runs: the model file refs it, so that dbt
    sees the dependency; scored runs used in the marts) on `corpora`."""
    if not corpora:
        return pd.DataFrame(columns=["corpus", "model_key", "run_id", "doc_id", "word_index"])
    return word_surprisal_runs.filter(
        "run_source = 'scored' and used_in_marts and corpus in (" + ", ".join(f"'{c}'" for c in corpora) + ")"
    ).df()


def our_surprisal_words(
    words: pd.DataFrame, run: pd.DataFrame, corpus: str, definition: str, extra: list[str] = ()
) -> pd.DataFrame:
    """A MECO corpus's words (their freq, len, means) with one of our runs' surprisal (`definition`, bits) and
    the `extra` columns of the run, and the previous two words' values of all of them, freq and len."""
    s = run[["doc_id", "word_index", f"surprisal_{definition}_bits", *extra]].rename(
        columns={f"surprisal_{definition}_bits": "surprisal_bits"}
    )
    w = words[words["corpus"] == corpus].merge(s, on=["doc_id", "word_index"], how="left")
    return with_previous(w, ["surprisal_bits", "unigram_surprisal_bits", "length_chars", *extra])


def first_token_entropy(word_surprisal, token_scores, corpora: list[str]) -> pd.DataFrame:
    """Our models' entropy of a word, bits: the entropy of the next-token distribution the word's first
    token is drawn from, H(T | the text before the word), one softmax's exact value (int_token_scores'
    entropy_nats at the word's first token; the relations of int_word_surprisal and int_token_scores, which the
    model file refs). It is the reader's uncertainty before the word, what anticipation is about, and the usual
    stand-in for the next word's entropy: not a bound on it, since it also spreads over tokens that continue the
    previous word (punctuation); the `entropy` step estimates the word's own by Monte Carlo
    (int_anticipation_delta_loglik compares the two). Wilcox et al. sum the entropies at each of the word's tokens, which adds
    the uncertainty inside the word after its first part is read and grows with the tokenizer's splits. NULL for
    a word that is not aligned or whose first token was not scored."""
    cols = ["run_id", "corpus", "doc_id", "word_index", "entropy_bits"]
    if not corpora:
        return pd.DataFrame(columns=cols)
    within = "corpus in (" + ", ".join(f"'{c}'" for c in corpora) + ")"
    w = word_surprisal.filter(within + " and is_aligned").df()[
        ["run_id", "corpus", "doc_id", "word_index", "first_token_index"]
    ]
    t = token_scores.filter(within + " and is_scored").df()[
        ["run_id", "corpus", "doc_id", "token_index", "entropy_nats"]
    ]
    out = w.merge(
        t,
        left_on=["run_id", "corpus", "doc_id", "first_token_index"],
        right_on=["run_id", "corpus", "doc_id", "token_index"],
        how="left",
    )
    out["entropy_bits"] = out["entropy_nats"] / np.log(2.0)
    return out[cols]
