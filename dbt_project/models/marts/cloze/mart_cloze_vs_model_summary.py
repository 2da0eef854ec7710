"""Humans vs models, next word, per (corpus, model): the mean of each per-context measure of
mart_cloze_vs_model with a 95% percentile bootstrap interval over contexts (Efron & Tibshirani 1993:
B = var bootstrap_replicates resamples of the contexts with replacement, fixed seed; the interval is the
2.5th and 97.5th percentiles of the B resampled means; a context where a measure is NULL, e.g. Spearman's
rho with fewer than 3 response types, is left out of that measure's mean). Columns per measure: <m>_mean,
<m>_ci_low, <m>_ci_high, and n_<m> (contexts with a value)."""

import numpy as np
import pandas as pd

SEED = 20261124
MEASURES = [
    "model_probability_modal_wt",
    "model_probability_modal_lw",
    "human_probability_modal",
    "model_probability_true_word_wt",
    "human_probability_true_word",
    "model_top_is_human_modal",
    "human_entropy_bits",
    "model_entropy_renormalised_bits",
    "spearman_rho",
    "kl_human_model_bits",
    "js_divergence_bits",
    "model_mass_on_responses_wt",
]


def columns():
    cols = ["corpus", "model_key", "n_contexts"]
    for m in MEASURES:
        cols += [f"{m}_mean", f"{m}_ci_low", f"{m}_ci_high", f"n_{m}"]
    return cols + ["bootstrap_replicates", "bootstrap_seed"]


def model(dbt, session):
    B = int(dbt.config.get("bootstrap_replicates") or 1000)
    ctx = dbt.ref("mart_cloze_vs_model").df()
    if ctx.empty:
        return pd.DataFrame(
            {c: pd.Series(dtype="object" if c in ("corpus", "model_key") else "float64") for c in columns()}
        )
    rows = []
    for (corpus, model_key), g in ctx.sort_values(["corpus", "model_key", "doc_id", "word_index"]).groupby(
        ["corpus", "model_key"], sort=True
    ):
        n = len(g)
        rng = np.random.default_rng(SEED)
        idx = rng.integers(0, n, size=(B, n))
        row = {"corpus": corpus, "model_key": model_key, "n_contexts": n}
        for m in MEASURES:
            x = g[m].astype("float64").to_numpy()
            ok = ~np.isnan(x)
            row[f"n_{m}"] = int(ok.sum())
            if not ok.any():
                row[f"{m}_mean"] = row[f"{m}_ci_low"] = row[f"{m}_ci_high"] = np.nan
                continue
            vals = np.where(ok, x, 0.0)[idx]
            cnt = ok[idx].sum(axis=1)
            means = np.where(cnt > 0, vals.sum(axis=1) / np.maximum(cnt, 1), np.nan)
            row[f"{m}_mean"] = float(x[ok].mean())
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = (float(v) for v in np.nanpercentile(means, [2.5, 97.5]))
        row["bootstrap_replicates"] = B
        row["bootstrap_seed"] = SEED
        rows.append(row)
    return pd.DataFrame(rows, columns=columns())
