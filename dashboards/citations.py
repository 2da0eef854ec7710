"""How to cite each page: the papers, datasets and models its numbers come from, with a BibTeX download.

`PAGE_REFERENCES` names them per page (dashboards/app.py's url_path), by their keys in ingest/sources/references.toml;
their text is read from the published `mart_references`, like every other number of the dashboard. `show(url_path)`
draws the section under a page (app.py calls it after the page has run); `page_bibtex(url_path)` is the same .bib
text, for `predictabase export`.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import data

MART = "mart_references"
HOME = "home"  # the default page: streamlit gives it the url_path ""

# the papers whose methods the marts reproduce, the datasets they read, the models they show
_GAME = ["shlegeris2024language", "gokaslan2019openwebtext"]
_CORPORA = ["futrell2021natural", "luke2018provo", "frank2013reading", "devarda2023cloze"]
_SCORED = ["allal2025smollm2", "gemmateam2025gemma3", "radford2019language"]
ALL = ["shlegeris2024language", "oh2024leading", "casares2022general", "perplexity_glossary", "hao2020probabilistic",
       "futrell2021natural", "luke2018provo", "frank2013reading", "frank2015erp", "devarda2023cloze",
       "pimentel2024compute", "smith2013effect", "nicenboim2023pangoling", "gokaslan2019openwebtext",
       "allal2025smollm2", "gemmateam2025gemma3", "radford2019language", "brown2020language", "black2021gptneo",
       "biderman2023pythia"]
PAGE_REFERENCES: dict[str, list[str]] = {
    HOME: ALL,
    "perplexity": ["perplexity_glossary", *_GAME, *_CORPORA, *_SCORED, "brown2020language"],
    "human-perplexity": [*_GAME, "perplexity_glossary", "radford2019language"],
    "top1": [*_GAME, *_SCORED, "black2021gptneo", "brown2020language"],
    "play-top1": [*_GAME, *_CORPORA, *_SCORED],
    "play-pairwise": [*_GAME, "perplexity_glossary", "radford2019language"],
    "word-surprisal": ["oh2024leading", "pimentel2024compute", *_CORPORA, *_SCORED, "black2021gptneo"],
    "next-word": ["oh2024leading", "luke2018provo", "frank2013reading", "devarda2023cloze", "nicenboim2023pangoling",
                  "allal2025smollm2", "gemmateam2025gemma3"],
    "reading-times": ["hao2020probabilistic", "oh2024leading", "pimentel2024compute", *_CORPORA, "smith2013effect",
                      "nicenboim2023pangoling", *_SCORED, "black2021gptneo", "biderman2023pythia"],
    "wild": ["casares2022general", "brown2020language"],
    "scoreboard": [*_GAME, "perplexity_glossary", "oh2024leading", "luke2018provo", "frank2013reading",
                   "devarda2023cloze", *_SCORED],
    "sql": ALL,
}


def _entries(url_path: str) -> pd.DataFrame | None:
    """The page's rows of mart_references, in PAGE_REFERENCES order; None when the snapshot has no references."""
    refs = data.table(MART)
    if refs is None or refs.empty:
        return None
    keys = PAGE_REFERENCES.get(url_path or HOME, [])
    return refs.set_index("key").reindex(keys).dropna(subset=["bibtex"]).reset_index()


def page_bibtex(url_path: str) -> str | None:
    """Every BibTeX entry of the page, as one .bib text; None when the snapshot has no references."""
    entries = _entries(url_path)
    if entries is None:
        return None
    return "\n\n".join(entries["bibtex"]) + "\n"


def show(url_path: str) -> None:
    """The "How to cite" section under a page: its references in plain words and a BibTeX (.bib) download."""
    page = url_path or HOME
    if page not in PAGE_REFERENCES:
        return
    st.divider()
    st.subheader("How to cite")
    entries = _entries(page)
    if entries is None:
        st.caption("This snapshot has no references (mart_references): rebuild it (`predictabase ingest references`, "
                   "then `predictabase build`) to list them here.")
        return
    st.caption("The numbers on this page come from these papers, datasets and models:")
    st.markdown("\n".join(f"- {c}" for c in entries["citation"]))
    st.download_button("BibTeX (.bib)", data=page_bibtex(page), file_name=f"predictabase-{page}.bib",
                       mime="application/x-bibtex", key=f"bibtex-{page}")
