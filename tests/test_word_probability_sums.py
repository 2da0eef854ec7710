"""Oh & Schuler's (2024) Theorems 1 and 2 through this project's scorer and word-surprisal macro, on a bigram LM whose
words can all be enumerated (ingest/scoring/diagnostics.py, mart_word_probability_sums).

Theorem 2: over "the next word, or the end of the text", sum p_WT(w | c) + p(eot | c) / B(c) = 1; with the
words of at most L tokens enumerated and the longer ones accounted for exactly (R_L), the mart's total_wt
is 1 within TOL. Theorem 1: the LW sum exceeds 1 in a context at a likely word end where new words run long.
The sums come from the mart's SQL (the macro word_surprisal_sql), never from Python; numpy_reference
computes them from the bigram table alone, as the independent check.
"""

from __future__ import annotations

import dataclasses

import duckdb
import numpy as np
import pytest

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.ingest.scoring import diagnostics as D
from predictabase.ingest.scoring.sentence import MACRO_FILE

# |total_wt - 1|: the error is exactly the scorer's float32 disagreements between its boundary mass B and
# its own token probabilities (measured: at most 0.5 unit roundoff, u = 2^-24 = 6.0e-8, per position),
# weighted by the word-length levels' shares of the mass (at most 2.4 in all here): a bound of 9.3e-8
# (test_the_tolerance_is_justified); measured 3.8e-8 (6.3e-8 with the Llama backend). TOL leaves a factor
# of 10 for other float32 kernels. LW in place of WT misses 1 by 0.02 to 1.17 (0.17 to 1.17 at L = 8).
TOL = 1e-6
SUM_COLUMNS = ["n_words", "sum_p_wt", "p_end_of_text_over_boundary", "remainder_longer_words", "sum_p_lw"]
WT_EXPRESSION = "logprob_lw_nats + logprob_boundary_after_nats - coalesce(logprob_boundary_before_nats, 0)"


def numpy_reference(table: np.ndarray = D.BIGRAM, contexts=D.CONTEXTS, max_tokens: int = D.MAX_WORD_TOKENS) -> dict:
    """The sums of the mart computed from the bigram table alone (float64, no model, no SQL).

    Per context key: a list over L = 1..max_tokens of dicts with n_words, sum_wt, p_eot_over_b,
    remainder, total, sum_lw. Prefix masses are propagated level by level: m_1[x] = P[c, x] for
    word-initial x; m_{n+1}[y] = sum_x m_n[x] P[x, y] for continuation y.
    """
    b_mask = np.zeros(table.shape[0], dtype=bool)
    b_mask[[D.EOT_ID, *D.WORD_INITIAL_IDS]] = True
    b_after = table[:, b_mask].sum(axis=1)
    out = {}
    for c in contexts:
        last = c.tokens[-1]
        b_c = b_after[last]
        p_eot = table[last, D.EOT_ID]
        mass = np.zeros(table.shape[0])
        mass[list(D.WORD_INITIAL_IDS)] = table[last, list(D.WORD_INITIAL_IDS)]
        rows, sum_wt, sum_lw, n_words = [], 0.0, 0.0, 0
        for n in range(1, max_tokens + 1):
            if n > 1:
                nxt = np.zeros_like(mass)
                nxt[list(D.CONTINUATION_IDS)] = (mass @ table)[list(D.CONTINUATION_IDS)]
                mass = nxt
            n_words += len(D.WORD_INITIAL_IDS) * len(D.CONTINUATION_IDS) ** (n - 1)
            sum_lw += mass.sum()
            sum_wt += (mass * b_after).sum() / b_c
            remainder = (mass * (1.0 - b_after)).sum() / b_c
            rows.append(
                {
                    "max_word_tokens": n,
                    "n_words": n_words,
                    "sum_wt": sum_wt,
                    "p_eot_over_b": p_eot / b_c,
                    "remainder": remainder,
                    "total": sum_wt + p_eot / b_c + remainder,
                    "sum_lw": sum_lw,
                }
            )
        out[c.key] = rows
    return out


@pytest.fixture(scope="module")
def sums():
    return D.sums_from_tables(D.token_rows(), D.word_rows())


def by_context(df) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in df.sort(["context_key", "max_word_tokens"]).iter_rows(named=True):
        out.setdefault(r["context_key"], []).append(r)
    return out


# --- the model --------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["torch", "llama"])
def test_the_model_is_the_bigram_table(backend):
    import torch

    model = D.bigram_model(backend=backend)
    ids = torch.tensor([[0, 1, 2, 3, 4, 4, 3, 2, 1, 0]])
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=ids).logits.float(), dim=-1)[0].numpy()
    np.testing.assert_allclose(lp, np.log(D.BIGRAM)[ids[0].numpy()], atol=1e-6, rtol=0)
    if backend == "llama":
        assert type(model).__name__ == "LlamaForCausalLM"


def test_scored_token_rows_match_numpy_from_the_table():
    """Every token row of every enumerated text against the table: ln p(token | previous token), ln B before
    and after it (word-initial tokens + end-of-text), and the full distribution in top-k."""
    rows = D.token_rows().to_pandas()
    texts = {t.doc_id: t for t in D.enumerate_texts()}
    assert rows["doc_id"].nunique() == len(texts) == 3 * 510
    log_p = np.log(D.BIGRAM)
    log_b = np.log(D.BIGRAM[:, [D.EOT_ID, *D.WORD_INITIAL_IDS]].sum(axis=1))
    ids = rows["token_id"].to_numpy()
    prev = np.where(rows["token_index"].to_numpy() == 0, D.EOT_ID, np.roll(ids, 1))  # BOS before the first
    np.testing.assert_allclose(rows["logprob_nats"], log_p[prev, ids], atol=1e-6, rtol=0)
    np.testing.assert_allclose(rows["logprob_word_initial_nats"], log_b[prev], atol=1e-6, rtol=0)
    np.testing.assert_allclose(rows["logprob_word_initial_after_nats"], log_b[ids], atol=1e-6, rtol=0)
    for r in rows.sample(200, random_state=0).itertuples():
        np.testing.assert_allclose(r.topk_logprobs_nats, log_p[prev[r.Index], r.topk_token_ids], atol=1e-6, rtol=0)
        assert sorted(r.topk_token_ids) == list(range(len(D.VOCAB)))
    text = rows.groupby("doc_id", sort=False)["token_text"].agg("".join)
    assert all(text[d] == texts[d].text for d in texts)


def test_the_transformers_model_gives_the_same_token_rows():
    """The warehouse scores the plain torch bigram; a real LlamaForCausalLM with hand-set weights gives the
    same rows through the Scorer (float32 rounding apart)."""
    a, b = D.token_rows("torch"), D.token_rows("llama")
    exact = [
        c
        for c in a.column_names
        if c
        not in (
            "logprob_nats",
            "logprob_word_initial_nats",
            "logprob_word_initial_after_nats",
            "entropy_nats",
            "topk_logprobs_nats",
            "topk_token_ids",
            "topk_tokens",
        )
    ]
    assert a.select(exact).equals(b.select(exact))
    for c in ("logprob_nats", "logprob_word_initial_nats", "logprob_word_initial_after_nats", "entropy_nats"):
        np.testing.assert_allclose(a[c].to_numpy(), b[c].to_numpy(), atol=1e-6, rtol=0)


# --- the theorems, through the macro ----------------------------------------------------------------


def test_wt_word_probabilities_sum_to_one(sums):
    """Theorem 2: sum p_WT (<= L tokens) + p(eot | c) / B(c) + R_L = 1 for every context and every L."""
    assert sums.height == 3 * D.MAX_WORD_TOKENS
    for key, rows in by_context(sums).items():
        for r in rows:
            assert abs(r["total_wt"] - 1) < TOL, (key, r)
            assert r["n_unaligned_words"] == 0 and r["context_spread_nats"] < 1e-6
            assert r["n_words"] == 2 * (2 ** r["max_word_tokens"] - 1)
        # the enumerated words take more of the mass as L grows, the remainder shrinks towards 0
        wt = [r["sum_p_wt"] for r in rows]
        rem = [r["remainder_longer_words"] for r in rows]
        assert wt == sorted(wt) and rem == sorted(rem, reverse=True) and rem[-1] < 0.015
    assert max(abs(x) for x in sums["total_wt_error"]) < TOL


def test_the_tolerance_is_justified(sums):
    """Over the stored numbers, total_wt - 1 = eps_c - sum_{n < L} sum_{q of n tokens} p(q | c) / B(c) * delta_q
    exactly (the sums telescope), with eps_c = (sum of the stored p over B at c) / B(c) - 1 and delta_q =
    (1 - B after q) - (sum of the stored p of the continuation tokens after q): the float32 disagreements of
    the scorer's boundary mass with its own token probabilities. Measured here from the token rows, they
    bound |total_wt - 1| far below TOL."""
    rows = D.token_rows().to_pandas()
    b_ids, vi_ids = [D.EOT_ID, *D.WORD_INITIAL_IDS], list(D.CONTINUATION_IDS)
    eps, delta = 0.0, 0.0
    for r in rows.itertuples():
        p = dict(zip(r.topk_token_ids, np.exp(np.asarray(r.topk_logprobs_nats))))
        b = np.exp(r.logprob_word_initial_nats)
        eps = max(eps, abs(sum(p[i] for i in b_ids) / b - 1))
        delta = max(delta, abs((1 - b) - sum(p[i] for i in vi_ids)))
    u = 2.0**-24  # float32 unit roundoff
    assert eps < 4 * u and delta < 2 * u, (eps, delta)
    ref = numpy_reference()
    for key, rows_ in by_context(sums).items():
        # the mass of the n-token prefixes over B(c): S_1 = 1 - p(eot)/B, S_{n+1} = R_n
        s_n = [1 - ref[key][0]["p_eot_over_b"]] + [x["remainder"] for x in ref[key]]
        for r in rows_:
            bound = eps + delta * sum(s_n[: r["max_word_tokens"] - 1]) * (1 + 1e-6)
            assert abs(r["total_wt_error"]) <= bound + 1e-12 and bound < TOL / 3, (key, r["max_word_tokens"], bound)


def test_lw_word_probabilities_can_sum_to_more_than_one(sums):
    """Theorem 1: in word_end (a likely word end, and new words run long) the LW sum exceeds 1 from L = 2;
    in mid_word it stays below 1: LW sums are not 1 either way."""
    ctx = by_context(sums)
    assert [r["sum_p_lw"] > 1 for r in ctx["word_end"]] == [False] + [True] * (D.MAX_WORD_TOKENS - 1)
    assert ctx["word_end"][-1]["sum_p_lw"] > 1.8
    assert all(r["sum_p_lw"] < 0.2 for r in ctx["mid_word"] + ctx["text_end"])


def test_sql_sums_match_numpy_from_the_table(sums):
    """The mart's SQL over the scored rows against numpy_reference (the bigram table alone, float64)."""
    ref = numpy_reference()
    for key, rows in by_context(sums).items():
        assert [r["max_word_tokens"] for r in rows] == [x["max_word_tokens"] for x in ref[key]]
        for r, x in zip(rows, ref[key]):
            for col in SUM_COLUMNS:
                want = x[
                    "p_eot_over_b"
                    if col == "p_end_of_text_over_boundary"
                    else "remainder"
                    if col == "remainder_longer_words"
                    else "sum_wt"
                    if col == "sum_p_wt"
                    else "sum_lw"
                    if col == "sum_p_lw"
                    else col
                ]
                assert r[col] == pytest.approx(want, abs=1e-6), (key, r["max_word_tokens"], col)
            assert x["total"] == pytest.approx(1, abs=1e-12)


def test_the_check_fails_for_lw_in_place_of_wt():
    """The macro with WT = LW (no boundary terms): the same SQL misses 1 by far more than TOL, so the test
    above and the mart's schema test can fail."""
    macro = MACRO_FILE.read_text(encoding="utf-8")
    assert macro.count(WT_EXPRESSION) == 1, "the macro's WT expression changed; update WT_EXPRESSION"
    broken = D.sums_from_tables(D.token_rows(), D.word_rows(), macro.replace(WT_EXPRESSION, "logprob_lw_nats"))
    errors = dict(zip(zip(broken["context_key"], broken["max_word_tokens"]), broken["total_wt_error"]))
    assert min(abs(e) for e in errors.values()) > 0.01  # 0.02 at the least (mid_word, L = 1)
    at_8 = {k: round(e, 2) for (k, n), e in errors.items() if n == D.MAX_WORD_TOKENS}
    assert at_8 == {"word_end": 1.17, "mid_word": -0.66, "text_end": -0.17}
    # (with WT = LW, sum_p_wt is the LW sum)
    assert broken["sum_p_wt"].to_list() == pytest.approx(broken["sum_p_lw"].to_list(), rel=1e-12)


def test_the_check_fails_without_end_of_text_in_b():
    """B without the end-of-text (the profile's word-initial mask without <|endoftext|>): the text's end is
    then counted as a word continuing, and the distribution over next words and the end is no longer complete."""
    from predictabase.ingest.scoring.engine import Scorer

    profile = D.bigram_profile()
    mask = profile.word_initial.copy()
    mask[D.EOT_ID] = False
    sc = Scorer(D.bigram_model(), dataclasses.replace(profile, word_initial=mask), top_k=len(D.VOCAB), probe=False)
    broken = D.sums_from_tables(D.score_texts(sc), D.word_rows())
    assert min(abs(e) for e in broken["total_wt_error"].to_list()) > 0.01


# --- the warehouse ----------------------------------------------------------------------------------


def test_the_ingest_job_writes_the_module_tables():
    """The ingest job `word_probability_sums` (ingest/datasets/word_probability_sums.py) writes the module's token
    and word rows as they are; dbt only types them (stg_word_probability_sums_*): no dbt model imports the ingest
    code."""
    from predictabase.ingest.datasets import word_probability_sums as job
    from predictabase.ingest.scoring.store import SCHEMA

    frames = job.load(None)
    tokens, words = frames[job.TOKENS].to_arrow(), frames[job.WORDS].to_arrow()
    assert [f.name for f in tokens.schema] == SCHEMA.names and tokens.cast(SCHEMA).equals(D.token_rows())
    # the contexts have 1, 2 and 2 words, and each text one candidate after them
    assert words.cast(D.WORD_SCHEMA).equals(D.word_rows()) and words.num_rows == (2 + 3 + 3) * 510
    sources = {p.stem for p in (DBT_PROJECT_DIR / "models").rglob("*.py")}
    assert not {s for s in sources if "word_probability" in s}


def test_published_mart_after_the_real_build(real_warehouse, sums):
    """The session's real warehouse (tests/conftest.py) ingested the diagnostic's rows, and its full dbt build
    built the two staging models and the mart with its schema tests (|total - 1| < 1e-6, LW > 1 in word_end) and published it; its rows
    are the ones the same SQL gives in memory."""
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        mart = con.sql(f"select * from main.{D.MART_MODEL} order by context_key, max_word_tokens").pl()
    assert mart.columns == sums.columns
    expected = sums.sort(["context_key", "max_word_tokens"])
    for col in ["context_key", "context", "max_word_tokens", "n_words", "n_unaligned_words"]:
        assert mart[col].to_list() == expected[col].to_list()
    for col in SUM_COLUMNS[1:] + ["total_wt"]:
        np.testing.assert_allclose(mart[col].to_numpy(), expected[col].to_numpy(), atol=1e-12, rtol=0)
    assert (mart["total_wt_error"].abs() < TOL).all()
