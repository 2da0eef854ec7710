"""Every predictor against every comparison: humans, the models scored here, the imported models and the models
the LM-game authors report (mart_scoreboard_long, mart_scoreboard_gaps). Selects and formats only."""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import findings
import labels
import url_state
from ingest.corpus_declarations import DEFAULT_MEASURES, MEASURE_LABELS

LONG = "mart_scoreboard_long"
GAPS = "mart_scoreboard_gaps"
FAMILIES = {"bits_per_byte": "Bits per byte (texts)", "top1_accuracy": "Top-1 game accuracy",
            "pairwise_perplexity": "Pairwise game perplexity", "cloze_agreement": "Agreement with cloze answers",
            "pnc": "Correlation with cloze surprisal (PNC)", "delta_loglik": "Reading times (ΔLL)"}
KINDS = {"humans": "humans", "scored": "scored here", "imported": "imported (published scores)",
         "reference": "reported by the LM-game authors"}
MEASURES = {m: short for m, (_full, short) in MEASURE_LABELS.items()}  # declared order, short names
STUDY_PAGES = [("app_pages/perplexity.py", "Perplexity: bits per byte of each model on each corpus"),
               ("app_pages/top1.py", "Top-1 game: guessing the next token"),
               ("app_pages/human_perplexity.py", "Human perplexity: the pairwise game"),
               ("app_pages/next_word.py", "Humans vs models: the next word in cloze tests"),
               ("app_pages/word_surprisal.py", "Word surprisal: LW and WT, and PNC"),
               ("app_pages/reading_times.py", "Reading times: ΔLL of each model")]


_fmt = findings.value_text  # the scoreboard's values, as the home page's finding prints them too


def _gap_text(g: pd.Series) -> str:
    if g["gap_kind"].startswith("ratio"):
        return f"{g['gap']:.1f}× the best model's (95% CI {g['gap_ci_low']:.1f} to {g['gap_ci_high']:.1f})"
    return (f"{100 * g['gap']:+.1f} points (95% CI {100 * g['gap_ci_low']:+.1f} to "
            f"{100 * g['gap_ci_high']:+.1f})")


def finding(gaps: pd.DataFrame) -> str:
    """The page's first sentence: how humans compare with the best model, from mart_scoreboard_gaps."""
    return findings.scoreboard(gaps, _fmt)


st.title("Scoreboard: humans and language models on every comparison")
long = data.page_table(LONG, "The snapshot has no scoreboard yet: run `predictabase build`.")
gaps = data.table(GAPS)
if gaps is not None and len(gaps):
    st.markdown(finding(gaps))
else:
    st.markdown(f"The scoreboard holds {long['predictor'].nunique()} predictors; no comparison has both a human "
                "and a model value in this warehouse.")
st.caption("One row per predictor: people (pooled over players or participants), the models scored in this "
           "warehouse, models whose published scores are imported, and the models the LM-game study reports. Each "
           "comparison is computed on its own study page (links below); an empty cell says why on hover.")

# ------------------------------------------------------------------ humans vs the best model
st.subheader("Humans vs the best model")
if gaps is not None and len(gaps):
    gaps = gaps.sort_values("sort_order")
    rows = []
    for _, g in gaps.iterrows():
        for who, prefix in (("humans", "humans"), (g["best_display_name"], "best")):
            rows.append({"comparison": f"{g['comparison_label']} ({g['unit']})", "predictor": who,
                         "role": "humans" if prefix == "humans" else "best model",
                         "value": g[f"{prefix}_value"], "low": g[f"{prefix}_ci_low"], "high": g[f"{prefix}_ci_high"],
                         "gap": _gap_text(g), "origin": "humans" if prefix == "humans" else g["best_value_origin"]})
    strip = pd.DataFrame(rows)
    for comparison, part in strip.groupby("comparison", sort=False):
        base = alt.Chart().encode(  # the data on the layer, once (see the grids below)
            y=alt.Y("predictor:N", title=None, sort=list(part["predictor"]), axis=alt.Axis(labelLimit=400)),
            color=alt.Color("role:N", title="who", scale=alt.Scale(domain=["humans", "best model"],
                                                                    range=["#e45756", "#4c78a8"]),
                            legend=alt.Legend(orient="right")),
            tooltip=[alt.Tooltip("predictor:N", title="predictor"), alt.Tooltip("value:Q", format=".4g"),
                     alt.Tooltip("low:Q", title="interval low", format=".4g"),
                     alt.Tooltip("high:Q", title="interval high", format=".4g"),
                     alt.Tooltip("origin:N", title="value from"), alt.Tooltip("gap:N", title="humans vs model")])
        x = alt.X("value:Q", title=comparison, scale=alt.Scale(zero=False))
        chart = alt.layer(base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title=comparison), x2="high:Q"),
                          base.mark_point(filled=True, size=110).encode(x=x), data=part).properties(height=alt.Step(34))
        charts.show(chart, comparison, f"Humans and the best model on {comparison}, with their intervals; "
                    f"humans: {part['gap'].iloc[0]}.", subtitle=f"humans: {part['gap'].iloc[0]}")
    st.caption("Lines: each value's interval (its study's own: Wilson 95% for accuracy, ±2 standard errors for the "
               "pairwise game). The gap's interval is a normal approximation treating the two as independent "
               "(conservative); a value the authors report without an interval counts as exact.")
    labels.show(gaps, ["comparison_label", "unit", "humans_value", "humans_ci_low", "humans_ci_high",
                       "best_display_name", "best_value", "best_ci_low", "best_ci_high", "best_value_origin",
                       "gap_kind", "gap", "gap_ci_low", "gap_ci_high", "n_models_compared"],
                title="Humans vs the best model", key="scoreboard_gaps")

# ------------------------------------------------------------------ the whole scoreboard
st.subheader("Every predictor, every comparison")
left, mid, right = st.columns(3)
with left:
    families = url_state.multiselect("Comparisons", [f for f in FAMILIES if f in set(long["comparison_family"])],
                                     key="sb_families", param="comparison", format_func=FAMILIES.get)
with mid:
    measures = url_state.multiselect("Reading measures (ΔLL)", [m for m in MEASURES if m in set(long["measure"])],
                                     key="sb_measures", param="measure", format_func=MEASURES.get,
                                     default=[m for m in MEASURES if m in DEFAULT_MEASURES and m in set(long["measure"])])
with right:
    kinds = url_state.multiselect("Predictors", [k for k in KINDS if k in set(long["predictor_kind"])],
                                  key="sb_kinds", param="kind", format_func=KINDS.get)

view = long[long["comparison_family"].isin(families) & long["predictor_kind"].isin(kinds)
            & (long["measure"].isna() | long["measure"].isin(measures))]
if view.empty:
    st.info("Nothing selected.")
    st.stop()
view = view.assign(column=view["comparison_label"] + " (" + view["unit"] + ")",
                   kind=view["predictor_kind"].map(KINDS))
columns = view.drop_duplicates("comparison").sort_values("sort_order")["column"].tolist()
order = (view.drop_duplicates("predictor")
         .assign(k=lambda d: d["predictor_kind"].map({k: i for i, k in enumerate(KINDS)}))
         .sort_values(["k", "n_parameters", "display_name"], na_position="last")["display_name"].tolist())
view = view.assign(
    shown=[_fmt(v, u) for v, u in zip(view["value"], view["unit"])],
    interval=[("" if pd.isna(lo) else f"{_fmt(lo, u)} to {_fmt(hi, u)} ({m})")
              for lo, hi, u, m in zip(view["ci_low"], view["ci_high"], view["unit"], view["interval_method"])],
    why=view["null_reason"].fillna(""), counted=view["n"].map(lambda n: "" if pd.isna(n) else f"{int(n):,}")
    + " " + view["n_unit"].where(view["n"].notna(), ""))
# one grid per comparison family (ΔLL: per reading measure), each at most 4-5 columns, so every grid fits the
# page's column (one grid of all 20 comparisons was 2,163 px wide in a 940 px column); its rows: the predictors
# with a value there (the others are named under it)
groups = (view.assign(group=view["comparison_family"] + "|" + view["measure"].fillna(""))
          .sort_values("sort_order").drop_duplicates("group")["group"].tolist())
GRID_COLUMNS = 7  # at most this many comparisons side by side: 7 x 76 px and the row labels fit a 940 px column


def grid_parts(group_view: pd.DataFrame) -> list[pd.DataFrame]:
    """A group's comparisons in pieces of at most GRID_COLUMNS, in column order (MECO's 11 languages make a
    family of 15 corpora)."""
    cols = [c for c in columns if c in set(group_view["column"])]
    return [group_view[group_view["column"].isin(cols[i:i + GRID_COLUMNS])] for i in range(0, len(cols), GRID_COLUMNS)]


def draw_grid(part: pd.DataFrame, family: str, measure: str, piece: str) -> None:
    has_value = set(part.loc[part["value"].notna(), "display_name"])
    rows_here = [o for o in order if o in has_value]
    absent = [o for o in order if o in set(part["display_name"]) and o not in has_value]
    if not rows_here:
        return
    part = part[part["display_name"].isin(has_value)]
    cols_here = [c for c in columns if c in set(part["column"])]
    # the data once, on the layer (not on each of its three charts: Altair then compares their frames by their
    # printed text, a third of the page's time), and only the columns the grid draws
    part = part[["column", "display_name", "kind", "shown", "interval", "counted", "value_origin", "why",
                 "rank_in_comparison"]]
    grid = alt.Chart().encode(
        x=alt.X("column:N", title=None, sort=cols_here,
                # upright labels, every one drawn: at -30 degrees neighbours' boxes overlapped and Vega left out
                # every other comparison's name (seen with MECO's 11 languages side by side)
                axis=alt.Axis(orient="top", labelAngle=-90, labelLimit=330, labelAlign="left",
                              labelBaseline="middle", labelOverlap=False)),
        y=alt.Y("display_name:N", title=None, sort=rows_here, axis=alt.Axis(labelLimit=330)),
        tooltip=[alt.Tooltip("display_name:N", title="predictor"), alt.Tooltip("kind:N", title="kind"),
                 alt.Tooltip("column:N", title="comparison"), alt.Tooltip("shown:N", title="value"),
                 alt.Tooltip("interval:N", title="interval"), alt.Tooltip("counted:N", title="counted over"),
                 alt.Tooltip("value_origin:N", title="value from"), alt.Tooltip("why:N", title="why empty")])
    empty = grid.mark_rect(stroke="white", color="#eeeeee")  # every cell, so an empty one still tells why on hover
    cells = grid.mark_rect(stroke="white").encode(
        # the mart's rank within the comparison, 1 = best: comparable across comparisons of any unit
        color=alt.Color("rank_in_comparison:Q", title="rank in the comparison (1 = best)",
                        scale=alt.Scale(scheme="blues", reverse=True, zero=False),
                        # whole ranks only: Vega's own ticks at 1, 1.5, 2 read "1 2 2" with format "d" (issue 32)
                        legend=alt.Legend(format="d", values=charts.whole_number_ticks(part["rank_in_comparison"]), orient="bottom",
                                          direction="horizontal", titleLimit=400)))
    text = grid.transform_joinaggregate(worst="max(rank_in_comparison)").mark_text(fontSize=11).encode(
        text="shown:N",  # white on the darkest third of the colour scale, black elsewhere
        color=alt.condition("(datum.rank_in_comparison - 1) <= 0.33 * (datum.worst - 1)", alt.value("white"),
                            alt.value("black")))
    name = FAMILIES.get(family, family) + (f", {MEASURES.get(measure, measure)}" if measure else "") + piece
    chart = alt.layer(empty, cells, text, data=part).properties(height=alt.Step(24), width=alt.Step(76))
    charts.show(chart, f"The scoreboard: {name}",
                f"A grid of the predictors with a value on {name.lower()} (rows) against its comparisons (columns): "
                "the value in each cell, coloured by its rank within the comparison; hover a cell for its interval "
                "and what it is counted over, or for why it is empty.",
                subtitle="colour: rank within the comparison (darker = better)"
                         + (f"; no value here: {len(absent)} more predictors" if absent else ""), width="content")


for group in groups:
    family, measure = group.split("|")
    pieces = grid_parts(view[(view["comparison_family"] == family) & (view["measure"].fillna("") == measure)])
    for k, part in enumerate(pieces, start=1):
        draw_grid(part, family, measure, f" ({k} of {len(pieces)})" if len(pieces) > 1 else "")

wide = view.pivot_table(index="display_name", columns="column", values="value", aggfunc="first", dropna=False)
wide = wide.reindex(index=order, columns=columns).astype(float).reset_index().rename(columns={"display_name": "predictor"})
kind_of = view.drop_duplicates("display_name").set_index("display_name")["kind"]
wide.insert(1, "kind", wide["predictor"].map(kind_of))
st.caption("The same values as a table: click a header to sort; empty cells have no value (the grid above says "
           "why). Shares are 0 to 1.")
labels.show(wide, title="Scoreboard", key="scoreboard_table", height=35 * (len(wide) + 1) + 3)

labels.related(STUDY_PAGES, heading="Where each comparison comes from")
