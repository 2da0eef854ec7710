"""Reading-time regressions: the statistics module on synthetic data with known answers, then the
regression marts of a real warehouse against independent computations and the published numbers.

1. predictabase/stats/reading_regression.py: a planted surprisal effect is recovered and a shuffled surprisal
   finds none; every fold's held-out log-likelihood equals a plain statsmodels/numpy refit; the reader-intercept
   method equals a regression with one dummy per reader; the exact sign-flip test.
2. A copy of the session's real warehouse with the reading corpora, word frequencies, cloze norms, Pimentel &
   Meister's and de Varda's files ingested and the regression domain built: spillover columns, skipped words,
   cv_means recomputed from the exported design with statsmodels, PNC with numpy, Pimentel & Meister's GPT-2
   small within the measured shuffle spread, de Varda's in-sample rows.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from predictabase.stats import reading_regression as rr
from tests.helpers import fetch_all, q

ROOT = Path(__file__).resolve().parent.parent

READING_INGEST = [
    "provo",
    "natural_stories_spr",
    "ucl_spr",
    "word_frequencies",
    "provo_eye_tracking",
    "ucl_fixations",
    "provo_cloze",
    "ucl_cloze",
    "ucl_cloze_distributions",
    "ucl_imported_surprisal",
    "pimentel_meister_surprisal",
    "pimentel_meister_delta_llh",
    "ucl_published_predictors",
    "ucl_published_results",
]


# ------------------------------------------------------------------ 1. the statistics on synthetic data


def _synthetic(n=3000, effect=25.0, seed=7):
    rng = np.random.default_rng(seed)
    length = rng.integers(1, 12, size=(n, 4)).astype(float)
    freq = rng.normal(4, 1.2, size=(n, 4))
    surp = rng.gamma(2.0, 2.0, size=(n, 4))
    y = 250 + 8 * length[:, 0] - 6 * freq[:, 0] + effect * surp[:, 0] + 10 * surp[:, 1] + rng.normal(0, 40, n)
    return y, rr.baseline_matrix(length, freq), surp


def _naive_fold_loglik(y, X, folds, K):
    """Held-out Gaussian log-likelihood per fold by refitting with statsmodels (sigma^2 = SSE/n of training)."""
    import statsmodels.api as sm

    out = []
    for k in range(K):
        tr = folds != k
        fit = sm.OLS(y[tr], sm.add_constant(X[tr], has_constant="add")).fit()
        s2 = fit.ssr / tr.sum()
        resid = y[~tr] - sm.add_constant(X[~tr], has_constant="add") @ fit.params
        out.append(float(np.sum(-0.5 * np.log(2 * math.pi * s2) - resid**2 / (2 * s2))))
    return np.array(out)


def test_planted_effect_is_recovered_and_each_fold_matches_a_refit():
    y, Xb, S = _synthetic()
    folds = rr.fold_ids(len(y), 10, 42)
    res = rr.cv_delta_loglik(y, Xb, S, folds)
    # independent: refit every fold with statsmodels
    base = _naive_fold_loglik(y, Xb, folds, 10)
    full = _naive_fold_loglik(y, np.column_stack([Xb, S]), folds, 10)
    np.testing.assert_allclose(res["fold_loglik_baseline_nats"], base, rtol=0, atol=1e-7)
    np.testing.assert_allclose(res["fold_loglik_full_nats"], full, rtol=0, atol=1e-7)
    # the effect is large: every fold improves, the exact sign-flip p is its minimum 2 / 2^10
    assert (res["fold_delta_nats_per_row"] > 0).all()
    assert res["p_value"] == pytest.approx(2 / 1024)
    # and its size: 0.5 ln(var(y | baseline) / var(y | baseline, surprisal)) for a Gaussian, in nats per row
    import statsmodels.api as sm

    r_b = sm.OLS(y, sm.add_constant(Xb)).fit().ssr
    r_f = sm.OLS(y, sm.add_constant(np.column_stack([Xb, S]))).fit().ssr
    assert res["delta_loglik_nats_per_row"] == pytest.approx(0.5 * math.log(r_b / r_f), rel=0.02)


def test_shuffled_surprisal_finds_nothing():
    y, Xb, S = _synthetic()
    S_shuffled = S[np.random.default_rng(3).permutation(len(S))]
    res = rr.cv_delta_loglik(y, Xb, S_shuffled, rr.fold_ids(len(y), 10, 42))
    assert res["delta_loglik_nats_per_row"] < 0.002
    assert res["p_value"] > 0.05


def test_no_effect_means_no_improvement():
    y, Xb, S = _synthetic(effect=0.0)
    S[:, 1] = np.random.default_rng(5).normal(size=len(S))  # the spillover term carries nothing either
    res = rr.cv_delta_loglik(y, Xb, S, rr.fold_ids(len(y), 10, 1))
    assert abs(res["delta_loglik_nats_per_row"]) < 0.003 and res["p_value"] > 0.05


def test_reader_intercepts_equal_a_regression_with_one_dummy_per_reader():
    rng = np.random.default_rng(11)
    W, R = 240, 18
    Xb, S = rng.normal(size=(W, 3)), rng.normal(size=(W, 2))
    pairs = [(r, w) for r in range(R) for w in range(W) if rng.random() < 0.7]
    reader, word = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    y = rng.normal(0, 3, R)[reader] + Xb[word] @ [1.0, -2.0, 0.5] + 0.8 * S[word, 0] + rng.normal(size=len(pairs))
    wf = rr.fold_ids(W, 10, 42)
    res = rr.cv_delta_loglik_readers(y, reader, word, Xb, S, wf)
    D = np.eye(R)[reader]
    folds = wf[word]

    def naive(X):
        X = np.column_stack([D, X])
        out = []
        for k in range(10):
            tr = folds != k
            beta = np.linalg.lstsq(X[tr], y[tr], rcond=None)[0]
            s2 = np.mean((y[tr] - X[tr] @ beta) ** 2)
            r = y[~tr] - X[~tr] @ beta
            out.append(np.sum(-0.5 * np.log(2 * math.pi * s2) - r**2 / (2 * s2)))
        return np.array(out)

    np.testing.assert_allclose(res["fold_loglik_baseline_nats"], naive(Xb[word]), atol=1e-8)
    np.testing.assert_allclose(res["fold_loglik_full_nats"], naive(np.column_stack([Xb, S])[word]), atol=1e-8)
    assert res["p_value"] == pytest.approx(2 / 1024)


def test_sign_flip_p_values():
    assert rr.sign_flip_p(np.full(10, 0.3)) == pytest.approx(2 / 1024)  # only the observed pattern and its mirror
    d = np.array([1.0, -1.0, 2.0, -2.0])
    assert rr.sign_flip_p(d) == 1.0  # mean 0: every pattern is at least as extreme
    d = np.array([3.0, 1.0, 1.0])  # |mean| >= 5/3 only for (+,+,+), (-,-,-): 2 of 8
    assert rr.sign_flip_p(d) == pytest.approx(2 / 8)


def test_in_sample_loglik_is_statsmodels_llf():
    import statsmodels.api as sm

    y, Xb, _ = _synthetic(n=500)
    ll, _ = rr.ols_loglik(y, Xb)
    assert ll == pytest.approx(sm.OLS(y, sm.add_constant(Xb)).fit().llf, abs=1e-8)


def test_folds_are_balanced_and_seeded():
    f = rr.fold_ids(1003, 10, 42)
    assert sorted(np.bincount(f)) == [100] * 7 + [101] * 3
    assert (f == rr.fold_ids(1003, 10, 42)).all() and not (f == rr.fold_ids(1003, 10, 43)).all()


# ------------------------------------------------------------------ 2. the marts of a real warehouse


@pytest.fixture(scope="module")
def reg(real_warehouse, tmp_path_factory):
    """The session's real warehouse (UCL scored by the tiny GPT-2, Natural Stories with GPT-3's import) plus the
    reading data, cloze norms and the two studies' files, with the regression domain built and published."""
    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.warehouse import dbt_build, publish

    p = make_paths(tmp_path_factory.mktemp("regression") / "warehouse")
    shutil.copytree(real_warehouse.warehouse, p.warehouse)
    run_ingest(p, READING_INGEST, show_progress=False)
    dbt_build(p, select="+tag:regression")
    publish(p, allow_shrink=True)
    return p


def test_spillover_is_null_at_text_starts_and_points_at_the_previous_words(reg):
    bad = q(
        reg,
        """
        select count(*) filter (where word_index < 3 and prev3_length_chars is not null)
             + count(*) filter (where word_index = 0 and (prev1_length_chars is not null or prev1_log_frequency is not null))
             + count(*) filter (where word_index >= 3 and prev3_word_index <> word_index - 3)
        from intermediate.int_reading_words""",
    )
    assert bad == [(0,)]
    # prev2 of each word is the word two before it in the same text (compared by a self-join, not by lag)
    [(n, mismatched)] = q(
        reg,
        """
        select count(*), count(*) filter (where w.prev2_length_chars is distinct from v.length_chars
                                          or w.prev2_log_frequency is distinct from v.log_frequency)
        from intermediate.int_reading_words w
        join intermediate.int_reading_words v on v.corpus = w.corpus and v.doc_id = w.doc_id and v.word_index = w.word_index - 2""",
    )
    assert n == 10256 + 2745 + 1931 - 2 * (10 + 55 + 205) and mismatched == 0  # every word but a text's first two
    [(n, mismatched)] = q(
        reg,
        """
        select count(*), count(*) filter (where s.prev1_surprisal_nats is distinct from t.surprisal_nats)
        from intermediate.int_reading_surprisal s
        join intermediate.int_reading_surprisal t using (run_id, corpus, definition, doc_id)
        where t.word_index = s.word_index - 1""",
    )
    assert n > 100000 and mismatched == 0
    # never across a text start: the first word of every text has no previous surprisal
    assert q(
        reg,
        "select count(*) from intermediate.int_reading_surprisal "
        "where word_index = 0 and prev1_surprisal_nats is not null",
    ) == [(0,)]


def test_a_skipped_word_never_enters_a_duration_regression_as_0_ms(reg):
    assert q(reg, "select count(*) from intermediate.int_reading_observations where rt_ms <= 0") == [(0,)]
    # every eye-tracking row kept is a word with that duration, outside the text's first and last word
    [(kept, expected)] = q(
        reg,
        """
        select (select count(*) from intermediate.int_reading_observations
                where corpus = 'ucl' and measure = 'gaze_duration'),
               (select count(*) from intermediate.int_eye_tracking_measures m
                join intermediate.int_reading_words w using (corpus, doc_id, word_index)
                where m.corpus = 'ucl' and m.gaze_duration_ms is not null and not w.is_text_first and not w.is_text_last)""",
    )
    assert kept == expected > 10000
    # a skipped word is absent, not 0: the number of UCL readers skipping in first pass is large
    [(skips,)] = q(
        reg, "select count(*) from intermediate.int_eye_tracking_measures where corpus = 'ucl' and skipped_first_pass"
    )
    assert skips > 20000


def test_natural_stories_exclusions_follow_oh_and_schuler(reg):
    [(n, lo, hi, first_last)] = q(
        reg,
        """
        select count(*), min(o.rt_ms), max(o.rt_ms), count(*) filter (where w.is_sentence_first or w.is_sentence_last)
        from intermediate.int_reading_observations o join intermediate.int_reading_words w using (corpus, doc_id, word_index)
        where o.corpus = 'natural_stories' and o.measure = 'spr'""",
    )
    assert lo >= 100 and hi <= 3000 and first_last == 0
    [(bad_readers,)] = q(
        reg,
        """
        select count(*) from intermediate.int_reading_observations o
        join staging.stg_reading_times s using (corpus, measure, reader_id, doc_id, word_index)
        where o.corpus = 'natural_stories' and s.reader_correct_answers < 4""",
    )
    assert bad_readers == 0 and n > 700000


def test_cv_means_equals_a_statsmodels_refit_of_the_exported_design(reg):
    """Provo gaze duration, Pimentel & Meister's GPT-2 small, WT: rebuild the design from the warehouse tables in
    SQL, refit every fold with statsmodels, compare the mart's ΔLL and fold values."""
    import pandas as pd

    rows = q(
        reg,
        """
        select m.mean_rt_ms, w.length_chars, w.prev1_length_chars, w.prev2_length_chars, w.prev3_length_chars,
               w.log_frequency, w.prev1_log_frequency, w.prev2_log_frequency, w.prev3_log_frequency,
               s.surprisal_nats, s.prev1_surprisal_nats, s.prev2_surprisal_nats, s.prev3_surprisal_nats
        from intermediate.int_reading_word_means m
        join intermediate.int_reading_words w using (corpus, doc_id, word_index)
        left join intermediate.int_reading_surprisal s
          on s.corpus = m.corpus and s.doc_id = m.doc_id and s.word_index = m.word_index
         and s.run_id = 'pimentel-meister:gpt2' and s.definition = 'wt'
        where m.corpus = 'provo' and m.measure = 'gaze_duration'
        order by m.doc_id, m.word_index""",
    )
    d = pd.DataFrame(rows).astype(float).to_numpy()
    base_ok = ~np.isnan(d[:, :9]).any(axis=1)
    d = d[base_ok]  # the folds are dealt over the words with a complete baseline, in (doc_id, word_index) order
    folds_all = rr.fold_ids(len(d), 10, 42)
    ok = ~np.isnan(d).any(axis=1)
    y, L, F, S, folds = d[ok, 0], d[ok, 1:5], d[ok, 5:9], d[ok, 9:13], folds_all[ok]
    Xb = np.column_stack([L, F, L * F])
    base = _naive_fold_loglik(y, Xb, folds, 10)
    full = _naive_fold_loglik(y, np.column_stack([Xb, S]), folds, 10)
    n = np.bincount(folds, minlength=10)
    expected = (full - base) / n
    [(dll, fold_list, n_rows)] = q(
        reg,
        """
        select delta_loglik_nats_per_row, fold_delta_nats_per_row, n_rows from marts.mart_delta_loglik
        where corpus = 'provo' and measure = 'gaze_duration' and run_id = 'pimentel-meister:gpt2'
          and definition = 'wt' and method = 'cv_means'""",
    )
    assert n_rows == len(y)
    np.testing.assert_allclose(fold_list, expected, atol=1e-10)
    assert dll == pytest.approx(expected.mean(), abs=1e-10)
    assert dll > 0.01  # GPT-2's surprisal helps (about 3 x 10^-2 nats per word)


def test_every_reading_measure_has_fits_for_the_imported_models(reg):
    got = dict(
        q(
            reg,
            "select corpus || '/' || measure, count(distinct run_id) from marts.mart_delta_loglik "
            "where method = 'cv_means' and status = 'ok' group by 1",
        )
    )
    # Natural Stories: GPT-3 + the 11 of Pimentel & Meister; Provo: the 11; UCL: de Varda's 7 + the tiny GPT-2
    assert got["natural_stories/spr"] == 12
    for m in ("first_fixation", "gaze_duration", "go_past", "total_reading_time"):
        assert got[f"provo/{m}"] == 11 and got[f"ucl/{m}"] == 8
    assert got["ucl/spr"] == 8
    # the readers method covers the same fits
    assert q(reg, "select count(*) from marts.mart_delta_loglik where method = 'readers'") == q(
        reg, "select count(*) from marts.mart_delta_loglik where method = 'cv_means'"
    )


def test_wt_vs_lw_is_paired_fold_by_fold(reg):
    rows = q(
        reg,
        """
        select w.wt_minus_lw_nats_per_row, w.p_value, a.fold_delta_nats_per_row, b.fold_delta_nats_per_row
        from marts.mart_delta_loglik_wt_vs_lw w
        join marts.mart_delta_loglik a on a.run_id = w.run_id and a.corpus = w.corpus and a.measure = w.measure
             and a.method = w.method and a.definition = 'wt'
        join marts.mart_delta_loglik b on b.run_id = w.run_id and b.corpus = w.corpus and b.measure = w.measure
             and b.method = w.method and b.definition = 'lw'
        where w.method = 'cv_means'""",
    )
    assert len(rows) == 11 + 11 * 4 + 5  # P&M on NS and the four Provo measures; the tiny GPT-2 on the five UCL ones
    for diff, p, fw, fl in rows:
        f = np.array(fw) - np.array(fl)
        assert diff == pytest.approx(f.mean(), abs=1e-12)
        assert p == pytest.approx(rr.sign_flip_p(f))


def test_pnc_equals_numpy_and_its_interval_covers_it(reg):
    rows = q(
        reg,
        """
        select s.surprisal_nats, c.cloze_surprisal_nats from intermediate.int_reading_surprisal s
        join intermediate.int_cloze c using (corpus, doc_id, word_index)
        where s.corpus = 'provo' and s.run_id = 'pimentel-meister:gpt2' and s.definition = 'lw'
          and c.cloze_surprisal_nats is not null""",
    )
    x = np.array(rows, dtype=float)
    [(r, lo, hi, n)] = q(
        reg,
        "select pnc_pearson_r, pnc_ci_low, pnc_ci_high, n_words from marts.mart_pnc "
        "where corpus = 'provo' and run_id = 'pimentel-meister:gpt2' and definition = 'lw'",
    )
    assert n == len(x) == 2601
    assert r == pytest.approx(np.corrcoef(x[:, 0], x[:, 1])[0, 1], abs=1e-12)
    assert lo < r < hi and hi - lo < 0.1


def test_pimentel_meister_reproduced_exactly(reg):
    rows = {
        (c, m, d): (ours, pub, agrees, note)
        for c, m, d, ours, pub, agrees, note in q(
            reg,
            """
        select corpus, predictor, definition, ours, published, agrees, note from marts.mart_reading_vs_published
        where study = 'Pimentel & Meister 2024'""",
        )
    }
    assert len(rows) == 44  # 11 models x 2 corpora x WT, LW
    # their GPT-2 small (mean over folds x 100, SOURCES.md): NS 4.345 WT / 4.330 LW, Provo 3.633 / 3.473
    for (c, d), pub in {
        ("natural_stories", "wt"): 4.345,
        ("natural_stories", "lw"): 4.330,
        ("provo", "wt"): 3.633,
        ("provo", "lw"): 3.473,
    }.items():
        ours, published, agrees, note = rows[(c, "gpt2", d)]
        assert round(100 * published, 3) == pub == round(100 * ours, 3)
        assert abs(ours - published) < 1e-12 and agrees
    # with R's folds replayed, every model and every fold agrees (tolerance 1e-9 nats/word)
    assert all(a for _, _, a, _ in rows.values())
    # other shuffles move the result by more than that: the spread is measured and stated
    sd = [float(n.split(", sd ")[1].split(",")[0]) for *_, n in rows.values()]
    assert 5e-5 < min(sd) and max(sd) < 1e-3


def test_de_varda_reproduced(reg):
    got = dict(
        ((s, t), (n, a))
        for s, t, n, a in q(
            reg,
            """
        select statistic, published_table, count(*), count(*) filter (where agrees) from marts.mart_reading_vs_published
        where study = 'de Varda et al. 2023' group by all""",
        )
    )
    # every in-sample row of results_linear.csv to 1e-3 (165 = 11 measures x 15 predictors)
    assert got[("llik", "supplementary_materials/results_linear.csv")] == (165, 165)
    assert got[("llik_baseline", "supplementary_materials/results_linear.csv")] == (165, 165)
    # the correlation of each predictor with cloze surprisal, on their 1,487 words
    assert got[("pearson_r_with_cloze_surprisal", "supplementary_materials/df_corr.csv")] == (30, 30)
    [(r, n)] = q(
        reg,
        "select ours, n_rows from marts.mart_reading_vs_published "
        "where statistic = 'pearson_r_with_cloze_surprisal' and predictor = 's_GPT2'",
    )
    assert round(r, 4) == 0.6999 and n == 1487
    # their cross-validation, reconstructed
    assert got[("D_ll_cv", "supplementary_materials/results_crossval.csv")] == (165, 165)


# ------------------------------------------------------------------ 3. the page, in a real browser


def test_reading_times_page_in_the_browser(reg, tmp_path):
    from playwright.sync_api import sync_playwright

    from .test_dashboard_browser import CHROMIUM_ARGS, Page, _charts, _nav_links, serving

    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("Debian chromium is not installed (apt-get install -y chromium; `make test` does it)")
    # the page's defaults: Natural Stories, self-paced reading, cv_means, WT (GPT-3 has LW only: the page falls
    # back to it); the finding names the best and worst model of that view
    rows = fetch_all(
        reg.marts,
        """
        select model_name, delta_loglik_nats_per_row, definition from mart_delta_loglik
        where corpus = 'natural_stories' and measure = 'spr' and method = 'cv_means' and status = 'ok'
        order by run_id, definition desc""",
    )
    by_model: dict = {}
    for name, dll, _d in rows:
        by_model.setdefault(name, dll)  # WT first where the run has it
    best = max(by_model, key=by_model.get)
    worst = min(by_model, key=by_model.get)
    with serving(reg, tmp_path) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        pg = Page(browser, tmp_path)
        try:
            pg.open(url + "/reading-times")
            pg.assert_no_exception()
            assert "Reading times" in [t.split("\n")[-1].strip() for t in _nav_links(pg)]
            main = pg.page.locator('[data-testid="stMain"]').inner_text()
            assert f"most for {best} ({100 * by_model[best]:.2f} × 10⁻² nats per word)" in main
            # both numbers with their unit (it was a bare "1.44" beside "3.60 × 10⁻²")
            assert f"least for {worst} ({100 * by_model[worst]:.2f} × 10⁻² nats per word)" in main
            assert "Our numbers next to the published ones" in main
            assert "de Varda et al. 2023, log-likelihood with the surprisal term (nats): 165 of 165 agree" in main
            assert _charts(pg, 4) >= 4  # ΔLL per model, perplexity vs ΔLL, WT vs LW, surprisal curve
            pg.screenshot("reading_times")
            assert pg.outbound() == []
        finally:
            pg.close()
            browser.close()


def test_word_delta_summary_p_value_matches_the_exact_test():
    """word_delta_summary's p-value (10,000 seeded random sign patterns) estimates the exact sign-flip p-value
    (every 2^n pattern, sign_flip_p) within three of its Monte Carlo standard errors; its mean, SE and interval are
    the plain ones."""
    rng = np.random.default_rng(7)
    for shift in (0.0, 0.3, 0.6, 1.0):
        d = rng.normal(shift, 1.0, 12)
        exact = rr.sign_flip_p(d)
        s = rr.word_delta_summary(d)
        mc_se = max(np.sqrt(exact * (1 - exact) / 10_000), 1e-4)
        assert abs(s["p_value"] - exact) <= 3 * mc_se + 1 / 10_001, (shift, s["p_value"], exact)
        assert s["delta_loglik_nats_per_word"] == pytest.approx(d.mean())
        assert s["delta_loglik_se_nats_per_word"] == pytest.approx(d.std(ddof=1) / np.sqrt(12))
        assert s["delta_loglik_ci_low_nats_per_word"] == pytest.approx(d.mean() - 1.96 * d.std(ddof=1) / np.sqrt(12))


def _lm_heldout_reference(y, X, folds, k):
    """Wilcox et al.'s cross-validation the plain way: lstsq (SVD) on each fold's training rows."""
    Xi = rr.with_intercept(X)
    out = np.empty(len(y))
    for f in range(k):
        test, train = folds == f, folds != f
        beta = np.linalg.lstsq(Xi[train], y[train], rcond=None)[0]
        resid = y[train] - Xi[train] @ beta
        sd = math.sqrt(float(resid @ resid) / (int(train.sum()) - Xi.shape[1]))
        z = (y[test] - Xi[test] @ beta) / sd
        out[test] = -0.5 * rr.LOG_2PI - math.log(sd) - 0.5 * z * z
    return out


def test_heldout_densities_from_fold_factors_equal_a_refit_per_fold():
    """lm_heldout_log_densities (each fold's rows reduced to a QR factor once, a training fit solved on the other
    folds' factors, several responses at once) gives every word's held-out log density of a plain least-squares
    refit on the training rows, to 1e-12 nats, with well-scaled predictors like theirs (bits, letters, ms) and with
    a design whose columns are collinear (lstsq's minimum-norm solution, the same rank cut-off)."""
    rng = np.random.default_rng(11)
    n, k = 1937, 10
    folds = np.repeat(np.arange(k), [194, 194, 193, 194, 194, 193, 194, 194, 193, 194])
    freq = rng.gamma(4.0, 2.5, (n, 3))
    length = rng.integers(1, 14, (n, 3)).astype(float)
    surp = rng.gamma(2.0, 3.0, (n, 3))
    X = np.column_stack([surp, freq, length])
    Y = np.column_stack([200 + 9 * surp[:, 0] + 4 * length[:, 0] + rng.normal(0, 60, n) for _ in range(3)])
    got = rr.lm_heldout_log_densities(Y, X, folds, k)
    assert got.shape == (n, 3)
    for j in range(3):
        want = _lm_heldout_reference(Y[:, j], X, folds, k)
        assert np.abs(got[:, j] - want).max() < 1e-12
        assert np.abs(rr.lm_heldout_log_densities(Y[:, j], X, folds, k) - got[:, j]).max() < 1e-12  # one response
    assert -6.0 < got.mean() < -5.0  # sd ~ 60 ms: log density ~ -0.5 log(2 pi) - log(60) - 0.5
    collinear = np.column_stack([X, X[:, 0] + X[:, 3]])  # rank 9 + intercept of 11 columns
    want = _lm_heldout_reference(Y[:, 0], collinear, folds, k)
    assert np.abs(rr.lm_heldout_log_densities(Y[:, 0], collinear, folds, k) - want).max() < 1e-10


def _word_delta_p_reference(d, draws=10_000, seed=444):
    """The sign-flip p-value with each draw's signs applied one array at a time (uint8 bits times d)."""
    n, total, mean = len(d), float(d.sum()), float(d.mean())
    rng, hits = np.random.default_rng(seed), 0
    for start in range(0, draws, 1000):
        k = min(1000, draws - start)
        bits = np.unpackbits(rng.integers(0, 256, size=(k, (n + 7) // 8), dtype=np.uint8), axis=1)[:, :n]
        hits += int((np.abs(2.0 * (bits @ d) - total) / n >= abs(mean) - 1e-15).sum())
    return (1 + hits) / (draws + 1)


def test_word_delta_summaries_share_the_draws_and_give_each_arrays_own_summary():
    """Arrays of the same length share the sign patterns (the same seed): each summary is the one of the array
    alone, the p-value counted from the same draws; NaN values are dropped first."""
    rng = np.random.default_rng(5)
    ds = [rng.normal(0.02 * i, 1.0, 803) for i in range(4)] + [rng.normal(0.05, 1.0, 45), rng.normal(0.0, 1.0, 45)]
    ds[1][[3, 500]] = np.nan  # 801 words
    out = rr.word_delta_summaries(ds)
    assert [s["n_words"] for s in out] == [803, 801, 803, 803, 45, 45]
    for d, s in zip(ds, out):
        d = d[~np.isnan(d)]
        assert s["p_value"] == _word_delta_p_reference(d)
        assert s["delta_loglik_nats_per_word"] == float(d.mean())
        assert s["delta_loglik_se_nats_per_word"] == float(d.std(ddof=1) / math.sqrt(len(d)))
        assert s == rr.word_delta_summary(d)
    assert out[0]["p_value"] > 0.05 and out[3]["p_value"] < 0.05  # no shift, then a shift of 0.06 sd over 803


def test_one_blas_thread_sets_the_blas_to_one_thread_and_restores_it():
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas_threads()
    if not before:
        pytest.skip("no BLAS threadpoolctl can see")
    with rr.one_blas_thread():
        assert blas_threads() == [1] * len(before)
        with rr.one_blas_thread():  # nested (dbt's two threads): the inner one leaves it at 1
            pass
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before
