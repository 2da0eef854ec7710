"""Play the pairwise game (Shlegeris et al. 2024, sec. 4.1): which of two tokens came next? Training rounds
first, then a game of the study's questions; points by the scoring rule of sec. 4.1.2; at the end your own
importance-sampled perplexity with its interval.

Only playable questions are dealt (live_games.deal_pairwise): never a sample that is the true token itself, which
the study's website answered 50 % for its players (sec. 4.1.2, last paragraph); the estimator answers those
itself (macro pairwise_answer_terms), so the player's estimate is the paper's. A partial UTF-8 byte token, which
the study's files keep as U+FFFD only, is shown as live_games.BYTE_PIECE with a caption.

Reads `mart_pairwise_game_questions`, `mart_pairwise_game_samples` and `mart_pairwise_player_perplexity`; writes each answer to the live answer store only (`live_games`). Points and
perplexity are the macros of dbt_project/macros/live_games.sql, the same SQL as mart_live_pairwise_answers and
mart_pairwise_player_perplexity.
"""

from __future__ import annotations

import random

import altair as alt
import pandas as pd
import streamlit as st

import charts
import data
import labels
import live_games
from predictabase.core import live

STATE = "pairwise_game"
LENGTHS = (5, 10, 20, 40)
GAME_PARAM, MAX_GAME = "game", 10_000  # the address keeps the game's length (answers are in the store)
CONTEXT_CHARS = 1200

st.title("Play: which token came next?")
data.require_snapshot()
questions = data.table("mart_pairwise_game_questions")
players = data.table("mart_pairwise_player_perplexity")
if questions is None or questions.empty or players is None:
    data.missing("mart_pairwise_game_questions")
    st.stop()
_pool = players[(players["scope"] == "pooled") & (players["source"] == "study")].sort_values("question_scope")
_each = players[(players["scope"] == "player") & (players["source"] == "study")]
if len(_pool):
    st.markdown(
        f"Pooled, the study's players had a perplexity of {_pool['perplexity'].iloc[0]:.0f} per token on "
        "question set 1 of this game (GPT-2 small, its generator, is far lower): play it and get your own "
        "estimate."
    )
st.caption(
    "The LM game's second experiment (Shlegeris et al., *Language Models Are Better Than Humans at "
    "Next-token Prediction*, section 4.1): one of two tokens is the one that came next in the text, the other "
    "was sampled from GPT-2 small. Say how sure you are that token A is the original. When GPT-2 small's "
    "sample is the original token itself there is nothing to ask: the game never shows it, and your "
    "estimate counts it as the study did, as a tie, as often as GPT-2 small draws the original."
)

me = live_games.require_player()

game = st.session_state.setdefault(STATE, {"phase": "training", "current": None, "revealed": None})


def _length_from_url() -> int:
    """The game's length as the address holds it (`?game=10`, written when the game starts), else 10: a
    reload of a finished game shows its result, not a question past its end."""
    try:
        n = int(st.query_params.get(GAME_PARAM, "10"))
    except ValueError:
        return 10
    return n if 1 <= n <= MAX_GAME else 10


SAMPLE_COLUMNS = ["comparison_id", "k", "sample_token", "is_true_token", "generator_logprob_x_nats"]
QUESTION_COLUMNS = ["comparison_id", "question_set", "is_word_token", "generator_logprob_y_nats"]


def samples() -> pd.DataFrame:
    """The study's samples x_k, held once for every player (data.shared: read-only, never copied)."""
    return data.shared("mart_pairwise_game_samples", SAMPLE_COLUMNS)


@st.cache_resource(show_spinner=False, max_entries=2)
def _playable(snapshot_id: str) -> dict[int, list[int]]:
    """Each question's playable samples (live_games.playable_samples), once per snapshot for every session."""
    return live_games.playable_samples(samples())


def points_of(rows: pd.DataFrame) -> pd.DataFrame:
    """Sec. 4.1.2's points (and eq. 4's terms) of these answers: the macro pairwise_answer_terms, over only the
    rows and columns it reads. Kept in the session for the same answers (a "Next question" reuses it)."""
    key = tuple(rows["answer_id"])
    kept = st.session_state.get("pw_terms")
    if kept is not None and kept[0] == key:
        return kept[1]
    ids = rows["comparison_id"].unique()
    s = samples()
    terms = live_games.run_macro(
        "{{ pairwise_answer_terms('answers', 'questions', 'samples', 'true') }}",
        {
            "answers": rows,
            "questions": questions.loc[questions["comparison_id"].isin(ids), QUESTION_COLUMNS],
            "samples": s[s["comparison_id"].isin(ids)],
        },
    )
    st.session_state["pw_terms"] = (key, terms)
    return terms


def _new_game(length: int) -> None:
    """Start the real game (or another one) of `length` answers in all; the address keeps the length."""
    game.update(phase="game", length=length, current=None, revealed=None)
    st.query_params[GAME_PARAM] = str(length)


@st.fragment
def play() -> None:
    """The game: question, answer, feedback, score and result. A fragment: an answer or "Next
    question" reruns only this, not the page, so many players at once share the server's two cores better;
    every button acts in its callback, so one click is one rerun."""
    mine = live_games.answers(me["id"])["pairwise"]
    answered = set(mine["comparison_id"])
    by_id = questions.set_index("comparison_id")
    is_training = mine["comparison_id"].map(lambda c: bool(by_id.loc[c, "is_training"]) if c in by_id.index else False)
    played = mine[~is_training] if len(mine) else mine
    if game["phase"] == "training" and len(played):
        game["phase"] = "game"  # a returning player (reload, restart) goes on with their game

    def deal() -> dict | None:
        pool = questions[questions["is_training"] == (game["phase"] == "training")]
        return live_games.deal_pairwise(pool, _playable(data.require_snapshot().snapshot_id), answered, random.Random())

    terms = points_of(mine) if len(mine) else None  # every answer's points and eq. 4 term, once per run
    n_game = len(played)
    if game["phase"] == "training":
        st.info(
            f"**Training** ({len(mine)} of 10 training questions played): after each answer you see which token "
            "was the original and your points. Start the real game when you are ready."
        )
        length = st.selectbox(
            "Questions in your game",
            LENGTHS,
            index=1,
            key="pw_length",
            help="The study's players answered a set of 40 or 80; your perplexity is estimated from "
            "the questions you answer.",
        )
        st.button(
            "Start the real game",
            type="primary",
            key="pw_start",
            disabled=len(mine) == 0,
            help="Play at least one training question first.",
            on_click=_new_game,
            args=(length,),
        )
    else:
        if "length" not in game:  # a reload or a restarted app: the game's length is in the page's address
            game["length"] = _length_from_url()
        st.query_params[GAME_PARAM] = str(game["length"])
        st.markdown(f"**Game**: question {min(n_game + 1, game['length'])} of {game['length']}")
        st.progress(min(n_game / game["length"], 1.0))

    finished = game["phase"] == "game" and n_game >= game["length"]
    if not finished or game["revealed"] is not None:  # the last answer is revealed before the result
        if game["revealed"] is None and game["current"] is None:
            game["current"] = deal()
        cur = game["revealed"] or game["current"]
        if cur is None:
            st.warning(
                "You have answered every question of this kind."
                if game["phase"] == "game"
                else "No training question left: start the real game."
            )
        else:
            question_area(cur, by_id, terms)

    # ---- the running score and, at the end, the player's own perplexity (the marts' macros over their answers):
    # training answers are scored but count neither toward the game's points nor toward its perplexity
    if len(mine):
        in_training = game["phase"] == "training"
        counted = terms[(terms["question_set"] == "training") == in_training]
        st.metric(
            "Your points in training" if in_training else "Your points in the game",
            f"{counted['points'].sum():+.1f}",
            help="As in the study: 1000 × GPT-2 small's probability of the original token × (the natural log "
            "of the probability you gave it − the natural log of 0.5); 50 % scores 0. Honest answers "
            "score best." + (" Training answers do not count toward the game." if in_training else ""),
        )
    if finished and game["revealed"] is None:
        result(terms, n_game)


def question_area(cur: dict, by_id: pd.DataFrame, terms: pd.DataFrame | None) -> None:
    """The question: its context and the two tokens, the answer buttons, or the revealed original with the
    answer's points."""
    q = by_id.loc[cur["comparison_id"]]
    s = samples()
    x = s.loc[(s["comparison_id"] == cur["comparison_id"]) & (s["k"] == cur["k"]), "sample_token"].iloc[0]
    a, b = (q["true_token"], x) if cur["true_is_a"] else (x, q["true_token"])
    ctx = live_games.shown_text(q["context"])
    st.code(("…" if len(ctx) > CONTEXT_CHARS else "") + ctx[-CONTEXT_CHARS:] + "▌", language=None, wrap_lines=True)
    ca, cb = st.columns(2)
    ca.markdown(f"### Token A: `{live_games.shown_token(a)}`")
    cb.markdown(f"### Token B: `{live_games.shown_token(b)}`")
    if "\ufffd" in a + b:
        st.caption(live_games.BYTE_PIECE_NOTE)

    def answer(p_a: float) -> None:
        try:
            live.record_pairwise(
                live_games.store_file(),
                live_games.catalog(),
                player_id=me["id"],
                session_id=live_games.session_id(),
                comparison_id=cur["comparison_id"],
                k=cur["k"],
                true_token_shown_as="A" if cur["true_is_a"] else "B",
                p_a_percent=p_a,
            )
        except live.LiveError as exc:
            st.session_state["pw_error"] = live_games.plain(exc)
            return
        game.update(revealed=cur, current=None)

    if game["revealed"] is None:  # never the same token twice: deal_pairwise deals playable samples only
        st.markdown(
            "How sure are you that **token A** is the one that came next? "
            "(left: A is more likely; right: B is more likely)"
        )
        cols = st.columns(len(live.CHOICES_PERCENT))
        for col, p in zip(cols, live.CHOICES_PERCENT):
            col.button(f"{p:.0f}%", key=f"pw_{p:.0f}", on_click=answer, args=(p,), width="stretch")
        if st.session_state.get("pw_error"):
            st.error(st.session_state.pop("pw_error"))
    else:
        pts = terms[terms["comparison_id"] == cur["comparison_id"]].iloc[0]  # `answer` ran before this rerun
        near_zero = abs(pts["points"]) < 0.05 and pts["p_percent"] != 50
        (st.success if pts["points"] >= 0 else st.warning)(
            f"Token {'A' if cur['true_is_a'] else 'B'} (`{live_games.shown_token(q['true_token'])}`) was the original. "
            f"You said {pts['p_percent'] if cur['true_is_a'] else 100 - pts['p_percent']:.0f}% for A: "
            f"**{pts['points']:+.1f} points**."
            + (
                " Close to zero because GPT-2 small gave the original token a tiny probability, and points are "
                "weighted by it: this question counts little either way."
                if near_zero
                else ""
            )
        )
        st.button("Next question", type="primary", key="pw_next", on_click=game.update, kwargs={"revealed": None})


def result(terms: pd.DataFrame, n_game: int) -> None:
    """The finished game: the player's own perplexity (eqs. 4-5) among the study's players."""
    st.subheader("Your perplexity")
    est = live_games.run_macro(
        "{{ pairwise_group_perplexity('terms', 'player') }}", {"terms": terms[terms["question_set"] != "training"]}
    ).iloc[0]
    st.markdown(
        f"From your {int(est['n_questions'])} answers, your estimated perplexity is "
        f"**{est['perplexity']:.1f}** per token (±2σ: {est['perplexity_low']:.1f} to "
        f"{est['perplexity_high']:.1f}): lower means you put more probability on what really came next."
    )
    st.caption(
        "Estimated as the study estimates it (importance sampling with GPT-2 small as generator; the "
        "samples that were the original token itself count as ties, as in the study), "
        "but from one answer per question: with a single sample per question the estimate is biased low "
        "(the log of one sample, not of an average over players), so compare it with the study's players "
        f"measured the same way, one by one, not with the pooled estimate of all players "
        f"({_pool['perplexity'].iloc[0]:.0f} on set 1)."
        if len(_pool)
        else ""
    )
    dots = _each.assign(who="study players")[["perplexity", "who"]]
    you = pd.DataFrame({"perplexity": [est["perplexity"]], "who": ["you"]})
    chart = (
        alt.Chart(pd.concat([dots, you]))
        .mark_tick(thickness=3, size=30)
        .encode(
            alt.X(
                "perplexity:Q", scale=alt.Scale(type="log"), title="Perplexity per token (log scale; lower is better)"
            ),
            alt.Color(
                "who:N", scale=alt.Scale(domain=["study players", "you"], range=["#6baed6", "#d62728"]), title=None
            ),
        )
    )
    charts.show(
        chart.properties(height=60),
        "You among the study's players: pairwise-game perplexity",
        "Each study player's own perplexity estimate as a blue tick, yours in red.",
    )
    st.button("Play another game", key="pw_again", on_click=_new_game, args=(min(n_game + game["length"], MAX_GAME),))


play()
labels.related(
    [
        ("app_pages/human_perplexity.py", "The study's human perplexity"),
        ("app_pages/play_top1.py", "Play the top-1 game"),
    ]
)
