"""The `temperature` model step (ingest/scoring/temperature.py) on real corpus texts: MECO English ingested from the
mirror, a 2-layer GPT-2 with the real tokenizer (128 positions, so a text is read in windows). Each token's ln p_T and
ln B_T are checked against an independent computation from the model's logits in float64 (the definitions of
`word_boundaries`), T = 1 against the score step, and a stopped run resumes to the same rows. The regression's best
T is checked on reading times made from a known T (`int_temperature_delta_loglik`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from predictabase.core.errors import OptionError
from predictabase.ingest.scoring import engine, pipeline
from predictabase.ingest.scoring import temperature as tp
from predictabase.ingest.scoring.word_boundaries import log_boundary_mass_of_logits

GRID = (0.05, 0.5, 1.0, 2.5)  # 0.05: so sharp that the word-initial terms of some rows underflow in float32
SETTINGS = tp.TemperatureSettings(temperatures=GRID, limit=2)


def test_settings_out_of_range_name_their_option():
    for bad in (
        (2.0, 3.0),  # no 1
        (1.0, 0.01),
        (1.0, 101.0),
        (1.0, float("nan")),
        (1.0, float("inf")),
        (1.0, 1.0),
        tuple(1.0 + i / 10 for i in range(33)),
        (),
    ):
        with pytest.raises(OptionError, match="--temperatures"):
            tp.TemperatureSettings(temperatures=bad).check()
    with pytest.raises(OptionError, match="--limit"):
        tp.TemperatureSettings(limit=0).check()
    with pytest.raises(OptionError, match="--temperatures"):
        tp.parse_temperatures("1,two")
    assert tp.parse_temperatures("2, 1,0.5") == (2.0, 1.0, 0.5)
    assert tp.TemperatureSettings(temperatures=(2.0, 1.0, 0.5)).grid == (0.5, 1.0, 2.0)


def _rows(run_dir: Path) -> pd.DataFrame:
    return pd.concat([pq.read_table(p).to_pandas() for p in sorted(run_dir.glob("part-*.parquet"))])


def test_each_token_under_each_temperature_is_the_tempered_softmax_of_its_window(meco_en, tiny_on_meco_en):
    """ln p_T(t_i) and ln B_T before and after each token equal log_softmax(z / T) and the word-initial mass of
    z / T in float64, z the model's logits at the token's position in the window the score step gives it."""
    lm, profile = tiny_on_meco_en
    run = tp.temperature_corpus(meco_en, lm, tp.TemperatureScorer(lm.model, profile, GRID), "meco_en", SETTINGS)
    rows = _rows(tp.run_dir(meco_en, lm.model_key, "meco_en", run["run_id"]))
    assert run["context_length"] == 128 and run["n_texts"] == 2 and run["temperatures"] == list(GRID)
    assert len(rows) == run["n_tokens"] * len(GRID) and run["n_tokens"] > 2 * 128  # both texts read in windows
    docs, _ = pipeline.load_documents(meco_en, "meco_en", pipeline.ScoreSettings(limit=2))
    mask = np.asarray(profile.word_initial[: lm.vocab_size])
    torch = pytest.importorskip("torch")
    for doc in docs:
        [(ids, spans)] = profile.encode([doc.text])
        logits = np.zeros((len(ids) + 1, lm.vocab_size))  # position i predicts token i; the last: the text's end
        for w in engine.make_windows(0, len(ids), run["context_length"], run["stride"]):
            inp = torch.tensor([[profile.bos.token_id, *ids[w.begin : w.end]]])
            with torch.inference_mode():
                z = lm.model(input_ids=inp).logits[0].double().numpy()
            logits[w.score_from : w.end] = z[w.score_from - w.begin : w.end - w.begin]
            if w.end == len(ids):
                logits[len(ids)] = z[w.end - w.begin]
        mine = rows[rows["doc_id"] == doc.doc_id].sort_values(["token_index", "temperature"])
        assert mine["char_start"].to_numpy()[:: len(GRID)].tolist() == [s for s, _ in spans]
        for t in GRID:
            at = mine[mine["temperature"] == t]
            zt = logits / t
            lse = np.log(np.exp(zt - zt.max(1, keepdims=True)).sum(1)) + zt.max(1)
            expected_lp = zt[np.arange(len(ids)), ids] - lse[: len(ids)]
            expected_b = log_boundary_mass_of_logits(zt, mask)
            np.testing.assert_allclose(at["logprob_nats"], expected_lp, atol=2e-4)
            np.testing.assert_allclose(at["logprob_word_initial_nats"], expected_b[: len(ids)], atol=2e-4)
            np.testing.assert_allclose(at["logprob_word_initial_after_nats"], expected_b[1:], atol=2e-4)
        # the rows whose word-initial terms underflow at T = 0.05 are there, recomputed to the same values
        assert (mine.loc[mine["temperature"] == 0.05, "logprob_word_initial_nats"] < -69).any()
        # the grid's distributions are not one another's (a random model: its own distribution is far too sharp)
        by_t = mine.groupby("temperature")["logprob_nats"].mean()
        assert abs(by_t[2.5] - by_t[1.0]) > 0.1 and abs(by_t[0.5] - by_t[1.0]) > 0.1


def test_temperature_one_is_the_score_steps_distribution(meco_en, tiny_on_meco_en):
    lm, profile = tiny_on_meco_en
    run = tp.temperature_corpus(meco_en, lm, tp.TemperatureScorer(lm.model, profile, GRID), "meco_en", SETTINGS)
    rows = _rows(tp.run_dir(meco_en, lm.model_key, "meco_en", run["run_id"]))
    ones = rows[rows["temperature"] == 1.0].sort_values(["doc_id", "token_index"])
    scorer = engine.Scorer(lm.model, profile, top_k=0)
    docs, _ = pipeline.load_documents(meco_en, "meco_en", pipeline.ScoreSettings(limit=2))
    plan = pipeline.plan_run(lm, profile, "meco_en", docs, "v", pipeline.ScoreSettings(top_k=0, limit=2))
    table = pipeline.score_part(plan, scorer, docs).to_pandas().sort_values(["doc_id", "token_index"])
    assert len(table) == len(ones)
    for col in ("logprob_nats", "logprob_word_initial_nats", "logprob_word_initial_after_nats"):
        np.testing.assert_allclose(ones[col].to_numpy(), table[col].to_numpy(), atol=1e-4)


def test_a_stopped_run_resumes_to_the_same_rows_and_a_complete_run_is_not_redone(meco_en, tiny_on_meco_en):
    lm, profile = tiny_on_meco_en
    scorer = tp.TemperatureScorer(lm.model, profile, GRID)
    settings = tp.TemperatureSettings(temperatures=GRID, limit=3)
    run = tp.temperature_corpus(meco_en, lm, scorer, "meco_en", settings)
    directory = tp.run_dir(meco_en, lm.model_key, "meco_en", run["run_id"])
    before = {p.name: pd.read_parquet(p) for p in directory.glob("part-*.parquet")}
    assert len(before) >= 1
    first = sorted(before)[-1]
    (directory / first).unlink()
    (directory / tp.RUN_FILE).unlink()  # stopped before its last part
    again = tp.temperature_corpus(meco_en, lm, scorer, "meco_en", settings)
    assert again["run_id"] == run["run_id"] and again["parts_resumed"] == len(before) - 1
    after = {p.name: pd.read_parquet(p) for p in directory.glob("part-*.parquet")}
    assert set(after) == set(before)
    for name, frame in before.items():
        pd.testing.assert_frame_equal(after[name], frame)
    assert tp.temperature_corpus(meco_en, lm, scorer, "meco_en", settings)["skipped"] is True
    record = json.loads((directory / tp.RUN_FILE).read_text())
    assert "/" not in json.dumps({k: v for k, v in record.items() if k not in ("tokenizer", "model_id")})
    # what dbt reads of the parts and the run records is what the step writes, with types that fit
    from tests.test_token_store import arrow_fits, dbt_columns

    parts = [cols for where, cols in dbt_columns("part-*.parquet").items() if "temperature" in where]
    runs = [cols for where, cols in dbt_columns("_run.json").items() if "temperature" in where]
    schema = pq.read_schema(next(directory.glob("part-*.parquet")))
    assert parts and runs
    for cols in parts:
        assert set(cols) - {"filename"} == set(schema.names)
        assert all(arrow_fits(schema.field(c).type, duck) for c, duck in cols.items() if c != "filename")
    for cols in runs:
        assert set(cols) - {"filename"} <= set(record), set(cols) - set(record)
    other = tp.temperature_corpus(
        meco_en, lm, tp.TemperatureScorer(lm.model, profile, (1.0, 2.0)), "meco_en",
        tp.TemperatureSettings(temperatures=(1.0, 2.0), limit=3),
    )  # fmt: skip
    assert other["run_id"] != run["run_id"]  # another grid is another run


# --- the regression over T (dbt_project/models/intermediate/regression/int_temperature_delta_loglik.py) -------------


def _regression():
    path = Path(__file__).parents[1] / "dbt_project/models/intermediate/regression/int_temperature_delta_loglik.py"
    spec = importlib.util.spec_from_file_location("int_temperature_delta_loglik", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _words(truth: float, temperatures: np.ndarray, n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """Words with a length, a frequency, and a surprisal under each T from random logits over 50 words; the reading
    time is linear in the surprisal under T = `truth` (and its previous word's) plus noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, (n, 50)) * rng.uniform(0.5, 6, (n, 1))  # contexts from flat to sharp
    target = rng.integers(0, 50, n)
    frame = {
        "doc_id": ["d"] * n,
        "word_index": np.arange(n),
        "length_chars": rng.integers(1, 12, n).astype(float),
        "log_frequency": rng.uniform(1, 7, n),
    }
    surprisal = {}
    for t in sorted({*temperatures, truth}):
        zt = z / t
        lse = np.log(np.exp(zt - zt.max(1, keepdims=True)).sum(1)) + zt.max(1)
        surprisal[t] = lse - zt[np.arange(n), target]
    for i, t in enumerate(temperatures):
        s = surprisal[t]
        frame[f"{i}:surprisal_nats"] = s
        for k in (1, 2, 3):
            frame[f"{i}:prev{k}_surprisal_nats"] = np.r_[[np.nan] * k, s[:-k]]
    for k in (1, 2, 3):
        frame[f"prev{k}_length_chars"] = np.r_[[np.nan] * k, frame["length_chars"][:-k]]
        frame[f"prev{k}_log_frequency"] = np.r_[[np.nan] * k, frame["log_frequency"][:-k]]
    s = surprisal[truth]
    frame["mean_rt_ms"] = 250 + 12 * s + 4 * np.r_[0, s[:-1]] + 3 * frame["length_chars"] + rng.normal(0, 15, n)
    return pd.DataFrame(frame).iloc[3:].reset_index(drop=True)


def test_the_best_temperature_is_the_one_the_reading_times_were_made_from():
    reg = _regression()
    temperatures = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 5.0])
    rows = pd.DataFrame(reg.fit(_words(3.0, temperatures), temperatures, K=10, seed=42))
    assert (rows["best_temperature"] == 3.0).all() and rows.loc[rows["is_best"], "temperature"].tolist() == [3.0]
    assert rows["best_temperature_ci_low"].iloc[0] <= 3.0 <= rows["best_temperature_ci_high"].iloc[0]
    assert rows["best_temperature_ci_high"].iloc[0] <= 5.0 and rows["best_temperature_ci_low"].iloc[0] >= 1.5
    at = rows.set_index("temperature")
    assert at.loc[1.0, "vs_t1_delta_loglik_nats_per_word"] == 0
    assert at.loc[3.0, "vs_t1_delta_loglik_ci_low_nats_per_word"] > 0  # the truth beats T = 1, with its interval
    assert at.loc[3.0, "delta_loglik_nats_per_word"] > at.loc[0.5, "delta_loglik_nats_per_word"]
    # choosing T on other folds' words still finds the gain, and it is no larger than the best T's own
    assert 0 < rows["cv_gain_ci_low_nats_per_word"].iloc[0]
    assert rows["cv_gain_nats_per_word"].iloc[0] <= at.loc[3.0, "vs_t1_delta_loglik_nats_per_word"] + 1e-12
    # made from T = 1: the best T's interval holds 1 and choosing T gains nothing beyond noise
    rows1 = pd.DataFrame(reg.fit(_words(1.0, temperatures, seed=4), temperatures, K=10, seed=42))
    assert rows1["best_temperature_ci_low"].iloc[0] <= 1.0 <= rows1["best_temperature_ci_high"].iloc[0]
    assert rows1["cv_gain_ci_low_nats_per_word"].iloc[0] < 0.002


def test_the_cross_validated_gain_scores_each_fold_at_the_temperature_best_on_the_others():
    reg = _regression()
    deltas = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 3.0]])
    folds = np.array([0, 0, 1, 1])
    # fold 0 is scored at the T best on fold 1 (column 2), fold 1 at the T best on fold 0 (column 1); T = 1 is 0
    np.testing.assert_array_equal(reg.cv_gain(deltas, folds, one=0), [0.0, 0.0, 0.0, 0.0])
    assert reg.best_of(deltas) == 2  # on all words: column 2 (mean 1.5 against 0.5), a gain of 1.5 chosen in sample
