"""Pimentel & Meister's (2024) delta log-likelihoods, recomputed by our cv_means code on their own merged inputs
(stg_pimentel_meister_words: their per-word reading times, word length, their unigram log frequency `freq`, and
their WT / LW surprisals with the previous words' values as they merged them), per (corpus, model, definition).

Their procedure (SOURCES.md; their R code src/h02_rt_model/): OLS on per-word means; baseline
word_len * freq + prev_freq * prev_word_len + prev2_freq * prev2_word_len + prev3_freq * prev3_word_len
(main effects and interactions); the full model adds surprisal + prev_surprisal + prev2_surprisal +
prev3_surprisal (WT: their 'surprisal'; LW: 'surprisal_buggy'); rows with any missing value dropped (the same
rows for both models); 10 folds; sigma^2 from the training residuals; ΔLL = mean over folds of the held-out
log-likelihood per word. Their folds: `set.seed(42); df <- df[sample(nrow(df)),]` over all rows of the file,
then `na.omit` over every column, then `cut(seq(1, n), breaks = 10)` -- replayed exactly with R's own random
numbers (python/r_rng.py), so every fold, and so the published ΔLL, is reproduced (delta_loglik_nats_per_word,
fold_max_abs_difference_nats_per_word). How much the choice of shuffle alone moves the result is measured too:
the same CV under var delta_loglik_spread_seeds numpy shuffles (seeds 1..S), as mean, sd, min and max.
"""

import numpy as np

from predictabase.stats import r_rng
from predictabase.stats import reading_regression as rr

COLUMNS = [
    "corpus",
    "model_key",
    "upstream_model",
    "definition",
    "n_words",
    "fold_seed",
    "delta_loglik_nats_per_word",
    "fold_delta_nats_per_word",
    "p_value",
    "spread_seeds",
    "seeds_mean_nats_per_word",
    "seeds_sd_nats_per_word",
    "seeds_min_nats_per_word",
    "seeds_max_nats_per_word",
]
PREV = ("", "prev1_", "prev2_", "prev3_")


NUMERIC = [
    "time_ms",
    "skip_rate",
    "n_readers",
    "word_length_chars",
    "log_frequency_published",
    "surprisal_wt_nats",
    "surprisal_lw_nats",
] + [
    f"prev{k}_{c}"
    for k in (1, 2, 3)
    for c in ("surprisal_wt_nats", "surprisal_lw_nats", "log_frequency_published", "word_length_chars")
]


def kept_rows(g) -> np.ndarray:
    """R's na.omit over the file's numeric columns (a column absent from the corpus's files is all NULL here)."""
    cols = [c for c in NUMERIC if g[c].notna().any()]
    return rr.complete_rows(g[cols].to_numpy(float))


def design(g, definition: str, keep: np.ndarray):
    length = g[[f"{p}word_length_chars" for p in PREV]].to_numpy(float)[keep]
    freq = g[["log_frequency_published"] + [f"{p}log_frequency_published" for p in PREV[1:]]].to_numpy(float)[keep]
    surp = g[[f"{p}surprisal_{definition}_nats" for p in PREV]].to_numpy(float)[keep]
    return g["time_ms"].to_numpy(float)[keep], rr.baseline_matrix(length, freq), surp


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt, session)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt, session):
    K = int(dbt.config.get("delta_loglik_folds") or 10)
    seed = int(dbt.config.get("delta_loglik_seed") or 42)
    S = int(dbt.config.get("delta_loglik_spread_seeds") or 20)
    words = dbt.ref("stg_pimentel_meister_words").df().sort_values(["corpus", "model_key", "text_id", "word_id"])
    rows = []
    for (corpus, model_key, upstream), g in words.groupby(["corpus", "model_key", "upstream_model"], sort=True):
        keep = kept_rows(g)
        r_folds = r_rng.r_folds(keep, seed, K) - 1  # their folds, replayed (rows in file order)
        for definition in ("wt", "lw"):
            y, Xb, Xs = design(g, definition, keep)
            res = rr.cv_delta_loglik(y, Xb, Xs, r_folds, K)
            spread = np.array(
                [
                    rr.cv_delta_loglik(y, Xb, Xs, rr.fold_ids(len(y), K, s), K)["delta_loglik_nats_per_row"]
                    for s in range(1, S + 1)
                ]
            )
            rows.append(
                dict(
                    corpus=corpus,
                    model_key=model_key,
                    upstream_model=upstream,
                    definition=definition,
                    n_words=len(y),
                    fold_seed=seed,
                    delta_loglik_nats_per_word=res["delta_loglik_nats_per_row"],
                    fold_delta_nats_per_word=[float(v) for v in res["fold_delta_nats_per_row"]],
                    p_value=res["p_value"],
                    spread_seeds=S,
                    seeds_mean_nats_per_word=float(spread.mean()),
                    seeds_sd_nats_per_word=float(spread.std(ddof=1)),
                    seeds_min_nats_per_word=float(spread.min()),
                    seeds_max_nats_per_word=float(spread.max()),
                )
            )
    return rr.typed_frame(
        rows,
        COLUMNS,
        text=("corpus", "model_key", "upstream_model", "definition"),
        integers=("n_words", "fold_seed", "spread_seeds"),
        lists=("fold_delta_nats_per_word",),
    )
