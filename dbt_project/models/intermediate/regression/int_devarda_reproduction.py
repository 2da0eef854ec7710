"""de Varda, Marelli & Amenta (2023)'s published UCL analyses, recomputed from their own per-word table
(stg_ucl_published_word_values: all_measures.csv) and set next to their supplementary results
(stg_ucl_published_results), one row per (table, dependent variable, predictor, statistic).

Their words (plot.py recomputes is_start_end; the shipped column marks only sentence-final words): the rows
of all_measures.csv whose word has no '.', ',' or "'" (sentence-final words, words with a comma, clitics):
1,487 of 1,726, their df_corr.csv's N; the regressions also need a SUBTLEX frequency: 1,466 words. Their
baseline (in-sample OLS, results_linear.csv): Subtlex_log10 + length + context_length and the three pairwise
interactions (Subtlex_log10 is, despite its name, ln of the SUBTLEX count; the log base does not change a
log-likelihood); each predictor (iv) is added alone; the dependent variables are their per-word means, raw
(reading times with skips counted as 0 ms, as published; EEG amplitudes). Log-likelihoods are statsmodels'
in-sample Gaussian llf (sigma^2 = SSE/n), here python/reading_regression.ols_loglik. `s_GPTNeo_large` in their
tables is the column s_GPTNeo_2.7B (renamed upstream: the dot breaks a formula).
  results_linear: llik (with the predictor) and llik_baseline, agreement to 1e-3 nats; b (the coefficient).
  df_corr: the Pearson correlation of each predictor with cloze_s (the PNC of the imported predictors, Hao et al. 2020)
    on the 1,487 words, agreement to 1e-6.
  results_crossval: their cross-validation script is not public; reconstructed (it reproduces every row):
    5 unshuffled contiguous folds over the 1,466 words in table order (294, 293, 293, 293, 293), OLS on the
    other four, each held-out word's normal log-density with mean 0 and the sd of the held-out residuals
    themselves (n - 1); ll_cv = mean over folds of the fold's summed log-likelihood, D_ll_cv = mean of the
    per-fold differences, ll_sd = sd of those differences (n) / sqrt(5); agreement to 1e-6. Their p column
    matches no test we tried (paired t or Wilcoxon over folds or words): not compared.
"""

import re

import numpy as np
import pandas as pd
from scipy import stats

from predictabase.stats import reading_regression as rr

COLUMNS = [
    "study",
    "published_table",
    "corpus",
    "measure",
    "predictor",
    "definition",
    "statistic",
    "ours",
    "published",
    "abs_difference",
    "tolerance",
    "agrees",
    "n_rows",
    "note",
]
ALIASES = {"s_GPTNeo_large": "s_GPTNeo_2.7B"}
PUNCTUATION = re.compile(r"[.,']")
STUDY = "de Varda et al. 2023"


def their_words(values: pd.DataFrame, need_frequency: bool = True) -> pd.DataFrame:
    """all_measures.csv wide, restricted to their analysis words (with a SUBTLEX frequency for the regressions)."""
    keys = values[["row_number", "doc_id", "word_index", "word"]].drop_duplicates("row_number").set_index("row_number")
    wide = keys.join(values.pivot(index="row_number", columns="column_name", values="value")).reset_index()
    wide = wide.sort_values("row_number")  # the file's order: their cross-validation folds are contiguous blocks of it
    wide["context_length"] = wide["word_index"].astype(float)  # their context_length is the word's index (ingest key)
    keep = ~wide["word"].str.contains(PUNCTUATION)
    if need_frequency:
        keep &= wide["Subtlex_log10"].notna()
    return wide[keep].reset_index(drop=True)


def baseline(d: pd.DataFrame) -> np.ndarray:
    f, l, k = (d[c].to_numpy(float) for c in ("Subtlex_log10", "length", "context_length"))
    return np.column_stack([f, l, k, f * l, f * k, l * k])


def row(table, dv, iv, statistic, ours, published, tolerance, n, note=""):
    diff = abs(ours - published) if np.isfinite(ours) and np.isfinite(published) else np.nan
    return dict(
        study=STUDY,
        published_table=f"supplementary_materials/{table}.csv",
        corpus="ucl",
        measure=dv,
        predictor=iv,
        definition="lw" if iv.startswith("s_") else None,
        statistic=statistic,
        ours=float(ours),
        published=float(published),
        abs_difference=diff,
        tolerance=tolerance,
        agrees=bool(diff <= tolerance) if np.isfinite(diff) else False,
        n_rows=int(n),
        note=note,
    )


def linear(d: pd.DataFrame, res: pd.DataFrame) -> list[dict]:
    out, base_ll = [], {}
    Xb = baseline(d)
    for (dv, iv), g in res[res["table_name"] == "results_linear"].groupby(["row_label", "column_label"], sort=True):
        pub = dict(zip(g["statistic"], g["value"]))
        col = ALIASES.get(iv, iv)
        ok = rr.complete_rows(d[dv].to_numpy(float), d[col].to_numpy(float), Xb)
        y = d[dv].to_numpy(float)[ok]
        key = (dv, ok.tobytes())
        if key not in base_ll:
            base_ll[key] = rr.ols_loglik(y, Xb[ok])[0]
        ll_b = base_ll[key]
        ll_f, beta = rr.ols_loglik(y, np.column_stack([Xb[ok], d[col].to_numpy(float)[ok]]))
        note = "in-sample OLS on their baseline + the predictor; statsmodels' llf"
        out += [
            row("results_linear", dv, iv, "llik", ll_f, pub["llik"], 1e-3, ok.sum(), note),
            row("results_linear", dv, iv, "llik_baseline", ll_b, pub["llik_baseline"], 1e-3, ok.sum(), note),
            row("results_linear", dv, iv, "b", beta[-1], pub["b"], 1e-6 * max(1.0, abs(pub["b"])), ok.sum(), note),
        ]
    return out


def correlations(d: pd.DataFrame, res: pd.DataFrame) -> list[dict]:
    out = []
    corr = res[(res["table_name"] == "df_corr") & (res["row_label"] == "cloze_s")]
    for iv, pub in zip(corr["column_label"], corr["value"]):
        col = ALIASES.get(iv, iv)
        if col == "cloze_s" or col not in d:
            continue
        x, y = d[col].to_numpy(float), d["cloze_s"].to_numpy(float)
        ok = rr.complete_rows(x, y)
        r = float(np.corrcoef(x[ok], y[ok])[0, 1])
        out.append(
            row(
                "df_corr",
                "cloze_s",
                iv,
                "pearson_r_with_cloze_surprisal",
                r,
                pub,
                1e-6,
                ok.sum(),
                "Pearson r with cloze_s on their words (PNC of the predictor)",
            )
        )
    return out


def _heldout_folds(X: np.ndarray, y: np.ndarray, folds: int) -> list[float]:
    """Per contiguous fold: the summed normal log-density of the held-out residuals, sd of those residuals."""
    out = []
    for te in np.array_split(np.arange(len(y)), folds):
        tr = np.ones(len(y), dtype=bool)
        tr[te] = False
        beta = np.linalg.lstsq(X[tr], y[tr], rcond=None)[0]
        e = y[te] - X[te] @ beta
        out.append(float(stats.norm.logpdf(e, 0, e.std(ddof=1)).sum()))
    return out


def crossval(d: pd.DataFrame, res: pd.DataFrame, folds: int = 5) -> list[dict]:
    out, base_cv = [], {}
    Xb = rr.with_intercept(baseline(d))
    for (dv, iv), g in res[res["table_name"] == "results_crossval"].groupby(["row_label", "column_label"], sort=True):
        pub = dict(zip(g["statistic"], g["value"]))
        col = ALIASES.get(iv, iv)
        ok = rr.complete_rows(d[dv].to_numpy(float), d[col].to_numpy(float))
        y = d[dv].to_numpy(float)[ok]
        Xf = np.column_stack([Xb[ok], d[col].to_numpy(float)[ok]])
        key = (dv, ok.tobytes())
        if key not in base_cv:
            base_cv[key] = _heldout_folds(Xb[ok], y, folds)
        per_fold = {"model": _heldout_folds(Xf, y, folds), "baseline": base_cv[key]}
        diff = np.array(per_fold["model"]) - np.array(per_fold["baseline"])
        note = "5 unshuffled folds, held-out residual sd (reconstructed; see int_devarda_reproduction)"
        n = ok.sum()
        out += [
            row("results_crossval", dv, iv, "D_ll_cv", diff.mean(), pub["D_ll_cv"], 1e-6, n, note),
            row(
                "results_crossval", dv, iv, "ll_cv_model", np.mean(per_fold["model"]), pub["ll_cv_model"], 1e-6, n, note
            ),
            row("results_crossval", dv, iv, "ll_sd", diff.std(ddof=0) / np.sqrt(folds), pub["ll_sd"], 1e-6, n, note),
        ]
    return out


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt, session)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt, session):
    values = dbt.ref("stg_ucl_published_word_values").df()
    res = dbt.ref("stg_ucl_published_results").df()
    rows = []
    if not values.empty and not res.empty:
        d = their_words(values)
        rows = linear(d, res) + correlations(their_words(values, need_frequency=False), res) + crossval(d, res)
    return rr.typed_frame(
        rows,
        COLUMNS,
        text=("study", "published_table", "corpus", "measure", "predictor", "definition", "statistic", "note"),
        integers=("n_rows",),
        booleans=("agrees",),
    )
