"""How to cite each page of the dashboard: the papers, datasets and models its numbers come from.

`PAGE_REFERENCES` names them per page (dashboards/app.py's url_path), by their keys in
ingest/sources/references.toml; their text is in the published `mart_references`. The dashboard's "How to cite"
section (dashboards/citations.py) and `predictabase export`'s references.bib both read them from here.
"""

from __future__ import annotations

import pandas as pd

MART = "mart_references"
HOME = "home"  # the default page: streamlit gives it the url_path ""

# the papers whose methods the marts reproduce, the datasets they read, the models they show
_GAME = ["shlegeris2024language", "gokaslan2019openwebtext"]
_CORPORA = ["futrell2021natural", "luke2018provo", "frank2013reading", "devarda2023cloze"]
_SCORED = ["allal2025smollm2", "gemmateam2025gemma3", "radford2019language"]
ALL = [
    "shlegeris2024language",
    "oh2024leading",
    "casares2022general",
    "perplexity_glossary",
    "hao2020probabilistic",
    "futrell2021natural",
    "luke2018provo",
    "frank2013reading",
    "frank2015erp",
    "devarda2023cloze",
    "pimentel2024compute",
    "smith2013effect",
    "nicenboim2023pangoling",
    "gokaslan2019openwebtext",
    "allal2025smollm2",
    "gemmateam2025gemma3",
    "radford2019language",
    "brown2020language",
    "black2021gptneo",
    "biderman2023pythia",
    "wilcox2023testing",
    "siegelman2022meco",
]
PAGE_REFERENCES: dict[str, list[str]] = {
    HOME: ALL,
    "perplexity": ["perplexity_glossary", *_GAME, *_CORPORA, *_SCORED, "brown2020language"],
    "human-perplexity": [*_GAME, "perplexity_glossary", "radford2019language"],
    "top1": [*_GAME, *_SCORED, "black2021gptneo", "brown2020language"],
    "play-top1": [*_GAME, *_CORPORA, *_SCORED],
    "play-pairwise": [*_GAME, "perplexity_glossary", "radford2019language"],
    "word-surprisal": ["oh2024leading", "pimentel2024compute", *_CORPORA, *_SCORED, "black2021gptneo"],
    "next-word": [
        "oh2024leading",
        "luke2018provo",
        "frank2013reading",
        "devarda2023cloze",
        "nicenboim2023pangoling",
        "allal2025smollm2",
        "gemmateam2025gemma3",
    ],
    "reading-times": [
        "hao2020probabilistic",
        "oh2024leading",
        "pimentel2024compute",
        *_CORPORA,
        "smith2013effect",
        "nicenboim2023pangoling",
        *_SCORED,
        "black2021gptneo",
        "biderman2023pythia",
        "wilcox2023testing",
        "siegelman2022meco",
    ],
    "languages": [
        "wilcox2023testing",
        "siegelman2022meco",
        "hao2020probabilistic",
        "oh2024leading",
        "allal2025smollm2",
        "gemmateam2025gemma3",
        "radford2019language",
        "pimentel2024compute",
        *_CORPORA,
    ],
    "wild": ["casares2022general", "brown2020language"],
    "scoreboard": [
        *_GAME,
        "perplexity_glossary",
        "oh2024leading",
        "luke2018provo",
        "frank2013reading",
        "devarda2023cloze",
        *_SCORED,
    ],
    "sql": ALL,
}


def entries(refs: pd.DataFrame | None, url_path: str) -> pd.DataFrame | None:
    """The page's rows of mart_references (`refs`), in PAGE_REFERENCES order; None when there are none."""
    if refs is None or refs.empty:
        return None
    keys = PAGE_REFERENCES.get(url_path or HOME, [])
    return refs.set_index("key").reindex(keys).dropna(subset=["bibtex"]).reset_index()


def page_bibtex(refs: pd.DataFrame | None, url_path: str) -> str | None:
    """Every BibTeX entry of the page, as one .bib text; None when the snapshot has no references."""
    rows = entries(refs, url_path)
    if rows is None:
        return None
    return "\n\n".join(rows["bibtex"]) + "\n"
