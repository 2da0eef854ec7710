"""The worked example of docs/guides/own-corpus.md, end to end through the user's path: Brown (Smith & Levy 2013's self-paced
reading corpus, in the mirror only as Pimentel & Meister's per-word table) added with `predictabase corpus add`
from CSVs derived here from the upstream file, then `predictabase refresh` with SmolLM2 (real CLI processes).

After the refresh Brown has SmolLM2's word surprisal (LW and WT), delta log-likelihood for SmolLM2 and
Pimentel & Meister's 11 models next to their published Brown values, and is in the marts every page reads;
`predictabase export words` writes one row per Brown word with three models' columns and the provenance. Then
`corpus remove brown` + `refresh` (on a copy): Brown is gone and every other corpus's marts are unchanged, row for
row. The warehouse is the session's `refreshed` one (tests/conftest.py), shared with tests/test_refresh.py.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.helpers import q
from tests.user_corpus_helpers import BROWN_TITLE, MECO_GERMAN_TITLE, MECO_MEASURES, brown_frames, meco_german_frames

CLI = str(Path(sys.executable).with_name("predictabase"))
PM_MODELS = [
    "gpt2",
    "gpt2-medium",
    "gpt2-large",
    "gpt2-xl",
    "pythia-70m",
    "pythia-160m",
    "pythia-410m",
    "pythia-1.4b",
    "pythia-2.8b",
    "pythia-6.9b",
    "pythia-12b",
]
#: marts compared before and after removing Brown (every row of the other corpora)
OTHERS = [
    "mart_word_surprisal",
    "mart_delta_loglik",
    "mart_model_perplexity",
    "mart_reading_vs_published",
    "mart_words_export",
    "mart_pnc",
    "mart_corpora",
]


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    res = subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=1500, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def others(db: Path) -> dict[str, list[tuple]]:
    out = {}
    for t in OTHERS:
        cols = [
            r[0]
            for r in q(
                db,
                f"SELECT column_name FROM information_schema.columns WHERE table_name = '{t}' "
                "AND column_name NOT IN ('built_at', 'snapshot_id') ORDER BY ordinal_position",
            )
        ]
        out[t] = q(db, f"SELECT {', '.join(cols)} FROM {t} WHERE corpus <> 'brown' ORDER BY ALL")
    return out


def same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    return x == y


@pytest.fixture(scope="module")
def brown(refreshed, mirror):
    """The session's refreshed warehouse (tests/conftest.py): Brown added with `corpus add`, then `refresh`."""
    w = refreshed.paths.warehouse
    assert refreshed.result.returncode == 0, refreshed.result.stderr[-3000:]
    env = {
        **refreshed.env,
        "PREDICTABASE_WAREHOUSE": str(w),
        "PREDICTABASE_MIRROR": str(mirror),
        "PREDICTABASE_MODELS": str(refreshed.models),
    }
    return {
        "w": w,
        "tmp": refreshed.root,
        "env": env,
        "marts": w / "marts.duckdb",
        "words": brown_frames(mirror).height,
    }


def test_brown_has_smollm2_word_surprisal(brown):
    rows = q(
        brown["marts"],
        "SELECT model_key, count(*), count(surprisal_wt_nats), count(surprisal_lw_nats) "
        "FROM mart_word_surprisal WHERE corpus = 'brown' GROUP BY 1 ORDER BY 1",
    )
    by = {r[0]: r[1:] for r in rows}
    assert by["smollm2-135m"] == (7188, 7188, 7188) and brown["words"] == 7188
    assert {"smollm2-135m", *PM_MODELS} <= set(by)  # (and the tiny GPT-2 of the session's models file)
    assert q(brown["marts"], "SELECT title, origin FROM mart_corpora WHERE corpus = 'brown'") == [(BROWN_TITLE, "user")]


def test_a_corpus_in_another_language_by_declaration_alone(brown, mirror, monkeypatch):
    """MECO's German texts and eye-tracking means, added with `corpus add --language de` and no code
    (tests/conftest.py `refreshed`): declared German in the marts, word frequencies from wordfreq's German list
    (checked word by word against wordfreq itself), every model's word surprisal, delta log-likelihood per
    measure, and on every page that offers a corpus."""
    import wordfreq

    marts, db = brown["marts"], brown["w"] / "predictabase.duckdb"
    words = meco_german_frames(mirror)
    assert words.height == 2026
    assert q(
        marts,
        "SELECT title, language, origin, n_texts, n_words, reading_measures, frequency_source "
        "FROM mart_corpora WHERE corpus = 'meco_german'",
    ) == [(MECO_GERMAN_TITLE, "de", "user", 12, 2026, list(MECO_MEASURES.values()), "wordfreq")]
    # the shipped corpora's languages are their declarations' (MECO's 11), Brown's English
    from predictabase.ingest import corpus_table

    assert q(
        marts, "SELECT corpus, language FROM mart_corpora WHERE origin = 'shipped' OR corpus = 'brown' ORDER BY 1"
    ) == sorted([(k, c.language) for k, c in corpus_table.CORPORA.items()] + [("brown", "en")])
    # every word's frequency is wordfreq's German one (not its English one: "der" is common in German only)
    rows = q(
        db,
        "SELECT w.word, f.zipf_frequency, f.wordfreq_language, f.wordfreq_wordlist FROM raw.words w "
        "JOIN raw.word_frequencies f USING (corpus, doc_id, word_index) WHERE corpus = 'meco_german' "
        "ORDER BY doc_id, word_index",
    )
    assert len(rows) == 2026 and {(r[2], r[3]) for r in rows} == {("de", "large")}
    assert [r[1] for r in rows] == [
        wordfreq.zipf_frequency(r[0], "de", "large") if wordfreq.lossy_tokenize(r[0], "de") else None for r in rows
    ]
    der = [r[1] for r in rows if r[0] == "der"]
    assert der and der[0] > 6.5 > wordfreq.zipf_frequency("der", "en", "large")
    # every model's word surprisal on every word; delta log-likelihood on each of its measures
    by_model = dict(
        q(
            marts,
            "SELECT model_key, count(surprisal_wt_nats) FROM mart_word_surprisal "
            "WHERE corpus = 'meco_german' AND run_source = 'scored' GROUP BY 1",
        )
    )
    assert by_model.get("smollm2-135m") == 2026 and len(by_model) == 2, by_model
    dll = q(
        marts,
        "SELECT DISTINCT measure FROM mart_delta_loglik WHERE corpus = 'meco_german' "
        "AND model_key = 'smollm2-135m' AND method = 'cv_means' ORDER BY 1",
    )
    assert [m for (m,) in dll] == sorted(MECO_MEASURES.values())
    # on every page that offers a corpus, by its title
    offered = _corpus_options(brown["w"], monkeypatch)
    assert set(offered) == {"perplexity", "reading_times", "word_surprisal"}, offered
    assert all(MECO_GERMAN_TITLE in options for options in offered.values()), offered


def _corpus_options(warehouse: Path, monkeypatch) -> dict[str, list[str]]:
    """page -> the options of its corpus selector(s), for every page of the dashboard that has one (AppTest on the
    published snapshot; the games, whose pages need a player, aside)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent / "dashboards"
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(warehouse))
    monkeypatch.syspath_prepend(str(root))
    out: dict[str, list[str]] = {}
    for page in sorted((root / "app_pages").glob("*.py")):
        if page.stem.startswith("play_"):
            continue
        st.cache_data.clear()
        for m in ("data", "labels"):
            sys.modules.pop(m, None)
        at = AppTest.from_file(str(page), default_timeout=180).run()
        assert not at.exception, (page.stem, [e.message for e in at.exception])
        options = [o for w in (*at.selectbox, *at.multiselect) if w.label in ("Corpus", "Corpora") for o in w.options]
        if options:
            out[page.stem] = options
    return out


def test_brown_delta_loglik_next_to_published(brown):
    rows = q(
        brown["marts"],
        "SELECT model_key, definition, n_words, delta_loglik_nats_per_row FROM mart_delta_loglik "
        "WHERE corpus = 'brown' AND measure = 'spr' AND method = 'cv_means'",
    )
    models = {r[0] for r in rows}
    assert {"smollm2-135m", *PM_MODELS} <= models
    assert {r[1] for r in rows} == {"lw", "wt"}
    # the rows with all 3 previous words: 7188 words - 3 per text x 13 texts
    assert {r[2] for r in rows} == {7188 - 3 * 13}
    # their computation replayed on their Brown inputs (their folds): every model and definition, to 1e-9
    replayed = q(
        brown["marts"],
        "SELECT predictor, definition, agrees, abs_difference FROM mart_reading_vs_published "
        "WHERE corpus = 'brown' AND measure = 'spr (their per-word means)'",
    )
    assert len(replayed) == 22 and {r[0] for r in replayed} == set(PM_MODELS)
    assert all(r[2] and r[3] < 1e-9 for r in replayed), replayed
    # our own pipeline (our baseline and folds) next to their published values: every run the marts use
    ours = {
        (r[0], r[1]): r[2:]
        for r in q(
            brown["marts"],
            "SELECT predictor, definition, ours, published FROM mart_reading_vs_published "
            "WHERE corpus = 'brown' AND measure = 'spr' AND statistic = 'delta_loglik_nats_per_word'",
        )
    }
    assert {"smollm2-135m", *(f"pimentel-meister:{m}" for m in PM_MODELS)} <= {p for p, _ in ours}
    assert ours[("smollm2-135m", "wt")][1] is None  # a model they did not fit
    for m in PM_MODELS:
        for d in ("lw", "wt"):
            mine, theirs = ours[(f"pimentel-meister:{m}", d)]
            # both positive and of one size (ours is lower: wordfreq frequencies, not their unigram model's)
            assert 0 < mine < theirs < 2 * mine, (m, d, mine, theirs)


def test_export_words_three_models(brown):
    out = brown["tmp"] / "brown_words.csv"
    cli(
        "export",
        "words",
        "--corpus",
        "brown",
        "-m",
        "smollm2-135m",
        "-m",
        "gpt2",
        "-m",
        "pythia-160m",
        "--out",
        str(out),
        env=brown["env"],
    )
    lines = out.read_text().splitlines()
    header = [ln for ln in lines if ln.startswith("# ")]
    assert any(
        "model smollm2_135m: model_key=smollm2-135m" in h and "run_id=" in h and "model_revision=" in h for h in header
    )
    assert any("corpus: corpus=brown" in h and "source_sha256=" in h for h in header)
    t = pl.read_csv(out, comment_prefix="#")
    assert t.height == 7188
    for m in ("smollm2_135m", "gpt2", "pythia_160m"):
        for c in ("surprisal_lw_bits", "surprisal_lw_nats", "surprisal_wt_bits", "surprisal_wt_nats"):
            assert t[f"{m}__{c}"].null_count() == 0
    assert t["mean_rt_spr_ms"].null_count() == 0 and "mean_rt_gaze_duration_ms" not in t.columns
    ours = q(
        brown["marts"],
        "SELECT sum(surprisal_wt_bits) FROM mart_word_surprisal WHERE corpus = 'brown' AND model_key = 'smollm2-135m'",
    )[0][0]
    assert t["smollm2_135m__surprisal_wt_bits"].sum() == pytest.approx(ours, rel=1e-9)
    pq = brown["tmp"] / "brown_words.parquet"
    cli("export", "words", "--corpus", "brown", "-m", "gpt2", "--out", str(pq), env=brown["env"])
    import pyarrow.parquet as papq

    prov = json.loads(papq.read_metadata(pq).metadata[b"predictabase.provenance"])  # the file's key-value metadata
    assert [r["model_key"] for r in prov["runs"]] == ["gpt2"] and prov["corpus"]["title"] == BROWN_TITLE
    assert pl.read_parquet(pq).height == 7188


def test_removing_brown_leaves_the_other_corpora_unchanged(brown, tmp_path):
    w = tmp_path / "warehouse"
    shutil.copytree(brown["w"], w)
    env = {**brown["env"], "PREDICTABASE_WAREHOUSE": str(w)}
    marts = w / "marts.duckdb"
    before = others(marts)
    assert q(marts, "SELECT count(*) FROM mart_word_surprisal WHERE corpus = 'brown'")[0][0] > 0
    cli("corpus", "remove", "brown", env=env)
    assert not (w / "raw" / "user" / "brown").exists() and not list((w / "parquet").rglob("corpus=brown"))
    cli("refresh", env=env)
    for t in OTHERS:
        assert q(marts, f"SELECT count(*) FROM {t} WHERE corpus = 'brown'")[0][0] == 0, t
    after = others(marts)
    assert {t: len(r) for t, r in after.items()} == {t: len(r) for t, r in before.items()}
    for t in OTHERS:  # equal, floats to 1e-9 relative
        for x, y in zip(before[t], after[t]):
            assert same(x, y), (t, x, y)
    assert q(w / "predictabase.duckdb", "SELECT count(*) FROM raw.words WHERE corpus = 'brown'") == [(0,)]
    listed = cli("corpus", "list", "--json", env=env).stdout
    assert '"brown"' not in listed and '"provo"' in listed
