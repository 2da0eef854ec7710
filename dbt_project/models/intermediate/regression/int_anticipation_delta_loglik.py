"""Anticipation: does a word's entropy predict its reading time beyond, or instead of, its surprisal? One row per
(corpus, measure, entropy run, surprisal run, comparison), for every corpus word the `entropy` step estimated.

Three entropies of the word w_t after its context (stg_word_entropy, nats):
  first_token  the next-token entropy at the word's first token, the usual stand-in;
  mc           the word's own entropy, by Monte Carlo over whole words (Clark, Oh & Schuler 2025), WT;
  renyi        the Rényi entropy of the word of order alpha (Pimentel et al. 2023: 1/2), by the same samples.

Designs (OLS on per-word mean reading times, int_reading_word_means, the rows every design can use): the
baseline of int_delta_loglik (length, log frequency and their product for the word and its 3 previous words, NULL
across a text start) plus the word's and its 3 previous words' WT surprisal (int_reading_surprisal) and / or
entropy. Each held-out word's log density (Wilcox et al. 2023's procedure: 10 folds of words from a seeded
shuffle, the training fit's residual standard error with n - p degrees of freedom; reading_regression.
lm_heldout_log_densities); a comparison's ΔLL is the mean over words of (target - reference), nats per word, with
the interval mean ± 1.96 SE and a sign-flip p-value (reading_regression.word_delta_summaries):

  surprisal                          surprisal vs the baseline
  <entropy>_added                    surprisal + entropy vs surprisal (Pimentel et al. 2023's "in addition")
  <entropy>_replaces                 entropy vs surprisal (negative: the entropy predicts less than surprisal)
  mc_vs_first_token                  surprisal + MC entropy vs surprisal + first-token entropy: does the word's
                                     entropy say more than its stand-in?

With each row, the entropies' means over the words fitted, and the share of words whose MC entropy lies more than
2 standard errors below (a) their first-token entropy and (b) the entropy of their first token drawn as a word's
first token (word-initial, renormalised by the boundary's probability): (b) is a lower bound on the word's entropy
(the word fixes its first token), so its share measures the estimator's noise; (a) is not a bound, since it also
spreads over tokens that continue the previous word (punctuation).
"""

import numpy as np
import pandas as pd

from predictabase.stats import reading_regression as rr

COLUMNS = [
    "corpus",
    "measure",
    "model_key",
    "entropy_run_id",
    "surprisal_run_id",
    "definition",
    "comparison",
    "n_samples",
    "renyi_alpha",
    "n_words",
    "n_folds",
    "fold_seed",
    "delta_loglik_nats_per_word",
    "delta_loglik_se_nats_per_word",
    "delta_loglik_ci_low_nats_per_word",
    "delta_loglik_ci_high_nats_per_word",
    "p_value",
    "mean_first_token_entropy_nats",
    "mean_mc_entropy_nats",
    "mean_renyi_entropy_nats",
    "share_mc_below_first_token",
    "share_mc_below_first_token_word",
]
TEXT = ("corpus", "measure", "model_key", "entropy_run_id", "surprisal_run_id", "definition", "comparison")
PREV = ("", "prev1_", "prev2_", "prev3_")
ENTROPIES = {"first_token": "first_token_entropy_nats", "mc": "entropy_nats", "renyi": "renyi_entropy_nats"}
#: comparison -> (the target's predictor groups, the reference's), each with the baseline
COMPARISONS = {
    "surprisal": (("surprisal",), ()),
    **{f"{e}_added": (("surprisal", e), ("surprisal",)) for e in ENTROPIES},
    **{f"{e}_replaces": ((e,), ("surprisal",)) for e in ENTROPIES},
    "mc_vs_first_token": (("surprisal", "mc"), ("surprisal", "first_token")),
}
DEFINITION = "wt"  # the word's probability the MC entropy is an entropy of (whitespace-trailing)


def lagged(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """`column` of the word and of its 3 previous words in the same text (NULL across a text start)."""
    out = frame[["doc_id", "word_index", column]].copy()
    for k, prefix in enumerate(PREV[1:], start=1):
        prev = frame[["doc_id", "word_index", column]].copy()
        prev["word_index"] = prev["word_index"] + k
        out = out.merge(prev.rename(columns={column: f"{prefix}{column}"}), on=["doc_id", "word_index"], how="left")
    return out


def fit(w: pd.DataFrame, groups: dict[str, list[str]], K: int, seed: int) -> list[dict]:
    """Every comparison on the rows of `w` (complete in every column the designs read)."""
    base = rr.baseline_matrix(
        w[[f"{p}length_chars" for p in PREV]].to_numpy(float), w[[f"{p}log_frequency" for p in PREV]].to_numpy(float)
    )
    y = w["mean_rt_ms"].to_numpy(float)
    folds = rr.fold_ids(len(w), K, seed)
    cache: dict[tuple[str, ...], np.ndarray] = {}

    def heldout(design: tuple[str, ...]) -> np.ndarray:
        if design not in cache:
            extra = [w[c].to_numpy(float) for g in design for c in groups[g]]
            X = np.column_stack([*extra, base]) if extra else base
            cache[design] = rr.lm_heldout_log_densities(y, X, folds, K)
        return cache[design]

    deltas = [heldout(target) - heldout(reference) for target, reference in COMPARISONS.values()]
    return [{"comparison": c, "n_folds": K, **s} for c, s in zip(COMPARISONS, rr.word_delta_summaries(deltas))]


def model(dbt, session):
    with rr.one_blas_thread():  # many small solves (rr.one_blas_thread says why)
        out = _model(dbt)
    return out  # dbt's parser wants the function's last statement a return


def _model(dbt):
    K = int(dbt.config.get("delta_loglik_folds") or 10)
    seed = int(dbt.config.get("delta_loglik_seed") or 42)
    entropy = dbt.ref("stg_word_entropy").df()
    rows = []
    if len(entropy):
        words = dbt.ref("int_reading_words").df()
        means = dbt.ref("int_reading_word_means").df()
        surprisal = dbt.ref("int_reading_surprisal").df()
        surprisal = surprisal[surprisal["definition"] == DEFINITION]
        for (corpus, run_id), e in entropy.groupby(["corpus", "run_id"], sort=True):
            e = e[e["status"] == "ok"]
            model_key = e["model_key"].iloc[0] if len(e) else None
            s_runs = surprisal[(surprisal["corpus"] == corpus) & (surprisal["model_key"] == model_key)]
            if s_runs.empty:
                continue
            lags = lagged(e, "first_token_entropy_nats")
            for col in ("entropy_nats", "renyi_entropy_nats"):
                lags = lags.merge(lagged(e, col), on=["doc_id", "word_index"])
            lags = lags.merge(
                e[["doc_id", "word_index", "entropy_se_nats", "first_token_word_entropy_nats"]],
                on=["doc_id", "word_index"],
            )
            groups = {name: [f"{p}{col}" for p in PREV] for name, col in ENTROPIES.items()}
            groups["surprisal"] = [f"{p}surprisal_nats" for p in PREV]
            for (measure,), m in means[means["corpus"] == corpus].groupby(["measure"], sort=True):
                for s_run, s in s_runs.groupby("run_id", sort=True):
                    w = (
                        words[words["corpus"] == corpus]
                        .merge(m[["doc_id", "word_index", "mean_rt_ms"]], on=["doc_id", "word_index"])
                        .merge(s[["doc_id", "word_index", *groups["surprisal"]]], on=["doc_id", "word_index"])
                        .merge(lags, on=["doc_id", "word_index"])
                    )
                    needed = ["mean_rt_ms", *(c for g in groups.values() for c in g)]
                    needed += [f"{p}{c}" for p in PREV for c in ("length_chars", "log_frequency")]
                    w = w[rr.complete_rows(w[needed].to_numpy(float))]
                    w = w.sort_values(
                        ["doc_id", "word_index"], key=lambda c: c.astype(str) if c.name == "doc_id" else c
                    )
                    w = w.reset_index(drop=True)
                    if len(w) < 2 * K:
                        continue
                    below = w["entropy_nats"] < w["first_token_entropy_nats"] - 2 * w["entropy_se_nats"]
                    below_word = w["entropy_nats"] < w["first_token_word_entropy_nats"] - 2 * w["entropy_se_nats"]
                    keys = dict(
                        corpus=corpus,
                        measure=measure,
                        model_key=model_key,
                        entropy_run_id=run_id,
                        surprisal_run_id=s_run,
                        definition=DEFINITION,
                        n_samples=int(e["n_samples"].iloc[0]),
                        renyi_alpha=float(e["renyi_alpha"].iloc[0]),
                        fold_seed=seed,
                        mean_first_token_entropy_nats=float(w["first_token_entropy_nats"].mean()),
                        mean_mc_entropy_nats=float(w["entropy_nats"].mean()),
                        mean_renyi_entropy_nats=float(w["renyi_entropy_nats"].mean()),
                        share_mc_below_first_token=float(below.mean()),
                        share_mc_below_first_token_word=float(below_word.mean()),
                    )
                    rows += [{**keys, **r} for r in fit(w, groups, K, seed)]
    return rr.typed_frame(rows, COLUMNS, text=TEXT, integers=("n_samples", "n_words", "n_folds", "fold_seed"))
