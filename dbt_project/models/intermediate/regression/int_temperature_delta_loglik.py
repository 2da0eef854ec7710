"""Temperature-scaled surprisal (Liu, Škrjanec & Demberg 2024): how well a word's surprisal under softmax(logits / T)
predicts its reading time, as a function of T. One row per (corpus, measure, temperature run, T).

Design (OLS on per-word mean reading times, int_reading_word_means): the baseline of int_delta_loglik (length, log
frequency and their product for the word and its 3 previous words, NULL across a text start) plus the word's and its
3 previous words' whitespace-trailing surprisal under T (int_temperature_word_surprisal). Every T is fitted on the
same words: those complete under every T of the run. Each held-out word's log density (Wilcox et al. 2023's
procedure: 10 folds of words from a seeded shuffle; reading_regression.lm_heldout_log_densities).

Per T:
  delta_loglik_*         surprisal under T vs the baseline: mean over words, interval mean ± 1.96 SE, sign-flip p
  vs_t1_delta_loglik_*   surprisal under T vs surprisal under T = 1 (the model's own distribution), the same way

Per (corpus, measure, run), on every row:
  best_temperature                 the T of the largest mean ΔLL
  best_temperature_ci_low / _high  the 2.5th and 97.5th percentiles of that T over BOOTSTRAP resamples of the words
  cv_gain_*                        what choosing T gains over T = 1 without choosing on the words it is scored on:
                                   the words of each fold are scored at the T that is best on the other folds'
                                   words, against T = 1 (mean over words, ± 1.96 SE). The best T's own vs_t1 gain is
                                   chosen on the words it is measured on, and so is optimistic.
"""

import numpy as np
import pandas as pd

from predictabase.stats import reading_regression as rr

COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "temperature_run_id",
    "definition",
    "temperature",
    "is_best",
    "n_words",
    "n_folds",
    "fold_seed",
    "delta_loglik_nats_per_word",
    "delta_loglik_se_nats_per_word",
    "delta_loglik_ci_low_nats_per_word",
    "delta_loglik_ci_high_nats_per_word",
    "p_value",
    "vs_t1_delta_loglik_nats_per_word",
    "vs_t1_delta_loglik_ci_low_nats_per_word",
    "vs_t1_delta_loglik_ci_high_nats_per_word",
    "vs_t1_p_value",
    "best_temperature",
    "best_temperature_ci_low",
    "best_temperature_ci_high",
    "cv_gain_nats_per_word",
    "cv_gain_ci_low_nats_per_word",
    "cv_gain_ci_high_nats_per_word",
    "mean_word_surprisal_nats",
]
TEXT = ("corpus", "measure", "model_key", "temperature_run_id", "definition")
PREV = ("", "prev1_", "prev2_", "prev3_")
SURPRISAL = [f"{p}surprisal_nats" for p in PREV]
DEFINITION = "wt"
BOOTSTRAP = 2000
BOOTSTRAP_SEED = 7


def best_of(deltas: np.ndarray) -> int:
    """The column of the largest mean (the first of ties: the lower T, the grid ascending)."""
    return int(np.argmax(deltas.mean(axis=0)))


def best_interval(deltas: np.ndarray, temperatures: np.ndarray, draws: int, seed: int) -> tuple[float, float]:
    """Percentile interval of the best T over bootstrap resamples of the words (rows of `deltas`)."""
    rng = np.random.default_rng(seed)
    n = len(deltas)
    best = np.empty(draws)
    for b in range(draws):
        best[b] = temperatures[best_of(deltas[rng.integers(0, n, n)])]
    return (  # grid values, not interpolations between them
        float(np.quantile(best, 0.025, method="inverted_cdf")),
        float(np.quantile(best, 0.975, method="inverted_cdf")),
    )


def cv_gain(deltas: np.ndarray, folds: np.ndarray, one: int) -> np.ndarray:
    """Per word: its ΔLL at the T best on the other folds' words, minus its ΔLL at T = 1."""
    gain = np.empty(len(deltas))
    for k in np.unique(folds):
        inside = folds == k
        j = best_of(deltas[~inside])
        gain[inside] = deltas[inside, j] - deltas[inside, one]
    return gain


def fit(w: pd.DataFrame, temperatures: np.ndarray, K: int, seed: int) -> list[dict]:
    """Every T's rows on the words of `w` (complete under every T; columns `<T index>:<surprisal column>`)."""
    base = rr.baseline_matrix(
        w[[f"{p}length_chars" for p in PREV]].to_numpy(float), w[[f"{p}log_frequency" for p in PREV]].to_numpy(float)
    )
    y = w["mean_rt_ms"].to_numpy(float)
    folds = rr.fold_ids(len(w), K, seed)
    ll_base = rr.lm_heldout_log_densities(y, base, folds, K)
    lls = [
        rr.lm_heldout_log_densities(y, np.column_stack([w[[f"{i}:{c}" for c in SURPRISAL]].to_numpy(float), base]),
                                    folds, K)
        for i in range(len(temperatures))
    ]  # fmt: skip
    one = int(np.flatnonzero(temperatures == 1.0)[0])
    deltas = np.column_stack([ll - ll_base for ll in lls])
    summaries = rr.word_delta_summaries([deltas[:, i] for i in range(len(temperatures))])
    vs_t1 = rr.word_delta_summaries([deltas[:, i] - deltas[:, one] for i in range(len(temperatures))])
    best = best_of(deltas)
    low, high = best_interval(deltas, temperatures, BOOTSTRAP, BOOTSTRAP_SEED)
    [gain] = rr.word_delta_summaries([cv_gain(deltas, folds, one)])
    rows = []
    for i, t in enumerate(temperatures):
        v = vs_t1[i]
        rows.append(
            {
                "temperature": float(t),
                "is_best": i == best,
                "n_folds": K,
                **summaries[i],
                "vs_t1_delta_loglik_nats_per_word": 0.0 if i == one else v["delta_loglik_nats_per_word"],
                "vs_t1_delta_loglik_ci_low_nats_per_word": 0.0 if i == one else v["delta_loglik_ci_low_nats_per_word"],
                "vs_t1_delta_loglik_ci_high_nats_per_word": 0.0
                if i == one
                else v["delta_loglik_ci_high_nats_per_word"],
                "vs_t1_p_value": None if i == one else v["p_value"],
                "best_temperature": float(temperatures[best]),
                "best_temperature_ci_low": low,
                "best_temperature_ci_high": high,
                "cv_gain_nats_per_word": gain["delta_loglik_nats_per_word"],
                "cv_gain_ci_low_nats_per_word": gain["delta_loglik_ci_low_nats_per_word"],
                "cv_gain_ci_high_nats_per_word": gain["delta_loglik_ci_high_nats_per_word"],
                "mean_word_surprisal_nats": float(w[f"{i}:surprisal_nats"].mean()),
            }
        )
    return rows


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt):
    K = int(dbt.config.get("delta_loglik_folds") or 10)
    seed = int(dbt.config.get("delta_loglik_seed") or 42)
    surprisal = dbt.ref("int_temperature_word_surprisal").df()
    rows = []
    if len(surprisal):
        words = dbt.ref("int_reading_words").df()
        means = dbt.ref("int_reading_word_means").df()
        for (corpus, run_id), s in surprisal.groupby(["corpus", "run_id"], sort=True):
            temperatures = np.sort(s["temperature"].unique())
            if 1.0 not in temperatures:
                continue
            wide = None
            for i, t in enumerate(temperatures):
                part = s[s["temperature"] == t][["doc_id", "word_index", *SURPRISAL]]
                part = part.rename(columns={c: f"{i}:{c}" for c in SURPRISAL})
                wide = part if wide is None else wide.merge(part, on=["doc_id", "word_index"])
            needed_s = [f"{i}:{c}" for i in range(len(temperatures)) for c in SURPRISAL]
            for (measure,), m in means[means["corpus"] == corpus].groupby(["measure"], sort=True):
                w = (
                    words[words["corpus"] == corpus]
                    .merge(m[["doc_id", "word_index", "mean_rt_ms"]], on=["doc_id", "word_index"])
                    .merge(wide, on=["doc_id", "word_index"])
                )
                needed = ["mean_rt_ms", *needed_s]
                needed += [f"{p}{c}" for p in PREV for c in ("length_chars", "log_frequency")]
                w = w[rr.complete_rows(w[needed].to_numpy(float))]
                w = w.sort_values(["doc_id", "word_index"], key=lambda c: c.astype(str) if c.name == "doc_id" else c)
                w = w.reset_index(drop=True)
                if len(w) < 2 * K:
                    continue
                keys = dict(
                    corpus=corpus,
                    measure=measure,
                    model_key=s["model_key"].iloc[0],
                    temperature_run_id=run_id,
                    definition=DEFINITION,
                    fold_seed=seed,
                )
                rows += [{**keys, **r} for r in fit(w, temperatures, K, seed)]
    return rr.typed_frame(rows, COLUMNS, text=TEXT, integers=("n_words", "n_folds", "fold_seed"), booleans=("is_best",))
