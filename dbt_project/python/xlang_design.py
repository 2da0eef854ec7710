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
    return {c: c[:-len(MEASURE_SUFFIX)] for c in df.columns if c.endswith(MEASURE_SUFFIX)}


def our_words(theirs: pd.DataFrame, measures: dict[str, str]) -> pd.DataFrame:
    """One row per word of each MECO corpus: their freq, len and means (the same in every model's row)."""
    return (theirs.sort_values(["corpus", "doc_id", "word_index", "model_key"])
            .drop_duplicates(["corpus", "doc_id", "word_index"])
            [["corpus", "doc_id", "word_index", "trialid", "ianum", "unigram_surprisal_bits", "length_chars",
              *measures]])


def with_previous(w: pd.DataFrame, columns: list[str], order: tuple[str, ...] = ("corpus", "trialid", "ianum")
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


def our_surprisal_words(words: pd.DataFrame, run: pd.DataFrame, corpus: str, definition: str) -> pd.DataFrame:
    """A MECO corpus's words (their freq, len, means) with one of our runs' surprisal (`definition`, bits) and the
    previous two words' values of surprisal, freq and len."""
    s = run[["doc_id", "word_index", f"surprisal_{definition}_bits"]].rename(
        columns={f"surprisal_{definition}_bits": "surprisal_bits"})
    w = words[words["corpus"] == corpus].merge(s, on=["doc_id", "word_index"], how="left")
    return with_previous(w, ["surprisal_bits", "unigram_surprisal_bits", "length_chars"])
