"""Word boundaries have one definition (ingest/scoring/word_boundaries.py: the word-initial tokens, ln B, LW and WT
of Oh & Schuler 2024, eqs. 5-6); what computes them at scale is checked against it here: the scorer's ln B at every
position (float32), the cloze scorer's one-pass ln B, the top-1 search's, and the dbt macro's LW and WT of each word
(rendered over a scored text by the word-surprisal page's own path)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from predictabase.ingest.scoring import word_boundaries as wb
from predictabase.ingest.scoring.engine import Scorer, Window
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.sentence import SentenceScorer

TEXT = "The old lighthouse keeper counted ships, twelve of them, before the storm rolled in at dusk."


@pytest.fixture(scope="module")
def tiny(tiny_gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    return model, TokenizerProfile.build(tok, model.config.model_type, model.config.vocab_size, "tiny")


def _logits(model, profile, ids: list[int]) -> np.ndarray:
    """[n + 1, V] float64 logits of BOS + ids: row i predicts token i, the last row follows the text."""
    with torch.no_grad():
        return model(torch.tensor([[profile.bos.token_id, *ids]])).logits[0].double().numpy()


def test_the_word_initial_tokens_are_the_ones_starting_with_whitespace_and_end_of_text(tiny):
    _, profile = tiny
    strings = profile.strings
    starts = {i for i, s in enumerate(strings) if s and wb.token_text_start(s, True).isspace()}
    assert set(np.flatnonzero(profile.word_initial)) == starts | set(profile.end_of_text_ids)
    ids = {s: i for i, s in enumerate(strings)}
    assert profile.word_initial[[ids["Ġthe"], ids["Ċ"], ids["<|endoftext|>"]]].all()  # space, newline, end
    assert not profile.word_initial[[ids["the"], ids[","], ids["ing"]]].any()  # inside a word or attached to it


def test_the_scorers_boundary_mass_is_the_definition(tiny):
    model, profile = tiny
    [(ids, _)] = profile.encode([TEXT])
    got = Scorer(model, profile, top_k=0, device="cpu", probe=False).score_windows(
        [ids], [[Window(0, 0, len(ids), 0)]]
    )[0]
    want = wb.log_boundary_mass_of_logits(_logits(model, profile, ids), profile.word_initial)
    # before each token, and after the last one (the end of the text): float32 against float64
    np.testing.assert_allclose(got["logprob_word_initial_nats"], want[:-1], rtol=0, atol=2e-5)
    assert abs(got["logprob_word_initial_after_nats"][-1] - want[-1]) < 2e-5
    assert want.min() < -5 and want.max() < 0  # positions where a boundary is unlikely, and none certain


def test_the_cloze_and_search_forms_are_the_definition(tiny):
    model, profile = tiny
    [(ids, _)] = profile.encode([TEXT])
    logits = _logits(model, profile, ids)
    want = wb.log_boundary_mass_of_logits(logits, profile.word_initial)
    mask = torch.from_numpy(profile.word_initial)
    log_z, ln_b = wb.log_normalizer_and_boundary(torch.from_numpy(logits).float(), mask)  # the cloze scorer's
    np.testing.assert_allclose(ln_b.numpy(), want, rtol=0, atol=2e-6)
    np.testing.assert_allclose(log_z.numpy(), np.log(np.exp(logits).sum(1)), rtol=1e-6)
    lps = logits - np.log(np.exp(logits).sum(1, keepdims=True))  # the top-1 search's float64 log-probabilities
    np.testing.assert_allclose([wb.log_boundary_mass(r, profile.word_initial) for r in lps], want, atol=1e-12)
    assert wb.log_boundary_mass(np.full(4, -np.inf), np.ones(4, dtype=bool)) == -np.inf


def test_the_macros_lw_and_wt_are_the_definitions_arithmetic(tiny):
    model, profile = tiny
    sentence = SentenceScorer.from_parts(model, profile)
    rows = sentence.token_rows(TEXT).to_pandas()
    words = sentence.word_surprisals(TEXT).to_pandas()
    assert words["is_aligned"].all() and len(words) == len(TEXT.split()) and words["n_tokens"].max() > 1
    ends = np.cumsum(words["n_tokens"])
    assert ends.iloc[-1] == len(rows)  # the aligned words' tokens tile the text
    for (_, w), end in zip(words.iterrows(), ends):
        toks = rows.iloc[end - w["n_tokens"] : end]
        before = None if w["is_first_word"] else float(toks["logprob_word_initial_nats"].iloc[0])
        after = float(toks["logprob_word_initial_after_nats"].iloc[-1])
        lw, wt = wb.word_logprobs(toks["logprob_nats"], before, after)
        assert w["surprisal_lw_nats"] == pytest.approx(-lw, abs=1e-6)
        assert w["surprisal_wt_nats"] == pytest.approx(-wt, abs=1e-6)
        assert (w["logprob_boundary_before_nats"] is None or np.isnan(w["logprob_boundary_before_nats"])) == (
            before is None
        )
    # summed over the text, WT is LW plus the boundary after its last word (the after-term of a word is the
    # before-term of the next)
    total = -(words["surprisal_wt_nats"].sum() - words["surprisal_lw_nats"].sum())
    assert total == pytest.approx(float(rows["logprob_word_initial_after_nats"].iloc[-1]), abs=1e-5)
