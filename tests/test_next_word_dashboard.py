"""The "Humans vs models: next word" page against a real warehouse: a copy of the session's real warehouse
(conftest.real_warehouse) with Provo, the cloze norms and UCL's response distributions ingested, every cloze
candidate scored by the tiny GPT-2 (`predictabase cloze`'s run_cloze), the cloze marts built and published.
Every number the tests expect is queried from the published marts; AppTest reads the page's elements."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import marts_q as q

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "dashboards" / "app_pages" / "next_word.py"
PEOPLE = "people: share of the responses"
MODEL = "model: WT probability, renormalised over the responses"


@pytest.fixture(scope="module")
def nw_warehouse(real_warehouse, tiny_gpt2_dir, tmp_path_factory):
    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.scoring.cloze_responses import run_cloze
    from predictabase.warehouse import dbt_build, publish

    p = make_paths(tmp_path_factory.mktemp("next_word") / "warehouse")
    shutil.copytree(real_warehouse.warehouse, p.warehouse)
    run_ingest(p, ["provo", "provo_cloze", "ucl_cloze", "ucl_cloze_distributions"], show_progress=False)
    run_cloze(p, str(tiny_gpt2_dir), device="cpu", dtype="float32", show_progress=False)
    dbt_build(p, select="stg_documents tag:cloze")
    publish(p, allow_shrink=True)
    return p


@pytest.fixture(scope="module")
def tiny(nw_warehouse) -> str:
    [(key,)] = q(nw_warehouse, "select distinct model_key from mart_cloze_vs_model_summary")
    assert key.startswith("tiny-gpt2")
    return key


def _app(warehouse: Path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(warehouse))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    sys.modules.pop("labels", None)
    return AppTest.from_file(str(PAGE), default_timeout=120)


@pytest.fixture
def page(nw_warehouse, monkeypatch):
    return _app(nw_warehouse.warehouse, monkeypatch)


def _ok(at) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _chart_data(at, chart) -> list[tuple[str, list[dict]]]:
    """(dataset name, rows) of each dataset of a Vega-Lite chart."""
    import pyarrow as pa

    return [(d.name, pa.ipc.open_stream(d.data.data).read_all().to_pylist()) for d in chart.proto.datasets]


def pct(x, digits=1) -> str:
    return f"{100 * x:.{digits}f}%"


def test_opens_with_the_finding_from_the_summary_mart(page, nw_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    assert at.title[0].value == "Humans vs models: next word"
    [(modal_wt, modal_h, top, n, rho, lo, hi, mass)] = q(
        nw_warehouse,
        f"""
        select model_probability_modal_wt_mean, human_probability_modal_mean, model_top_is_human_modal_mean,
               n_contexts, spearman_rho_mean, spearman_rho_ci_low, spearman_rho_ci_high,
               model_mass_on_responses_wt_mean
        from mart_cloze_vs_model_summary where corpus = 'ucl' and model_key = '{tiny}'""",
    )
    finding = at.markdown[0].value
    assert finding.startswith("**On the UCL sentences")
    assert pct(modal_wt) in finding and pct(modal_h) in finding and pct(top, 0) in finding
    assert f"{n:,} contexts" in finding and n == 1726
    second = at.markdown[1].value
    assert f"{rho:.2f}" in second and f"{lo:.2f}" in second and f"{hi:.2f}" in second and pct(mass, 0) in second


def test_a_sentence_word_by_word(page, nw_warehouse, tiny) -> None:
    """Stepping to a word shows its context, its metrics and the two distributions from the marts."""
    at = page.run()
    _ok(at)
    assert at.selectbox(key="nw_sentence").value == "1"
    positions = at.select_slider(key="nw_position").options
    assert len(positions) == 4  # 'Anne lost control and laughed.': the words after the first
    at.select_slider(key="nw_position").set_value(2).run()
    _ok(at)
    [(context, true_word, modal, top, h_ent, m_ent)] = q(
        nw_warehouse,
        f"""
        select context, true_word, modal_response, model_top_response, human_entropy_bits,
               model_entropy_renormalised_bits
        from mart_cloze_vs_model where corpus = 'ucl' and doc_id = '1' and word_index = 2 and model_key = '{tiny}'""",
    )
    assert context == "Anne lost" and true_word == "control"
    assert any(m.value.startswith(f"> {context} **___**") and true_word in m.value for m in at.markdown)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["people's most frequent answer"] == modal
    assert metrics["model's favourite among them"] == top
    assert metrics["entropy (bits), people vs model"] == f"{h_ent:.2f} vs {m_ent:.2f}"
    [(rho, kl)] = q(
        nw_warehouse,
        f"""
        select spearman_rho, kl_human_model_bits from mart_cloze_vs_model
        where corpus = 'ucl' and doc_id = '1' and word_index = 2 and model_key = '{tiny}'""",
    )
    assert metrics["Spearman's ρ, people vs model"] == ("—" if rho is None else f"{rho:.2f}")
    assert metrics["KL(people ‖ model) (bits)"] == ("—" if kl is None else f"{kl:.2f}")
    bars = at.get("vega_lite_chart")[0]
    spec = json.loads(bars.proto.spec)
    assert spec["encoding"]["x"]["title"].startswith("probability")
    assert spec["encoding"]["y"]["title"].startswith("answer")
    assert spec["encoding"]["color"]["scale"]["domain"] == [PEOPLE, MODEL]  # the legend names both bars
    ((_, rows),) = _chart_data(at, bars)
    expected = q(
        nw_warehouse,
        f"""
        select response, human_probability, model_probability_wt_renormalised from mart_cloze_vs_model_responses
        where doc_id = '1' and word_index = 2 and model_key = '{tiny}' and (human_rank <= 15 or model_rank <= 5)""",
    )
    assert len(rows) == 2 * len(expected) > 0
    people = {r["response"]: r["probability"] for r in rows if r["who"] == PEOPLE}
    model = {r["response"]: r["probability"] for r in rows if r["who"] == MODEL}
    for response, hp, mp in expected:
        assert people[response] == pytest.approx(hp) and model[response] == pytest.approx(mp)


def test_calibration_plot(page, nw_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    cal = at.get("vega_lite_chart")[1]
    spec = json.loads(cal.proto.spec)
    diagonal, points = spec["layer"]
    assert "perfect calibration" in json.dumps(diagonal["encoding"]["strokeDash"])
    assert points["encoding"]["x"]["title"].startswith("people's cloze probability")
    assert points["encoding"]["color"]["legend"]["title"] == "corpus (words)"
    data = dict(_chart_data(at, cal))
    pts = data[points["data"]["name"]]
    expected = q(
        nw_warehouse,
        f"""select corpus, bin_index, n_words, model_probability_wt_mean
                                   from mart_cloze_calibration where model_key = '{tiny}'""",
    )
    assert {(r["corpus"], r["bin_index"]) for r in pts} == {(c, b) for c, b, _, _ in expected}
    by = {(c, b): (n, m) for c, b, n, m in expected}
    for r in pts:
        assert (r["n_words"], r["model_probability_wt_mean"]) == pytest.approx(by[(r["corpus"], r["bin_index"])])
    assert {"ucl", "provo"} <= {c for c, _, _, _ in expected}


def test_summary_table_by_model(page, nw_warehouse, tiny) -> None:
    at = page.run()
    _ok(at)
    [grid] = [d.value for d in at.dataframe]
    assert list(grid["corpus"]) == ["Provo", "UCL"]
    [(n_provo, n_ucl)] = q(
        nw_warehouse,
        f"""
        select max(n_contexts) filter (where corpus = 'provo'), max(n_contexts) filter (where corpus = 'ucl')
        from mart_cloze_vs_model_summary where model_key = '{tiny}'""",
    )
    assert list(grid["n_contexts"]) == [n_provo, n_ucl]
    # headers with units come from labels (the grid keeps the column names; the config carries the headers)
    import labels

    assert all(c in labels.COLUMNS for c in grid.columns)
    assert "bits" in labels.header("kl_human_model_bits_mean")


def test_snapshot_without_the_marts(nw_warehouse, tmp_path: Path, monkeypatch) -> None:
    """A snapshot from before the cloze marts: the page says what is missing; an empty summary says how to fill it."""
    import duckdb

    snap = tmp_path / "marts.duckdb"
    shutil.copy(nw_warehouse.marts, snap)
    with duckdb.connect(str(snap)) as con:
        con.execute("DROP TABLE mart_cloze_vs_model_summary")
    at = _app(snap, monkeypatch).run()
    _ok(at)
    assert "mart_cloze_vs_model_summary` is not in this snapshot yet" in at.warning[0].value
    with duckdb.connect(str(snap)) as con:
        con.execute("CREATE TABLE mart_cloze_vs_model_summary AS SELECT 'ucl' AS corpus, 'm' AS model_key WHERE false")
    at = _app(snap, monkeypatch).run()
    _ok(at)
    assert "predictabase cloze" in at.info[0].value


def test_mart_measures_recomputed_from_the_responses(nw_warehouse, tiny) -> None:
    """The per-context measures of mart_cloze_vs_model equal numpy/scipy on the context's rows of
    mart_cloze_vs_model_responses; the summary's means are the contexts' means inside their intervals; the
    calibration bins hold every word once."""
    import numpy as np
    from scipy import stats

    ctx = q(
        nw_warehouse,
        f"""
        select doc_id, word_index, human_entropy_bits, model_entropy_renormalised_bits, kl_human_model_bits,
               js_divergence_bits, spearman_rho, model_mass_on_responses_wt, human_probability_modal,
               model_probability_modal_wt, modal_response
        from mart_cloze_vs_model where corpus = 'ucl' and model_key = '{tiny}' order by doc_id, word_index limit 40""",
    )
    assert len(ctx) == 40
    for doc, wi, h_ent, m_ent, kl, js, rho, mass, hp_modal, _mp_modal, modal in ctx:
        rows = q(
            nw_warehouse,
            f"""select response, response_count, human_probability, model_probability_wt
                                   from mart_cloze_vs_model_responses where model_key = '{tiny}'
                                   and doc_id = '{doc}' and word_index = {wi} order by response""",
        )
        counts = np.array([r[1] for r in rows], dtype=float)
        p = counts / counts.sum()
        wt = np.array([r[3] for r in rows])
        qn = wt / wt.sum()
        m = (p + qn) / 2
        assert h_ent == pytest.approx(-(p * np.log2(p)).sum(), abs=1e-9)
        assert m_ent == pytest.approx(-(qn * np.log2(qn)).sum(), abs=1e-9)
        assert kl == pytest.approx((p * np.log2(p / qn)).sum(), abs=1e-9)
        assert js == pytest.approx(0.5 * (p * np.log2(p / m)).sum() + 0.5 * (qn * np.log2(qn / m)).sum(), abs=1e-9)
        expected_rho = stats.spearmanr(p, wt).statistic if len(rows) >= 3 else None
        if expected_rho is None or np.isnan(expected_rho):
            assert rho is None
        else:
            assert rho == pytest.approx(expected_rho, abs=1e-9)
        assert mass == pytest.approx(wt.sum(), abs=1e-12)
        top = max(rows, key=lambda r: (r[1], [-ord(ch) for ch in r[0]]))
        assert modal == top[0] and hp_modal == pytest.approx(top[1] / counts.sum())
    [(mean_kl, lo, hi, n)] = q(
        nw_warehouse,
        f"""select kl_human_model_bits_mean, kl_human_model_bits_ci_low,
        kl_human_model_bits_ci_high, n_contexts from mart_cloze_vs_model_summary
        where corpus = 'ucl' and model_key = '{tiny}'""",
    )
    [(avg_kl, n_ctx)] = q(
        nw_warehouse,
        f"""select avg(kl_human_model_bits), count(*) from mart_cloze_vs_model
                                            where corpus = 'ucl' and model_key = '{tiny}'""",
    )
    assert mean_kl == pytest.approx(avg_kl) and n == n_ctx and lo < mean_kl < hi
    [(binned, words)] = q(
        nw_warehouse,
        f"""
        select (select sum(n_words) from mart_cloze_calibration where corpus = 'ucl' and model_key = '{tiny}'),
               (select count(*) from mart_cloze_vs_model_responses where model_key = '{tiny}')
               + (select count(*) from mart_cloze_vs_model where corpus = 'ucl' and model_key = '{tiny}'
                  and human_probability_true_word = 0)""",
    )
    assert binned == words
