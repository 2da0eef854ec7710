"""Delta log-likelihood of MECO's eye-tracking means in 11 languages as Wilcox, Meister, Cotterell & Pimentel
(2023) compute it (xlang-processing analysis/analysis_surp.Rmd), one row per (corpus, measure, model, definition).

Their procedure, replayed on their own rows (stg_wilcox_xlang_words: their four models' surprisal, their `freq`
and `len`, the previous words' values as they merged them):
  1. a language's file: keep rows with freq, prev_freq and prev2_freq > 0 and finite (R's filter drops NA);
  2. per model, drop every row with any missing column (tidyr's drop_na over the whole row: the entropies and all
     three measures included, so the same rows serve every measure); the means' 0s (a word no reader fixated)
     stay 0 ms, as in their data;
  3. per measure: OLS `rt ~ surp + prev_surp + prev2_surp + freq + len + prev_freq + prev_len + prev2_freq +
     prev2_len` against the baseline `rt ~ freq + len + prev_freq + prev_len + prev2_freq + prev2_len`, 10 folds
     unshuffled, R's `cut(seq(1, n), breaks = 10)` over the rows in file order; each held-out word's log density
     with the training fit's residual standard error (sigma(), n - p degrees of freedom);
  4. ΔLL = the mean over words of (target - baseline) log density, nats per word; the interval mean ± 1.96 SE,
     SE = sd / sqrt(n) over words. Their p-value (500 random permutations) is not replayed: ours is a seeded
     sign-flip test over the words (reading_regression.word_delta_summary).
  tests/test_xlang.py runs the same steps in R (tests/r/wilcox_dll.R) and requires every ΔLL equal to 1e-9.

The same procedure with our models' surprisal (run_source 'scored', definitions lw and wt, bits): on the same
language's words (their freq, len and means; every model's rows agree on them), the previous words' values taken
from the text's previous words, the rows kept by steps 1-2 over the columns the fits read; so theirs and ours
differ only in where the surprisal comes from.
"""

import numpy as np
import pandas as pd

from predictabase.stats import r_rng
from predictabase.stats import reading_regression as rr
from predictabase.stats.xlang_design import (
    first_token_entropy,
    frequency_filter,
    measure_columns,
    our_surprisal_words,
    our_words,
    scored_runs,
)

COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "run_id",
    "run_source",
    "definition",
    "comparison",
    "method",
    "n_words",
    "n_folds",
    "delta_loglik_nats_per_word",
    "delta_loglik_se_nats_per_word",
    "delta_loglik_ci_low_nats_per_word",
    "delta_loglik_ci_high_nats_per_word",
    "p_value",
    "fold_delta_nats_per_word",
]
TEXT = ("corpus", "measure", "model_key", "run_id", "run_source", "definition", "comparison", "method")
METHOD = "wilcox_2023"
BASE = [
    "unigram_surprisal_bits",
    "length_chars",
    "prev1_unigram_surprisal_bits",
    "prev1_length_chars",
    "prev2_unigram_surprisal_bits",
    "prev2_length_chars",
]
SURP = ["surprisal_bits", "prev1_surprisal_bits", "prev2_surprisal_bits"]
ENT = ["entropy_bits", "prev1_entropy_bits", "prev2_entropy_bits"]
#: comparison -> (the target's predictors, the reference's), each with BASE (their analysis_surp.Rmd and
#: analysis_ent.Rmd: "add" and "replace" are compared with the surprisal model, not with the baseline)
COMPARISONS = {"surprisal": (SURP, []), "entropy_added": (ENT + SURP, SURP), "entropy_replaces": (ENT, SURP)}
#: every column of their rows that drop_na sees (besides the keys, never missing)
THEIR_COLUMNS = [
    *SURP,
    *BASE,
    "entropy_bits",
    "prev1_entropy_bits",
    "prev2_entropy_bits",
    "model_word",
    "mismatch",
    "word",
]  # and the means (measure_columns)
K = 10


def complete(g: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Step 2: no missing value (NULL or NaN) in any of `columns`."""
    return g[columns].notna().all(axis=1).to_numpy()  # pandas: NaN is missing too, as R's is.na


def fits(
    rows: pd.DataFrame, measures: dict[str, str], comparisons: tuple[str, ...] = ("surprisal",), **keys
) -> list[dict]:
    """Steps 3-4 for every measure and comparison over `rows` (kept rows, in file order)."""
    n = len(rows)
    if n < K:
        return []
    folds = r_rng.r_cut_folds(n, K) - 1
    Xb = rows[BASE].to_numpy(float)
    Y = rows[list(measures)].to_numpy(float)  # every measure's reading times: the same rows, one fit per design
    ll = {}  # predictors -> held-out log densities (n, measures); the surprisal model serves three comparisons

    def heldout(extra: list[str]) -> np.ndarray:
        if tuple(extra) not in ll:
            X = np.column_stack([rows[extra].to_numpy(float), Xb]) if extra else Xb
            ll[tuple(extra)] = rr.lm_heldout_log_densities(Y, X, folds, K)
        return ll[tuple(extra)]

    out, deltas = [], []
    for j, measure in enumerate(measures.values()):
        for comparison in comparisons:
            target, reference = COMPARISONS[comparison]
            delta = heldout(target)[:, j] - heldout(reference)[:, j]
            deltas.append(delta)
            out.append(
                {
                    **keys,
                    "measure": measure,
                    "comparison": comparison,
                    "method": METHOD,
                    "n_folds": K,
                    "fold_delta_nats_per_word": [float(delta[folds == f].mean()) for f in range(K)],
                }
            )
    # the summaries' sign patterns are drawn once for all of them (the same words, the same seed)
    return [{**row, **s} for row, s in zip(out, rr.word_delta_summaries(deltas))]


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt):
    theirs = dbt.ref("stg_wilcox_xlang_words").df()
    measures = measure_columns(theirs)
    rows = []
    for (corpus, model_key), g in theirs.groupby(["corpus", "model_key"], sort=True):
        g = g.sort_values("file_row")
        g = g[frequency_filter(g)]
        g = g[complete(g, [*THEIR_COLUMNS, *measures])]
        rows += fits(
            g,
            measures,
            tuple(COMPARISONS),
            corpus=corpus,
            model_key=model_key,
            run_id=f"wilcox-xlang:{model_key}",
            run_source="imported_words",
            definition="as given",
        )
    corpora = sorted(theirs["corpus"].unique())
    if corpora:
        words = our_words(theirs, measures)
        ours = scored_runs(dbt.ref("int_word_surprisal_runs"), corpora)
        entropy = first_token_entropy(dbt.ref("int_word_surprisal"), dbt.ref("int_token_scores"), corpora)
        ours = ours.merge(entropy, on=["run_id", "corpus", "doc_id", "word_index"], how="left")
        for (corpus, model_key, run_id), r in ours.groupby(["corpus", "model_key", "run_id"], sort=True):
            for definition in ("lw", "wt"):
                w = our_surprisal_words(words, r, corpus, definition, extra=["entropy_bits"])
                w = w[frequency_filter(w)]
                keys = dict(
                    corpus=corpus, model_key=model_key, run_id=run_id, run_source="scored", definition=definition
                )
                rows += fits(w[complete(w, [*SURP, *BASE, *measures])], measures, **keys)
                # the anticipation comparisons on the words that have every value of both models
                rows += fits(
                    w[complete(w, [*SURP, *ENT, *BASE, *measures])],
                    measures,
                    ("entropy_added", "entropy_replaces"),
                    **keys,
                )
    return rr.typed_frame(
        rows, COLUMNS, text=TEXT, integers=("n_words", "n_folds"), lists=("fold_delta_nats_per_word",)
    )
