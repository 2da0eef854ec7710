"""The top-1 marts on real game data with two small models, against independent computations.

The warehouse: lm_game and the top-1 game's raw tables ingested from the mirror; lm_game scored by
a 2-layer GPT-2 with the real GPT-2 tokenizer (the game's: compared token by token, from the
scorer's top-k); word-level predictions of a 2-layer Llama with SmolLM2's real tokenizer on the
word-token questions of 25 documents; then every dbt model built. Expected values are computed
here from the upstream JSON files, the run's Parquet and plain forward passes, not from dbt.
"""

from __future__ import annotations

import ast
import json
import math
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import torch

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths
from predictabase.ingest.datasets.registry import run_ingest
from tests.helpers import marts_q as q

N_WORD_DOCS = 25
TESTERS = {"-6247052403041399844", "7513247084907933005", "3056584949900737159"}
ANON = "1812031566398576187"


@pytest.fixture(scope="module")
def top1_marts(fetched_raw: Paths, tmp_path_factory, tiny_gpt2_dir) -> Paths:
    from predictabase.ingest.scoring import ScoreSettings, score_corpora
    from predictabase.ingest.scoring import top1_words as top1_mod
    from predictabase.ingest.scoring.models import load_model
    from predictabase.ingest.scoring.profile import TokenizerProfile
    from predictabase.warehouse import dbt_build, publish
    from tests.scoring_helpers import build_tiny_llama, smollm2_tokenizer

    p = make_paths(tmp_path_factory.mktemp("top1m") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    run_ingest(p, ["lm_game", "lm_game_top1", "lm_game_model_perfs", "lm_game_vocabulary"], show_progress=False)
    score_corpora(p, str(tiny_gpt2_dir), ["lm_game"], ScoreSettings(top_k=5), show_progress=False)
    llama_dir = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama-top1"), smollm2_tokenizer())
    lm = load_model(str(llama_dir), p)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, str(llama_dir))
    read = top1_mod.read_inputs

    def first_docs(paths):
        inputs = read(paths)
        keep = sorted(inputs.questions, key=int)[:N_WORD_DOCS]
        inputs.questions = {d: inputs.questions[d] for d in keep}
        return inputs

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(top1_mod, "read_inputs", first_docs)
        top1_mod.predict_top1(p, lm, profile, top1_mod.Top1Settings(max_expansions=8), context_length=256)
    dbt_build(p, select="+tag:top1")  # the top-1 domain and what it reads: every model these tests query
    publish(p)
    return p


@pytest.fixture(scope="module")
def upstream(mirror: Path) -> dict:
    rows = json.loads((mirror / "lm_game/analysis/results_raw/res_accuracy_anonym.json").read_text())
    docs = {d: json.loads((mirror / f"lm_game/server/docs/doc{d}.json").read_text()) for d in {r[5] for r in rows}}
    answers = []
    for rid, user, guess, _c, pos, d in rows:
        toks = docs[d]
        if pos > len(toks) or str(user) in TESTERS | {ANON}:
            continue
        true = toks[pos - 1]
        if "\n" in true or "\ufffd" in true:
            continue
        nxt = toks[pos] if pos < len(toks) else None
        word = len(true) > 1 and true[0] == " " and true[1:].isalpha() and nxt is not None and nxt.startswith(" ")
        answers.append(
            dict(
                row_id=rid,
                player=str(user),
                doc_id=str(d),
                position=pos,
                guess=guess,
                true=true,
                word=word,
                correct=guess == true,
                context="".join(toks[: pos - 1]),
            )
        )
    vocab = ast.literal_eval((mirror / "lm_game/server/tokens.json").read_text())
    return {"answers": answers, "docs": docs, "vocab": vocab}


def test_human_rows_match_the_paper_and_an_independent_count(top1_marts, upstream):
    answers = upstream["answers"]
    per_player = defaultdict(list)
    for a in answers:
        per_player[a["player"]].append(a["correct"])
    min50 = {u: v for u, v in per_player.items() if len(v) >= 50}
    ((n, n_correct, acc, lo, hi, n_players, n50, mean50, pooled50),) = q(
        top1_marts,
        """
        select n, n_correct, accuracy, accuracy_ci_low, accuracy_ci_high, n_players, n_players_min_50,
               mean_player_accuracy_min_50, pooled_accuracy_min_50
        from mart_top1_summary where predictor_kind = 'humans' and subset = 'all_possible'""",
    )
    assert n == len(answers) == 18029
    assert n_correct == sum(a["correct"] for a in answers)
    assert acc == pytest.approx(n_correct / n) and round(acc, 2) == 0.29  # the paper's 29%
    assert n_players == len(per_player) and n50 == len(min50) == 38  # the paper's 38
    assert mean50 == pytest.approx(sum(sum(v) / len(v) for v in min50.values()) / len(min50))
    assert pooled50 == pytest.approx(sum(sum(v) for v in min50.values()) / sum(len(v) for v in min50.values()))
    # Wilson interval by hand
    z = 1.959964
    center = (acc + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(acc * (1 - acc) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (lo, hi) == (pytest.approx(center - half), pytest.approx(center + half))
    ((nw, accw),) = q(
        top1_marts,
        "select n, accuracy from mart_top1_summary where predictor_kind = 'humans' and subset = 'word_tokens'",
    )
    word = [a for a in answers if a["word"]]
    assert nw == len(word) and accw == pytest.approx(sum(a["correct"] for a in word) / len(word))


def test_player_accuracy_hand_checked(top1_marts, upstream):
    per_player = Counter(a["player"] for a in upstream["answers"])
    top_player, n = per_player.most_common(1)[0]
    correct = sum(a["correct"] for a in upstream["answers"] if a["player"] == top_player)
    ((answers, got, excluded),) = q(
        top1_marts,
        f"""select answers, correct, is_excluded_player from mart_top1_player_accuracy
                                                  where player_id = '{top_player}' and subset = 'all_possible'""",
    )
    assert (answers, got, excluded) == (n, correct, False)
    # the excluded accounts are listed, flagged
    flagged = {
        r[0] for r in q(top1_marts, "select distinct player_id from mart_top1_player_accuracy where is_excluded_player")
    }
    assert flagged == TESTERS | {ANON}


def test_model_rows_use_exactly_the_humans_questions(top1_marts, upstream):
    """Each model row: n = the human answers of the subset the model answered, and the humans'
    accuracy on exactly those answers, recomputed here from the predictions' own Parquet/tokens."""
    answers = upstream["answers"]
    preds = {}
    for path in top1_marts.top1_predictions.glob("*/*/predictions.parquet"):
        for r in pq.read_table(path).to_pylist():
            if r["candidate_words"]:
                preds[(r["doc_id"], r["position"])] = r["candidate_words"][0]
    rows = q(
        top1_marts,
        "select predictor, comparison, subset, n, n_correct, human_accuracy_same_questions, "
        "n_without_prediction from mart_top1_summary where predictor_kind = 'model' order by 1, 3",
    )
    word_rows = [r for r in rows if r[1] == "word_top1"]
    assert [r[2] for r in word_rows] == ["word_tokens"]  # word-level models only on the word-token subset
    _, _, _, n, n_correct, human_same, n_without = word_rows[0]
    same = [a for a in answers if a["word"] and (a["doc_id"], a["position"]) in preds]
    assert n == len(same) > 300
    assert n_without == sum(1 for a in answers if a["word"]) - len(same)
    assert n_correct == sum(preds[(a["doc_id"], a["position"])] == a["true"] for a in same)
    assert human_same == pytest.approx(sum(a["correct"] for a in same) / len(same))
    # the same answer set, row by row, in the intermediate model
    con = duckdb.connect(str(top1_marts.duckdb), read_only=True)
    try:
        ids = {
            r[0]
            for r in con.execute("""
            select g.row_id from intermediate.int_top1_guesses g
            join intermediate.int_top1_model_predictions p using (doc_id, position)
            where g.in_analysis and g.is_word_token and p.comparison = 'word_top1' and p.has_prediction""").fetchall()
        }
    finally:
        con.close()
    assert ids == {a["row_id"] for a in same}
    exact_rows = [r for r in rows if r[1] == "exact_token"]
    assert sorted(r[2] for r in exact_rows) == ["all_possible", "word_tokens"]


def test_exact_token_predictions_against_a_plain_forward_pass(top1_marts, upstream, tiny_gpt2_dir):
    """GPT-2-tokenizer model: the prediction is the argmax token of a plain forward pass over BOS +
    the context, read through the game's vocabulary (questions early enough to fit one window)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_dir).eval()
    vocab = upstream["vocab"]
    mart = {
        (r[0], r[1]): (r[2], r[3])
        for r in q(
            top1_marts,
            """
        select doc_id, position, m.predicted, m.is_correct
        from mart_top1_questions, unnest(model_predictions) as t(m)
        where m.comparison = 'exact_token'""",
        )
    }
    sample = [a for a in upstream["answers"] if 5 <= a["position"] <= 60][:40]
    checked = 0
    for a in sample:
        key = (a["doc_id"], a["position"])
        if key not in mart:  # the re-tokenized text has no token with exactly the game token's span
            continue
        # the document's own tokenization, cut where the question starts (tokenizing the context
        # alone can merge differently at its end: '\n' '\n' before a letter, '\n\n' at a text's end)
        full = tok("".join(upstream["docs"][int(a["doc_id"])]), add_special_tokens=False)["input_ids"]
        ends, ids = 0, []
        for t in full:
            if ends == len(a["context"]):
                break
            ids.append(t)
            ends += len(tok.decode([t]))
        assert ends == len(a["context"])
        with torch.no_grad():
            logits = model(torch.tensor([[tok.eos_token_id, *ids]])).logits[0, -1]
        predicted = vocab[int(logits.argmax())]
        assert mart[key] == (predicted, predicted == a["true"]), a
        checked += 1
    assert checked >= 30


def test_questions_mart_counts_and_wrong_guesses(top1_marts, upstream):
    by_q = defaultdict(list)
    for a in upstream["answers"]:
        by_q[(a["doc_id"], a["position"])].append(a)
    multi = [k for k, v in by_q.items() if len(v) >= 2 and sum(not a["correct"] for a in v) >= 1][:20]
    assert multi
    for doc_id, pos in multi:
        ((n, n_correct, wrong, guesses),) = q(
            top1_marts,
            f"""select n_answers, n_correct, most_common_wrong_guess, human_guesses
            from mart_top1_questions where doc_id = '{doc_id}' and position = {pos}""",
        )
        v = sorted(by_q[(doc_id, pos)], key=lambda a: a["row_id"])
        assert (n, n_correct) == (len(v), sum(a["correct"] for a in v))
        assert guesses == [a["guess"] for a in v]
        counts = Counter(a["guess"] for a in v if not a["correct"])
        best = max(counts.values())
        assert wrong == min(g for g, c in counts.items() if c == best)


def test_reference_accuracies_are_labelled_not_measured(top1_marts):
    rows = q(
        top1_marts,
        "select predictor, subset, accuracy, n, accuracy_ci_low, reference_file from mart_top1_summary "
        "where predictor_kind = 'reference'",
    )
    assert ("davinci", "all_possible", 0.56, None, None, "model_perfs.json") in rows
    assert ("gpt-neo-125m", "word_tokens", 0.297, None, None, "model_perfs_new_new_new.json") in rows
    assert len(rows) == 31


def test_every_top1_run_column_dbt_reads_is_written(top1_marts):
    """dbt's typed column lists for the top-1 `_run.json` name only keys the predictor writes."""
    from tests.test_token_store import PSEUDO, dbt_columns

    record = json.loads(next(top1_marts.top1_predictions.glob("*/*/_run.json")).read_text())
    reads = {w: c for w, c in dbt_columns("_run.json").items() if "top1" in w}
    assert len(reads) == 2  # the source yml and stg_top1_word_runs
    for where, cols in reads.items():
        missing = set(cols) - set(record) - set(PSEUDO)
        assert not missing, f"{where}: dbt reads {sorted(missing)}, which the run record lacks"
