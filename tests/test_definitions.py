"""The dataset definitions (ingest/sources/datasets.toml) against the catalog and the ingest jobs."""

from __future__ import annotations

import pytest

from predictabase.core.errors import IngestError
from predictabase.ingest.datasets.registry import JOBS
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.catalog import load_catalog
from predictabase.ingest.sources.definitions import dataset, dataset_names, load_definitions, owner_of


def test_every_role_names_catalog_files_and_every_file_belongs_to_its_first_dataset():
    for d in load_definitions():
        for spec in d.files.values():
            assert spec.catalog_files(), f"{spec.name} matches no catalog file"
    for f in load_catalog():
        assert f.dataset in dataset_names(), f.path
        assert f.dataset == (owner_of(f.path) or "documentation"), f.path  # scripts/make_catalog.py's rule


def test_ingest_names_and_dataset_names_are_one_vocabulary():
    # every job is named after the dataset it loads, but for the model table, the references and the
    # word-probability-sums diagnostic, which ship with the code, the user's corpora (`predictabase corpus add`: their files are declared in the warehouse, not in the
    # catalog) and the live games' answers (the store the dashboard writes in the warehouse)
    own = {"model_table", "references", "word_probability_sums", "declared_corpora", "live"}
    # ... and a collection's corpus jobs, named after their corpus (MECO's languages: meco_nl, ...), which read
    # their adapter's dataset (wilcox_xlang)
    from predictabase.ingest import corpus_table

    own |= {k for k, c in corpus_table.CORPORA.items() if c.adapter}
    assert set(JOBS) - own <= set(dataset_names()) and not own & set(dataset_names())
    counts = {d: sum(f.dataset == d for f in load_catalog()) for d in ("lm_game", "pairwise", "provo", "wild")}
    assert counts == {"lm_game": 469, "pairwise": 401, "provo": 55, "wild": 2}


def test_globs_stay_inside_one_folder():
    readmes = dataset("documentation").file("readmes").catalog_files()
    assert "natural_stories/README.md" in [f.path for f in readmes]
    assert "natural_stories/freqs/README.md" not in [f.path for f in readmes]  # belongs to natural_stories_freqs


def test_the_generic_reader_applies_the_declared_options(fetched_raw):
    spec = dataset("natural_stories").file("tokens")
    src = readers.source(spec, fetched_raw)
    rows = readers.delimited(src.data, src.path, spec)
    assert len(rows) == 10256 and rows[0] == {"word": "If", "zone": "1", "item": "1"}
    with pytest.raises(IngestError, match=r"missing column\(s\) \['zone'\]"):
        readers.delimited(src.data.replace(b"zone", b"pos", 1), src.path, spec)
    cloze = dataset("provo_cloze").file("cloze")  # an R data file with cp1252 strings
    df = readers.rdata(readers.source(cloze, fetched_raw).local, cloze.path, cloze)
    assert len(df) == 2730 and set(cloze.columns) <= set(df.columns)
    with pytest.raises(IngestError, match="ucl_devarda/all_measures.csv: not valid utf-8"):
        ucl = dataset("ucl").file("measures")
        readers.delimited(readers.source(ucl, fetched_raw).data.replace(b"Arthur", b"Arth\xfcr", 1), ucl.path, ucl)


def test_worked_example_natural_stories_spr_means(fetched_raw, tmp_path):
    """docs/architecture.md's worked example: a definition + a 30-line loader + one registry line."""
    import shutil

    import duckdb

    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.datasets.registry import run_ingest

    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    counts = run_ingest(p, ["natural_stories", "natural_stories_spr_means"], show_progress=False)
    assert counts["natural_stories_spr_means"] == {"natural_stories_spr_means": 10256}
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        # every mean joins exactly one corpus word by the corpus's own key (story, zone)
        assert con.execute("""
            select count(*), count(w.word), count(*) filter (where w.word = m.word)
            from raw.natural_stories_spr_means m
            left join raw.words w on w.corpus = 'natural_stories' and w.doc_id = m.doc_id
                 and w.native_id = m.native_id""").fetchone() == (10256, 10256, 10256)
        mean, n = con.execute(
            "select mean_rt_ms, n_readers from raw.natural_stories_spr_means where doc_id = '9' and native_id = '344'"
        ).fetchone()
        assert (round(mean, 4), n) == (426.0921, 76)  # the file's first data row


def test_a_malformed_definition_is_a_one_line_error_naming_the_file(tmp_path, monkeypatch):
    from predictabase.ingest.sources import definitions

    bad = tmp_path / "datasets.toml"
    bad.write_text('[[dataset]]\nname = "x"\n[dataset.files.a]\npath = "p"\nformat = "xlsx"\n')
    monkeypatch.setattr(definitions, "DEFINITIONS_FILE", bad)
    definitions.load_definitions.cache_clear()
    try:
        with pytest.raises(IngestError, match=r"datasets\.toml: x\.a format 'xlsx' not in"):
            definitions.load_definitions()
    finally:
        definitions.load_definitions.cache_clear()
