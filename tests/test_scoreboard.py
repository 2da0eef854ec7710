"""The scoreboard marts on the session's real warehouse (tests/conftest.py: UCL and Natural Stories, the
GPT-3 import, the pairwise game; UCL scored by the tiny GPT-2), checked against the marts they read and an
independent computation of the humans-vs-best-model gap."""

from __future__ import annotations

import math

import duckdb
import pandas as pd
import pytest
from scipy.stats import norm


@pytest.fixture(scope="module")
def con(real_warehouse):
    c = duckdb.connect(":memory:")
    c.execute(f"ATTACH '{real_warehouse.marts}' AS s (READ_ONLY)")
    c.execute("USE s")
    yield c
    c.close()


def _cell(con, predictor: str, comparison: str) -> dict:
    row = con.execute(
        "SELECT * FROM mart_scoreboard_long WHERE predictor = ? AND comparison = ?", [predictor, comparison]
    ).fetchdf()
    assert len(row) == 1, (predictor, comparison)
    return row.iloc[0].to_dict()


def test_every_predictor_has_every_comparison_with_a_value_or_a_reason(con):
    n, n_pred, n_comp, both, neither = con.execute(
        "SELECT count(*), count(DISTINCT predictor), count(DISTINCT comparison), "
        "count(*) FILTER (WHERE value IS NOT NULL AND null_reason IS NOT NULL), "
        "count(*) FILTER (WHERE value IS NULL AND null_reason IS NULL) FROM mart_scoreboard_long"
    ).fetchone()
    assert n == n_pred * n_comp and both == 0 and neither == 0
    predictors = {r[0] for r in con.execute("SELECT predictor FROM mart_scoreboard").fetchall()}
    scored = {r[0] for r in con.execute("SELECT model_key FROM mart_models WHERE source = 'scored'").fetchall()}
    # humans, the scored tiny model, the GPT-3 import and the pairwise game's three models (one of them GPT-2 small,
    # named 'gpt2-small' in the authors' files and 'gpt2' on the scoreboard)
    assert {"humans", "gpt3-davinci", "gpt2", "gpt2-medium", "two-layer-14m"} | scored <= predictors
    assert "gpt2-small" not in predictors
    # the wide mart: one row per predictor, the same values as the long one
    wide = con.execute(
        "SELECT predictor, pairwise_perplexity, bits_per_byte_ucl, bits_per_byte_ucl_null_reason FROM mart_scoreboard"
    ).fetchall()
    assert len(wide) == len(predictors)
    assert {p for p, ppl, *_ in wide if ppl is not None} >= {"humans", "gpt2", "gpt2-medium", "two-layer-14m"}
    for predictor, ppl, bpb, why in wide:
        # the same value as the long mart, NULL exactly where it gives a reason (an `or` once passed any NULL)
        cell = _cell(con, predictor, "pairwise_perplexity")
        assert ppl == (None if math.isnan(cell["value"]) else cell["value"]), predictor
        assert (ppl is None) == isinstance(cell["null_reason"], str), (predictor, cell["null_reason"])
        long = _cell(con, predictor, "bits_per_byte_ucl")
        assert (bpb, why) == (None if math.isnan(long["value"]) else long["value"], long["null_reason"])


def test_values_are_the_source_marts(con):
    (model,) = con.execute("SELECT DISTINCT model_key FROM mart_models WHERE source = 'scored'").fetchone()
    bpb, lo, hi, n_bytes = con.execute(
        "SELECT bits_per_byte, bits_per_byte_ci_low, bits_per_byte_ci_high, n_bytes "
        "FROM mart_model_perplexity WHERE model_key = ? AND corpus = 'ucl'",
        [model],
    ).fetchone()
    cell = _cell(con, model, "bits_per_byte_ucl")
    assert (cell["value"], cell["ci_low"], cell["ci_high"], cell["n"]) == (bpb, lo, hi, n_bytes)
    assert cell["value_origin"] == "scored" and cell["unit"] == "bits per byte"
    for predictor, name in (("humans", "humans"), ("gpt2", "gpt2-small"), ("gpt2-medium", "gpt2-medium")):
        expected = con.execute(
            "SELECT perplexity, perplexity_low, perplexity_high, n_questions "
            "FROM mart_pairwise_perplexity WHERE predictor = ? AND subset = 'all' "
            "AND rounding = 'interface_11' AND uncertainty_method = 'two_sigma'",
            [name],
        ).fetchone()
        cell = _cell(con, predictor, "pairwise_perplexity")
        assert (cell["value"], cell["ci_low"], cell["ci_high"], cell["n"]) == expected
    davinci = _cell(con, "gpt3-davinci", "bits_per_byte_natural_stories")
    assert (
        davinci["value"]
        == con.execute("SELECT bits_per_byte FROM mart_model_perplexity WHERE model_key = 'gpt3-davinci'").fetchone()[0]
    )
    assert davinci["value_origin"] == "imported"


def test_empty_cells_say_why(con):
    (model,) = con.execute("SELECT DISTINCT model_key FROM mart_models WHERE source = 'scored'").fetchone()
    (ns,) = con.execute("SELECT title FROM mart_corpora WHERE corpus = 'natural_stories'").fetchone()
    reasons = {
        (model, "bits_per_byte_natural_stories"): "add the corpus to its models.toml entry",
        ("gpt3-davinci", "bits_per_byte_ucl"): f"cover {ns} only",  # the corpus's title
        ("humans", "bits_per_byte_ucl"): "estimated in the pairwise game",
        ("humans", "top1_accuracy_token"): "No top-1 game answers in this warehouse",  # lm_game is not ingested
        (model, "pairwise_perplexity"): "GPT-2-token candidates",
        ("two-layer-14m", "bits_per_byte_ucl"): "report only its game results",
        ("humans", "cloze_modal_agreement_ucl"): "own responses are the target",
    }
    for (predictor, comparison), words in reasons.items():
        cell = _cell(con, predictor, comparison)
        assert cell["null_reason"] and words in cell["null_reason"], (predictor, comparison, cell["null_reason"])
    # the wide mart's companion column carries the same reason
    (why,) = con.execute(
        "SELECT bits_per_byte_natural_stories_null_reason FROM mart_scoreboard WHERE predictor = ?", [model]
    ).fetchone()
    assert "add the corpus" in why


def test_humans_vs_the_best_model_recomputed(con):
    """The pairwise game's gap: humans' perplexity over the best model's, with its interval recomputed here from
    the two intervals (each +-2 sigma on the log scale; normal approximation, independent estimates)."""
    rows = con.execute(
        "SELECT predictor, perplexity, perplexity_low, perplexity_high FROM mart_pairwise_perplexity "
        "WHERE subset = 'all' AND rounding = 'interface_11' AND uncertainty_method = 'two_sigma'"
    ).fetchall()
    humans = next(r for r in rows if r[0] == "humans")
    best = min((r for r in rows if r[0] != "humans"), key=lambda r: r[1])
    gap = con.execute("SELECT * FROM mart_scoreboard_gaps WHERE comparison = 'pairwise_perplexity'").fetchdf()
    assert len(gap) == 1
    g = gap.iloc[0]
    assert g["best_predictor"] == {"gpt2-small": "gpt2"}.get(best[0], best[0])
    se = lambda r: (math.log(r[3]) - math.log(r[2])) / (2 * 2)  # noqa: E731 (+-2 sigma)
    z = norm.ppf(0.975)
    log_ratio = math.log(humans[1]) - math.log(best[1])
    half = z * math.hypot(se(humans), se(best))
    assert g["gap"] == pytest.approx(humans[1] / best[1], rel=1e-12)
    assert g["gap_ci_low"] == pytest.approx(math.exp(log_ratio - half), rel=1e-4)
    assert g["gap_ci_high"] == pytest.approx(math.exp(log_ratio + half), rel=1e-4)
    assert g["gap_kind"] == "ratio humans / model" and not g["humans_better"]
    assert g["n_models_compared"] == len(rows) - 1
    # only comparisons where humans have a value: the top-1 game is not ingested here
    assert set(con.execute("SELECT comparison FROM mart_scoreboard_gaps").fetchdf()["comparison"]) == {
        "pairwise_perplexity"
    }


def test_the_opening_sentence_calls_a_gap_within_its_interval_a_tie(con):
    """Headlines follow the statistics. On the real marts every gap's 95% interval excludes no
    difference, so each is counted for its winner; the same rows with the pairwise game's interval widened
    across 1 (humans / model) count it as a tie, not a win."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboards"))
    import findings

    gaps = con.execute("SELECT * FROM mart_scoreboard_gaps").fetchdf()
    fmt = lambda v, unit: f"{v:.3f}"  # noqa: E731
    n = len(gaps)
    assert n >= 1 and "pairwise_perplexity" in set(gaps["comparison"])
    clear = [findings.gap_is_clear(g) for _, g in gaps.iterrows()]
    assert clear == [
        not (lo <= (1.0 if k.startswith("ratio") else 0.0) <= hi)
        for k, lo, hi in zip(gaps["gap_kind"], gaps["gap_ci_low"], gaps["gap_ci_high"])
    ]
    said = findings.scoreboard(gaps, fmt)
    assert "tie" not in said and said.startswith(f"The best language model beats humans on {sum(clear)} of the {n}")
    wide = gaps.copy()
    i = wide.index[wide["comparison"] == "pairwise_perplexity"][0]
    wide.loc[i, ["gap_ci_low", "gap_ci_high"]] = [0.5, wide.loc[i, "gap"] * 2]
    said = findings.scoreboard(wide, fmt)
    assert "1 is a tie (the 95% interval of the gap includes no difference)" in said, said
    assert (f"beats humans on {n - 1} of the {n}" in said) == (n > 1), said


def test_the_rank_legend_has_whole_ranks_once_each(con):
    """The rank legend of a two-predictor grid once read "1 2 2" (Vega's ticks at 1, 1.5 and 2 printed as
    whole numbers). Its ticks are whole ranks, each once, from 1 to the worst, on the mart's ranks, whose
    empty cells (NA) are no tick."""
    import sys
    from pathlib import Path

    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboards"))
    import charts

    ranks = con.execute("SELECT rank_in_comparison FROM mart_scoreboard_long").fetchdf()["rank_in_comparison"]
    worst = int(ranks.max())
    ticks = charts.whole_number_ticks(ranks)
    assert ticks[0] == 1 and ticks[-1] == worst and len(ticks) == len(set(ticks)) <= 7
    assert ticks == sorted(ticks) and all(isinstance(t, int) for t in ticks)
    assert charts.whole_number_ticks(pd.Series([1, 2, pd.NA], dtype="Int64")) == [1, 2]
    assert charts.whole_number_ticks([1.0, float("nan"), 30.0]) == [1, 7, 13, 19, 25, 30]
    assert charts.whole_number_ticks(pd.Series([], dtype="Int64")) == []


def _scoreboard_tables():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboards"))
    import scoreboard_tables

    return scoreboard_tables


def test_each_groups_leader_is_first_most_often(con):
    """The Scoreboard's "leader of each group": per group of comparisons (a family; ΔLL and PNC per reading
    measure), the predictor ranked first on the most comparisons, counted here again in SQL; its runner-up is
    another predictor of the group."""
    st_ = _scoreboard_tables()
    long = con.execute("SELECT * FROM mart_scoreboard_long").fetchdf()
    table = st_.leaders(long)
    expected = con.execute("""
        WITH v AS (SELECT comparison_family || coalesce(':' || measure, '') AS grp, comparison, display_name,
                          rank_in_comparison FROM mart_scoreboard_long WHERE value IS NOT NULL),
             firsts AS (SELECT grp, display_name, count(*) FILTER (WHERE rank_in_comparison = 1) AS n FROM v
                        GROUP BY ALL)
        SELECT grp, max(n), (SELECT count(DISTINCT comparison) FROM v WHERE v.grp = firsts.grp)
        FROM firsts GROUP BY grp ORDER BY grp""").fetchall()
    assert sorted(table["group"]) == [g for g, _, _ in expected] and len(expected) >= 2
    for grp, most, n_comparisons in expected:
        row = table[table["group"] == grp].iloc[0]
        assert row["first_on"] == f"{most} of {n_comparisons}", (grp, row.to_dict())
        n_best = con.execute(
            """SELECT count(*) FILTER (WHERE rank_in_comparison = 1) FROM mart_scoreboard_long
                                WHERE value IS NOT NULL AND display_name = ?
                                  AND comparison_family || coalesce(':' || measure, '') = ?""",
            [row["best"], grp],
        ).fetchone()[0]
        assert n_best == most and row["runner_up"] != row["best"]


def test_humans_vs_the_best_model_in_words(con):
    """One row per comparison of mart_scoreboard_gaps: the humans' and the best model's values as the pages print
    them, and who is better: a tie exactly where the gap's interval holds no difference."""
    st_ = _scoreboard_tables()
    gaps = con.execute("SELECT * FROM mart_scoreboard_gaps ORDER BY sort_order").fetchdf()
    table = st_.humans_vs_best(gaps)
    assert len(table) == len(gaps) >= 1
    for (_, g), (_, row) in zip(gaps.iterrows(), table.iterrows()):
        null = 1.0 if g["gap_kind"].startswith("ratio") else 0.0
        tie = pd.isna(g["gap_ci_low"]) or g["gap_ci_low"] <= null <= g["gap_ci_high"]
        assert row["better"] == ("tie" if tie else "humans" if g["humans_better"] else "the model")
        assert row["best_model"] == g["best_display_name"]
        assert row["humans"].startswith(findings_value(g["humans_value"], g["unit"]))


def findings_value(value, unit):
    _scoreboard_tables()  # puts dashboards/ on the path
    import findings

    return findings.value_text(value, unit)
