"""Scoring engine: exact log-probs, sliding windows, statistics, BOS, resumability, load errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from predictabase.core.errors import ModelLoadError
from predictabase.ingest.scoring import ScoreSettings, pipeline, score_corpora, store
from predictabase.ingest.scoring.bos import choose_bos
from predictabase.ingest.scoring.engine import make_windows
from predictabase.ingest.scoring.model_identity import load_spec
from predictabase.ingest.scoring.profile import encode
from tests.scoring_helpers import SCORED_RUN_KEYS, natural_stories, ucl_sentences, write_documents

SET = dict(top_k=5, device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def tiny(tiny_gpt2_dir) -> Path:
    return tiny_gpt2_dir


@pytest.fixture(scope="module")
def tiny_model(tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(tiny)


def read_run(paths, run) -> pd.DataFrame:  # noqa: F821
    d = store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"])

    t = store.read_parts(d).to_pandas()
    return t.sort_values(
        ["doc_id", "token_index"], key=lambda s: s.astype(int) if s.name == "doc_id" else s
    ).reset_index(drop=True)


def plain_logprobs(model, ids: list[int], bos: int) -> np.ndarray:
    """log p(token | BOS + all earlier tokens) from one plain forward pass: [n] and the [n, V] log-softmax."""
    lp = plain_logsoftmax_all(model, ids, bos)[:-1]
    return lp[np.arange(len(ids)), ids], lp


def plain_logsoftmax_all(model, ids: list[int], bos: int) -> np.ndarray:
    """The [n + 1, V] log-softmax of one plain forward pass over BOS + ids: row i predicts token i, row n
    is the distribution after the last token (the end of the text)."""
    with torch.no_grad():
        logits = model(torch.tensor([[bos] + ids])).logits[0].float()
    return torch.log_softmax(logits, -1).numpy().astype(np.float64)


def test_logprobs_equal_plain_forward_and_stats_match_numpy(tmp_paths, mirror, tiny, tiny_model):
    model, tok = tiny_model
    texts = ucl_sentences(mirror, 12)
    write_documents(tmp_paths, "ucl", texts)
    [run] = score_corpora(tmp_paths, str(tiny), ["ucl"], ScoreSettings(context_length=128, **SET), show_progress=False)
    assert run["status"] == "scored" and run["bos_policy"] == "endoftext" and run["bos_token_id"] == 50256
    df = read_run(tmp_paths, run)
    V = len(tok)
    # independent word-initial mask: decode every vocabulary item, whitespace first, plus <|endoftext|>
    wi_mask = np.array([tok.decode([i])[:1].isspace() for i in range(V)])
    wi_mask[50256] = True
    for i, text in enumerate(texts):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        got = df[df.doc_id == str(i + 1)]
        assert list(got.token_id) == ids and list(got.token_index) == list(range(len(ids)))
        want, lp = plain_logprobs(model, ids, 50256)
        np.testing.assert_allclose(got.logprob_nats, want, atol=1e-5, rtol=0)
        # spans tile the text, token_text is the covered characters
        assert got.char_start.iloc[0] == 0 and got.char_end.iloc[-1] == len(text)
        assert (got.char_start.values[1:] == got.char_end.values[:-1]).all()
        assert "".join(got.token_text) == text
        assert all(text[s:e] == t for s, e, t in zip(got.char_start, got.char_end, got.token_text))
        # statistics vs numpy on the plain pass
        tgt = lp[np.arange(len(ids)), ids]
        np.testing.assert_array_equal(got["rank"], 1 + (lp > tgt[:, None]).sum(1))
        p = np.exp(lp)
        np.testing.assert_allclose(got.entropy_nats, -(p * lp).sum(1), atol=1e-4)
        np.testing.assert_allclose(got.logprob_word_initial_nats, np.log(p[:, wi_mask].sum(1)), atol=1e-4)
        # ln B after each token: the next position's, and after the last token the end of the text
        p_all = np.exp(plain_logsoftmax_all(model, ids, 50256))
        np.testing.assert_allclose(got.logprob_word_initial_after_nats, np.log(p_all[1:, wi_mask].sum(1)), atol=1e-4)
        np.testing.assert_array_equal(
            got.logprob_word_initial_after_nats.values[:-1], got.logprob_word_initial_nats.values[1:]
        )
        top = np.argsort(-lp, axis=1, kind="stable")[:, :5]
        np.testing.assert_array_equal(np.stack(got.topk_token_ids), top)
        np.testing.assert_allclose(np.stack(got.topk_logprobs_nats), np.take_along_axis(lp, top, 1), atol=1e-5)
        assert [list(x) for x in got.topk_tokens] == [tok.convert_ids_to_tokens(list(r)) for r in top]
        assert list(got.token) == tok.convert_ids_to_tokens(ids)
        np.testing.assert_array_equal(got.context_tokens, np.arange(len(ids)))
    run_json = json.loads(
        (store.run_dir(tmp_paths.token_scores, run["model_key"], "ucl", run["run_id"]) / "_run.json").read_text()
    )
    assert run_json["n_tokens"] == len(df) and run_json["n_docs"] == 12 and run_json["source"] == "scored"
    assert set(run_json) == SCORED_RUN_KEYS and set(run) == SCORED_RUN_KEYS | {"status"}
    for key in ("model_revision", "tokenizer_sha256", "dtype", "device", "vocab_size", "bos_token", "stride"):
        assert run_json[key] not in (None, "")
    # the model by its portable id, never by this machine's folder; where it was loaded from is noted beside the
    # warehouse's refresh state for the dashboard to load it again here
    name = tiny.resolve().name
    assert run_json["model_id"] == f"local:{name}" and run_json["tokenizer"] == f"{type(tok).__name__}:local:{name}"
    assert load_spec(tmp_paths, run["model_key"], run_json["model_id"]) == str(tiny.resolve())


def expected_begin(i: int, W: int, S: int) -> int:
    return 0 if i < W else ((i - W) // S + 1) * S


def test_sliding_windows_score_each_token_once_with_longest_context(tmp_paths, mirror, tiny, tiny_model):
    model, tok = tiny_model
    story = natural_stories(mirror)[1]
    text = story[:1500]  # ~320 tokens: several windows of 64
    write_documents(tmp_paths, "natural_stories", [text])
    [run] = score_corpora(
        tmp_paths,
        str(tiny),
        ["natural_stories"],
        ScoreSettings(context_length=64, stride=32, **SET),
        show_progress=False,
    )
    df = read_run(tmp_paths, run)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    n = len(ids)
    assert n > 250 and len(df) == n and list(df.token_index) == list(range(n))  # each token exactly once
    assert "".join(df.token_text) == text
    W, S = 63, 32
    begins = np.array([expected_begin(i, W, S) for i in range(n)])
    np.testing.assert_array_equal(df.context_tokens, np.arange(n) - begins)
    # the window's own forward pass, reproduced token by token
    for i in range(0, n, 5):
        b = begins[i]
        want, _ = plain_logprobs(model, ids[b : i + 1], 50256)
        assert abs(df.logprob_nats[i] - want[-1]) < 1e-5, i
    # where the whole context fits (first window), sliding == one full-context pass
    full, _ = plain_logprobs(model, ids[:W], 50256)
    np.testing.assert_allclose(df.logprob_nats[:W], full, atol=1e-5)


def test_make_windows_overlap_and_cover():
    for n in (0, 1, 62, 63, 64, 200, 1000):
        ws = make_windows(0, n, 64, 32)
        scored = [i for w in ws for i in range(w.score_from, w.end)]
        assert scored == list(range(n))
        assert all(w.end - w.begin <= 63 for w in ws)
        assert all(b.begin < a.end for a, b in zip(ws, ws[1:]))  # overlapping, never disjoint
    with pytest.raises(ValueError):
        make_windows(0, 10, 64, 64)


def test_batching_and_padding_do_not_change_numbers(tmp_path, mirror, tiny):
    from predictabase.core.config import paths as make_paths

    texts = ucl_sentences(mirror, 10) + [natural_stories(mirror)[2][:700]]
    out = []
    for bt in (64, 100000):
        p = make_paths(tmp_path / f"w{bt}")
        write_documents(p, "ucl", texts)
        [run] = score_corpora(
            p, str(tiny), ["ucl"], ScoreSettings(context_length=64, batch_tokens=bt, **SET), show_progress=False
        )
        out.append(read_run(p, run))
    np.testing.assert_allclose(out[0].logprob_nats, out[1].logprob_nats, atol=1e-5)
    assert out[0].run_id[0] == out[1].run_id[0]  # batch size does not change the numbers, nor the run


def test_top_k_zero_gives_empty_lists(tmp_paths, mirror, tiny):
    write_documents(tmp_paths, "ucl", ucl_sentences(mirror, 3))
    [run] = score_corpora(tmp_paths, str(tiny), ["ucl"], ScoreSettings(**{**SET, "top_k": 0}), show_progress=False)
    df = read_run(tmp_paths, run)
    assert len(df) == run["n_tokens"] > 0 and run["top_k"] == 0
    for col in ("topk_token_ids", "topk_tokens", "topk_logprobs_nats"):
        assert all(len(x) == 0 for x in df[col]), col
    assert df["rank"].min() >= 1 and df.logprob_nats.notna().all()


def test_lm_game_prefix_and_full(tmp_paths, mirror, tiny):
    text = ucl_sentences(mirror, 1)[0]
    write_documents(tmp_paths, "lm_game", [text], doc_ids=["1003"], prefixes=[20])
    [run] = score_corpora(tmp_paths, str(tiny), ["lm_game"], ScoreSettings(**SET), show_progress=False)
    df = read_run(tmp_paths, run)
    assert "".join(df.token_text) == text[:20]
    [run_full] = score_corpora(tmp_paths, str(tiny), ["lm_game"], ScoreSettings(full=True, **SET), show_progress=False)
    assert run_full["run_id"] != run["run_id"] and run_full["full"] is True
    assert "".join(read_run(tmp_paths, run_full).token_text) == text


def test_interrupted_run_resumes_and_complete_run_is_noop(tmp_path, mirror, tiny, monkeypatch):
    from predictabase.core.config import paths as make_paths

    texts = ucl_sentences(mirror, 30)
    monkeypatch.setattr(pipeline, "PART_TOKENS", 60)  # several part files
    settings = ScoreSettings(context_length=64, **SET)

    clean = make_paths(tmp_path / "clean")
    write_documents(clean, "ucl", texts)
    [ref_run] = score_corpora(clean, str(tiny), ["ucl"], settings, show_progress=False)
    ref = read_run(clean, ref_run)

    p = make_paths(tmp_path / "interrupted")
    write_documents(p, "ucl", texts)
    real_write = store.write_part
    calls = {"n": 0}

    def failing_write(directory, table, number=None):
        if calls["n"] == 1:
            raise KeyboardInterrupt("simulated interruption after the first part file")
        calls["n"] += 1
        return real_write(directory, table, number)

    monkeypatch.setattr(store, "write_part", failing_write)
    with pytest.raises(KeyboardInterrupt):
        score_corpora(p, str(tiny), ["ucl"], settings, show_progress=False)
    rdir = store.run_dir(p.token_scores, ref_run["model_key"], "ucl", ref_run["run_id"])
    assert len(list(rdir.glob("part-*.parquet"))) == 1 and not (rdir / "_run.json").exists()
    first_docs = set(pq.read_table(next(rdir.glob("part-*.parquet"))).column("doc_id").to_pylist())
    assert 0 < len(first_docs) < 30

    monkeypatch.setattr(store, "write_part", real_write)
    [run] = score_corpora(p, str(tiny), ["ucl"], settings, show_progress=False)
    assert run["status"] == "resumed" and run["run_id"] == ref_run["run_id"]
    got = read_run(p, run)
    assert len(got) == len(ref) and not got.duplicated(["doc_id", "token_index"]).any()
    # the resumed run scored the same groups in the same batches as the uninterrupted one: identical rows
    for col in (
        "doc_id",
        "token_index",
        "token_id",
        "char_start",
        "char_end",
        "rank",
        "context_tokens",
        "logprob_nats",
        "entropy_nats",
        "logprob_word_initial_nats",
        "logprob_word_initial_after_nats",
    ):
        assert list(got[col]) == list(ref[col]), col
    assert sorted(f.name for f in rdir.glob("part-*.parquet")) == sorted(
        f.name
        for f in store.run_dir(clean.token_scores, ref_run["model_key"], "ucl", ref_run["run_id"]).glob(
            "part-*.parquet"
        )
    )
    assert run["n_tokens"] == len(ref) and run["n_docs"] == 30

    before = {f.name: f.stat().st_mtime_ns for f in rdir.iterdir()}
    [again] = score_corpora(p, str(tiny), ["ucl"], settings, show_progress=False)
    assert again["status"] == "already complete" and again["run_id"] == run["run_id"]
    assert {f.name: f.stat().st_mtime_ns for f in rdir.iterdir()} == before


def test_model_that_does_not_load(tmp_paths, mirror, tmp_path):
    write_documents(tmp_paths, "ucl", ucl_sentences(mirror, 2))
    bad = tmp_path / "broken-model"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    for spec in (str(bad), str(tmp_path / "no-such-model"), str(tmp_path / "missing.gguf")):
        with pytest.raises(ModelLoadError) as exc:
            score_corpora(tmp_paths, spec, ["ucl"], ScoreSettings(**SET), show_progress=False)
        assert spec in str(exc.value)
    assert not tmp_paths.token_scores.exists()


def test_missing_corpus_writes_nothing(tmp_paths, mirror, tiny):
    from predictabase.core.errors import ScoringError

    write_documents(tmp_paths, "ucl", ucl_sentences(mirror, 2))
    with pytest.raises(ScoringError, match="provo"):
        score_corpora(tmp_paths, str(tiny), ["ucl", "provo"], ScoreSettings(**SET), show_progress=False)
    assert not tmp_paths.token_scores.exists()


def test_spans_tile_with_byte_fallback_and_odd_whitespace(tiny_model):
    _, tok = tiny_model
    bos = choose_bos(tok, "gpt2")
    texts = ["  two leading spaces\tand\ttabs\n\nnewlines 🙂 emoji – dash  ", "é\u00a0nbsp 日本語"]
    for text, (ids, spans) in zip(texts, encode(tok, texts, bos)):
        assert len(ids) == len(spans) and spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(a[1] == b[0] and a[0] <= a[1] for a, b in zip(spans, spans[1:]))
        assert "".join(text[s:e] for s, e in spans) == text


def test_the_rank_counts_the_larger_log_probabilities_exactly_with_ties():
    from predictabase.ingest.scoring.engine import count_above

    g = torch.Generator().manual_seed(0)
    lp = torch.log_softmax(torch.randint(0, 40, (64, 300), generator=g).float() / 4, -1)  # many ties
    targets = torch.randint(0, 300, (64,), generator=g)
    targets[:8] = lp[:8].argmax(dim=1)  # the most probable: nothing above it
    tlp = lp.gather(1, targets[:, None])
    want = (lp.numpy() > tlp.numpy()).sum(1)
    got = count_above(lp, tlp, torch.full((64, 300), 7.0))  # whatever the buffer held before
    assert got.dtype == torch.int32 and (got[:8] == 0).all() and (got[8:] > 0).any()
    np.testing.assert_array_equal(got.numpy(), want)
    # ties are not counted: a row of equal values has nothing above any target
    flat = torch.full((2, 300), -5.7)
    assert count_above(flat, flat[:, :1], torch.empty(2, 300)).tolist() == [0, 0]


def whole_chunk_stats(wi_mask, x, t, k: int) -> dict:
    """The CPU statistics as operations on the whole chunk at once (one float32 log-softmax of every row, the rank
    as one count over the vocabulary): what `Scorer._cpu_chunk_stats` must give bit for bit from its blocks."""
    from predictabase.ingest.scoring.engine import RANK_TOP

    lp = torch.log_softmax(x, dim=-1)
    tlp = lp.gather(1, t[:, None])
    topv, topi = lp.topk(max(k, RANK_TOP), dim=1)
    p = lp.exp()
    ent = -torch.linalg.vecdot(p, lp)
    bad = ~torch.isfinite(ent)
    ent[bad] = -(p[bad] * lp[bad]).nan_to_num_(0.0, 0.0, 0.0).sum(dim=1)
    mass = p @ wi_mask
    wi = mass.log()
    tiny = mass < 1e-30
    wi[tiny] = torch.logsumexp(lp[tiny].masked_fill(wi_mask[None, :] == 0, float("-inf")), dim=1)
    return {
        "logprob_nats": tlp[:, 0],
        "rank": (lp > tlp).sum(dim=1, dtype=torch.int32) + 1,
        "entropy_nats": ent,
        "logprob_word_initial_nats": wi,
        "topk_logprobs_nats": topv[:, :k],
        "topk_token_ids": topi[:, :k],
    }


def test_cpu_statistics_in_cache_blocks_keep_the_whole_chunks_bits(mirror, tiny_model, monkeypatch):
    from predictabase.ingest.scoring import engine
    from predictabase.ingest.scoring.profile import TokenizerProfile

    model, tok = tiny_model
    V = model.get_output_embeddings().weight.shape[0]
    profile = TokenizerProfile.build(tok, model.config.model_type, V, "tiny")
    scorer = engine.Scorer(model, profile, 5, "cpu")
    # real logits: every position of UCL sentences and a Natural Stories passage (one window each)
    rows = []
    for text in ucl_sentences(mirror, 6) + [natural_stories(mirror)[1][:400]]:
        ids = tok(text, add_special_tokens=False)["input_ids"][:120]
        with torch.inference_mode():
            rows.append(model(torch.tensor([[50256] + ids])).logits[0, :-1])
            rows[-1] = (rows[-1], torch.tensor(ids))
    x = torch.cat([r for r, _ in rows])
    t = torch.cat([i for _, i in rows])
    x[3, 1000:] = float("-inf")  # a masked vocabulary: the entropy's 0 * -inf rows
    x[4, scorer.wi_mask > 0] -= 200.0  # a word-initial mass under float32's range (e^-200)
    x[5, :] = 1.0  # a row of ties: rank 1 for every target
    n = x.shape[0]
    assert n > 100
    want = whole_chunk_stats(scorer.wi_mask, x, t, 5)
    # blocks of 2 and 3 rows (and their remainders), 37, and one block of every row (the whole chunk)
    for block_rows in (2, 3, 37, n):
        monkeypatch.setattr(engine, "STATS_BLOCK_BYTES", block_rows * 4 * V)
        with torch.inference_mode():
            got = scorer._cpu_chunk_stats(x, t, 5)
        assert set(got) == set(want)
        for name in want:
            np.testing.assert_array_equal(got[name].numpy(), want[name].numpy(), err_msg=f"{name}, {block_rows} rows")
    # and the numbers themselves, against float64 computed independently
    xd = x.double().numpy()
    lse = np.logaddexp.reduce(xd, axis=1)
    lp = xd - lse[:, None]
    pr = np.exp(lp)
    tn = t.numpy()
    # float32's normalizer over 50,257 entries rounds by ~1e-6 of the logits' size (~20 here)
    np.testing.assert_allclose(got["logprob_nats"].numpy(), lp[np.arange(n), tn], rtol=0, atol=3e-5)
    ent = -np.where(pr > 0, pr * np.nan_to_num(lp, neginf=0.0), 0.0).sum(1)
    np.testing.assert_allclose(got["entropy_nats"].numpy(), ent, rtol=0, atol=1e-4)
    wi = np.logaddexp.reduce(np.where(scorer.wi_mask.numpy() > 0, xd, -np.inf), axis=1) - lse
    np.testing.assert_allclose(got["logprob_word_initial_nats"].numpy(), wi, rtol=0, atol=1e-4)
    assert got["logprob_word_initial_nats"][4] < -150 and got["rank"][5] == 1
    # the rank counts the float32 log-softmax's larger values (ties not counted)
    lp32 = torch.log_softmax(x, -1).numpy()
    np.testing.assert_array_equal(got["rank"].numpy(), 1 + (lp32 > lp32[np.arange(n), tn][:, None]).sum(1))
    # the top 5: the five largest log-probabilities, and the ids of those values (a tie may list either id)
    topv, topi = got["topk_logprobs_nats"].numpy(), got["topk_token_ids"].numpy()
    np.testing.assert_array_equal(topv, -np.sort(-lp32, axis=1)[:, :5])
    np.testing.assert_array_equal(np.take_along_axis(lp32, topi, 1), topv)


def test_scores_with_cache_blocks_equal_one_block_per_chunk(mirror, tiny_model, monkeypatch):
    """The whole path (windows, batches, chunks of 37 rows, blocks of 3): the same bits as one block per chunk."""
    from predictabase.ingest.scoring import engine
    from predictabase.ingest.scoring.profile import TokenizerProfile

    model, tok = tiny_model
    V = model.get_output_embeddings().weight.shape[0]
    profile = TokenizerProfile.build(tok, model.config.model_type, V, "tiny")
    texts = ucl_sentences(mirror, 20) + [natural_stories(mirror)[1][:1500]]
    enc = encode(tok, texts, profile.bos)
    windows = [w for d, (ids, _) in enumerate(enc) for w in make_windows(d, len(ids), 128, 64)]
    batches = engine.make_batches(windows, 512)
    out = []
    for block_bytes in (3 * 4 * V, 1 << 40):
        monkeypatch.setattr(engine, "STATS_BLOCK_BYTES", block_bytes)
        scorer = engine.Scorer(model, profile, 5, "cpu")
        scorer.chunk_rows = 37
        out.append(scorer.score_windows([ids for ids, _ in enc], batches))
    for d in out[0]:
        for name, v in out[0][d].items():
            np.testing.assert_array_equal(out[1][d][name], v, err_msg=name)


def test_one_scorer_shared_by_threads_gives_each_text_its_own_numbers(mirror, tiny_model):
    """The dashboard's sentence box shares one scorer between sessions: texts scored at once from several threads
    get the numbers each gets alone (the chunk buffers are taken one chunk at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    from predictabase.ingest.scoring import engine
    from predictabase.ingest.scoring.profile import TokenizerProfile

    model, tok = tiny_model
    profile = TokenizerProfile.build(tok, model.config.model_type, model.get_output_embeddings().weight.shape[0], "t")
    texts = ucl_sentences(mirror, 8)
    ids = [i for i, _ in encode(tok, texts, profile.bos)]
    scorer = engine.Scorer(model, profile, 5, "cpu", probe=False)
    scorer.chunk_rows = 4  # several chunks per text: many turns at the buffers

    def score(k: int) -> dict:
        return scorer.score_windows([ids[k]], [[engine.Window(0, 0, len(ids[k]), 0)]])[0]

    alone = [score(k) for k in range(len(texts))]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(score, [k for _ in range(3) for k in range(len(texts))]))
    for j, got in enumerate(together):
        for name, v in alone[j % len(texts)].items():
            np.testing.assert_array_equal(got[name], v, err_msg=f"{name}, text {j % len(texts)}")
