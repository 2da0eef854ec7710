"""How to cite each page: the papers, datasets and models its numbers come from, with a BibTeX download.

Which references each page cites is declared in predictabase/citations.py (shared with `predictabase export`);
their text is read from the published `mart_references`, like every other number of the dashboard. `show(url_path)`
draws the section under a page (app.py calls it after the page has run).
"""

from __future__ import annotations

import streamlit as st

import data
from predictabase.citations import HOME, PAGE_REFERENCES, entries, page_bibtex

MART = "mart_references"  # predictabase.citations.MART, written here for the exposures' test (tests/test_dbt_conventions.py)


def show(url_path: str) -> None:
    """The "How to cite" section under a page: its references in plain words and a BibTeX (.bib) download."""
    page = url_path or HOME
    if page not in PAGE_REFERENCES:
        return
    st.divider()
    st.subheader("How to cite")
    refs = data.table(MART)
    rows = entries(refs, page)
    if rows is None:
        st.caption(
            "This snapshot has no references (mart_references): rebuild it (`predictabase ingest references`, "
            "then `predictabase build`) to list them here."
        )
        return
    st.caption("The numbers on this page come from these papers, datasets and models:")
    st.markdown("\n".join(f"- {c}" for c in rows["citation"]))
    st.download_button(
        "BibTeX (.bib)",
        data=page_bibtex(refs, page),
        file_name=f"predictabase-{page}.bib",
        mime="application/x-bibtex",
        key=f"bibtex-{page}",
    )
