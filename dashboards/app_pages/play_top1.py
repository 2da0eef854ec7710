"""Play the top-1 game (Shlegeris et al. 2024, sec. 3): guess the next token of a passage, see the true token and a
model's top candidates, and your running accuracy next to the model's and the study's players.

Reads the game marts (`mart_live_top1_passages`, `mart_live_top1_questions`, `mart_live_top1_model_candidates`,
`mart_game_vocabulary`, `mart_top1_player_accuracy`, `mart_top1_summary`); writes each guess to the live answer
store only (`live_games`). The running numbers are the macros of dbt_project/macros/live_games.sql, the same SQL as
mart_live_top1_players.
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
import url_state
from predictabase.core import live
from predictabase.ingest import corpus_table

STATE = "top1_game"
CONTEXT_CHARS = 1200  # the context shown: its last characters

st.title("Play: guess the next token")
data.require_snapshot()
passages = data.table("mart_live_top1_passages")
summary = data.table("mart_top1_summary")
if passages is None or passages.empty:
    data.missing("mart_live_top1_passages")
    st.stop()
_h = (
    None
    if summary is None
    else summary[(summary["predictor_kind"] == "humans") & (summary["subset"] == "all_possible")]["accuracy"]
)
if _h is not None and len(_h):
    st.markdown(
        f"The study's players named the next token {100 * _h.iloc[0]:.1f}% of the time: guess the next "
        "token of a passage yourself, and see how a language model did at the same point."
    )
st.caption(
    "The LM game's first experiment (Shlegeris et al., *Language Models Are Better Than Humans at "
    "Next-token Prediction*, section 3), played here. Your guesses are stored as live data, apart from the "
    "study's; they join the marts at the next build."
)

me = live_games.require_player()

corpora = labels.sorted_corpora(passages["corpus"].unique())
c1, c2 = st.columns(2)
corpus = url_state.selectbox(
    "Texts",
    corpora,
    key="t1_corpus",
    param="corpus",
    default=corpus_table.GAME,
    where=c1,
    format_func=labels.corpus_name,
    help="The LM game's documents are the study's own questions (every token). Other corpora "
    "ask only for the words that are a single GPT-2 token.",
)
cands_models = data.rows("mart_live_top1_model_candidates", ["model_key"], where={"corpus": corpus})
model_keys = sorted(set(cands_models["model_key"])) if cands_models is not None else []
model = url_state.selectbox(
    "Compare with the model",
    model_keys,
    key="t1_model",
    param="model",
    where=c2,
    format_func=labels.model_name,
    placeholder="no model has scored these texts yet",
    help="Its most probable next tokens, in its own tokenizer, where it has a token starting at the same point.",
)

game = st.session_state.setdefault(STATE, {})
in_corpus = passages[passages["corpus"] == corpus]


@st.cache_resource(show_spinner=False, max_entries=2)
def vocabulary_index(snapshot_id: str) -> tuple[pd.DataFrame, dict[int, str], dict[int, str]]:
    """The game's vocabulary prepared once per snapshot for every player (many play at once): the tokens that are not a
    piece of a character (U+FFFD in the game's files are never listed), with the columns the search ranks by;
    token id -> its display and -> the token. Read-only, shared: filter it into new frames."""
    vocab = data.shared("mart_game_vocabulary")
    by_display = dict(zip(vocab["token_id"], vocab["token_display"]))
    by_id = dict(zip(vocab["token_id"], vocab["token"]))
    pool = vocab[~vocab["token"].str.contains("\ufffd", regex=False)]
    folded = pool["token"].str.casefold()
    index = pool.assign(
        folded=folded,
        bare=folded.str.lstrip(" "),
        spaced=pool["token"].str.startswith(" "),
        stripped=pool["token"].str.lstrip(" "),
        length=pool["token"].str.len(),
    )
    return index.reset_index(drop=True), by_display, by_id


def search_vocabulary(index: pd.DataFrame, typed: str, after_space: bool, limit: int = 200) -> pd.DataFrame:
    """The game's tokens that contain `typed` (any case), best first: the whole token, then its start, then
    inside it; among equals the tokens that fit where the question is (mid-sentence a word's token starts with
    a space: ␣the before the; after a space or a line break, the other way round), then the case as typed, then
    the shortest. `index`: vocabulary_index's frame."""
    needle = typed.casefold()
    hits = index[index["folded"].str.contains(needle, regex=False)]
    core, bare, spaced = needle.lstrip(" "), hits["bare"], hits["spaced"]
    fits = spaced if not (after_space or typed.startswith(" ")) else (spaced == typed.startswith(" "))
    same_case = hits["stripped"] == typed.lstrip(" ")
    return (
        hits.assign(
            rank=(bare != core).astype(int) + (~bare.str.startswith(core)).astype(int),
            misfit=(~fits).astype(int),
            other_case=(~same_case).astype(int),
        )
        .sort_values(["rank", "misfit", "other_case", "length", "token_id"])
        .head(limit)
    )


def _guess(position: int, guess: str, mode: str) -> None:
    """Store the guess (the button's callback, so one click is one rerun) and reveal the true token."""
    try:
        live.record_top1(
            live_games.store_file(),
            live_games.catalog(),
            player_id=me["id"],
            session_id=live_games.session_id(),
            corpus=corpus,
            doc_id=str(game["doc_id"]),
            position=position,
            guess=guess,
            input_mode=mode,
        )
    except live.LiveError as exc:
        st.session_state["t1_error"] = live_games.plain(exc)
    else:
        game["revealed"] = {"position": position, "guess": guess}


@st.fragment
def play() -> None:
    """The passage, the answer, the reveal and the running score. A fragment: a guess, a search or
    "Next position" reruns only this, not the page, so many players at once share the server better."""
    mine = live_games.answers(me["id"])["top1"]
    done = set(zip(mine["corpus"], mine["doc_id"], mine["position"]))

    def deal() -> None:
        """A passage with questions this player has not answered (random among them)."""
        answered_docs = {d for c, d, _ in done if c == corpus}
        fresh = in_corpus[~in_corpus["doc_id"].isin(answered_docs)]
        pick = (fresh if len(fresh) else in_corpus).sample(1, random_state=random.randrange(2**31)).iloc[0]
        game.update(corpus=corpus, doc_id=pick["doc_id"], revealed=None)

    def passage_questions() -> tuple[pd.DataFrame, pd.DataFrame]:
        """The dealt passage's questions, and those this player has not answered yet."""
        qs = data.rows(
            "mart_live_top1_questions", where={"corpus": corpus, "doc_id": game["doc_id"]}, order_by=["position"]
        )
        # the study's impossible questions (a newline or a piece of a character, U+FFFD in the game's own files)
        # are not asked: nobody could type them, and the study's analysis leaves them out too (Shlegeris et al. 2024, sec. 3)
        qs = qs[~qs["is_impossible"].fillna(False).astype(bool)]
        return qs, qs[[(corpus, game["doc_id"], int(p)) not in done for p in qs["position"]]]

    if game.get("corpus") != corpus or st.button("New passage", key="t1_new"):
        deal()
    qs, open_qs = passage_questions()
    revealed = game.get("revealed")
    if revealed is None and not len(open_qs):  # this passage is done: deal the next one, in this same run
        deal()
        qs, open_qs = passage_questions()
        if not len(open_qs):
            st.success("You have answered every question of these texts.")
            return
        st.toast("You answered every question of that passage: here is another one.")
    q = qs[qs["position"] == revealed["position"]].iloc[0] if revealed is not None else open_qs.iloc[0]
    doc = in_corpus[in_corpus["doc_id"] == game["doc_id"]].iloc[0]

    context = doc["text"][: int(q["true_char_start"])]
    st.markdown(
        f"**{labels.corpus_name(corpus)}, passage {doc['doc_id']}**, question {int(q['position'])} "
        f"({len(open_qs)} of {len(qs)} left)"
    )
    shown = ("…" if len(context) > CONTEXT_CHARS else "") + context[-CONTEXT_CHARS:]
    if not shown.strip():  # the passage's first token, or only line breaks so far: say so, never an empty box
        st.caption(
            "The passage starts here: nothing before the next token"
            + (f" but {labels.visible(shown)} (↵ is a line break, ␣ a space)." if shown else ".")
        )
    st.code(shown + "▌", language=None, wrap_lines=True)

    if revealed is None:
        answer_area(q, context)
    else:
        reveal(q, revealed)
    if len(mine):  # the guess's callback ran before this rerun, so `mine` (read above) holds it
        running_score(mine)


def answer_area(q: pd.Series, context: str) -> None:
    """The answer: a token searched and picked, or a word typed; the Guess button."""
    index, by_display, token_of = vocabulary_index(data.require_snapshot().snapshot_id)
    how = st.radio("Answer by", ["picking a token", "typing a word"], horizontal=True, key="t1_how")
    qkey = f"{corpus}_{game['doc_id']}_{int(q['position'])}"  # a fresh, empty answer box for every question
    guess, mode = None, "list"
    if how == "picking a token":
        # search first, then pick among the matches: sending all 50,257 options to the browser on every rerun
        # made each answer slow with several players at once
        c_search, c_pick = st.columns([1, 2])
        query = c_search.text_input(
            f"Search the game's {len(by_display):,} GPT-2 tokens",
            key=f"t1_search_{qkey}",
            placeholder="e.g. the",
            help="␣ is a space and ↵ a newline, as in the list; a leading space is part of a "
            "word's token (␣the, not the)",
        )
        typed = (query or "").replace("␣", " ").replace("↵", "\n")
        hits = index.iloc[0:0]
        too_long = live_games.too_long_message("Your search", typed, live.MAX_GUESS_CHARS)
        if too_long:
            c_search.warning(too_long)
        elif typed:
            hits = search_vocabulary(index, typed, after_space=context[-1:] in ("", " ", "\n", "\t"))
        tid = c_pick.selectbox(
            "The next token (␣ is a space, ↵ a newline)",
            list(hits["token_id"]),
            index=None,
            format_func=lambda i: by_display[i],
            key=f"t1_pick_{qkey}",
            placeholder="search on the left, then pick" if hits.empty else f"{len(hits)} matching tokens: pick one",
            disabled=hits.empty,
        )
        guess = None if tid is None else token_of[tid]
    else:
        word = st.text_input(
            "Your word",
            key=f"t1_word_{qkey}",
            placeholder=f"one GPT-2 token, at most {live.MAX_GUESS_CHARS} characters",
        )
        too_long = live_games.too_long_message("Your word", word, live.MAX_GUESS_CHARS)
        if too_long:
            st.warning(too_long)
        elif word:
            spaced = context[-1:] not in ("", " ", "\n", "\t") and not word.startswith(" ")
            guess, mode = (" " + word if spaced else word), "typed"
            st.caption(
                f"Sent as the token {labels.visible(guess)}"
                + (" (a word after a space starts with one)" if spaced else "")
            )
    st.button(
        "Guess",
        type="primary",
        key="t1_guess",
        disabled=guess is None,
        on_click=_guess,
        args=(int(q["position"]), guess, mode),
    )
    if st.session_state.get("t1_error"):
        st.error(st.session_state.pop("t1_error"))


def reveal(q: pd.Series, revealed: dict) -> None:
    """The true token against the guess, and the model's candidates at this point."""
    right = revealed["guess"] == q["true_token"]
    (st.success if right else st.error)(
        f"The next token was **{labels.visible(q['true_token'])}**; you guessed "
        f"**{labels.visible(revealed['guess'])}**: {'right' if right else 'not it'}."
    )
    cands = data.rows(
        "mart_live_top1_model_candidates",
        where={"corpus": corpus, "doc_id": game["doc_id"], "position": int(q["position"])},
    )
    cands = cands[cands["model_key"] == model] if cands is not None and model else cands.iloc[0:0]
    if len(cands):
        row = cands.iloc[0]
        top = pd.DataFrame(
            {
                "Candidate (the model's own tokens)": [labels.visible(t) for t in row["candidate_tokens"]],
                "Probability (%)": [100 * p for p in row["candidate_probabilities"]],
            }
        )
        st.markdown(f"**{labels.model_name(model)}**'s most probable next tokens here:")
        st.dataframe(
            top,
            hide_index=True,
            width="content",
            column_config={"Probability (%)": st.column_config.NumberColumn(format="%.1f")},
        )
    elif model:
        st.info(f"{labels.model_name(model)} has no token starting exactly here, so no prediction at this point.")
    st.button("Next position", type="primary", key="t1_continue", on_click=game.update, kwargs={"revealed": None})


def running_score(mine: pd.DataFrame) -> None:
    """The running score: the macros of mart_live_top1_players over this player's answers."""
    keys = mine[["corpus", "doc_id"]].drop_duplicates()
    q_rows = pd.concat(
        [
            data.rows("mart_live_top1_questions", where={"corpus": c, "doc_id": d})
            for c, d in keys.itertuples(index=False)
        ],
        ignore_index=True,
    )
    c_rows = pd.concat(
        [
            data.rows("mart_live_top1_model_candidates", where={"corpus": c, "doc_id": d})
            for c, d in keys.itertuples(index=False)
        ],
        ignore_index=True,
    )
    study = live_games.run_macro(
        "{{ top1_study_players('players') }}", {"players": data.shared("mart_top1_player_accuracy")}
    )
    score = live_games.run_macro(
        "with outcomes as ({{ top1_answer_outcomes('answers', 'questions', 'candidates') }}), "
        "summary as ({{ top1_player_summary('outcomes', 'study') }}) select * from summary",
        {"answers": mine, "questions": q_rows, "candidates": c_rows, "study": study[["accuracy"]]},
    )
    first = score.iloc[0]
    m = score[score["model_key"] == model]
    st.subheader("Your score")
    k1, k2, k3 = st.columns(3)
    k1.metric(
        "Your top-1 accuracy",
        f"{100 * first['accuracy']:.0f}%",
        help=f"{int(first['n_correct'])} right of {int(first['n_answers'])} guesses",
    )
    if len(m):
        mm = m.iloc[0]
        k2.metric(
            f"{labels.model_name(model)} on the same positions",
            f"{100 * mm['model_accuracy']:.0f}%",
            delta=f"you: {100 * mm['accuracy_same_positions']:.0f}% there",
            delta_color="off",
            help=f"on the {int(mm['n_model_positions'])} of your positions where the model has a token "
            "starting at the same point",
        )
    below = first["share_of_study_players_below"]
    if pd.notna(below):
        k3.metric(
            "Study players you beat",
            f"{100 * below:.0f}%",
            help=f"of the study's {int(first['n_study_players'])} players with at least 50 answers (ties count half)",
        )
    hist = (
        alt.Chart(study)
        .mark_bar(color="#9ecae1")
        .encode(
            alt.X(
                "accuracy:Q",
                bin=alt.Bin(step=0.05),
                title="Top-1 accuracy (share of guesses right)",
                axis=alt.Axis(format="%"),
            ),
            alt.Y("count():Q", title="Study players"),
            alt.Color(
                "who:N", scale=alt.Scale(domain=["study players", "you"], range=["#9ecae1", "#d62728"]), title=None
            ),
        )
        .transform_calculate(who="'study players'")
    )
    you = (
        alt.Chart(pd.DataFrame({"accuracy": [first["accuracy"]], "who": ["you"]}))
        .mark_rule(strokeWidth=3)
        .encode(x="accuracy:Q", color=alt.Color("who:N"))
    )
    charts.show(
        (hist + you).properties(height=220),
        "You among the study's players: top-1 accuracy",
        "A histogram of the study's players' top-1 accuracies, with a red line at yours.",
    )


play()

labels.related(
    [("app_pages/top1.py", "The study's top-1 results"), ("app_pages/play_pairwise.py", "Play the pairwise game")]
)
