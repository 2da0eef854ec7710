"""The download buttons under every chart (SVG, PNG) and table (CSV, LaTeX): paper-ready files with the
provenance of the snapshot shown (predictabase/paper_files.py). A file is rendered only when its button is
clicked, and the click does not rerun the page."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

import data
from predictabase import paper_files


class _Moved(Exception):
    """The file at the path is no longer the snapshot the provenance was asked for."""


@st.cache_data(show_spinner=False, max_entries=8)
def _provenance(path: str, snapshot_id: str) -> dict:
    prov = paper_files.provenance(path)
    if prov.get("snapshot", {}).get("snapshot_id") not in (None, snapshot_id):
        raise _Moved  # a publish landed between taking the id and reading: not cached
    return prov


def provenance() -> dict:
    """The current snapshot's provenance (paper_files.provenance), cached under its snapshot id."""
    for _ in range(5):
        snap = data.snapshot()
        if snap is None:
            return {}
        try:
            return _provenance(snap.path, snap.snapshot_id)
        except _Moved:
            continue
    raise RuntimeError("the snapshot kept changing while it was read; reload the page")


def _buttons(where, key: str, name: str, files: list[tuple[str, str, str, Callable[[], str | bytes]]]) -> None:
    row = where.container(horizontal=True, gap="small")
    for label, ext, mime, render in files:
        row.download_button(
            label,
            data=render,
            file_name=f"{name}.{ext}",
            mime=mime,
            key=f"{key}-{ext}",
            on_click="ignore",
            icon=":material/download:",
            type="tertiary",
            help=f"Download as {label}, with the snapshot's provenance",
        )


def chart_buttons(where, chart: alt.TopLevelMixin, title: str) -> None:
    """SVG and PNG buttons for `chart` (as drawn, with its title); the key is the title's (unique on a page)."""
    prov, name = provenance(), paper_files.slug(title)
    key = f"download-chart-{name}-{hashlib.sha1(title.encode()).hexdigest()[:8]}"
    _buttons(
        where,
        key,
        name,
        [
            ("SVG", "svg", "image/svg+xml", lambda: paper_files.chart_svg(chart, prov)),
            ("PNG", "png", "image/png", lambda: paper_files.chart_png(chart, prov)),
        ],
    )


def table_buttons(
    where,
    df: pd.DataFrame,
    title: str,
    headers: dict[str, str],
    formats: dict[str, str | None],
    key: str | None,
    paper_columns: list[str] | None = None,
) -> None:
    """CSV and LaTeX buttons for the table `df` as shown (its columns, headers and number formats); the key is
    the table's, else its title's and columns'. The LaTeX table holds `paper_columns` when given (the columns the
    page leads with: a paper's table, not the mart's 30-odd columns); the CSV every column."""
    latex_df = df[[c for c in paper_columns if c in df.columns]] if paper_columns else df
    prov, name = provenance(), paper_files.slug(title)
    if key is None:
        key = f"{name}-{hashlib.sha1('|'.join(map(str, df.columns)).encode()).hexdigest()[:8]}"
    _buttons(
        where,
        f"download-table-{key}",
        name,
        [
            ("CSV", "csv", "text/csv", lambda: paper_files.table_csv(df, prov, title, headers)),
            (
                "LaTeX",
                "tex",
                "application/x-tex",
                lambda: paper_files.table_latex(latex_df, prov, title, formats, headers),
            ),
        ],
    )
