"""The model side of the human-vs-model next-word comparison (ingest/scoring/cloze_responses.py) against brute force.

Brute force: BOS + the context's tokens + the response's tokens through ONE plain forward pass of a
float64 copy of the model (no cache, no custom mask), and from its log-softmax
    LW = sum_j ln p(t_j | context, t_<j),  ln B before = ln sum_{word-initial} p(. | context),
    ln B after = ln sum_{word-initial} p(. | context, t_1..t_n).
The scorer (float32 model, KV cache, tree-shaped mask, many contexts per forward call, contexts of
several positions shared) must store the same three numbers to 1e-5 nats, on real UCL and Provo
contexts with real human responses, for a Llama with SmolLM2's real tokenizer (responses of 1 to 4
tokens) and the tiny GPT-2 (the real GPT-2 BPE).
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter

import duckdb
import pyarrow.parquet as pq
import pytest
import torch

from predictabase.core.config import paths as make_paths
from predictabase.ingest.scoring.cloze_responses import (
    Candidate,
    ClozeSettings,
    read_inputs,
    run_cloze,
    run_dir,
    score_candidates,
    scored_text,
    scores_root,
)
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.word_search import word_token_ids

# float32 scorer vs float64 brute force: the log-softmax normalizer sums ~50k float32 terms, whose rounding
# error is ~sqrt(V) * 2^-24 ~ 1.3e-5 nats, shifting every log-probability of a position alike (seen: 1.07e-5 on
# the tiny models as transformers 5.24 initialises them). The float64 path is checked to 1e-9 (`exact`).
TOL = 3e-5


@pytest.fixture(scope="module")
def cloze_warehouse(fetched_raw, tmp_path_factory):
    """UCL and Provo with their cloze norms and UCL's response distributions, ingested from the mirror."""
    from predictabase.ingest.datasets.registry import run_ingest

    p = make_paths(tmp_path_factory.mktemp("cloze") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    run_ingest(p, ["ucl", "provo", "provo_cloze", "ucl_cloze", "ucl_cloze_distributions"], show_progress=False)
    return p


def load(directory, model_type):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory).eval()
    return model, TokenizerProfile.build(tok, model_type, model.config.vocab_size, str(directory))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from tests.scoring_helpers import build_tiny_llama

    return load(build_tiny_llama(tmp_path_factory.mktemp("tiny-llama")), "llama")


@pytest.fixture(scope="module")
def tiny_gpt2(tiny_gpt2_dir):
    return load(tiny_gpt2_dir, "gpt2")


def brute_force(model64, profile: TokenizerProfile, context: str, word: str) -> tuple[float, float, float, int]:
    """(LW, ln B before, ln B after, n tokens) from one plain float64 forward pass over BOS + context + word."""
    ((ctx_ids, _),) = profile.encode([context])
    (ids,) = word_token_ids(profile, [" " + word])
    ((joint, _),) = profile.encode([context + " " + word])
    assert joint == ctx_ids + ids, "the context + word tokenize as the context's tokens then the word's"
    inp = torch.tensor([[profile.bos.token_id, *ctx_ids, *ids]])
    with torch.no_grad():
        lp = torch.log_softmax(model64(inp).logits[0].double(), dim=-1)
    c = len(ctx_ids)  # lp[c] is the distribution after the context (BOS at 0)
    wi = torch.from_numpy(profile.word_initial)
    lw = sum(lp[c + j, t].item() for j, t in enumerate(ids))
    return lw, torch.logsumexp(lp[c][wi], 0).item(), torch.logsumexp(lp[c + len(ids)][wi], 0).item(), len(ids)


def check(model, profile, inputs, settings=ClozeSettings(), n_per_kind=12, exact=False):
    """Scores of `model` (float32) against the brute force of its float64 copy: to TOL nats (relative 1e-6
    for large values: float32 rounding); `exact`: the scorer runs the float64 copy too, to 1e-9."""
    import copy

    model64 = copy.deepcopy(model).double()
    rows, stats = score_candidates(model64 if exact else model, profile, inputs, settings)
    assert len(rows) == len(inputs.candidates)
    tol = dict(abs=1e-9) if exact else dict(abs=TOL, rel=1e-6)
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == len(rows), Counter(r["status"] for r in rows)
    # several contexts of each kind, every multi-token response among them, and sentence starts
    picked = []
    for kind in ("response", "modal_response", "true_word"):
        picked += [r for r in ok if r["candidate_kind"] == kind][:n_per_kind]
    multi = [r for r in ok if r["n_tokens"] > 1]
    assert multi, "no multi-token response in the sample"
    picked += multi[:n_per_kind]
    picked += [r for r in ok if r["scored_text"] != r["response"] and r["candidate_kind"] != "true_word"][:4]
    for r in picked:
        text = inputs.texts[(r["corpus"], r["doc_id"])]
        lw, before, after, n = brute_force(model64, profile, text[: r["context_chars"]], r["scored_text"])
        assert r["n_tokens"] == n
        assert r["logprob_tokens_nats"] == pytest.approx(lw, **tol), r
        assert r["logprob_boundary_before_nats"] == pytest.approx(before, **tol), r
        assert r["logprob_boundary_after_nats"] == pytest.approx(after, **tol), r
    return rows, picked


def test_llama_smollm2_tokenizer_equals_brute_force(cloze_warehouse, tiny_llama):
    model, profile = tiny_llama
    inputs = read_inputs(cloze_warehouse, limit=3)
    rows, picked = check(model, profile, inputs)
    assert max(r["n_tokens"] for r in picked) >= 3
    kinds = Counter(r["candidate_kind"] for r in rows)
    assert kinds["response"] > 500 and kinds["modal_response"] > 100 and kinds["true_word"] > 100


def test_float64_model_is_exact(cloze_warehouse, tiny_llama):
    """The cache, the tree mask and the positions lose nothing: a float64 model gives the brute force to 1e-9."""
    model, profile = tiny_llama
    check(
        model, profile, read_inputs(cloze_warehouse, limit=1), ClozeSettings(batch_tokens=100), n_per_kind=8, exact=True
    )


def test_gpt2_equals_brute_force_and_packing_changes_nothing(cloze_warehouse, tiny_gpt2):
    model, profile = tiny_gpt2
    inputs = read_inputs(cloze_warehouse, limit=2)
    rows, _ = check(model, profile, inputs, ClozeSettings(pack_tokens=48, batch_tokens=64), n_per_kind=6)
    other, _ = score_candidates(model, profile, inputs, ClozeSettings(pack_tokens=4096, batch_tokens=4096))
    cols = ("logprob_tokens_nats", "logprob_boundary_before_nats", "logprob_boundary_after_nats")
    for a, b in zip(rows, other):
        assert (a["doc_id"], a["word_index"], a["response"]) == (b["doc_id"], b["word_index"], b["response"])
        for c in cols:
            assert a[c] == pytest.approx(b[c], abs=TOL)


def test_inputs_on_the_real_data(cloze_warehouse):
    """Every UCL response word with a count > 0 (NULL and upstream's 'unk' excluded), Provo's modal
    response and the true words; positions with one context text are scored once."""
    inputs = read_inputs(cloze_warehouse)
    kinds = Counter(c.kind for c in inputs.candidates)
    con = duckdb.connect(str(cloze_warehouse.duckdb), read_only=True)
    try:
        n_resp = con.execute(
            "SELECT count(*) FROM (SELECT DISTINCT doc_id, word_index, response "
            "FROM raw.cloze_responses WHERE response IS NOT NULL AND response_count > 0)"
        ).fetchone()[0]
        n_null = con.execute("SELECT count(*) FROM raw.cloze_responses WHERE response IS NULL").fetchone()[0]
        n_modal = con.execute(
            "SELECT count(*) FROM (SELECT DISTINCT doc_id, word_index, modal_response FROM "
            "raw.cloze_norms WHERE corpus = 'provo' AND modal_response IS NOT NULL "
            "AND n_responses IS NOT NULL AND word_index > 0)"
        ).fetchone()[0]
    finally:
        con.close()
    assert kinds["response"] == n_resp == 66_209  # 42,482 (context, response) pairs over the 1,726 positions
    assert n_null > 0 and not any(c.response is None or c.response == "unk" for c in inputs.candidates)
    assert kinds["modal_response"] == n_modal
    ucl_pairs = {
        (inputs.texts[("ucl", c.doc_id)][: inputs.cuts[("ucl", c.doc_id, c.word_index)]], c.response)
        for c in inputs.candidates
        if c.kind == "response"
    }
    assert len(ucl_pairs) >= 42_482  # punctuation kept: a cloze key can stand for two printed contexts


def test_scored_text_rules():
    c = Candidate("provo", "1", 5, "modal_response", "the")
    assert scored_text(c, "It rained. ") == "The" and scored_text(c, 'He said "stop." ') == "The"
    assert scored_text(c, "It rained and") == "the"
    t = Candidate("provo", "1", 5, "true_word", '"watch."')
    assert scored_text(t, "the smart") == "watch"
    assert scored_text(Candidate("ucl", "1", 2, "true_word", "don't"), "I") == "don't"
    assert scored_text(Candidate("provo", "36", 9, "true_word", "—"), "a") is None


def test_run_is_stored_once(cloze_warehouse, tiny_gpt2_dir, tmp_path):
    """A complete run: scores.parquet + _run.json; a second call writes nothing new."""
    p = make_paths(tmp_path / "warehouse")
    p.warehouse.mkdir(parents=True)
    shutil.copy(cloze_warehouse.duckdb, p.duckdb)
    first = run_cloze(p, str(tiny_gpt2_dir), limit=1, device="cpu", dtype="float32", show_progress=False)
    d = run_dir(p, first["model_key"], first["run_id"])
    table = pq.read_table(d / "scores.parquet")
    assert table.num_rows == first["n_candidates"] > 0
    rec = json.loads((d / "_run.json").read_text())
    assert rec["limit"] == 1 and rec["scorer_version"] == 1 and rec["inputs_sha256"]
    assert {s["table"] for s in rec["sources"]} == {"cloze_responses", "cloze_norms", "documents"}
    from tests.test_token_store import PSEUDO, dbt_columns  # every key dbt reads from this run record is written

    reads = {w: c for w, c in dbt_columns("_run.json").items() if "cloze" in w}
    assert reads
    for where, cols in reads.items():
        missing = set(cols) - set(rec) - set(PSEUDO)
        assert not missing, f"{where}: dbt reads {sorted(missing)}, which the cloze run record lacks"
    again = run_cloze(p, str(tiny_gpt2_dir), limit=1, device="cpu", dtype="float32", show_progress=False)
    assert again["skipped"] and again["run_id"] == first["run_id"]
    assert len(list(scores_root(p).glob("model=*/run=*"))) == 1
    assert not [f for f in scores_root(p).rglob("*") if f.name.startswith(".")]  # no temporaries left
    lw = table.column("logprob_tokens_nats").to_pylist()
    assert all(v is not None and v < 0 and math.isfinite(v) for v in lw)
