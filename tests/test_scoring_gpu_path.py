"""The scorer's GPU path (`Scorer.set_gpu_path`, on by default on a CUDA device), run on the CPU: the same
statistics as the CPU path; the LM head's float32 output for half-precision weights; memory-sized batches;
the benchmark's parameter count for MFU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from predictabase.ingest.scoring.engine import (
    GPU_BATCH_TOKENS_MAX,
    GPU_BATCH_TOKENS_MIN,
    Scorer,
    fused_stats,
    make_batches,
    make_windows,
    memory_batch_tokens,
)
from predictabase.ingest.scoring.profile import TokenizerProfile, encode
from tests.scoring_helpers import natural_stories, ucl_sentences


@pytest.fixture(scope="module")
def tiny_model(tiny_gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (
        AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir, dtype=torch.float32).eval(),
        AutoTokenizer.from_pretrained(tiny_gpt2_dir),
    )


def score(model, tok, texts, gpu: bool, top_k: int = 5, fused=False):
    profile = TokenizerProfile.build(
        tok, model.config.model_type, model.get_output_embeddings().weight.shape[0], "tiny"
    )
    scorer = Scorer(model, profile, top_k, "cpu")
    scorer.set_gpu_path(gpu)
    if fused:  # True: the compiled function's math, run eagerly; else the function given (e.g. compiled here)
        scorer._fused = fused_stats if fused is True else fused
    enc = encode(tok, texts, profile.bos)
    windows = [w for d, (ids, _) in enumerate(enc) for w in make_windows(d, len(ids), 128, 64)]
    # a small chunk: several chunks per batch, as on a GPU with a large batch
    scorer.chunk_rows = 37
    return scorer, scorer.score_windows([ids for ids, _ in enc], make_batches(windows, 512))


def test_gpu_path_gives_the_cpu_paths_statistics(mirror, tiny_model):
    model, tok = tiny_model
    texts = ucl_sentences(mirror, 20) + [natural_stories(mirror)[1][:1500]]
    _, cpu = score(model, tok, texts, gpu=False)
    scorer, gpu = score(model, tok, texts, gpu=True)
    assert scorer.gpu and scorer._head_fp32 is None and scorer._fused is None  # float32 weights; no CUDA
    for d in cpu:
        np.testing.assert_array_equal(gpu[d]["rank"], cpu[d]["rank"])
        np.testing.assert_array_equal(gpu[d]["topk_token_ids"], cpu[d]["topk_token_ids"])
        np.testing.assert_array_equal(gpu[d]["context_tokens"], cpu[d]["context_tokens"])
        for name in (
            "logprob_nats",
            "entropy_nats",
            "logprob_word_initial_nats",
            "logprob_word_initial_after_nats",
            "topk_logprobs_nats",
        ):
            np.testing.assert_allclose(gpu[d][name], cpu[d][name], rtol=0, atol=1e-5, err_msg=name)


def test_gpu_path_half_weights_take_the_head_in_float32(mirror, tiny_model):
    model, tok = tiny_model
    import copy

    half = copy.deepcopy(model).to(torch.bfloat16)
    texts = ucl_sentences(mirror, 12)
    _, ref = score(model, tok, texts, gpu=False)
    s_cpu, cpu = score(half, tok, texts, gpu=False)
    s_gpu, gpu = score(half, tok, texts, gpu=True)
    assert s_gpu._split and s_gpu._head_fp32 is not None and s_cpu._head_fp32 is None
    x = torch.randn(6, half.config.n_embd, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    head = half.get_output_embeddings()
    with torch.inference_mode():
        got = s_gpu._head_fp32(x)
        assert got.dtype == torch.float32
        # float32 sums of exact bf16 products: the float32 head on the rounded weights, not rounded after
        np.testing.assert_allclose(got.numpy(), (x.float() @ head.weight.float().t()).numpy(), rtol=1e-6, atol=1e-5)
    for d in ref:
        err_gpu = np.abs(gpu[d]["logprob_nats"] - ref[d]["logprob_nats"]).max()
        err_cpu = np.abs(cpu[d]["logprob_nats"] - ref[d]["logprob_nats"]).max()
        assert err_gpu < 0.1 and err_cpu < 0.1
        assert np.isfinite(gpu[d]["entropy_nats"]).all()
        # the rank is the count of larger log-probs of the same float32 log-softmax as the top-k
        inside = gpu[d]["topk_logprobs_nats"][:, -1] <= gpu[d]["logprob_nats"]
        assert (gpu[d]["rank"][inside] <= 5).all()


def test_memory_batch_tokens_sizes_from_total_memory(tiny_model):
    model, _ = tiny_model
    gib = 1 << 30
    small, big = memory_batch_tokens(model, 16 * gib, 2048), memory_batch_tokens(model, 80 * gib, 2048)
    assert GPU_BATCH_TOKENS_MIN <= small <= big <= GPU_BATCH_TOKENS_MAX and small % 256 == 0
    assert memory_batch_tokens(model, 80 * gib, 2048) == big  # a function of the device, not of the moment
    # keeping [tokens, vocab] logits (a bare forward) needs 10 bytes per vocabulary entry per token more
    full = memory_batch_tokens(model, 16 * gib, 2048, full_logits=True)
    assert full < small
    assert memory_batch_tokens(model, 1 * gib, 2048) == GPU_BATCH_TOKENS_MIN


def test_bench_parameter_count_for_mfu(tiny_model):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_score", Path(__file__).parent.parent / "bench" / "score.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    model, _ = tiny_model
    total, n = bench.param_counts(model)
    emb = model.transformer.wte.weight.numel() + model.transformer.wpe.weight.numel()
    assert total == sum(p.numel() for p in model.parameters())
    # tied GPT-2: the lookups (token and position tables) out, the LM head (the token table's matrix) in
    assert n == total - emb + model.lm_head.weight.numel()


def test_fused_statistics_give_the_cpu_paths_numbers(mirror, tiny_model):
    model, tok = tiny_model
    texts = ucl_sentences(mirror, 20) + [natural_stories(mirror)[1][:1500]]
    _, cpu = score(model, tok, texts, gpu=False)
    _, fus = score(model, tok, texts, gpu=True, fused=True)
    for d in cpu:
        for name in (
            "logprob_nats",
            "entropy_nats",
            "logprob_word_initial_nats",
            "logprob_word_initial_after_nats",
            "topk_logprobs_nats",
        ):
            # float32: the normalizer ln sum exp(logits) over 50,257 entries, summed in another order, rounds
            # differently by about 1e-6 of the logits' size (~20) and shifts every log-probability of the position
            # by that much (2.1e-5 seen on an AMD EPYC's kernels); a real error is orders of magnitude larger
            np.testing.assert_allclose(fus[d][name], cpu[d][name], rtol=0, atol=5e-5, err_msg=name)
        # x - logsumexp(x) and log_softmax round differently in the last bit: a near-tie may swap
        assert np.abs(fus[d]["rank"] - cpu[d]["rank"]).max() <= 1
        assert (fus[d]["rank"] == cpu[d]["rank"]).mean() > 0.99
        assert (fus[d]["topk_token_ids"][:, 0] == cpu[d]["topk_token_ids"][:, 0]).mean() > 0.99


def test_fused_statistics_with_masked_logits_and_tiny_word_initial_mass():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 400, generator=g) * 5
    x[0, 100:] = float("-inf")  # a masked vocabulary
    wi = torch.zeros(400)
    wi[::7] = 1.0
    x[1, ::7] = -200.0  # the word-initial mass underflows float32 (e^-200)
    t = torch.tensor([3, 4, 5, 6, 7, 8])
    tlp, rank, ent, wmass, topv, topi = fused_stats(x, t, wi, 5)
    xd = x.double().numpy()
    lse = np.logaddexp.reduce(xd, axis=1)
    lp = xd - lse[:, None]
    pr = np.exp(lp)
    np.testing.assert_allclose(tlp.numpy(), lp[np.arange(6), t.numpy()], atol=1e-5)
    np.testing.assert_allclose(ent.numpy(), -np.where(pr > 0, pr * np.nan_to_num(lp, neginf=0.0), 0).sum(1), atol=1e-4)
    want_wi = np.logaddexp.reduce(np.where(wi.numpy() > 0, xd, -np.inf), axis=1) - lse
    np.testing.assert_allclose(wmass.numpy(), want_wi, atol=1e-4)
    assert np.isfinite(wmass.numpy()).all() and wmass[1] < -150  # no log(0)
    np.testing.assert_array_equal(rank.numpy(), 1 + (lp > lp[np.arange(6), t.numpy()][:, None]).sum(1))
    np.testing.assert_array_equal(topi.numpy(), np.argsort(-xd, axis=1, kind="stable")[:, :5])
    np.testing.assert_allclose(topv.numpy(), np.take_along_axis(lp, topi.numpy(), 1), atol=1e-5)


def test_compiled_fused_statistics_on_the_cpu(mirror, tiny_model):
    """`fused_stats` compiled whole (fullgraph: no graph break, so a GPU gets it as fused kernels) by inductor's
    CPU backend, in the scorer's chunks of varying row counts (dynamic shapes): the eager function's statistics.
    No GPU here, so this checks the compiled path's numbers on the CPU, not its speed."""
    import shutil

    if not (shutil.which("c++") or shutil.which("g++")):
        pytest.skip("inductor's CPU backend needs a C++ compiler")
    model, tok = tiny_model
    texts = ucl_sentences(mirror, 8) + [natural_stories(mirror)[1][:600]]
    compiled = torch.compile(fused_stats, dynamic=True, fullgraph=True)
    _, eager = score(model, tok, texts, gpu=True, fused=True)
    scorer, comp = score(model, tok, texts, gpu=True, fused=compiled)
    assert scorer._fused is compiled  # no failure on the way (that would switch to the eager path)
    for d in eager:
        for name in ("logprob_nats", "entropy_nats", "logprob_word_initial_nats", "topk_logprobs_nats"):
            # the compiled reductions sum in another order: float32 rounding of ~20-nat logits, ~1e-6 relative
            np.testing.assert_allclose(comp[d][name], eager[d][name], rtol=0, atol=5e-5, err_msg=name)
        assert np.abs(comp[d]["rank"] - eager[d]["rank"]).max() <= 1  # a near-tie may swap
        assert (comp[d]["rank"] == eager[d]["rank"]).mean() > 0.99
        np.testing.assert_array_equal(comp[d]["topk_token_ids"][:, 0], eager[d]["topk_token_ids"][:, 0])
