"""Every chart of the dashboard goes through `show`: a title in plain words (with units), a one-sentence
description for readers and screen readers (Vega-Lite's `description`, which the chart's renderer exposes as
its ARIA label), and Streamlit's theme, so the chart follows the user's light or dark theme. Under it, SVG and
PNG download buttons (dashboards/downloads.py); the collect hook (predictabase/collect.py) records it."""

from __future__ import annotations

import functools

import altair as alt
import pandas as pd
import streamlit as st

import downloads
from predictabase import collect


def show(
    chart: alt.TopLevelMixin,
    title: str,
    description: str,
    *,
    subtitle: str | list[str] | None = None,
    where=st,
    width: str = "stretch",
) -> None:
    """Draw `chart` in `where` (st or a column) with its title, subtitle (a list: one line each) and description."""
    if not title.strip() or not description.strip():
        raise ValueError("a chart needs a title and a description")
    # a mid grey subtitle: Streamlit's theme colours the title, not the subtitle (Vega's default is near black)
    sub = {"subtitle": subtitle, "subtitleColor": "#8c8c8c"} if subtitle else {}
    heading = alt.Title(title, anchor="start", **sub)
    drawn = chart.properties(title=heading, description=description)
    # axis labels closer than 4 px count as overlapping, so Vega thins them (every other one): with the
    # default 0 px, labels that touch were all kept and read as one ("0.500.55")
    drawn = drawn.configure_axis(labelSeparation=4)
    if width == "stretch" and getattr(drawn, "autosize", alt.Undefined) is alt.Undefined:
        # the chart's height is its plotting area's, as in Vega-Lite: the title, axes and legend come on top (by
        # default Streamlit fits all of them into that height, which squeezed the marks and hid axis labels)
        drawn = drawn.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    # drawn without Altair's JSON-schema validation of the whole spec (a third of the Scoreboard's server time,
    # py-spy): every chart here is built by this code, and the same chart is validated where its paper
    # file is made (paper_files.chart_spec: `predictabase export`, tested over every chart of every page). The
    # instance's own to_dict wins over the class's; object.__setattr__, since SchemaBase's would store it as a
    # chart property. A caller's explicit to_dict(validate=True) still validates.
    object.__setattr__(drawn, "to_dict", functools.partial(type(drawn).to_dict, drawn, validate=False))
    where.altair_chart(drawn, theme="streamlit", width=width)
    collect.chart(title, drawn)
    downloads.chart_buttons(where, drawn, title)


def whole_number_ticks(values, most: int = 6) -> list[int]:
    """Legend ticks for whole numbers (ranks, counts) from the smallest to the largest of `values`: every one,
    or an even step when there are more than `most`; always the first and the last."""
    v = [int(x) for x in pd.Series(values, dtype="Float64").dropna()]  # NaN and NA (a cell with no rank) are not ticks
    if not v:
        return []
    lo, hi = min(v), max(v)
    step = max(1, -(-(hi - lo) // (most - 1)))
    ticks = list(range(lo, hi + 1, step))
    return ticks if ticks[-1] == hi else ticks + [hi]


def intervals_along_x(enc: alt.Chart, value: str, low: str, high: str, x_title: str, zero_label: str, data):
    """A point at `value` and a line from `low` to `high` for each row, along x (the other encodings in `enc`, a
    data-less chart), and a dashed mid-grey line at 0 named `zero_label` in the legend (seen on light and dark
    themes: Vega's default black vanished on dark), with `data` once, on the layer."""
    zero = (
        alt.Chart(pd.DataFrame({"x": [0.0], "what": [zero_label]}))
        .mark_rule(strokeDash=[4, 4], color="#888888")
        .encode(
            x="x:Q",
            strokeDash=alt.StrokeDash("what:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical")),
        )
    )
    return alt.layer(
        enc.mark_rule().encode(x=alt.X(f"{low}:Q", title=x_title), x2=f"{high}:Q"),
        enc.mark_point(filled=True, size=70).encode(x=f"{value}:Q"),
        zero,
        data=data,
    )
