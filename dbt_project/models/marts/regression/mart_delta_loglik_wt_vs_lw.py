"""Oh & Schuler's (2024) experiment on naturalistic reading, per (corpus, measure, run, method): ΔLL(WT) - ΔLL(LW), the
change in how well surprisal explains reading times when word probabilities are computed whitespace-trailing
(Oh & Schuler 2024, eqs. 5-6) instead of leading-whitespace. Both come from int_delta_loglik on the same folds (folds are
assigned per word), so the difference is paired fold by fold: its mean over the K folds (nats per row), the
standard error over folds, a t interval with K - 1 degrees of freedom, and the two-sided exact sign-flip
permutation p-value over the K fold differences (python/reading_regression.py). For the `lmer` method (one fit
on half of the observations, no folds) the difference of the two fits' ΔLL, without a test."""

import numpy as np
from scipy import stats

from predictabase.stats import reading_regression as rr

COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "run_id",
    "run_source",
    "method",
    "n_rows_wt",
    "n_rows_lw",
    "same_rows",
    "delta_loglik_wt_nats_per_row",
    "delta_loglik_lw_nats_per_row",
    "wt_minus_lw_nats_per_row",
    "wt_minus_lw_se_nats_per_row",
    "wt_minus_lw_ci_low_nats_per_row",
    "wt_minus_lw_ci_high_nats_per_row",
    "wt_minus_lw_total_nats",
    "p_value",
    "wt_fits_better",
]


def model(dbt, session):
    d = dbt.ref("int_delta_loglik_fits").df()
    d = d[d["status"] == "ok"]
    rows = []
    for keys, g in d.groupby(["corpus", "measure", "model_key", "run_id", "run_source", "method"], sort=True):
        if set(g["definition"]) != {"wt", "lw"}:
            continue
        wt, lw = (g[g["definition"] == x].iloc[0] for x in ("wt", "lw"))
        diff = wt["delta_loglik_nats_per_row"] - lw["delta_loglik_nats_per_row"]
        row = dict(
            zip(["corpus", "measure", "model_key", "run_id", "run_source", "method"], keys),
            n_rows_wt=int(wt["n_rows"]),
            n_rows_lw=int(lw["n_rows"]),
            same_rows=bool(wt["n_rows"] == lw["n_rows"]),
            delta_loglik_wt_nats_per_row=wt["delta_loglik_nats_per_row"],
            delta_loglik_lw_nats_per_row=lw["delta_loglik_nats_per_row"],
            wt_minus_lw_nats_per_row=diff,
            wt_minus_lw_total_nats=wt["delta_loglik_total_nats"] - lw["delta_loglik_total_nats"],
            wt_minus_lw_se_nats_per_row=np.nan,
            wt_minus_lw_ci_low_nats_per_row=np.nan,
            wt_minus_lw_ci_high_nats_per_row=np.nan,
            p_value=np.nan,
            wt_fits_better=bool(diff > 0),
        )
        fw, fl = wt["fold_delta_nats_per_row"], lw["fold_delta_nats_per_row"]
        has_folds = all(hasattr(f, "__len__") and not isinstance(f, str) for f in (fw, fl))  # lmer: no folds (NULL)
        if has_folds and len(fw) == len(fl) and len(fw) > 1:
            f = np.asarray(fw, float) - np.asarray(fl, float)
            se = f.std(ddof=1) / np.sqrt(len(f))
            half = stats.t.ppf(0.975, len(f) - 1) * se
            row.update(
                wt_minus_lw_nats_per_row=float(f.mean()),
                wt_minus_lw_se_nats_per_row=float(se),
                wt_minus_lw_ci_low_nats_per_row=float(f.mean() - half),
                wt_minus_lw_ci_high_nats_per_row=float(f.mean() + half),
                p_value=rr.sign_flip_p(f),
            )
        rows.append(row)
    return rr.typed_frame(
        rows,
        COLUMNS,
        text=("corpus", "measure", "model_key", "run_id", "run_source", "method"),
        integers=("n_rows_wt", "n_rows_lw"),
        booleans=("same_rows", "wt_fits_better"),
    )
