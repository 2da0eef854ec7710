"""The Monte-Carlo word entropy checked exactly: a causal LM built from a config, with 6 tokens (3 word-initial) and
words cut at 5 tokens, small enough to enumerate every word (363 of them). The estimates fall within their
standard errors of the exact Shannon and Rényi entropies, every sampled word's ln p is the enumerated one, and the
first-token entropy is below both (Clark, Oh & Schuler 2025: it understates the word's entropy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from predictabase.ingest.scoring import word_entropy as we

WORD_INITIAL = torch.tensor([True, True, True, False, False, False])
MAX_TOKENS = 5


@pytest.fixture(scope="module")
def tiny():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=6,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.8,  # peaked, uneven distributions: the words' probabilities differ by orders
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config).eval()
    context = torch.tensor([[0, 3, 1, 4]])
    with torch.inference_mode():
        out = model(input_ids=context, use_cache=True)
    layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]

    def logits_after(prefix: tuple[int, ...]) -> torch.Tensor:
        with torch.inference_mode():
            return model(input_ids=torch.cat([context, torch.tensor([prefix])], 1)).logits[0, -1]

    return model, layers, out.logits[0, -1], logits_after


@pytest.mark.parametrize("text_start", [False, True])
def test_the_estimates_match_the_enumerated_entropies(tiny, text_start):
    model, layers, first, logits_after = tiny
    dist = we.exact_word_distribution(logits_after, first, WORD_INITIAL, MAX_TOKENS, text_start=text_start)
    assert math.isclose(math.fsum(math.exp(v) for v in dist.values()), 1.0, abs_tol=1e-12)
    # every first token it may start with, then any continuations up to the cut: 3 x (1 + 3 + ... + 81) = 363
    assert len(dist) == (6 if text_start else 3) * sum(3**k for k in range(MAX_TOKENS))
    h, h_renyi = we.exact_entropies(dist, alpha=0.5)
    # an independent computation of both from the enumerated probabilities
    p = np.exp(np.array(list(dist.values())))
    assert h == pytest.approx(-(p * np.log(p)).sum(), rel=1e-12)
    assert h_renyi == pytest.approx(2.0 * np.log(np.sqrt(p).sum()), rel=1e-12)

    n = 4000
    samples = we.sample_words(
        we.cached_continuations(model, layers, n), first, WORD_INITIAL, n, MAX_TOKENS, torch.Generator().manual_seed(7),
        text_start=text_start,
    )  # fmt: skip
    for row, lp in zip(samples.tokens[:200], samples.logp_nats[:200]):  # each sample's ln p is exact
        assert lp == pytest.approx(
            dist[tuple(int(t) for t in row if t >= 0)], abs=1e-5
        )  # float32: cached vs whole-sequence forward
    est = we.estimate(samples, alpha=0.5)
    assert est.n_samples == n and 0 < est.entropy_se_nats < 0.05
    assert abs(est.entropy_nats - h) < 3 * est.entropy_se_nats
    assert abs(est.renyi_entropy_nats - h_renyi) < 3 * est.renyi_entropy_se_nats
    assert est.first_token_entropy_nats == pytest.approx(we.first_token_entropy(first), rel=1e-12)
    assert est.first_token_entropy_nats < min(h, est.entropy_nats)  # the first token understates it
    assert est.first_token_word_entropy_nats <= h + 1e-12  # the word fixes its first token: a lower bound
    assert est.n_truncated == int(samples.truncated.sum()) and est.n_truncated < n * 0.05


def test_the_standard_error_covers_the_truth_as_often_as_it_should(tiny):
    """Over 40 seeds of 500 words, |estimate - H| < 2 SE about 95% of the time (at least 34 of 40)."""
    model, layers, first, logits_after = tiny
    h, _ = we.exact_entropies(we.exact_word_distribution(logits_after, first, WORD_INITIAL, MAX_TOKENS))
    hits = 0
    for seed in range(40):
        s = we.sample_words(
            we.cached_continuations(model, layers, 500), first, WORD_INITIAL, 500, MAX_TOKENS,
            torch.Generator().manual_seed(seed),
        )  # fmt: skip
        e, se = we.shannon(s.logp_nats)
        hits += abs(e - h) < 2 * se
    assert hits >= 34


def test_same_seed_same_words(tiny):
    model, layers, first, _ = tiny
    runs = [
        we.sample_words(
            we.cached_continuations(model, layers, 64),
            first,
            WORD_INITIAL,
            64,
            MAX_TOKENS,
            torch.Generator().manual_seed(3),
        )  # fmt: skip
        for _ in range(2)
    ]
    assert np.array_equal(runs[0].tokens, runs[1].tokens) and np.array_equal(runs[0].logp_nats, runs[1].logp_nats)


def test_renyi_of_order_one_is_shannon_and_both_are_exact_on_a_uniform_sample():
    logp = np.log(np.full(8, 1 / 8))
    assert we.renyi(logp, 1.0) == we.shannon(logp)
    assert we.shannon(logp)[0] == pytest.approx(math.log(8)) and we.renyi(logp, 0.5)[0] == pytest.approx(math.log(8))
    assert we.shannon(logp)[1] == 0.0 and we.renyi(logp, 0.5)[1] == pytest.approx(0.0, abs=1e-15)


def test_positions_sampled_together_are_the_positions_sampled_alone(tiny):
    """Several positions of one text share its cache in one call, each with its own generator: the same words, and
    the same ln p up to float32's order of operations, as each position sampled alone from its own cut cache."""
    model, _, _, _ = tiny
    text = torch.tensor([[0, 3, 1, 4, 2, 5, 3, 0, 4]])
    with torch.inference_mode():
        out = model(input_ids=text, use_cache=True)
    layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
    contexts, n = [3, 5, 9], 32
    together = we.sample_positions(
        we.cached_continuations(model, layers, n, contexts), out.logits[0, [c - 1 for c in contexts]], WORD_INITIAL,
        n, MAX_TOKENS, [torch.Generator().manual_seed(10 + c) for c in contexts], [False, False, True],
    )  # fmt: skip
    for c, got, start in zip(contexts, together, [False, False, True]):
        cut = [(k[:, :, :c], v[:, :, :c]) for k, v in layers]
        alone = we.sample_words(
            we.cached_continuations(model, cut, n), out.logits[0, c - 1], WORD_INITIAL, n, MAX_TOKENS,
            torch.Generator().manual_seed(10 + c), text_start=start,
        )  # fmt: skip
        assert np.array_equal(got.tokens, alone.tokens)
        np.testing.assert_allclose(got.logp_nats, alone.logp_nats, atol=1e-5)
