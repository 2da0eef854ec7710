"""The pages' opening sentences where they weigh a difference: a difference the statistics do not support is
said to be a tie. Only words from mart values; nothing is computed here but the comparison of an
interval with its null value, or of a mart's p-value with 0.05."""

from __future__ import annotations

import pandas as pd

ALPHA = 0.05


def gap_is_clear(g: pd.Series) -> bool:
    """Whether the humans-vs-model gap's 95% interval excludes no difference (1 for a ratio, 0 for a difference)."""
    null = 1.0 if str(g["gap_kind"]).startswith("ratio") else 0.0
    lo, hi = g["gap_ci_low"], g["gap_ci_high"]
    if pd.isna(lo) or pd.isna(hi):
        return False
    return not (lo <= null <= hi)


def value_text(value: float, unit: str) -> str:
    """A scoreboard value as its pages print it: a share as a percent, ΔLL to 4 places, else 3 significant."""
    if pd.isna(value):
        return ""
    if unit.startswith("share"):
        return f"{100 * value:.1f}%"
    if unit == "nats per word":
        return f"{value:.4f}"
    return f"{value:.3g}" if abs(value) >= 10 else f"{value:.3f}"


def scoreboard(gaps: pd.DataFrame, fmt=value_text) -> str:
    """Humans against the best model on each comparison of mart_scoreboard_gaps: how many each side wins
    clearly (the gap's interval excludes no difference), how many are ties, and the first comparison's values."""
    gaps = gaps.sort_values("sort_order")
    clear = gaps.apply(gap_is_clear, axis=1)
    humans = gaps["humans_better"].astype(bool)
    n_model, n_humans, n_tie = int((clear & ~humans).sum()), int((clear & humans).sum()), int((~clear).sum())
    parts = []
    if n_model:
        parts.append(
            f"the best language model beats humans on {n_model} of the {len(gaps)} comparisons where both were measured"
        )
    if n_humans:
        parts.append(f"humans beat the best model on {n_humans}" + ("" if parts else f" of the {len(gaps)}"))
    if n_tie:
        parts.append(
            f"{n_tie} {'is a tie' if n_tie == 1 else 'are ties'} (the 95% interval of the gap includes no difference)"
        )
    lead = "; ".join(parts)
    lead = lead[0].upper() + lead[1:]
    top = gaps.iloc[0]
    return (
        f"{lead}: on {top['comparison_label'].lower()}, humans score {fmt(top['humans_value'], top['unit'])} "
        f"and {top['best_display_name']} {fmt(top['best_value'], top['unit'])}."
    )


def wild(loss: pd.DataFrame) -> str | None:
    """Casares et al.'s (2022) Table 1 in a sentence: in which task domains the mean loss with GPT-3 differs from the loss by
    hand by the mart's two-sided test, Holm-adjusted over the domains; the rest are ties."""
    w = loss.pivot_table(
        index=["domain_order", "domain"], columns="condition", values=["loss_mean", "p_value_two_sided_holm"]
    ).reset_index()
    if ("loss_mean", "with_model") not in w.columns or ("loss_mean", "without_model") not in w.columns:
        return None
    w = w.sort_values("domain_order")
    worse, better, ties = [], [], []
    for _, r in w.iterrows():
        with_m, by_hand = r[("loss_mean", "with_model")], r[("loss_mean", "without_model")]
        p = r[("p_value_two_sided_holm", "with_model")]
        text = f"{r[('domain', '')]} {with_m:.2f} vs {by_hand:.2f}"
        if pd.notna(p) and p < ALPHA:
            (better if with_m < by_hand else worse).append(text)
        else:
            ties.append(f"{r[('domain', '')]} ({with_m:.2f} vs {by_hand:.2f}, Holm p {p:.2f})")
    n = len(w)
    said = []
    if worse:
        said.append(f"worse with GPT-3 than by hand in {len(worse)} of {n} task domains ({'; '.join(worse)})")
    if better:
        said.append(f"better with GPT-3 in {len(better)} of {n} ({'; '.join(better)})")
    if ties:
        said.append(f"no different in {'the other ' if said else ''}{len(ties)}: {', '.join(ties)}")
    return (
        "People's answers, by their mean loss (0 best, 1 worst; two-sided test, Holm-adjusted, p < 0.05), were "
        + "; ".join(said)
        + "."
    )
