"""What the two live game pages share: the player, the answer store, and the metrics.

The pages read the published marts like every page, and write only to the live answer store
(`predictabase.core.live`: SQLite beside the warehouse; the build copies it in). They never open the DuckDB
warehouse for writing, so they keep working during a build.

A player's running score is computed by the SAME SQL as the marts: the macros of
`dbt_project/macros/live_games.sql` (plain Jinja, no dbt functions), rendered here with Jinja and run in an
in-memory DuckDB over the player's own answers and the mart rows they need. After the next build,
`mart_live_top1_players` and `mart_pairwise_player_perplexity` hold the same numbers for every player.
"""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path

import duckdb
import jinja2
import pandas as pd
import streamlit as st

import data
import labels
from predictabase.core import live
from predictabase.core.resources import dbt_project_dir

MACROS = dbt_project_dir() / "macros" / "live_games.sql"
PLAYER_KEY, SESSION_KEY = "live_player", "live_session"


def store_file() -> Path:
    """The live answer store beside the snapshot the dashboard reads (`<warehouse>/live/answers.sqlite`)."""
    return data.marts_path().parent / live.STORE_DIR / live.STORE_FILE


@st.cache_resource(show_spinner=False, max_entries=4)
def _catalog(path: str, snapshot_id: str) -> live.Catalog:
    return live.Catalog.from_snapshot(Path(path))


def catalog() -> live.Catalog:
    snap = data.require_snapshot()
    return _catalog(snap.path, snap.snapshot_id)


def session_id() -> str:
    """This browser session's id: the rate limit counts per session."""
    if SESSION_KEY not in st.session_state:
        st.session_state[SESSION_KEY] = secrets.token_hex(8)
    return st.session_state[SESSION_KEY]


def _start(name: str | None, consent: bool) -> None:
    try:
        pid = live.new_player(store_file(), name, consent)
    except live.LiveError as exc:
        st.session_state["live_player_error"] = plain(exc)
        return
    label = name.strip() if (name and name.strip() and consent) else ("you" if name else f"anonymous {pid}")
    st.session_state[PLAYER_KEY] = {"id": pid, "label": label}
    st.query_params["player"] = pid  # a reload, or a restarted app, goes on as the same player


def too_long_message(what: str, text: str | None, limit: int) -> str | None:
    """A plain sentence when `text` is over `limit` characters (spaces around it not counted), else None."""
    n = len((text or "").strip())
    if n <= limit:
        return None
    return f"{what} is {n} characters long; the game takes at most {limit}. Shorten it to go on."


def plain(exc: live.LiveError) -> str:
    """What the store refused, in words for a player (the store's own message names the field, for logs)."""
    if exc.field_name == "guess" and "not a token" in exc.problem:
        return (
            "That is not one of the game's tokens: GPT-2 writes it as several pieces. Type its first piece, "
            "or search the list and pick one."
        )
    if exc.field_name == "guess" and "characters" in exc.problem:
        return (
            f"Your guess is too long ({exc.problem.split(';')[0]}); the game's tokens are at most "
            f"{live.MAX_GUESS_CHARS} characters."
        )
    if exc.field_name == "name":
        return f"That name cannot be stored: {exc.problem}."
    if "already answered" in exc.problem:
        return "You have answered this question already: go on to the next one."
    if exc.field_name == "rate":
        return "Too many answers too fast from this browser: wait a few seconds and answer again."
    return f"The answer was not stored: {exc.problem}."


def require_player() -> dict:
    """The player box: who is playing ({"id", "label"}), or a form to start, and the page stops there."""
    current = st.session_state.get(PLAYER_KEY)
    if current is None:
        pid = st.query_params.get("player")
        if pid and live.player_exists(store_file(), pid):
            current = st.session_state[PLAYER_KEY] = {"id": pid, "label": f"player {pid}"}
    if current is not None:
        st.query_params["player"] = current["id"]
        c1, c2 = st.columns([4, 1])
        c1.markdown(
            f"Playing as **{current['label']}** (player code `{current['id']}`: keep this page's address to "
            "come back as the same player)."
        )
        if c2.button("Switch player", key="live_switch"):
            del st.session_state[PLAYER_KEY]
            st.session_state.pop("pairwise_game", None)  # the next player starts with training
            for param in ("player", "game"):
                st.query_params.pop(param, None)
            st.rerun()
        return current
    with st.container(border=True):
        st.markdown("**Who is playing?** Your answers join the warehouse as *live* data, kept apart from the study's.")
        # no max_chars: Streamlit drops a longer paste without a word and stops typing silently; the length is
        # checked here and said in words instead
        name = st.text_input(
            "Your name (optional)", key="live_name", placeholder=f"at most {live.MAX_NAME_CHARS} characters"
        )
        too_long = too_long_message("Your name", name, live.MAX_NAME_CHARS)
        if too_long:
            st.warning(too_long)
        consent = st.checkbox(
            "Store my name as I typed it (otherwise only a salted hash of it is kept)", key="live_consent"
        )
        c1, c2 = st.columns(2)
        if c1.button(
            "Start playing", type="primary", key="live_start", disabled=not (name or "").strip() or bool(too_long)
        ):
            _start(name, consent)
            st.rerun()
        if c2.button("Play anonymously", key="live_anon"):
            _start(None, False)
            st.rerun()
        if st.session_state.get("live_player_error"):
            st.error(st.session_state.pop("live_player_error"))
    st.stop()


@lru_cache(maxsize=1)
def _macros() -> str:
    return MACROS.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _engine() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB for the process; each run_macro works in a cursor of it (thread-safe; what one
    registers the others do not see)."""
    return duckdb.connect(":memory:")


@lru_cache(maxsize=32)
def _rendered(call: str) -> str:
    """`call` rendered with the macros (once per call string: compiling the template took ~23 ms a rerun)."""
    return jinja2.Environment(autoescape=False).from_string(_macros() + "\n" + call).render().strip()


def run_macro(call: str, frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Render `call` (e.g. "{{ pairwise_answer_terms('answers', 'questions', 'samples') }}") with the macros of
    dbt_project/macros/live_games.sql and run it over `frames` (registered under their names) in an in-memory
    DuckDB. Only relation names are rendered into the SQL; the players' values are rows of the frames."""
    sql = _rendered(call)
    con = _engine().cursor()  # a cursor of one in-memory DuckDB: its own names, ~0 ms (a new connection: ~23 ms)
    try:
        for name, df in frames.items():
            con.register(name, df)
        return con.execute(sql).fetchdf()
    finally:
        con.close()


def answers(player_id: str) -> dict[str, pd.DataFrame]:
    rows = live.player_answers(store_file(), player_id)
    return {
        "top1": pd.DataFrame(rows["top1"], columns=["answer_id", "player_id", "corpus", "doc_id", "position", "guess"]),
        "pairwise": pd.DataFrame(
            rows["pairwise"],
            columns=["answer_id", "player", "comparison_id", "k", "p_percent", "true_token_shown_as", "auto_answered"],
        ),
    }


# ---- the pairwise game: which questions and samples are dealt, and how their tokens are shown

#: how a partial UTF-8 byte token is shown. The study's comparison files kept each token as GPT-2 decoded it
#: alone, so a token holding only some of the bytes of a character (GPT-2 writes a curly quote, a dash, an
#: accented letter or an emoji as two to four byte tokens) is stored as U+FFFD, the replacement character,
#: and its bytes are lost: they cannot be shown (as '‹0xE2›'), nor joined to the byte tokens around it (the
#: file holds the context and one token, not what follows). A player understands "a piece of a character"
#: where "�" reads as a broken page, so that is what the game shows, with a caption saying what it means.
BYTE_PIECE = "‹part of a character›"
BYTE_PIECE_NOTE = (
    "‹part of a character› is a token holding only some of the bytes of one character: GPT-2 "
    "writes curly quotes (’ “ ”), dashes (—), accented letters and emoji as two to four such byte "
    "tokens. The study's files keep that a token is such a piece, not which bytes it holds."
)


def shown_token(token) -> str:
    """A pairwise candidate as the game shows it: whitespace made visible (' the' -> '␣the', labels.visible)
    and a partial UTF-8 byte token as BYTE_PIECE instead of the replacement character."""
    return labels.visible(token).replace("\ufffd", BYTE_PIECE)


def shown_text(text: str) -> str:
    """A context as the game shows it: a partial character (U+FFFD) as BYTE_PIECE."""
    return text.replace("\ufffd", BYTE_PIECE)


def playable_samples(samples: pd.DataFrame) -> dict[int, list[int]]:
    """comparison_id -> the k of its playable samples x_k: those that are not the true token y itself.

    A sample is identical to y when the study's website would have answered it itself: `is_true_token`, x_k = y
    as the comparison file writes them, which is also "the two candidates read the same" (two different partial
    byte tokens are both U+FFFD in the file, so both are shown as BYTE_PIECE; shown_token is otherwise
    one-to-one). Such a sample is never dealt: nothing is asked of the player, and the estimator answers it
    itself (macro pairwise_answer_terms, dbt_project/macros/live_games.sql). A question with no playable
    sample is not dealt at all. `samples`: comparison_id, k, is_true_token."""
    ok = samples.loc[~samples["is_true_token"].astype(bool), ["comparison_id", "k"]]
    return {int(c): sorted(int(k) for k in ks) for c, ks in ok.groupby("comparison_id")["k"]}


def deal_pairwise(pool: pd.DataFrame, playable: dict[int, list[int]], answered, rng) -> dict | None:
    """One pairwise question to play: a question of `pool` (rows of mart_pairwise_game_questions) not in
    `answered` and with a playable sample, uniformly; then one of its playable samples x_k uniformly (the
    generator's draw, given that it is not y: the estimator weighs it by the share of playable samples); and
    on which side the original is shown. None when no such question is left. `rng`: a random.Random."""
    ids = [int(c) for c in pool["comparison_id"] if int(c) not in answered and playable.get(int(c))]
    if not ids:
        return None
    cid = ids[rng.randrange(len(ids))]
    ks = playable[cid]
    return {"comparison_id": cid, "k": ks[rng.randrange(len(ks))], "true_is_a": rng.random() < 0.5}
