"""The references (ingest/sources/references.toml): what they hold, how a bad file is refused, mart_references, and
each dashboard page's "How to cite" (dashboards/citations.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from predictabase.cli import app
from predictabase.ingest.sources import references as refs
from predictabase.ingest.sources.catalog import datasets as catalog_datasets
from tests.dashboard_fixtures import create_marts
from tests.test_dbt_conventions import _pages

ROOT = Path(__file__).resolve().parent.parent
DASHBOARDS = ROOT / "dashboards"
#: the upstream READMEs and licenses: no number comes from them
UNCITED = {"documentation"}
SHLEGERIS = (
    "Shlegeris et al. (2024). Language Models Are Better Than Humans at Next-token Prediction. "
    "Transactions on Machine Learning Research."
)


def _citations(monkeypatch, warehouse: Path):
    """dashboards/citations.py reading the snapshot of `warehouse`, freshly imported (no cached reads)."""
    import streamlit as st

    st.cache_data.clear()
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(warehouse))
    monkeypatch.syspath_prepend(str(DASHBOARDS))
    for name in ("data", "citations"):
        sys.modules.pop(name, None)
    import citations

    return citations


def test_the_references_parse_and_cover_every_catalog_dataset():
    loaded = refs.load_references()
    by_key = {r.key: r for r in loaded}
    assert len(by_key) == len(loaded) == 22
    covered = {d for r in loaded for d in r.datasets}
    assert covered == set(catalog_datasets()) - UNCITED
    for r in loaded:
        [entry] = refs.parse_bib(r.bibtex)
        assert entry.key == r.key and r.title and r.kind in refs.KINDS
    # the five papers, as their first pages (../shared/papers/000-004) and publishers' records give them
    paper = {k: (r.author_short, r.year, r.title) for k, r in by_key.items() if r.kind == "paper"}
    assert paper == {
        "shlegeris2024language": (
            "Shlegeris et al.",
            2024,
            "Language Models Are Better Than Humans at Next-token Prediction",
        ),
        "oh2024leading": (
            "Oh & Schuler",
            2024,
            "Leading Whitespaces of Language Models' Subword Vocabulary Pose a "
            "Confound for Calculating Word Probabilities",
        ),
        "casares2022general": (
            "Casares et al.",
            2022,
            "How General-Purpose Is a Language Model? Usefulness and Safety with Human Prompters in the Wild",
        ),
        "perplexity_glossary": (None, None, "Perplexity"),
        "hao2020probabilistic": (
            "Hao et al.",
            2020,
            "Probabilistic Predictions of People Perusing: Evaluating "
            "Metrics of Language Model Performance for Psycholinguistic "
            "Modeling",
        ),
    }
    assert by_key["shlegeris2024language"].authors == "Buck Shlegeris, Fabien Roger, Lawrence Chan and Euan McLean"
    assert by_key["luke2018provo"].entry.fields["doi"] == "10.3758/s13428-017-0908-4"
    assert by_key["futrell2021natural"].venue == "Language Resources and Evaluation"
    assert (by_key["gemmateam2025gemma3"].authors, by_key["gemmateam2025gemma3"].venue) == (
        "Gemma Team",
        "arXiv:2503.19786",
    )
    assert by_key["allal2025smollm2"].title == (
        "SmolLM2: When Smol Goes Big – Data-Centric Training of a Small Language Model"
    )
    assert {k for k, r in by_key.items() if r.kind == "model"} == {
        "allal2025smollm2",
        "gemmateam2025gemma3",
        "radford2019language",
        "brown2020language",
        "black2021gptneo",
        "biderman2023pythia",
    }


BAD = {
    "unbalanced braces": (
        "title   = {Language Models Are Better",
        "title   = {{Language Models Are Better",
        "reference 'shlegeris2024language': its bibtex does not parse: unbalanced braces",
    ),
    "a key mismatch": (
        "@article{shlegeris2024language,",
        "@article{shlegeris2024,",
        "reference 'shlegeris2024language': its bibtex entry's key is 'shlegeris2024', not 'shlegeris2024language'",
    ),
    "an unknown dataset": (
        'datasets = ["wild"]',
        'datasets = ["wild", "wild_west"]',
        "reference 'casares2022general': dataset(s) ['wild_west'] not in the source catalog",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_references_file_is_refused_by_ingest_in_one_line(case, tmp_paths, tmp_path, monkeypatch):
    from predictabase.ingest.datasets.registry import run_ingest

    run_ingest(tmp_paths, ["references"], show_progress=False)
    query = "SELECT key, bibtex, source_sha256 FROM raw.references ORDER BY key"
    with duckdb.connect(str(tmp_paths.duckdb), read_only=True) as con:
        before = (con.execute(query).fetchall(), con.execute("SELECT count(*) FROM raw.ingest_log").fetchone())
    good, bad, problem = BAD[case]
    text = refs.REFERENCES_FILE.read_text(encoding="utf-8")
    assert text.count(good) == 1
    bad_file = tmp_path / "references.toml"
    bad_file.write_text(text.replace(good, bad), encoding="utf-8")
    monkeypatch.setattr(refs, "REFERENCES_FILE", bad_file)
    res = CliRunner().invoke(app, ["ingest", "references", "--warehouse", str(tmp_paths.warehouse)])
    out = res.output.strip()
    assert res.exit_code == 2, out
    assert len(out.splitlines()) == 1 and out.startswith(f"error: {bad_file}: {problem}"), out
    with duckdb.connect(str(tmp_paths.duckdb), read_only=True) as con:
        assert (con.execute(query).fetchall(), con.execute("SELECT count(*) FROM raw.ingest_log").fetchone()) == before


def test_refresh_reingests_the_references_when_the_file_changes(tmp_paths, tmp_path, monkeypatch):
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.refresh.plans import plan_ingest

    run_ingest(tmp_paths, ["references"], show_progress=False)
    assert "references" not in plan_ingest(tmp_paths)
    changed = tmp_path / "references.toml"
    changed.write_text(
        refs.REFERENCES_FILE.read_text(encoding="utf-8").replace("year    = {2024}", "year    = {2025}", 1),
        encoding="utf-8",
    )
    monkeypatch.setattr(refs, "REFERENCES_FILE", changed)
    assert plan_ingest(tmp_paths)["references"] == f"{refs.INPUT_KEY} changed"


def test_mart_references_holds_every_reference_with_its_bibtex(real_warehouse):
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        rows = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT key, kind, bibtex, datasets, citation, year FROM main.mart_references"
            ).fetchall()
        }
    loaded = refs.load_references()
    assert {k: (kind, bib) for k, (kind, bib, *_rest) in rows.items()} == {r.key: (r.kind, r.bibtex) for r in loaded}
    assert rows["shlegeris2024language"][3] == SHLEGERIS
    assert rows["luke2018provo"][2] == ["provo", "provo_cloze", "provo_eye_tracking", "provo_word_boxes"]
    assert rows["oh2024leading"][2] == [] and rows["brown2020language"][4] == 2020
    assert rows["perplexity_glossary"][3] == (
        "Perplexity. Online glossary entry (the site is in beta; contact via chrispaton.org)."
    )


def test_every_page_cites_references_of_the_file():
    from predictabase.citations import ALL, PAGE_REFERENCES

    keys = [r.key for r in refs.load_references()]
    assert set(_pages()) | {"scoreboard"} == set(PAGE_REFERENCES)
    assert ALL == keys and PAGE_REFERENCES["home"] == PAGE_REFERENCES["sql"] == ALL
    for page, cited in PAGE_REFERENCES.items():
        assert cited and len(cited) == len(set(cited)) and set(cited) <= set(keys), page


def test_page_bibtex_holds_exactly_the_page_references(real_warehouse, monkeypatch):
    shown = _citations(monkeypatch, real_warehouse.warehouse)
    table = shown.data.table(shown.MART)  # what the dashboard reads; `predictabase export` reads the same mart

    def page_bibtex(page: str) -> str | None:
        return shown.page_bibtex(table, page)

    for page, cited in shown.PAGE_REFERENCES.items():
        entries = refs.parse_bib(page_bibtex(page))
        assert [e.key for e in entries] == cited, page
    assert page_bibtex("") == page_bibtex("home")  # streamlit's url_path of the default page
    wild = refs.parse_bib(page_bibtex("wild"))
    assert wild[0].fields["doi"] == "10.1609/aaai.v36i5.20466"


def _show_wild():
    import citations

    citations.show("wild")


def test_show_lists_the_references_in_plain_words_with_a_bib_download(real_warehouse, monkeypatch):
    from streamlit.testing.v1 import AppTest

    _citations(monkeypatch, real_warehouse.warehouse)
    at = AppTest.from_function(_show_wild, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert [s.value for s in at.subheader] == ["How to cite"]
    listed = at.markdown[-1].value.splitlines()
    assert listed == [
        "- Casares et al. (2022). How General-Purpose Is a Language Model? Usefulness and Safety with Human Prompters "
        "in the Wild. Proceedings of the AAAI Conference on Artificial Intelligence.",
        "- Brown et al. (2020). Language Models are Few-Shot Learners. Advances in Neural Information Processing "
        "Systems.",
    ]
    [button] = at.download_button
    assert button.label == "BibTeX (.bib)"


def test_show_asks_for_a_rebuild_when_the_snapshot_has_no_references(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    create_marts(tmp_path / "marts.duckdb")
    shown = _citations(monkeypatch, tmp_path)
    assert shown.page_bibtex(shown.data.table(shown.MART), "wild") is None
    at = AppTest.from_function(_show_wild, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    [caption] = at.caption
    assert "no references (mart_references)" in caption.value and "predictabase build" in caption.value
    assert not at.download_button
