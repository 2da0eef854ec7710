"""Every predictor against every comparison: humans, the models scored here, the imported models and the models
the LM-game authors report (mart_scoreboard_long, mart_scoreboard_gaps). One screen answers who predicts best on
what (humans vs the best model; the leader of each group of comparisons); one group's values at a time below.
Selects and formats only."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import downloads
import findings
import labels
import url_state
from predictabase import collect
from scoreboard_tables import (
    KINDS,
    group_name,
    groups_with_values,
    humans_vs_best,
    leaders,
    short_column,
    with_groups,
)

LONG = "mart_scoreboard_long"
GAPS = "mart_scoreboard_gaps"
STUDY_PAGES = [
    ("app_pages/perplexity.py", "Perplexity: bits per byte of each model on each corpus"),
    ("app_pages/top1.py", "Top-1 game: guessing the next token"),
    ("app_pages/human_perplexity.py", "Human perplexity: the pairwise game"),
    ("app_pages/next_word.py", "Humans vs models: the next word in cloze tests"),
    ("app_pages/word_surprisal.py", "Word surprisal: LW and WT, and PNC"),
    ("app_pages/reading_times.py", "Reading times: ΔLL of each model"),
    ("app_pages/languages.py", "Languages: reading times in eleven languages"),
]
GRID_COLUMNS = 6  # comparisons side by side in one grid: with the row names, they fit a 600 px column
ROW_LABEL_PX = 210  # the grid's row names; a longer name ends in "…", whole in every cell's tooltip
ROW_PX = 22


def finding(gaps: pd.DataFrame) -> str:
    """The page's first sentence: how humans compare with the best model, from mart_scoreboard_gaps."""
    return findings.scoreboard(gaps, findings.value_text)


st.title("Scoreboard: who predicts the next word best")
long = data.page_table(LONG, "The snapshot has no scoreboard yet: run `predictabase build`.")
gaps = data.table(GAPS)
if gaps is not None and len(gaps):
    st.markdown(finding(gaps))
else:
    st.markdown(
        f"The scoreboard holds {long['predictor'].nunique()} predictors; no comparison has both a human "
        "and a model value in this warehouse."
    )
st.caption(
    "Predictors: people (pooled over players or participants), the models scored in this warehouse, models "
    "whose published scores are imported, and the models the LM-game study reports. Each comparison is "
    "computed on its own study page (links at the end)."
)


def summary_table(df: pd.DataFrame, title: str, headers: dict[str, str], key: str) -> None:
    """A short table drawn whole, every column and every word of it (a static table wraps its cells; the grid of
    st.dataframe hid the columns past the page's width), with CSV and LaTeX buttons and the export's copy."""
    shown = df[list(headers)]
    st.table(shown.rename(columns=headers).style.hide(axis="index"))
    formats = dict.fromkeys(headers)
    collect.table(title, shown, headers, formats)
    downloads.table_buttons(st, shown, title, headers, formats, key)


# ------------------------------------------------------------------ humans vs the best model
if gaps is not None and len(gaps):
    st.subheader("Humans vs the best model")
    summary_table(
        humans_vs_best(gaps),
        "Humans vs the best model",
        {
            "comparison": "comparison (unit)",
            "humans": "humans (95% interval)",
            "best_model": "best model",
            "best_value": "its value (interval)",
            "better": "better",
            "gap": "gap, humans vs model",
        },
        key="scoreboard_gaps",
    )
    st.caption(
        "Better: a tie when the gap's 95% interval includes no difference. The gap is a difference in "
        "percentage points (humans − model), or a ratio (humans / model) for perplexities; its interval is a "
        "normal approximation treating the two values as independent (conservative). A value its authors "
        "report without an interval has none."
    )

# ------------------------------------------------------------------ the leader of each group
long = with_groups(long)
groups = groups_with_values(long)
if not groups:
    st.info("No comparison has a value in this warehouse yet.")
    st.stop()
st.subheader("The leader of each group of comparisons")
summary_table(
    leaders(long),
    "The leader of each group of comparisons",
    {
        "comparisons": "comparisons",
        "best": "ranked first most often",
        "first_on": "first on",
        "runner_up": "runner-up",
        "n_predictors": "predictors with a value",
    },
    key="scoreboard_leaders",
)
st.caption(
    "First on: the comparisons of the group on which it has the best value (humans count as a predictor); "
    "a tie goes to the better mean rank. Every predictor's values are in the grid below."
)

# ------------------------------------------------------------------ one group at a time
st.subheader("One group of comparisons, every predictor")
group = url_state.selectbox("Comparisons", groups, key="sb_group", param="comparison", format_func=group_name)
kinds = url_state.multiselect(
    "Predictors",
    [k for k in KINDS if k in set(long["predictor_kind"])],
    key="sb_kinds",
    param="kind",
    format_func=KINDS.get,
    pills=True,
)
view = long[(long["group"] == group) & long["predictor_kind"].isin(kinds)]
view = view[view["comparison"].isin(set(view.loc[view["value"].notna(), "comparison"]))]  # no empty column
if view.empty:
    st.info("No predictor of the kinds selected has a value on these comparisons.")
    st.stop()
view = view.assign(
    column=[short_column(r, labels.corpus_name) for _, r in view.iterrows()],
    full=view["comparison_label"] + " (" + view["unit"] + ")",
    kind=view["predictor_kind"].map(KINDS),
)
columns = view.drop_duplicates("comparison").sort_values("sort_order")
order = (
    view.drop_duplicates("display_name")
    .assign(k=lambda d: d["predictor_kind"].map({k: i for i, k in enumerate(KINDS)}))
    .sort_values(["k", "n_parameters", "display_name"], na_position="last")["display_name"]
    .tolist()
)
view = view.assign(
    shown=[findings.value_text(v, u) for v, u in zip(view["value"], view["unit"])],
    interval=[
        ("" if pd.isna(lo) else f"{findings.value_text(lo, u)} to {findings.value_text(hi, u)} ({m})")
        for lo, hi, u, m in zip(view["ci_low"], view["ci_high"], view["unit"], view["interval_method"])
    ],
    why=view["null_reason"].fillna(""),
    counted=view["n"].map(lambda n: "" if pd.isna(n) else f"{int(n):,}")
    + " "
    + view["n_unit"].where(view["n"].notna(), ""),
)


def draw_grid(part: pd.DataFrame, name: str, transpose: bool = False) -> None:
    """One grid of predictors against comparisons: predictors as rows, or, `transpose`d, as columns (a group of
    many comparisons and few predictors, such as bits per byte on fifteen corpora: one grid, not three)."""
    has_value = set(part.loc[part["value"].notna(), "display_name"])
    rows_here = [o for o in order if o in has_value]
    absent = [o for o in order if o in set(part["display_name"]) and o not in has_value]
    part = part[part["display_name"].isin(has_value)]
    cols_here = [c for c in columns["column"] if c in set(part["column"])]
    # the data once, on the layer (not on each of its three charts: Altair then compares their frames by their
    # printed text, a third of the page's time), and only the columns the grid draws
    part = part[
        [
            "column",
            "full",
            "display_name",
            "kind",
            "shown",
            "interval",
            "counted",
            "value_origin",
            "why",
            "rank_in_comparison",
        ]
    ]
    # column names upright, every one drawn (side by side, neighbours' names overlapped in a narrow column)
    top = alt.Axis(
        orient="top",
        labelAngle=-90,
        labelLimit=ROW_LABEL_PX,
        labelAlign="left",
        labelBaseline="middle",
        labelOverlap=False,
    )
    across = alt.Axis(labelLimit=ROW_LABEL_PX)
    comparison, predictor = ("column:N", cols_here), ("display_name:N", rows_here)
    (xf, xs), (yf, ys) = (predictor, comparison) if transpose else (comparison, predictor)
    grid = alt.Chart().encode(
        x=alt.X(xf, title=None, sort=xs, axis=top),
        y=alt.Y(yf, title=None, sort=ys, axis=across),
        tooltip=[
            alt.Tooltip("display_name:N", title="predictor"),
            alt.Tooltip("kind:N", title="kind"),
            alt.Tooltip("full:N", title="comparison"),
            alt.Tooltip("shown:N", title="value"),
            alt.Tooltip("interval:N", title="interval"),
            alt.Tooltip("counted:N", title="counted over"),
            alt.Tooltip("value_origin:N", title="value from"),
            alt.Tooltip("why:N", title="why empty"),
        ],
    )
    empty = grid.mark_rect(stroke="white", color="#eeeeee")  # every cell, so an empty one still tells why on hover
    cells = grid.mark_rect(stroke="white").encode(
        # the mart's rank within the comparison, 1 = best: comparable across comparisons of any unit
        color=alt.Color(
            "rank_in_comparison:Q",
            title="rank in the comparison (1 = best)",
            scale=alt.Scale(scheme="blues", reverse=True, zero=False),
            # whole ranks only: Vega's own ticks at 1, 1.5, 2 read "1 2 2" with format "d"
            legend=alt.Legend(
                format="d",
                values=charts.whole_number_ticks(part["rank_in_comparison"]),
                orient="bottom",
                direction="horizontal",
                titleLimit=400,
            ),
        )
    )
    text = (
        grid.transform_joinaggregate(worst="max(rank_in_comparison)")
        .mark_text(fontSize=11)
        .encode(
            text="shown:N",  # white on the darkest third of the colour scale, black elsewhere
            color=alt.condition(
                "(datum.rank_in_comparison - 1) <= 0.33 * (datum.worst - 1)", alt.value("white"), alt.value("black")
            ),
        )
    )
    # the width follows the column (cells share what the row names leave); the height, one step per row
    chart = alt.layer(empty, cells, text, data=part).properties(height=alt.Step(ROW_PX))
    rows, cols_ = ("comparisons", "predictors") if transpose else ("predictors", "comparisons")
    charts.show(
        chart,
        f"The scoreboard: {name}",
        f"A grid of the {rows} (rows) against the {cols_} (columns) of {name.lower()}, the predictors "
        "being those with a value: the value in each cell, coloured by its rank within the comparison; "
        "hover a cell for the full names, its interval and what it is counted over.",
        subtitle="colour: rank within the comparison (darker = better)"
        + (f"; no value here: {len(absent)} more predictors" if absent else ""),
    )


cols = columns["column"].tolist()
n_predictors = view.loc[view["value"].notna(), "display_name"].nunique()
if n_predictors <= GRID_COLUMNS and len(cols) > n_predictors:
    draw_grid(view, group_name(group), transpose=True)
else:
    pieces = [cols[i : i + GRID_COLUMNS] for i in range(0, len(cols), GRID_COLUMNS)]
    for k, piece in enumerate(pieces, start=1):
        draw_grid(
            view[view["column"].isin(piece)],
            group_name(group) + (f" ({k} of {len(pieces)})" if len(pieces) > 1 else ""),
        )

# the grid's values as a table, for a paper or a spreadsheet (drawn, it hid most of its columns past the page)
wide = view.pivot_table(index="display_name", columns="comparison", values="value", aggfunc="first", dropna=False)
wide = (
    wide.reindex(index=order, columns=columns["comparison"].tolist())
    .astype(float)
    .reset_index()
    .rename(columns={"display_name": "predictor"})
)
kind_of = view.drop_duplicates("display_name").set_index("display_name")["kind"]
wide.insert(1, "kind", wide["predictor"].map(kind_of))
headers = {"predictor": "predictor", "kind": "kind", **dict(zip(columns["comparison"], columns["full"]))}
title = f"Scoreboard: {group_name(group)}"
collect.table(title, wide, headers, dict.fromkeys(headers, "%.4g"))
st.caption("The grid's values as a table, each comparison in full:")
downloads.table_buttons(
    st, wide, title, headers, {**dict.fromkeys(headers, "%.4g"), "predictor": None, "kind": None}, "scoreboard_table"
)

labels.related(STUDY_PAGES, heading="Where each comparison comes from")
