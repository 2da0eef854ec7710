"""The `entropy` model step (ingest/scoring/anticipation.py) on real corpus texts: MECO English ingested from the
mirror, a 2-layer GPT-2 with the real tokenizer (128 positions, so a text is read in windows). Every word gets its
estimates, a stopped run resumes to the same rows, a complete run is not redone, and the words' alignment to
tokens and the windows are right. (The estimator itself is checked exactly in tests/test_word_entropy.py.)"""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from predictabase.core.errors import OptionError
from predictabase.ingest.scoring import anticipation as an

SETTINGS = an.EntropySettings(samples=8, limit=2)


def test_a_word_starts_at_the_token_that_holds_its_first_character():
    text = "The cat, sat."
    spans = [(0, 3), (3, 7), (7, 8), (8, 12), (12, 13)]  # "The", " cat", ",", " sat", "."
    words = [(0, 0), (1, 4), (2, 9)]  # The, cat, (sat,) at their first characters
    assert an.first_tokens(text, spans, words) == [0, 1, 3]
    # a token that reaches back across the boundary into the previous word: no context ends before the word
    assert an.first_tokens("ab cd", [(0, 4), (4, 5)], [(0, 0), (1, 3)]) == [0, None]


@pytest.mark.parametrize("w", [10, 11, 120])
def test_each_word_samples_with_at_least_half_a_window_before_it(w):
    for k in range(0, 5 * w):
        a = an._window_start(k, w)
        assert a >= 0 and 1 + k - a <= w  # the separator and the context fit
        assert a == 0 or k - a >= w // 2 - 1


def test_settings_out_of_range_name_their_option():
    for bad, option in (
        (dict(samples=1), "--samples"),
        (dict(samples=4097), "--samples"),
        (dict(alpha=1.0), "--alpha"),
        (dict(alpha=-0.5), "--alpha"),
        (dict(max_tokens=65), "--max-tokens"),
        (dict(seed=-1), "--seed"),
        (dict(limit=0), "--limit"),
    ):
        with pytest.raises(OptionError, match=option):
            an.EntropySettings(**bad).check()


def _parts(run_dir) -> dict[str, bytes]:
    return {p.name: pq.read_table(p).to_pandas().to_json() for p in sorted(run_dir.glob("part-*.parquet"))}


def test_every_word_of_a_text_gets_its_entropies_and_a_stopped_run_resumes_to_the_same_rows(meco_en, tiny_on_meco_en):
    lm, profile = tiny_on_meco_en
    texts, _ = an.read_texts(meco_en, "meco_en", SETTINGS.limit)
    run = an.entropy_corpus(meco_en, lm, profile, "meco_en", SETTINGS)
    directory = an.run_dir(meco_en, lm.model_key, "meco_en", run["run_id"])
    assert run["n_texts"] == 2 and run["n_words"] == sum(len(t.words) for t in texts) > 300
    assert run["window"] == 128 - SETTINGS.max_tokens  # the tiny model's 128 positions: windows
    rows = pq.read_table(directory).to_pandas()
    assert len(rows) == run["n_words"] and set(rows["corpus"]) == {"meco_en"}
    ok = rows[rows["status"] == "ok"]
    assert len(ok) >= 0.95 * len(rows)  # MECO's words are whitespace-separated: nearly every one starts a token
    # (the random tiny model's words are nearly certain: entropies near 0, a standard error 0 where the 8 samples
    # are one word; tests/test_word_entropy.py checks the values themselves)
    estimates = ok[["entropy_nats", "entropy_se_nats", "renyi_entropy_nats", "first_token_entropy_nats"]]
    assert np.isfinite(estimates.to_numpy()).all() and (estimates.to_numpy() >= -1e-12).all()
    assert (ok["n_samples"] == 8).all() and (ok["mean_sample_tokens"] >= 1).all()
    assert ok["context_tokens"].max() <= run["window"] < ok["context_tokens"].max() * 2  # read in windows
    # a complete run is not redone
    assert an.entropy_corpus(meco_en, lm, profile, "meco_en", SETTINGS)["skipped"]
    # stopped after its first text: the rerun writes the second text alone, the same rows as before
    before = _parts(directory)
    (directory / an.RUN_FILE).unlink()
    (directory / "part-000001.parquet").unlink()
    again = an.entropy_corpus(meco_en, lm, profile, "meco_en", SETTINGS)
    assert again["texts_resumed"] == 1 and _parts(directory) == before
    assert json.loads((directory / an.RUN_FILE).read_text())["run_id"] == run["run_id"]
    # what dbt reads of the parts and the run records is what the step writes, with types that fit
    from tests.test_token_store import arrow_fits, dbt_columns

    parts = [cols for where, cols in dbt_columns("part-*.parquet").items() if "word_entropy" in where]
    runs = [cols for where, cols in dbt_columns("_run.json").items() if "word_entropy" in where]
    schema = pq.read_schema(next(directory.glob("part-*.parquet")))
    record = json.loads((directory / an.RUN_FILE).read_text())
    assert parts and runs
    for cols in parts:
        assert set(cols) - {"filename"} == set(schema.names)
        assert all(arrow_fits(schema.field(c).type, duck) for c, duck in cols.items() if c != "filename")
    for cols in runs:
        assert set(cols) - {"filename"} <= set(record), set(cols) - set(record)


def test_another_seed_is_another_run_with_other_samples(meco_en, tiny_on_meco_en):
    lm, profile = tiny_on_meco_en
    one = an.entropy_corpus(meco_en, lm, profile, "meco_en", an.EntropySettings(samples=8, limit=1, seed=1))
    two = an.entropy_corpus(meco_en, lm, profile, "meco_en", an.EntropySettings(samples=8, limit=1, seed=2))
    assert one["run_id"] != two["run_id"]
    a, b = (pq.read_table(an.run_dir(meco_en, lm.model_key, "meco_en", r["run_id"])).to_pandas() for r in (one, two))
    assert not np.array_equal(a["entropy_nats"], b["entropy_nats"], equal_nan=True)
    np.testing.assert_allclose(a["first_token_entropy_nats"], b["first_token_entropy_nats"])  # exact: no sampling


def test_a_model_with_sliding_window_layers_is_refused_in_one_line():
    """Its cache drops the oldest keys as the samples' tokens are appended: refused, not estimated wrongly."""
    from types import SimpleNamespace

    from transformers import Gemma3TextConfig, LlamaConfig, Qwen2Config

    from predictabase.core.errors import ScoringError

    def lm(config, positions=32768):
        return SimpleNamespace(model=SimpleNamespace(config=config), model_key="m", max_positions=positions)

    with pytest.raises(ScoringError, match="sliding-window attention"):
        an.window_length(lm(Gemma3TextConfig()), an.EntropySettings())
    assert an.window_length(lm(LlamaConfig(), 8192), an.EntropySettings()) == an.MAX_CONTEXT - 8
    assert an.window_length(lm(Qwen2Config(), 128), an.EntropySettings(max_tokens=4)) == 124  # its layers are full
