"""Delta log-likelihood of reading times per (corpus, measure, run, definition, method): how much a model's
surprisal improves a regression of reading times over a baseline without it (Hao et al. 2020, sec. 3.2; Goodkind &
Bicknell 2018; Wilcox et al. 2020, 2023; Pimentel & Meister 2024). Statistics in python/reading_regression.py.

Baseline predictors (int_reading_words): word length, log frequency and their product for the word and each of
its 3 previous words (spillover; NULL across a text start, so a text's first 3 words drop out). The target model
adds the surprisal of the word and of its 3 previous words (int_reading_surprisal, nats). Rows with any missing
value are dropped, the same rows for baseline and target.

Methods:
  cv_means  OLS on per-word mean reading times (int_reading_word_means); 10 folds of words from a seeded
            shuffle (var delta_loglik_seed); sigma^2 from the training residuals (SSE/n); ΔLL = mean over folds
            of the held-out log-likelihood per word (full - baseline), nats/word; also the total over words.
  readers   per-reader rows (int_reading_observations) with a by-reader intercept by within-reader centring
            (the fixed-effects estimator of the random intercept; with hundreds of rows per reader the two
            agree, and it is exact and fast where statsmodels MixedLM on ~10^6 rows is not); folds of WORDS (all
            readers of a held-out word held out), the same fold of each word as in cv_means; ΔLL per reading.

Every (corpus, measure) of int_reading_word_means is fitted the same way, shipped corpora and the user's alike
(no corpus-specific code): cv_means always, readers where the corpus has per-reader rows for the measure (a user
corpus that gave only per-word means has cv_means rows only).

Folds are assigned per word of (corpus, measure), not per row of a run, so every run and both definitions of
a run share the folds: the WT - LW comparison (mart_delta_loglik_wt_vs_lw) is paired fold by fold.
Uncertainty: the standard error over the folds (sd / sqrt(K)), a t interval with K - 1 degrees of freedom and
a two-sided exact sign-flip permutation p-value over the K fold differences.
"""

import numpy as np
import pandas as pd
from scipy import stats

from predictabase.stats import reading_regression as rr

COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "run_id",
    "run_source",
    "definition",
    "method",
    "n_words",
    "n_rows",
    "n_readers",
    "n_folds",
    "fold_seed",
    "delta_loglik_nats_per_row",
    "delta_loglik_se_nats_per_row",
    "delta_loglik_ci_low_nats_per_row",
    "delta_loglik_ci_high_nats_per_row",
    "delta_loglik_total_nats",
    "p_value",
    "loglik_baseline_nats",
    "loglik_full_nats",
    "sum_surprisal_nats",
    "fold_delta_nats_per_row",
]
PREV = ("", "prev1_", "prev2_", "prev3_")


def _word_keys(df: pd.DataFrame) -> pd.Series:
    return df["doc_id"].astype(str) + "/" + df["word_index"].astype(str)


def _sql_string(value: str) -> str:
    """A SQL string literal (a user's corpus name may hold a quote)."""
    return "'" + value.replace("'", "''") + "'"


def _summary_row(res: dict, **keys) -> dict:
    K = res["n_folds"]
    half = stats.t.ppf(0.975, K - 1) * res["delta_loglik_se_nats_per_row"]
    return {
        **keys,
        "n_rows": res["n_rows"],
        "n_folds": K,
        "delta_loglik_nats_per_row": res["delta_loglik_nats_per_row"],
        "delta_loglik_se_nats_per_row": res["delta_loglik_se_nats_per_row"],
        "delta_loglik_ci_low_nats_per_row": res["delta_loglik_nats_per_row"] - half,
        "delta_loglik_ci_high_nats_per_row": res["delta_loglik_nats_per_row"] + half,
        "delta_loglik_total_nats": res["delta_loglik_total_nats"],
        "p_value": res["p_value"],
        "loglik_baseline_nats": res["loglik_baseline_nats"],
        "loglik_full_nats": res["loglik_full_nats"],
        "fold_delta_nats_per_row": [float(v) for v in res["fold_delta_nats_per_row"]],
    }


def fit_corpus_measure(
    words: pd.DataFrame, means: pd.DataFrame, obs: pd.DataFrame | None, surprisal: pd.DataFrame, K: int, seed: int
) -> list[dict]:
    """Every (run, definition) of one (corpus, measure): cv_means, and readers when `obs` is given."""
    base_cols = [f"{p}length_chars" for p in PREV] + [f"{p}log_frequency" for p in PREV]
    w = words.merge(means, on=["doc_id", "word_index"], how="inner")
    w = w[rr.complete_rows(w[base_cols].to_numpy(float), w["mean_rt_ms"].to_numpy(float))]
    w = w.sort_values(["doc_id", "word_index"], key=lambda c: c.astype(str) if c.name == "doc_id" else c)
    w = w.reset_index(drop=True)
    if len(w) < K:
        return []
    w["key"] = _word_keys(w)
    w["fold"] = rr.fold_ids(len(w), K, seed)
    length = w[[f"{p}length_chars" for p in PREV]].to_numpy(float)
    freq = w[[f"{p}log_frequency" for p in PREV]].to_numpy(float)
    X_base_all = rr.baseline_matrix(length, freq)
    y_all = w["mean_rt_ms"].to_numpy(float)
    pos_of = pd.Series(np.arange(len(w)), index=w["key"])
    if obs is not None and len(obs):
        o_pos = pos_of.reindex(_word_keys(obs)).to_numpy()
        keep = ~np.isnan(o_pos)
        o_pos = o_pos[keep].astype(np.int64)
        o_y = obs["rt_ms"].to_numpy(float)[keep]
        o_reader = pd.factorize(obs["reader_id"].to_numpy()[keep])[0]
    rows, sums_cache = [], {}
    s_cols = ["surprisal_nats", "prev1_surprisal_nats", "prev2_surprisal_nats", "prev3_surprisal_nats"]
    for (run_id, definition), s in surprisal.groupby(["run_id", "definition"], sort=True):
        S = np.full((len(w), 4), np.nan)
        p = pos_of.reindex(_word_keys(s)).to_numpy()
        ok = ~np.isnan(p)
        S[p[ok].astype(np.int64)] = s[s_cols].to_numpy(float)[ok]
        mask = rr.complete_rows(S)
        if mask.sum() < 2 * K:
            continue
        keys = dict(
            model_key=s["model_key"].iloc[0],
            run_id=run_id,
            run_source=s["run_source"].iloc[0],
            definition=definition,
            fold_seed=seed,
            n_words=int(mask.sum()),
            sum_surprisal_nats=float(S[mask, 0].sum()),
        )
        folds = w["fold"].to_numpy()[mask]
        res = rr.cv_delta_loglik(y_all[mask], X_base_all[mask], S[mask], folds, K)
        rows.append(_summary_row(res, method="cv_means", n_readers=None, **keys))
        if obs is None or not len(obs):
            continue
        key = mask.tobytes()  # most runs share their rows: the readings' sums are computed once per row set
        if key not in sums_cache:
            o_mask = mask[o_pos]
            word = (np.cumsum(mask) - 1)[o_pos[o_mask]]  # word position among the run's complete words
            reader = pd.factorize(o_reader[o_mask])[0]
            sums_cache = {
                key: (rr.readers_sums(o_y[o_mask], reader, word, folds, int(mask.sum()), K), int(o_mask.sum()))
            }
        sums, n_obs = sums_cache[key]
        res = rr.cv_delta_loglik_from_sums(sums, X_base_all[mask], S[mask], folds, K)
        rows.append(_summary_row(res, method="readers", n_readers=sums["R"], **keys))
    return rows


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt, session)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt, session):
    K = int(dbt.config.get("delta_loglik_folds") or 10)
    seed = int(dbt.config.get("delta_loglik_seed") or 42)
    words = dbt.ref("int_reading_words").df()
    means = dbt.ref("int_reading_word_means").df()
    surprisal = dbt.ref("int_reading_surprisal").df()
    obs_rel = dbt.ref("int_reading_observations")
    rows = []
    for (corpus, measure), m in means.groupby(["corpus", "measure"], sort=True):
        # in a fixed order: the per-(fold, reader) sums add the readings in this order, and a scan's order varies
        # from build to build (the last bits of the sums, and of a WT - LW difference's t, would follow it)
        obs = (
            obs_rel.filter(f"corpus = {_sql_string(corpus)} and measure = {_sql_string(measure)}")
            .project("reader_id, doc_id, word_index, rt_ms")
            .order("reader_id, doc_id, word_index, rt_ms")
            .df()
        )
        rows += [
            {"corpus": corpus, "measure": measure, **r}
            for r in fit_corpus_measure(
                words[words["corpus"] == corpus],
                m.drop(columns=["corpus", "measure"]),
                obs,
                surprisal[surprisal["corpus"] == corpus],
                K,
                seed,
            )
        ]
    return rr.typed_frame(
        rows,
        COLUMNS,
        text=("corpus", "measure", "model_key", "run_id", "run_source", "definition", "method"),
        integers=("n_words", "n_rows", "n_readers", "n_folds", "fold_seed"),
        lists=("fold_delta_nats_per_row",),
    )
