"""The three top-1 marts, small and hand-made, for the "Top-1 game" page's tests.

Same tables, columns and types as `predictabase build` publishes (dbt_project/models/marts/top1), added to
the dashboard fixture snapshot (tests/dashboard_fixtures.py) so every other page still renders. Every value
is chosen here, so the tests can check what the page shows: the finding's numbers, the histogram's players,
the model lines, each question's guesses and predictions.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from .dashboard_fixtures import create_marts

# player_id, answers over all possible questions, is excluded (basis), accuracy all possible, accuracy word tokens
PLAYERS = [
    ("101", 200, None, 0.22, 0.20),
    ("102", 120, None, 0.26, 0.24),
    ("103", 90, None, 0.28, 0.30),
    ("104", 60, None, 0.32, 0.34),
    ("105", 50, None, 0.38, 0.40),
    ("106", 20, None, 0.10, 0.10),  # below the paper's 50 answers
    ("anon", 500, "inferred_anon", 0.44, 0.46),  # an excluded account
]
WORD_SHARE = 0.5  # word-token answers per player: half of their answers over all possible questions

# the model's word-token row (n answers, n correct, the players' accuracy on the same answers)
MODEL = {
    "predictor": "smollm2-135m",
    "n": 960,
    "n_correct": 336,
    "same": 270 / 960,
    "ci": (0.3201, 0.3811),
    "without": 40,
    "proven": 0.975,
    "by_mass": 0.25,
}
# a second model on the same answers (add_top1_marts(..., second_model=True))
GEMMA = {**MODEL, "predictor": "gemma3-270m", "n_correct": 384, "ci": (0.3693, 0.4315), "proven": 1.0}
FINDING = (
    "On the 960 answers players gave to questions whose answer is a whole word, SmolLM2-135M-Instruct (4-bit GGUF)'s most "
    "probable next word was right 35.0% of the time, the players 28.1% (same questions)."
)

# predictor, subset, reported accuracy, the authors' file
REFERENCES = [
    ("gpt-neo-125m", "word_tokens", 0.297, "model_perfs_new_new_new.json"),
    ("gpt-j-6b", "word_tokens", 0.422, "model_perfs_new_new_new.json"),
    ("fairseq-125m", "word_tokens", 0.314, "model_perfs_new_new.json"),
    ("gpt-neo-125m", "all_possible", 0.38, "model_perfs_new_new_new_orig.json"),
    ("davinci", "all_possible", 0.56, "model_perfs_new_new_new_orig.json"),
    ("davinci", "all_possible", 0.56, "model_perfs.json"),
    ("davinci", "all_possible", 0.564905, "model_perfs_origin.json"),
]


def _pred(predicted, probability, correct, top=None, *, tops: bool = True) -> dict:
    p = {
        "model_key": "smollm2-135m",
        "comparison": "word_top1",
        "predicted": predicted,
        "probability": probability,
        "is_correct": correct,
        "argmax_proven": True,
        "candidates": [predicted],
        "candidate_probabilities": [probability],
    }
    if tops:
        p["top_next_tokens"] = None if top is None else [t for t, _ in top]
        p["top_next_token_probabilities"] = None if top is None else [x for _, x in top]
    return p


def questions(*, tops: bool = True) -> list[tuple]:
    """doc_id, position, context_tail, true_token, next_token, is_impossible, is_word_token, guesses, predictions
    (no prediction: NULL in the mart, as dbt builds it; no answer: an empty list)."""
    return [
        (
            "7",
            3,
            "Once upon a time",
            " the",
            " cat",
            False,
            True,
            [" the", " a", " the", "the"],
            [_pred(" the", 0.41, True, [(" the", 0.40), (" a", 0.21), (",", 0.05)], tops=tops)],
        ),
        (
            "7",
            5,
            "Once upon a time the",
            " cat",
            " sat",
            False,
            True,
            [" dog", " cat"],
            [_pred(" dog", 0.30, False, [(" dog", 0.29), (" cat", 0.12)], tops=tops)],
        ),
        ("7", 9, "Once upon a time the cat sat", "\n", "It", True, False, [], []),
        (
            "12",
            4,
            "The capital of France is",
            " Paris",
            ".",
            False,
            True,
            [" London", " Rome"],
            [_pred(" Paris", 0.62, True, None, tops=tops)],
        ),
        ("12", 6, "The capital of France is Paris, a sprawl", "ing", " city", False, False, ["ing"], []),
    ]


def _model_row(m: dict) -> tuple:
    return (
        "model",
        m["predictor"],
        "word_top1",
        "word_tokens",
        m["n"],
        m["n_correct"],
        m["n_correct"] / m["n"],
        *m["ci"],
        None,
        None,
        None,
        None,
        m["same"],
        m["without"],
        m["proven"],
        m["by_mass"],
        None,
        None,
    )


def _summary_rows(models: list[dict]) -> list[tuple]:
    rows = [
        # predictor_kind, predictor, comparison, subset, n, n_correct, accuracy, ci_low, ci_high, n_players,
        # n_players_min_50, mean_player_accuracy_min_50, pooled_accuracy_min_50, human_accuracy_same_questions,
        # n_without_prediction, share_argmax_proven, share_proven_by_mass, reference_file, reference_note
        (
            "humans",
            "humans (pooled)",
            "human_guess",
            "word_tokens",
            1000,
            290,
            0.29,
            0.2627,
            0.3189,
            6,
            5,
            0.296,
            0.30,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "humans",
            "humans (pooled)",
            "human_guess",
            "all_possible",
            1600,
            464,
            0.29,
            0.2683,
            0.3127,
            6,
            5,
            0.292,
            0.29,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
    ] + [_model_row(m) for m in models]
    for name, subset, acc, file in REFERENCES:
        rows.append(
            (
                "reference",
                name,
                "authors_reported",
                subset,
                None,
                None,
                acc,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                file,
                f"note on {file}",
            )
        )
    return rows


def add_top1_marts(path: Path, *, tops: bool = True, models: tuple[dict, ...] = (MODEL,)) -> Path:
    """Add the three top-1 marts to the snapshot at `path` (written before by `create_marts`).
    `tops=False`: model_predictions without top_next_tokens and top_next_token_probabilities (older builds);
    `models`: the summary's measured models (MODEL, GEMMA; none: nothing measured yet)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("""CREATE TABLE mart_top1_player_accuracy (player_id VARCHAR, subset VARCHAR, answers BIGINT,
            correct BIGINT, accuracy DOUBLE, answers_all_possible BIGINT, has_min_50_answers BOOLEAN,
            is_excluded_player BOOLEAN, exclusion_basis VARCHAR)""")
        for pid, n_all, basis, acc_all, acc_word in PLAYERS:
            n_word = int(n_all * WORD_SHARE)
            for subset, n, acc in (("all_possible", n_all, acc_all), ("word_tokens", n_word, acc_word)):
                con.execute(
                    "INSERT INTO mart_top1_player_accuracy VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [pid, subset, n, round(acc * n), round(acc * n) / n, n_all, n_all >= 50, basis is not None, basis],
                )

        con.execute("""CREATE TABLE mart_top1_summary (predictor_kind VARCHAR, predictor VARCHAR, comparison VARCHAR,
            subset VARCHAR, n BIGINT, n_correct BIGINT, accuracy DOUBLE, accuracy_ci_low DOUBLE,
            accuracy_ci_high DOUBLE, n_players BIGINT, n_players_min_50 BIGINT, mean_player_accuracy_min_50 DOUBLE,
            pooled_accuracy_min_50 DOUBLE, human_accuracy_same_questions DOUBLE, n_without_prediction BIGINT,
            share_argmax_proven DOUBLE, share_proven_by_mass DOUBLE, reference_file VARCHAR,
            reference_note VARCHAR)""")
        con.executemany(
            "INSERT INTO mart_top1_summary VALUES (" + ", ".join(["?"] * 19) + ")", _summary_rows(list(models))
        )

        tops_type = ", top_next_tokens VARCHAR[], top_next_token_probabilities DOUBLE[]" if tops else ""
        con.execute(f"""CREATE TABLE mart_top1_questions (doc_id VARCHAR, position INTEGER, context_tail VARCHAR,
            true_token VARCHAR, next_token VARCHAR, is_impossible BOOLEAN, is_word_token BOOLEAN, n_answers BIGINT,
            n_correct BIGINT, human_accuracy DOUBLE, most_common_wrong_guess VARCHAR, human_guesses VARCHAR[],
            n_models BIGINT, n_models_correct BIGINT,
            model_predictions STRUCT(model_key VARCHAR, comparison VARCHAR, predicted VARCHAR, probability DOUBLE,
                is_correct BOOLEAN, argmax_proven BOOLEAN, candidates VARCHAR[],
                candidate_probabilities DOUBLE[]{tops_type})[])""")
        for doc, pos, ctx, true, nxt, impossible, word, guesses, preds in questions(tops=tops):
            n_correct = sum(g == true for g in guesses)
            wrong = sorted({g for g in guesses if g != true}, key=lambda g: (-guesses.count(g), g))
            con.execute(
                "INSERT INTO mart_top1_questions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    doc,
                    pos,
                    ctx,
                    true,
                    nxt,
                    impossible,
                    word,
                    len(guesses),
                    n_correct,
                    n_correct / len(guesses) if guesses else None,
                    wrong[0] if wrong else None,
                    guesses,
                    len(preds),
                    sum(p["is_correct"] for p in preds),
                    preds or None,
                ],
            )  # NULL: no model
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


def create_top1_marts(path: Path, **kwargs) -> Path:
    """The dashboard fixture snapshot with the top-1 marts (`add_top1_marts`'s options)."""
    create_marts(path)
    return add_top1_marts(path, **kwargs)
