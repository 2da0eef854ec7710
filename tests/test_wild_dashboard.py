"""The "Prompts in the wild" page renders from a snapshot (synthetic marts: no real prompt text)."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "dashboards" / "app_pages" / "wild.py"
DOMAINS = ["numeric", "communication", "reasoning", "writing"]


def _snapshot(path: Path) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("""
            create table mart_wild_effort as
            select d.domain, c.condition, c.component, c.cost_term, c.median_s + d.k as median_s, c.median_s as mean_s,
                   36 as n_measurements, 36 as n_respondents, c.component = 'devising' as is_derived,
                   c.component in ('devising','wrapping','unwrapping','validating','solving') as in_figure4,
                   c.ord as component_order, d.k as domain_order
            from (values ('numeric',1),('communication',2),('reasoning',3),('writing',4)) d(domain,k)
            cross join (values ('with_model','devising','D_H',80.0,1),('with_model','wrapping','W_H',70.0,2),
                               ('with_model','unwrapping','U_H',30.0,3),('with_model','validating','V_H',5.0,4),
                               ('with_model','prompting_first_instance','D_H + W_H',150.0,6),
                               ('without_model','solving','G_H',60.0,5),('without_model','self_rating',null,4.0,7))
                 c(condition, component, cost_term, median_s, ord)""")
        con.execute("""
            create table mart_wild_cost as
            select domain, k as domain_order, 3 as n_instances, 0.6 as loss_with_model, 0.3 as loss_without_model,
                   80.0 d_h_s, 70.0 w_h_s, 30.0 u_h_s, 5.0 v_h_s, 60.0 g_h_s, 1.0 alpha, 1.0 beta, 1.0 gamma, 1.0 delta,
                   180.0 effort_h_s, 395.0 effort_h_m_s, 180.9 c_h, 396.8 c_h_m, 215.9 gain_c_h_m_minus_c_h
            from (values ('numeric',1),('communication',2),('reasoning',3),('writing',4)) d(domain,k)""")
        con.execute("""
            create table mart_wild_loss as
            select domain, k as domain_order, condition, 0.123 + 0.1 * k as loss_mean, 0.2 as loss_sd,
                   108 as n_ratings, 36 as n_respondents, 0.01 as shapiro_p, 0.02 as levene_p,
                   'mann_whitney_u' as test, 'greater' as alternative, 300.0 as statistic, 1e-3 as p_value,
                   4e-3 as p_value_holm, 8e-3 as p_value_two_sided, 8e-3 as p_value_two_sided_holm,
                   0.1 as normality_alpha, 0.5 as paper_loss_mean, 1e-3 as paper_p_value_holm
            from (values ('numeric',1),('communication',2),('reasoning',3),('writing',4)) d(domain,k)
            cross join (values ('with_model'),('without_model')) c(condition)""")
        con.execute("""
            create table mart_wild_correlations as
            select 'with_model' as condition, 'all' as domain, x.v as variable_x, y.v as variable_y,
                   'demographic' as kind_x, 'term' as kind_y, null as term_y, 36 as n_respondents,
                   case when x.v = y.v then 1.0 else 0.25 end as spearman_rho,
                   case when x.v = y.v then null else 0.1 end as p_value
            from (values ('age_years'),('gpt3_familiarity'),('loss_mean')) x(v)
            cross join (values ('age_years'),('gpt3_familiarity'),('loss_mean')) y(v)""")
        con.execute("""
            create table mart_wild_loss_by_difficulty as
            select domain, h as difficulty, condition, 36 as n_ratings, 0.5 as loss_mean, 0.2 as loss_sd,
                   0.03 as loss_se, 0.44 as loss_ci95_low, 0.56 as loss_ci95_high, 3.0 as usefulness_score_mean
            from (values ('numeric'),('communication'),('reasoning'),('writing')) d(domain)
            cross join range(1, 4) r(h) cross join (values ('with_model'),('without_model')) c(condition)""")
        con.execute("""
            create table mart_wild_texts as
            select 'A002' as respondent_id, 'with_model' as condition, 'numeric' as domain, 1 as instance, 1 as item,
                   1 as difficulty, 30 as age_years, 'Native' as eng_level, 2 as gpt3_familiarity,
                   'SYNTHETIC PROMPT' as prompt_text, 'SYNTHETIC COMPLETION' as completion_text,
                   'SYNTHETIC ANSWER' as extracted_answer_text, null::varchar as own_answer_text,
                   4 as usefulness_score, 0.25 as loss, 100.0 as prompting_s, 20.0 as unwrapping_s,
                   5.0 as validating_s, null::double as solving_s, null::double as self_rating_s
            union all
            select 'B000', 'without_model', 'numeric', 1, 1, 1, 25, 'Basic', null, null, null, null,
                   'SYNTHETIC OWN ANSWER', 5, 0.0, null, null, null, 40.0, 3.0""")
    finally:
        con.close()


@pytest.fixture
def page(tmp_path: Path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    _snapshot(tmp_path / "marts.duckdb")
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    return AppTest.from_file(str(PAGE), default_timeout=60)


def test_wild_page_renders_every_section(page) -> None:
    at = page.run()
    assert not at.exception, [e.message for e in at.exception]
    assert [s.value for s in at.subheader] == [
        "Effort with and without the model (Fig. 4)",
        "Loss with and without the model (Table 1)",
        "Spearman correlations: demographics vs effort and loss (Fig. 3)",
        "Loss against difficulty (Fig. 5, self-assessed L_H)",
        "Browse prompts, completions and answers",
    ]
    table1 = at.dataframe[2].value
    assert list(table1["domain"]) == DOMAINS
    assert table1["loss_mean_with_model"].round(3).tolist() == [0.223, 0.323, 0.423, 0.523]
    shown = [t.value for t in at.text]
    assert shown == ["SYNTHETIC PROMPT", "SYNTHETIC COMPLETION", "SYNTHETIC ANSWER"]
    at.radio(key="wild_browse_cond").set_value("without_model").run()
    assert not at.exception
    assert [t.value for t in at.text] == ["SYNTHETIC OWN ANSWER"]


def test_wild_page_without_snapshot_tables(tmp_path: Path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    duckdb.connect(str(tmp_path / "marts.duckdb")).close()  # a snapshot without the wild marts
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    at = AppTest.from_file(str(PAGE), default_timeout=60).run()
    assert not at.exception
    assert any("mart_wild_effort" in w.value for w in at.warning)
