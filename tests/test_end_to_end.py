"""The main job's path end to end on real data: fetch -> ingest -> score -> dbt build -> publish.

A tiny GPT-2 (real GPT-2 tokenizer files, seeded weights, n_positions 128) scores the real UCL
sentences and Natural Stories through `score_corpora`; `mart_model_perplexity` must equal an
independent computation: for UCL from plain full-context forward passes (every sentence fits one
window), for Natural Stories (sliding windows) from the Parquet the scorer wrote. Re-running the
whole job changes nothing.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow.dataset as ds
import pytest
import torch

from predictabase.core.config import paths as make_paths
from predictabase.ingest.datasets.registry import run_ingest
from predictabase.ingest.scoring import ScoreSettings, score_corpora
from predictabase.ingest.sources.fetch import fetch_and_record
from predictabase.warehouse import dbt_build, publish

SELECT = "+tag:perplexity"
SET = dict(top_k=3, device="cpu", dtype="float32")
COLS = (
    "model_key, corpus, n_docs, n_tokens, n_words, n_chars, n_bytes, total_surprisal_nats, "
    "mean_surprisal_bits, token_perplexity, token_perplexity_ci_low, token_perplexity_ci_high, "
    "bits_per_byte, bits_per_char, word_perplexity, bits_per_word, vocab_size, normalized_perplexity"
)


@pytest.fixture(scope="module")
def job(mirror, tiny_gpt2_dir, tmp_path_factory):
    p = make_paths(tmp_path_factory.mktemp("e2e") / "warehouse")

    def run():
        fetch_and_record(p, mirror, show_progress=False)
        run_ingest(p, ["ucl", "natural_stories"], show_progress=False)
        runs = score_corpora(
            p, str(tiny_gpt2_dir), ["ucl", "natural_stories"], ScoreSettings(**SET), show_progress=False
        )
        # the perplexity domain and everything it reads (what these tests check; a full build of every
        # domain is tests/conftest.py's real_warehouse and refreshed)
        dbt_build(p, select=SELECT)
        publish(p)
        with duckdb.connect(str(p.marts), read_only=True) as con:
            rows = con.execute(f"SELECT {COLS} FROM mart_model_perplexity ORDER BY corpus").fetchall()
        return runs, rows

    first = run()
    second = run()
    return p, first, second


def _mart(rows, corpus):
    names = [c.strip() for c in COLS.split(",")]
    [row] = [dict(zip(names, r)) for r in rows if r[1] == corpus]
    return row


def test_ucl_mart_equals_plain_forward_passes(job, mirror, tiny_gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    p, (runs, rows), _ = job
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        texts = [
            t
            for (t,) in con.execute(
                "SELECT text FROM raw.documents WHERE corpus = 'ucl' ORDER BY CAST(doc_id AS INTEGER)"
            ).fetchall()
        ]
        n_words = con.execute("SELECT count(*) FROM raw.words WHERE corpus = 'ucl'").fetchone()[0]
    assert len(texts) == 205 and n_words == 1931
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    nats, n_tokens = 0.0, 0
    with torch.no_grad():
        for text in texts:
            ids = tok(text, add_special_tokens=False)["input_ids"]
            assert len(ids) < 128  # one window: the plain pass is the full-context truth
            lp = torch.log_softmax(model(torch.tensor([[50256] + ids])).logits[0, :-1].float(), -1)
            nats -= lp[torch.arange(len(ids)), torch.tensor(ids)].double().sum().item()
            n_tokens += len(ids)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_chars = sum(len(t) for t in texts)
    m = _mart(rows, "ucl")
    assert (m["n_docs"], m["n_tokens"], m["n_words"], m["n_chars"], m["n_bytes"]) == (
        205,
        n_tokens,
        1931,
        n_chars,
        n_bytes,
    )
    assert m["total_surprisal_nats"] == pytest.approx(nats, rel=1e-6)
    # the perplexity glossary: PPL = exp(-(1/T) sum ln p) over the corpus (not a mean of per-sentence perplexities)
    assert m["token_perplexity"] == pytest.approx(math.exp(nats / n_tokens), rel=1e-6)
    assert m["mean_surprisal_bits"] == pytest.approx(nats / n_tokens / math.log(2), rel=1e-6)
    assert m["bits_per_byte"] == pytest.approx(nats / math.log(2) / n_bytes, rel=1e-6)
    assert m["bits_per_char"] == pytest.approx(nats / math.log(2) / n_chars, rel=1e-6)
    assert m["word_perplexity"] == pytest.approx(math.exp(nats / 1931), rel=1e-6)
    assert m["bits_per_word"] == pytest.approx(nats / 1931 / math.log(2), rel=1e-6)
    assert m["vocab_size"] == 50257
    assert m["normalized_perplexity"] == pytest.approx(m["token_perplexity"] / 50257, rel=1e-9)
    assert m["token_perplexity_ci_low"] < m["token_perplexity"] < m["token_perplexity_ci_high"]


def test_natural_stories_mart_equals_its_parquet(job):
    p, (runs, rows), _ = job
    [run] = [r for r in runs if r["corpus"] == "natural_stories"]
    assert run["context_length"] == 128 and run["stride"] == 64  # the tiny model's maximum: sliding windows
    from predictabase.ingest.scoring import store

    t = ds.dataset(
        store.run_dir(p.token_scores, run["model_key"], "natural_stories", run["run_id"]),
        format="parquet",
        partitioning=None,
    ).to_table(columns=["doc_id", "logprob_nats", "token_text"])
    lp = np.asarray(t.column("logprob_nats"), dtype=np.float64)
    nats = -lp.sum()
    n_bytes = sum(len(s.encode("utf-8")) for s in t.column("token_text").to_pylist())
    m = _mart(rows, "natural_stories")
    assert (m["n_docs"], m["n_tokens"], m["n_words"], m["n_bytes"]) == (10, len(lp), 10256, n_bytes)
    assert m["token_perplexity"] == pytest.approx(math.exp(nats / len(lp)), rel=1e-6)
    assert m["bits_per_byte"] == pytest.approx(nats / math.log(2) / n_bytes, rel=1e-6)
    # corpus-weighted, not the mean of the 10 stories' perplexities
    docs = np.asarray(t.column("doc_id").to_pylist())
    per_doc = [math.exp(-lp[docs == d].mean()) for d in np.unique(docs)]
    assert m["token_perplexity"] != pytest.approx(float(np.mean(per_doc)), rel=1e-9)


def test_rerunning_the_job_is_idempotent(job):
    p, (runs1, rows1), (runs2, rows2) = job
    assert [r["run_id"] for r in runs1] == [r["run_id"] for r in runs2]
    assert {r["status"] for r in runs1} == {"scored"} and {r["status"] for r in runs2} == {"already complete"}
    assert len(rows1) == len(rows2) == 2
    for a, b in zip(rows1, rows2):  # the same values (DuckDB's parallel sums may differ in the last bit)
        assert a[:7] == b[:7] and b[7:] == pytest.approx(a[7:], rel=1e-12)
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM raw.documents").fetchone()[0] == 205 + 10
    with duckdb.connect(str(p.marts), read_only=True) as con:
        assert con.execute(
            "SELECT count(*), count(DISTINCT run_id), bool_and(used_in_marts) FROM mart_models"
        ).fetchone() == (2, 2, True)
