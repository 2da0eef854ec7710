"""The Scoreboard's summaries of mart_scoreboard_long and mart_scoreboard_gaps: which predictor leads each group of
comparisons, and the group's values as a grid or a table. Selection, counting and wording only: every value and
rank is the mart's."""

from __future__ import annotations

import pandas as pd

import findings
from predictabase.ingest.corpus_declarations import MEASURE_LABELS

FAMILIES = {
    "bits_per_byte": "Bits per byte (texts)",
    "top1_accuracy": "Top-1 game accuracy",
    "pairwise_perplexity": "Pairwise game perplexity",
    "cloze_agreement": "Agreement with cloze answers",
    "pnc": "Correlation with cloze surprisal (PNC)",
    "delta_loglik": "Reading times (ΔLL)",
    "temperature_gain": "Reading times: gain of the best temperature",
    "word_entropy_gain": "Reading times: word entropy over first-token entropy",
}
KINDS = {
    "humans": "humans",
    "scored": "scored here",
    "imported": "imported (published scores)",
    "reference": "reported by the LM-game authors",
}
MEASURES = {m: short for m, (_full, short) in MEASURE_LABELS.items()}  # declared order, short names
DEFINITIONS = {"lw": "LW", "wt": "WT"}
SEP = ":"  # a group's key: family, or family:measure for the reading-time families (one measure at a time)


def group_key(family: str, measure) -> str:
    return family if measure is None or pd.isna(measure) or measure == "" else f"{family}{SEP}{measure}"


def group_name(key: str) -> str:
    """A group in words: 'Reading times (ΔLL), gaze duration'."""
    family, _, measure = key.partition(SEP)
    return FAMILIES.get(family, family) + (f", {MEASURES.get(measure, measure)}" if measure else "")


def with_groups(long: pd.DataFrame) -> pd.DataFrame:
    return long.assign(group=[group_key(f, m) for f, m in zip(long["comparison_family"], long["measure"])])


def groups_with_values(long: pd.DataFrame) -> list[str]:
    """The groups that have at least one value, in the mart's comparison order."""
    g = with_groups(long)
    g = g[g["value"].notna()].sort_values("sort_order")
    return list(dict.fromkeys(g["group"]))


def short_column(row: pd.Series, corpus_name) -> str:
    """A comparison's header inside its group: what tells it from its neighbours (the corpus, the word-surprisal
    definition), the full label being on hover."""
    family = row["comparison_family"]
    if family == "top1_accuracy":
        return "words" if str(row["comparison"]).endswith("_word") else "tokens"
    if family == "pairwise_perplexity":
        return "pairwise game"
    name = corpus_name(row["corpus"])
    definition = row.get("definition")
    return name + (f" {DEFINITIONS.get(definition, definition)}" if isinstance(definition, str) else "")


def leaders(long: pd.DataFrame, names: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per group with values: the predictor ranked first on most of the group's comparisons (ties: the
    better mean rank over the comparisons it has, then the more comparisons), on how many it is first, and the
    runner-up. `rank_in_comparison` is the mart's (1 = best, humans included)."""
    g = with_groups(long)
    g = g[g["value"].notna()]
    rows = []
    for key in groups_with_values(long):
        part = g[g["group"] == key]
        n_comparisons = part["comparison"].nunique()
        per = (
            part.groupby("display_name")
            .agg(
                firsts=("rank_in_comparison", lambda r: int((r == 1).sum())),
                mean_rank=("rank_in_comparison", "mean"),
                covered=("comparison", "nunique"),
                kind=("predictor_kind", "first"),
            )
            .reset_index()
            .sort_values(["firsts", "mean_rank", "covered", "display_name"], ascending=[False, True, False, True])
        )
        best = per.iloc[0]
        second = per.iloc[1] if len(per) > 1 else None
        rows.append(
            {
                "group": key,
                "comparisons": group_name(key),
                "best": best["display_name"],
                "kind": KINDS.get(best["kind"], best["kind"]),
                "first_on": f"{int(best['firsts'])} of {n_comparisons}",
                "runner_up": "" if second is None else second["display_name"],
                "n_predictors": int(part["display_name"].nunique()),
            }
        )
    return pd.DataFrame(rows, columns=["group", "comparisons", "best", "kind", "first_on", "runner_up", "n_predictors"])


def verdict(g: pd.Series) -> str:
    """Who predicts better on a comparison of mart_scoreboard_gaps, in words, a tie when the gap's interval holds
    no difference."""
    if not findings.gap_is_clear(g):
        return "tie"
    return "humans" if bool(g["humans_better"]) else "the model"


def gap_text(g: pd.Series) -> str:
    if str(g["gap_kind"]).startswith("ratio"):
        return f"{g['gap']:.2f}× (95% CI {g['gap_ci_low']:.2f} to {g['gap_ci_high']:.2f})"
    return f"{100 * g['gap']:+.1f} points (95% CI {100 * g['gap_ci_low']:+.1f} to {100 * g['gap_ci_high']:+.1f})"


def interval_text(value, low, high, unit: str) -> str:
    fmt = findings.value_text
    shown = fmt(value, unit)
    if pd.isna(low) or pd.isna(high):
        return shown
    return f"{shown} ({fmt(low, unit)} to {fmt(high, unit)})"


def humans_vs_best(gaps: pd.DataFrame) -> pd.DataFrame:
    """mart_scoreboard_gaps as the page's first table: one row per comparison, in words."""
    gaps = gaps.sort_values("sort_order")
    return pd.DataFrame(
        {
            "comparison": gaps["comparison_label"] + " (" + gaps["unit"] + ")",
            "humans": [
                interval_text(v, lo, hi, u)
                for v, lo, hi, u in zip(
                    gaps["humans_value"], gaps["humans_ci_low"], gaps["humans_ci_high"], gaps["unit"]
                )
            ],
            "best_model": gaps["best_display_name"],
            "best_value": [
                interval_text(v, lo, hi, u)
                for v, lo, hi, u in zip(gaps["best_value"], gaps["best_ci_low"], gaps["best_ci_high"], gaps["unit"])
            ],
            "better": [verdict(g) for _, g in gaps.iterrows()],
            "gap": [gap_text(g) for _, g in gaps.iterrows()],
            "n_models_compared": gaps["n_models_compared"].astype(int),
        }
    )
