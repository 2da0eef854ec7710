"""Word-level top-1 predictions (ingest/scoring/top1_words.py) against brute force on small models.

Brute force: every candidate word scored separately by a plain forward pass over BOS + context +
the word's tokens (no cache, no custom mask, the model's own attention masks), p(w | c) =
prod p(t_i) * B(after w) computed here from the raw logits. The predictor must return the same
argmax and log-probability, for a Llama with SmolLM2's real tokenizer (choice-set words of 1 to 5
tokens), for a Gemma-3-style model with sliding-window layers (its second mask), and whatever the
packing of documents into forward passes.
"""

from __future__ import annotations

import ast
import json
import math
import random

import numpy as np
import pytest
import torch

from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.top1_words import Top1Settings, tokenizer_is_games
from predictabase.ingest.scoring.word_search import Question, WordPredictor, build_trie, is_word_token, word_token_ids

DOCS = (5190, 1003)


@pytest.fixture(scope="module")
def game(mirror):
    vocab = ast.literal_eval((mirror / "lm_game/server/tokens.json").read_text())
    docs = {d: json.loads((mirror / f"lm_game/server/docs/doc{d}.json").read_text()) for d in DOCS}
    return vocab, docs


def questions_of(doc: list[str], doc_id: str, first: int = 80) -> list[Question]:
    """The word-token positions among the first tokens of a real game document."""
    out, start = [], 0
    for i, t in enumerate(doc[:first]):
        if is_word_token(t) and i + 1 < len(doc) and doc[i + 1].startswith(" "):
            out.append(Question(doc_id, i + 1, start))
        start += len(t)
    return out


@pytest.fixture(scope="module")
def smol_tok():
    from tests.scoring_helpers import smollm2_tokenizer

    return smollm2_tokenizer()


def load(directory, model_type):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory).eval()
    return model, TokenizerProfile.build(tok, model_type, model.config.vocab_size, str(directory))


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, smol_tok):
    from tests.scoring_helpers import build_tiny_llama

    return load(build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), smol_tok), "llama")


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory, smol_tok):
    """Gemma 3's architecture (sliding-window and full layers alternating), window 6 positions."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(1)
    cfg = Gemma3TextConfig(
        vocab_size=len(smol_tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        sliding_window=6,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=256,
        bos_token_id=0,
        eos_token_id=smol_tok.eos_token_id,
        pad_token_id=0,
    )
    model = Gemma3ForCausalLM(cfg).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)
    out = tmp_path_factory.mktemp("tiny-gemma")
    model.save_pretrained(out)
    smol_tok.save_pretrained(out)
    return load(out, "gemma3_text")


def brute_force(model, profile: TokenizerProfile, context: str, words: list[str]) -> list[tuple[float, str]]:
    """ln p(w | context) for every word: BOS + context + the word's tokens through a plain forward
    pass (batched over words, right-padded: padding after a word cannot reach its positions)."""
    ((ctx_ids, _),) = profile.encode([context]) if context else [([], [])]
    wi = torch.from_numpy(profile.word_initial)
    paths = word_token_ids(profile, words)
    len(ctx_ids)
    out = []
    for k in range(0, len(words), 64):
        chunk = list(zip(words[k : k + 64], paths[k : k + 64]))
        width = max(len(ids) for _, ids in chunk)
        inp = torch.tensor([[profile.bos.token_id, *ctx_ids, *ids] + [0] * (width - len(ids)) for _, ids in chunk])
        with torch.no_grad():
            # positions c .. c + width hold the distributions before/after the word's tokens
            lp = torch.log_softmax(model(inp, logits_to_keep=width + 1).logits.double(), dim=-1)
        for row, (w, ids) in enumerate(chunk):
            n = len(ids)
            score = sum(lp[row, j, ids[j]].item() for j in range(n)) + torch.logsumexp(lp[row, n][wi], 0).item()
            out.append((score, w))
    return sorted(out, reverse=True)


def choice_sample(vocab, profile, n_single: int, n_multi: int, seed: int = 0) -> list[str]:
    words = sorted({t for t in vocab if is_word_token(t)})
    paths = dict(zip(words, word_token_ids(profile, words)))
    rng = random.Random(seed)
    multi = [w for w in words if len(paths[w]) > 1]
    single = [w for w in words if len(paths[w]) == 1]
    return rng.sample(single, n_single) + rng.sample(multi, n_multi)


def check_against_brute_force(model, profile, words, docs, n_questions: int, settings: Top1Settings):
    trie = build_trie(profile, words)
    pred = WordPredictor(model, profile, trie, settings, context_length=256)
    inputs = [("".join(doc), questions_of(doc, str(d))) for d, doc in docs.items()]
    results = {(r["doc_id"], r["position"]): r for r in pred.predict_documents(inputs)}
    checked = 0
    for text, qs in inputs:
        for q in qs[:n_questions]:
            r = results[(q.doc_id, q.position)]
            assert r["status"] == "ok"
            expected = brute_force(model, profile, text[: q.char_start], words)
            assert r["candidate_words"][0] == expected[0][1], (q, r["candidate_words"][:3], expected[:3])
            assert r["candidate_logprobs_nats"][0] == pytest.approx(expected[0][0], abs=2e-4)
            # every scored candidate carries its exact probability
            exact = {w: s for s, w in expected}
            for w, s in zip(r["candidate_words"], r["candidate_logprobs_nats"]):
                assert s == pytest.approx(exact[w], abs=2e-4)
            assert math.exp(r["candidate_logprobs_nats"][0]) >= r["max_unexplored_bound"]
            assert r["max_unexplored_bound"] <= r["unexplored_mass"] + 1e-12
            checked += 1
    return results, checked


def test_word_argmax_equals_brute_force_llama(tiny_llama, game):
    model, profile = tiny_llama
    vocab, docs = game
    words = choice_sample(vocab, profile, 150, 150)
    assert max(len(ids) for ids in word_token_ids(profile, words)) >= 3
    _, checked = check_against_brute_force(model, profile, words, docs, 4, Top1Settings(max_expansions=100_000))
    assert checked == 8


def _one_document_against_brute_force(
    tiny, game, n_single: int, n_multi: int, seed: int, doc_id: int, n_questions: int
) -> dict:
    """`check_against_brute_force` on one document's first questions; every one of them checked."""
    model, profile = tiny
    vocab, docs = game
    words = choice_sample(vocab, profile, n_single, n_multi, seed=seed)
    results, checked = check_against_brute_force(
        model, profile, words, {doc_id: docs[doc_id]}, n_questions, Top1Settings(max_expansions=100_000)
    )
    assert checked == n_questions
    return results


def test_multi_token_winners(tiny_llama, game):
    """A choice set of multi-token words only: the winner must be reached through the trie's depth."""
    results = _one_document_against_brute_force(tiny_llama, game, 0, 120, seed=3, doc_id=5190, n_questions=3)
    assert all(r["candidate_token_counts"][0] >= 2 for r in results.values())


def test_sliding_window_mask_gemma(tiny_gemma, game):
    """Contexts longer than the 6-position window: the sliding layers' own mask must be honoured."""
    _one_document_against_brute_force(tiny_gemma, game, 60, 60, seed=5, doc_id=1003, n_questions=4)


def test_packing_and_batching_change_nothing(tiny_llama, game):
    model, profile = tiny_llama
    vocab, docs = game
    words = choice_sample(vocab, profile, 200, 100, seed=7)
    trie = build_trie(profile, words)
    inputs = [("".join(doc), questions_of(doc, str(d))) for d, doc in docs.items()]
    runs = []
    for settings in (
        Top1Settings(pack_tokens=1, batch_tokens=3, per_round=1),
        Top1Settings(pack_tokens=4096, batch_tokens=4096, per_round=8),
    ):
        pred = WordPredictor(model, profile, trie, settings, context_length=256)
        runs.append({(r["doc_id"], r["position"]): r for r in pred.predict_documents(inputs)})
    assert runs[0].keys() == runs[1].keys() and len(runs[0]) > 20
    for key, a in runs[0].items():
        b = runs[1][key]
        assert a["candidate_words"][0] == b["candidate_words"][0]
        assert a["candidate_logprobs_nats"][0] == pytest.approx(b["candidate_logprobs_nats"][0], abs=1e-4)


def test_budget_bounds_are_sound(tiny_llama, game):
    """With a tiny budget the search stops early; wherever it claims a proof, the claim is true."""
    model, profile = tiny_llama
    vocab, docs = game
    words = choice_sample(vocab, profile, 150, 150, seed=11)
    trie = build_trie(profile, words)
    pred = WordPredictor(model, profile, trie, Top1Settings(max_expansions=1, per_round=1), context_length=256)
    doc = docs[5190]
    text, qs = "".join(doc), questions_of(doc, "5190")[:6]
    results = pred.predict_documents([(text, qs)])
    claimed = 0
    for q, r in zip(qs, sorted(results, key=lambda r: r["position"])):
        assert r["n_expanded"] == 1
        if r["candidate_logprobs_nats"] and math.exp(r["candidate_logprobs_nats"][0]) >= r["max_unexplored_bound"]:
            claimed += 1
            assert r["candidate_words"][0] == brute_force(model, profile, text[: q.char_start], words)[0][1]
        else:
            assert r["max_unexplored_bound"] > 0
    assert 0 <= claimed <= len(qs)


def test_game_tokenizer_detection(tiny_gpt2_dir, smol_tok, game):
    """The GPT-2 tokenizer is the game's (compared exactly in dbt); SmolLM2's is not."""
    from transformers import AutoTokenizer

    vocab, _ = game
    gpt2 = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    p_gpt2 = TokenizerProfile.build(gpt2, "gpt2", len(gpt2), "gpt2")
    p_smol = TokenizerProfile.build(smol_tok, "llama", len(smol_tok), "smollm2")
    assert tokenizer_is_games(p_gpt2, vocab)
    assert not tokenizer_is_games(p_smol, vocab)
    # the game's vocabulary holds 32,104 word tokens; for GPT-2 each is one token of its own
    words = sorted({t for t in vocab if is_word_token(t)})
    assert len(words) == 32104
    assert all(len(ids) == 1 for ids in word_token_ids(p_gpt2, words[:2000]))


def test_word_paths_in_context_llama_style_dummy_prefix(smol_tok):
    """Word token paths are taken after a '.', as they occur after a word: equal to tokenizing the
    word inside a sentence, for SmolLM2's byte-level BPE."""
    p = TokenizerProfile.build(smol_tok, "llama", len(smol_tok), "smollm2")
    words = [" the", " unbelievable", " Kowalczyk", " naïve"]
    for w, ids in zip(words, word_token_ids(p, words)):
        ((ctx, spans),) = p.encode(["It was" + w + " then"])
        cut = [k for k, (s, _) in enumerate(spans) if s == len("It was")][0]
        end = [k for k, (s, _) in enumerate(spans) if s == len("It was" + w)][0]
        assert ctx[cut:end] == ids
    assert len(word_token_ids(p, [" the"])[0]) == 1


def test_run_id_separates_limited_runs_and_ignores_batching(smol_tok):
    """A --limit run must never stand in for the full run (the full run would be skipped as done);
    batch sizes change nothing but speed (test_packing_and_batching_change_nothing)."""
    from types import SimpleNamespace

    from predictabase.ingest.scoring.top1_words import make_run_id

    lm = SimpleNamespace(model_revision="r", tokenizer_sha256="t", dtype="float32")
    p = TokenizerProfile.build(smol_tok, "llama", len(smol_tok), "smollm2")
    full = make_run_id(lm, p, "v", "c", Top1Settings(), 2048)
    assert make_run_id(lm, p, "v", "c", Top1Settings(), 2048, limit=5) != full
    assert make_run_id(lm, p, "v", "c", Top1Settings(batch_tokens=7), 2048) == full
    assert make_run_id(lm, p, "v", "c", Top1Settings(max_expansions=8), 2048) != full


def test_attention_per_segment_equals_the_dense_call(tiny_gemma, game, monkeypatch):
    """The search's forward calls compute attention segment by segment (a pack holds many documents, and a
    round's expansions many questions): the same predictions as the dense masked call over every slot, to
    float32 rounding, on the sliding-window model (both of its masks cut per group)."""
    import contextlib

    from predictabase.ingest.scoring import word_search

    model, profile = tiny_gemma
    vocab, docs = game
    trie = build_trie(profile, choice_sample(vocab, profile, 200, 100, seed=3))
    inputs = [("".join(doc), questions_of(doc, str(d), first=60)) for d, doc in docs.items()]
    settings = Top1Settings(pack_tokens=4096, batch_tokens=4096, per_round=2)
    groups_seen = []
    segments = word_search._segments

    def counted(model, groups):
        groups_seen.append(len(groups))
        return segments(model, groups)

    monkeypatch.setattr(word_search, "_segments", counted)
    per_segment = WordPredictor(model, profile, trie, settings, context_length=256).predict_documents(inputs)
    assert groups_seen[0] == 2 and max(groups_seen) >= 2  # the pack's two documents apart, and their questions
    monkeypatch.setattr(word_search, "_segments", lambda model, groups: contextlib.nullcontext())
    dense = WordPredictor(model, profile, trie, settings, context_length=256).predict_documents(inputs)
    assert len(dense) == len(per_segment) > 20
    for a, b in zip(dense, per_segment):
        assert a["candidate_words"] == b["candidate_words"] and a["n_expanded"] == b["n_expanded"]
        assert a["candidate_logprobs_nats"] == pytest.approx(b["candidate_logprobs_nats"], abs=1e-5)
        assert a["logprob_boundary_before_nats"] == pytest.approx(b["logprob_boundary_before_nats"], abs=1e-5)


def test_row_groups_keep_each_segment_to_its_own_slots():
    import numpy as np

    from predictabase.ingest.scoring.word_search import _row_groups

    seg = np.array([0, 0, 0, 1, 1, 2])
    idx = np.arange(6)
    allowed = (seg[:, None] == seg[None, :]) & (idx[None, :] <= idx[:, None])
    groups = _row_groups(allowed, seg)
    assert [(r.start, r.stop, s.start, s.stop) for r, s in groups] == [(0, 3, 0, 3), (3, 5, 3, 5), (5, 6, 5, 6)]
    # expansions of two questions interleaved in the batch: index tensors of their own rows and slots
    allowed = np.zeros((3, 8), dtype=bool)
    allowed[0, [0, 1, 5]] = allowed[2, [0, 1, 2, 7]] = True
    allowed[1, [3, 4, 6]] = True
    groups = _row_groups(allowed, np.array([0, 3, 0]))
    listed = [[list(range(8))[x] if isinstance(x, slice) else x.tolist() for x in g] for g in groups]
    assert listed == [[[0, 2], [0, 1, 2, 5, 7]], [[1], [3, 4, 6]]]


@pytest.mark.parametrize("max_expansions, first_tokens", [(1, 0), (3, 5), (7, 2), (500, 5)])
def test_the_roots_order_is_the_full_stable_sorts_as_far_as_the_search_reaches(max_expansions, first_tokens):
    """Only the roots a search can reach are sorted: the same order (ties by index) as sorting all of them."""
    rng = np.random.default_rng(0)
    rl = np.round(rng.normal(-8, 3, 400), 1)  # rounded: many ties, also at the cut
    rl[[3, 50, 51]] = rl.max()  # a tie for first place
    rl[rng.integers(0, 400, 20)] = -np.inf
    settings = Top1Settings(max_expansions=max_expansions, n_first_tokens=first_tokens)
    pred = WordPredictor.__new__(WordPredictor)
    pred.settings = settings
    got = pred._root_order(rl)
    full = np.argsort(-rl, kind="stable")
    reach = max(max_expansions, first_tokens) + 1
    assert len(got) >= min(reach, len(rl))
    np.testing.assert_array_equal(got, full[: len(got)])
    # every root tied with the last one kept is kept too, so the next bound is the true one
    assert len(got) == len(rl) or rl[full[len(got)]] < rl[got[-1]]
