"""The pairwise game (Shlegeris et al. 2024, sec. 4): ingest, the dbt estimator on synthetic data where h is
known, an independent reproduction from the raw JSON files, and the player-inclusion rule.

Two dbt runs (module-scoped): one over the real ingested data, one over a synthetic warehouse.
Only the pairwise domain is run (its seeds, then its models: `--select tag:pairwise`), with few
bootstrap resamples for the synthetic one.
"""

from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from predictabase import warehouse
from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets.pairwise import (
    ANSWERS_PATH,
    ingest_pairwise,
    is_word_token,
    parse_answers,
    parse_comparison,
    write_frames,
)

ROOT = Path(__file__).resolve().parent.parent
SET_1 = list(range(10000, 10040))
SET_2 = list(range(20010, 20090))


def run_dbt(p: Paths, vars_: dict | None = None) -> None:
    """`dbt seed` + `dbt run` of the pairwise domain only (tag:pairwise: its seeds and models), through
    the product's invocation (raises on failure)."""
    warehouse.run_dbt(p, "seed", "tag:pairwise")
    warehouse.run_dbt(p, "run", "tag:pairwise", dbt_vars=vars_)


def query(p: Paths, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(p.duckdb))  # same configuration as the in-process dbt-duckdb connection
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


# --------------------------------------------------------------------------------------------
# real data


@pytest.fixture(scope="module")
def pairwise_raw(mirror: Path, tmp_path_factory) -> Paths:
    """A warehouse with only the pairwise files fetched and ingested."""
    from predictabase.ingest.sources.fetch import fetch_and_record

    p = make_paths(tmp_path_factory.mktemp("pairwise") / "warehouse")
    fetch_and_record(p, mirror, dataset="pairwise", show_progress=False)
    ingest_pairwise(p)
    return p


@pytest.fixture(scope="module")
def pairwise_built(pairwise_raw: Paths) -> Paths:
    run_dbt(pairwise_raw)
    return pairwise_raw


def test_ingest_counts_and_idempotence(pairwise_raw: Paths):
    counts = ingest_pairwise(pairwise_raw)  # second run replaces, never duplicates
    assert counts == {
        "pairwise_questions": 399,
        "pairwise_samples": 399 * 400,
        "pairwise_answers": 3945,
        "pairwise_skipped_files": 1,
    }
    rows = dict(query(pairwise_raw, "select question_set, count(*) from raw.pairwise_questions group by 1"))
    assert rows["set_1"] == 40 and rows["set_2"] == 80 and rows["training"] == 10
    assert query(pairwise_raw, "select count(*) from raw.pairwise_answers")[0][0] == 3945
    skipped = query(pairwise_raw, "select comparison_id, problem from raw.pairwise_skipped_files")
    assert skipped[0][0] == 20156 and "truncated" in skipped[0][1]
    # word tokens, appendix D: 84 of the 120 question-set tokens
    assert (
        query(
            pairwise_raw,
            "select count(*) from raw.pairwise_questions where question_set like 'set_%' and is_word_token",
        )[0][0]
        == 84
    )
    # provenance on every row
    for t in ("pairwise_questions", "pairwise_samples", "pairwise_answers"):
        assert (
            query(
                pairwise_raw, f"select count(*) from raw.{t} where source_path is null or length(source_sha256) <> 64"
            )[0][0]
            == 0
        )


def test_word_token_rule():
    assert is_word_token(" the") and is_word_token(" Über")
    assert not is_word_token("the") and not is_word_token(" ") and not is_word_token(" 1990")
    assert not is_word_token(" don't") and not is_word_token(",")


def test_bad_files_raise_before_writing(tmp_path: Path, pairwise_raw: Paths, mirror: Path):
    good = json.loads((mirror / "lm_game/server/multi_comparisons/doc10000.json").read_text())
    truncated = tmp_path / "doc10000.json"
    truncated.write_text(json.dumps(good)[:5000])
    with pytest.raises(IngestError, match="truncated or malformed JSON") as exc:
        parse_comparison(truncated, 10000)
    assert exc.value.file == str(truncated)
    missing = tmp_path / "doc10001.json"
    missing.write_text(json.dumps({**{k: v for k, v in good.items() if k != "correct_logprobs"}, "id": 10001}))
    with pytest.raises(IngestError, match="missing field.*correct_logprobs"):
        parse_comparison(missing, 10001)
    short = tmp_path / "doc10002.json"
    short.write_text(json.dumps({**good, "id": 10002, "generated_token_strs": good["generated_token_strs"][:399]}))
    with pytest.raises(IngestError, match="400 strings"):
        parse_comparison(short, 10002)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([[1, 5, 55.0, 10000, 3]]))
    with pytest.raises(IngestError, match="not one of the interface's choices"):
        parse_answers(answers)
    # a file the experiment needs, changed after fetch: nothing is written
    p = make_paths(tmp_path / "warehouse")
    from predictabase.ingest.sources.fetch import fetch_and_record

    fetch_and_record(p, mirror, dataset="pairwise", show_progress=False)
    (p.raw / ANSWERS_PATH).write_text("[[1, 2, 50.0, 10000")
    with pytest.raises(IngestError):
        ingest_pairwise(p)
    assert not p.duckdb.exists() or not query(
        p, "select * from information_schema.tables where table_name like 'pairwise_%'"
    )


def _authors_inputs(mirror: Path):
    """Independent reading of the raw files: included answers per question and the docs."""
    base = mirror / "lm_game"
    rows = json.loads((base / "analysis/results_raw/res_loss_anonym.json").read_text())
    docs = {i: json.loads((base / f"server/multi_comparisons/doc{i}.json").read_text()) for i in SET_1 + SET_2}
    included = set()
    for qs in (SET_1, SET_2):
        by_player = collections.defaultdict(collections.Counter)
        for _, user, _, cid, _ in rows:
            if cid in qs:
                by_player[user][cid] += 1
        included |= {(u, tuple(qs)) for u, c in by_player.items() if set(c) == set(qs) and set(c.values()) == {1}}
    keep = [r for r in rows for u, qs in included if r[1] == u and r[3] in qs]
    return keep, docs, included


def test_player_inclusion_rule_real(pairwise_built: Paths, mirror: Path):
    keep, _, included = _authors_inputs(mirror)
    got = query(
        pairwise_built,
        "select question_set, count(*) from intermediate.int_pairwise_players where is_included group by 1 order by 1",
    )
    assert got == [("set_1", 19), ("set_2", 11)]  # Shlegeris et al. 2024, sec. 4.1
    assert len(keep) == 1640  # "answering a total of 1640 comparisons"
    n = query(pairwise_built, "select count(distinct answer_id) from intermediate.int_pairwise_predictor_answers")
    assert n[0][0] == 1640
    mart_players = query(
        pairwise_built,
        "select n_players from marts.mart_pairwise_perplexity where predictor = "
        "'humans' and subset = 'all' and uncertainty_method = 'two_sigma' "
        "and rounding = 'interface_11'",
    )
    assert mart_players == [(len({u for u, _ in included}),)] == [(29,)]


def test_one_question_term_by_hand(pairwise_built: Paths, mirror: Path):
    """Equation 4-5's per-question term for question 10005, from the JSON files alone."""
    keep, docs, _ = _authors_inputs(mirror)
    cid = 10005
    d = docs[cid]
    gi = d["generator_index"]
    g_y = math.exp(d["correct_logprobs"][gi])
    human_terms, medium_terms = [], []
    for _, _, guess, c, k in keep:
        if c != cid:
            continue
        g_x = math.exp(d["generated_logprobss"][gi][k])
        p = guess / 100
        human_terms.append(g_y / g_x * (1 - p) / p)
        medium_terms.append(g_y / g_x * math.exp(d["generated_logprobss"][2][k]) / math.exp(d["correct_logprobs"][2]))
    assert len(human_terms) == 19
    got = dict(
        (pred, (n, v))
        for pred, n, v in query(
            pairwise_built,
            "select predictor, n_answers, log_mean_term_nats from intermediate.int_pairwise_question_terms "
            "where resample_id = 0 and comparison_id = ? and rounding in ('interface_11', 'exact') "
            "and predictor in ('humans', 'gpt2-medium') and not (predictor = 'gpt2-medium' "
            "and rounding = 'interface_11')",
            [cid],
        )
    )
    assert got["humans"][0] == 19
    assert got["humans"][1] == pytest.approx(math.log(sum(human_terms) / 19), rel=1e-12, abs=1e-12)
    assert got["gpt2-medium"][1] == pytest.approx(math.log(sum(medium_terms) / 19), rel=1e-9, abs=1e-12)


def test_human_estimate_matches_independent_computation(pairwise_built: Paths, mirror: Path):
    """L_h - L_G, sigma and perplexity for all questions and word tokens, recomputed from the files."""
    keep, docs, _ = _authors_inputs(mirror)
    by_q = collections.defaultdict(list)
    for _, _, guess, cid, k in keep:
        d = docs[cid]
        by_q[cid].append(math.exp(d["correct_logprobs"][1] - d["generated_logprobss"][1][k]) * (100 / guess - 1))
    for subset, qs in (
        ("all", SET_1 + SET_2),
        ("word_tokens", [q for q in SET_1 + SET_2 if is_word_token(docs[q]["correct_token_str"])]),
    ):
        logs = np.array([math.log(np.mean(by_q[q])) for q in qs])
        lg = np.mean([-docs[q]["correct_logprobs"][1] for q in qs])
        ((n, d, s, ppl, lo, hi),) = query(
            pairwise_built,
            """
            select n_questions, lh_minus_lg_nats, sigma_nats, perplexity, perplexity_low, perplexity_high
            from marts.mart_pairwise_perplexity where predictor = 'humans' and rounding = 'interface_11'
              and uncertainty_method = 'two_sigma' and subset = ?""",
            [subset],
        )
        assert n == len(qs) == (120 if subset == "all" else 84)
        assert d == pytest.approx(logs.mean(), rel=1e-10)
        assert s == pytest.approx(logs.std() / math.sqrt(len(qs)), rel=1e-10)
        assert ppl == pytest.approx(math.exp(lg + logs.mean()), rel=1e-10)
        assert (lo, hi) == pytest.approx((math.exp(lg + logs.mean() - 2 * s), math.exp(lg + logs.mean() + 2 * s)))
    # humans are far above every model, rounded or not (Figure 4)
    rows = dict(
        ((p, r), v)
        for p, r, v in query(
            pairwise_built,
            """
        select predictor, rounding, perplexity from marts.mart_pairwise_perplexity
        where subset = 'all' and uncertainty_method = 'two_sigma' and rounding in ('exact', 'interface_11')""",
        )
    )
    assert all(rows[("humans", "interface_11")] > v for (p, _), v in rows.items() if p != "humans")
    # the generator's estimate is its true perplexity, by construction
    ((tp, ep),) = query(
        pairwise_built,
        "select true_perplexity, perplexity from marts.mart_pairwise_perplexity where "
        "is_generator and rounding = 'exact' and subset = 'all' and "
        "uncertainty_method = 'two_sigma'",
    )
    assert ep == pytest.approx(tp, rel=1e-12)
    # bootstrap rows exist with 100 resamples and ordered quantiles
    for n_res, lo, mid, hi in query(
        pairwise_built,
        "select n_resamples, perplexity_low, perplexity, perplexity_high "
        "from marts.mart_pairwise_perplexity "
        "where uncertainty_method = 'bootstrap_players'",
    ):
        assert n_res == 100 and lo <= mid <= hi


# --------------------------------------------------------------------------------------------
# synthetic data: h known


V = 40  # vocabulary
N_Q = 80  # questions per set
FEW, MANY = 3, 300  # players (= answered samples per question) in set 1 and set 2
CHOICES = [0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99]


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> tuple[Paths, dict]:
    """Questions whose true-token distribution IS h (a calibrated human), a different generator g.

    The 24-layer column holds ln h, so the LM-as-player estimator with exact ratios is the estimator
    fed with h's exact answers; humans answer h's p rounded to the interface (like the real game).
    Set 1: FEW players; set 2: MANY players. Extra players break the inclusion rule.
    """
    rng = np.random.default_rng(7)
    p = make_paths(tmp_path_factory.mktemp("synthetic") / "warehouse")
    questions, samples, answers, truth = [], [], [], {}
    for set_name, base, n_players in (("set_1", 10000, FEW), ("set_2", 20010, MANY)):
        for i in range(N_Q):
            cid = base + i
            h = _softmax(rng.normal(0, 2.0, V))
            g = _softmax(np.log(h) + rng.normal(0, 1.0, V))  # generator: h perturbed
            u = np.full(V, 1 / V)  # 2-layer column: uniform
            y = int(rng.choice(V, p=h))
            xs = rng.choice(V, size=400, p=g)
            truth[cid] = math.log(g[y]) - math.log(h[y])
            questions.append(
                dict(
                    comparison_id=cid,
                    question_set=set_name,
                    is_training=False,
                    context=f"c{cid}",
                    true_token=f" t{y}",
                    is_word_token=bool(i % 2),
                    generator_index=1,
                    generator_name="g",
                    generator_logprob_y_nats=math.log(g[y]),
                    logprob_y_two_layers_nats=math.log(u[y]),
                    logprob_y_twelve_layers_nats=math.log(g[y]),
                    logprob_y_twenty_four_layers_nats=math.log(h[y]),
                    has_generation_probs=True,
                    n_samples=400,
                    source_path="synthetic",
                    source_sha256="0" * 64,
                )
            )
            for k, x in enumerate(xs):
                samples.append(
                    dict(
                        comparison_id=cid,
                        k=k,
                        sample_token=f" t{x}",
                        is_true_token=bool(x == y),
                        generation_prob=float(g[x]),
                        generator_logprob_x_nats=math.log(g[x]),
                        logprob_x_two_layers_nats=math.log(u[x]),
                        logprob_x_twelve_layers_nats=math.log(g[x]),
                        logprob_x_twenty_four_layers_nats=math.log(h[x]),
                        source_path="synthetic",
                        source_sha256="0" * 64,
                    )
                )
            for j in range(n_players):
                k = j  # player j is shown sample j: distinct samples per question
                x = xs[k]
                p_y = h[y] / (h[x] + h[y])
                p_round = min(CHOICES, key=lambda c: (abs(p_y - c), c))
                answers.append(
                    dict(
                        player=f"{set_name}-p{j}",
                        comparison_id=cid,
                        k=k,
                        p_percent=50.0 if x == y else p_round * 100,
                        auto_answered=bool(x == y),
                    )
                )
    # players breaking the rule (answers at 1 %, which would move the estimate if they counted)
    s1 = [10000 + i for i in range(N_Q)]
    s2 = [20010 + i for i in range(N_Q)]
    bad = {
        "dup": s1[:-1] + [s1[0]],  # N_Q rows (authors' count rule passes) but one question twice
        "partial": s1[: N_Q // 2],
        "both": s1 + s2[:10],
    }  # complete in set 1, partial in set 2
    for player, qs in bad.items():
        for cid in qs:
            answers.append(dict(player=player, comparison_id=cid, k=399, p_percent=1.0, auto_answered=False))
    for i, a in enumerate(answers):
        a.update(answer_id=i + 1, source_path="synthetic", source_sha256="0" * 64)
    frames = {
        "pairwise_questions": pl.DataFrame(questions),
        "pairwise_samples": pl.DataFrame(samples),
        "pairwise_answers": pl.DataFrame(answers),
        "pairwise_skipped_files": pl.DataFrame(
            schema={"comparison_id": pl.Int32, "problem": pl.Utf8, "source_path": pl.Utf8, "source_sha256": pl.Utf8}
        ),
    }
    write_frames(p, frames)
    run_dbt(p, {"pairwise_bootstrap_resamples": 5})
    return p, truth


def test_synthetic_estimator_recovers_known_loss(synthetic):
    p, truth = synthetic
    est = {
        s: (d, sig, tl_h - tl_g)
        for s, d, sig, tl_h, tl_g in query(
            p,
            """
        select m.subset, m.lh_minus_lg_nats, m.sigma_nats, m.true_loss_nats, g.true_loss_nats
        from marts.mart_pairwise_perplexity m
        join marts.mart_pairwise_perplexity g using (subset, uncertainty_method)
        where m.predictor = 'gpt2-medium' and m.rounding = 'exact' and g.is_generator and g.rounding = 'exact'
          and m.uncertainty_method = 'two_sigma'""",
        )
    }
    for s, ids in (("set_1", range(10000, 10000 + N_Q)), ("set_2", range(20010, 20010 + N_Q))):
        # the true L_h - L_G on these questions, from the synthetic h and g
        assert est[s][2] == pytest.approx(np.mean([truth[c] for c in ids]), rel=1e-9)
    err_few = est["set_1"][0] - est["set_1"][2]
    err_many = est["set_2"][0] - est["set_2"][2]
    # with MANY samples per question the estimate is close to the truth ...
    assert abs(err_many) < 0.05
    # ... with FEW it underestimates the loss (the known bias, sec. 4.1.3 (2)), and by more
    assert err_few < -0.05 and abs(err_few) > 3 * abs(err_many)


def test_synthetic_per_question_convergence(synthetic):
    """Each question's ln mean term tends to ln g(y) - ln h(y) as answered samples grow."""
    p, truth = synthetic
    rows = query(
        p,
        "select comparison_id, n_answers, log_mean_term_nats from intermediate.int_pairwise_question_terms "
        "where resample_id = 0 and predictor = 'gpt2-medium' and rounding = 'exact'",
    )
    err = {"few": [], "many": []}
    for cid, n, v in rows:
        few = cid < 20000
        assert n == (FEW + 1 if few else MANY)  # set 1 also holds player "both"'s answers
        err["few" if few else "many"].append(abs(v - truth[cid]))
    assert len(err["few"]) == len(err["many"]) == N_Q
    assert np.mean(err["many"]) < 0.1 and np.mean(err["many"]) < np.mean(err["few"]) / 3


def test_synthetic_rounding_paths_agree(synthetic):
    """Humans answering h's p rounded to the interface == h as an LM player rounded to the interface."""
    p, _ = synthetic
    rows = dict(
        ((pr, s), d)
        for pr, s, d in query(
            p,
            """
        select predictor, subset, lh_minus_lg_nats from marts.mart_pairwise_perplexity
        where rounding = 'interface_11' and uncertainty_method = 'two_sigma' and predictor in ('humans', 'gpt2-medium')
          and subset in ('set_1', 'set_2')""",
        )
    )
    # set 2 only: in set 1, player "both" answers 1 % where h would not
    assert rows[("humans", "set_2")] == pytest.approx(rows[("gpt2-medium", "set_2")], rel=1e-12, abs=1e-12)
    assert rows[("humans", "set_1")] != pytest.approx(rows[("gpt2-medium", "set_1")], rel=1e-6)


def test_synthetic_player_inclusion_rule(synthetic):
    p, _ = synthetic
    players = {
        (pl_, s): (inc, authors)
        for pl_, s, inc, authors in query(
            p,
            "select player, question_set, is_included, meets_authors_count_rule from intermediate.int_pairwise_players",
        )
    }
    assert players[("dup", "set_1")] == (False, True)  # right count, a duplicate and a gap: excluded
    assert players[("partial", "set_1")] == (False, False)
    assert players[("both", "set_1")] == (True, True)  # complete in set 1: counts there ...
    assert players[("both", "set_2")] == (False, False)  # ... but not in set 2
    assert players[("set_2-p0", "set_2")] == (True, True)
    used = dict(
        query(
            p,
            "select player, count(*) from intermediate.int_pairwise_predictor_answers "
            "where predictor = 'humans' and rounding = 'interface_11' and player in "
            "('dup', 'partial', 'both') group by 1",
        )
    )
    assert used == {"both": N_Q}
    # bootstrap resamples keep floor(n/2) of the included players
    n_inc = query(p, "select count(distinct player) from intermediate.int_pairwise_players where is_included")[0][0]
    sizes = {
        r: n for r, n in query(p, "select resample_id, count(*) from intermediate.int_pairwise_resamples group by 1")
    }
    assert sizes[0] == n_inc == FEW + MANY + 1
    assert {n for r, n in sizes.items() if r > 0} == {n_inc // 2} and len(sizes) == 6
