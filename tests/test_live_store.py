"""The live games' answer store (predictabase/core/live.py): validation, privacy, limits, and answers from
many parallel clients on this machine, none lost, none duplicated, also when a writer is killed.

The catalog is real: the game's GPT-2 vocabulary (the mirror's tokens.json), three of the study's comparison
files, and top-1 questions at real lm_game positions.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from predictabase.core import live
from predictabase.ingest.datasets import pairwise, top1_game

COMPARISONS = (10000, 10001, 20000)


@pytest.fixture(scope="module")
def catalog(mirror) -> live.Catalog:
    tokens = top1_game.parse_vocabulary((mirror / "lm_game/server/tokens.json").read_bytes(), "tokens.json")
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    true, samples = {}, {}
    for cid in COMPARISONS:
        d = pairwise.parse_comparison(mirror / f"lm_game/server/multi_comparisons/doc{cid}.json", cid)
        true[cid], samples[cid] = d["correct_token_str"], tuple(d["generated_token_strs"])
    questions = frozenset(("lm_game", "2541", p) for p in range(2, 402))
    return live.Catalog(vocab, questions, true, samples)


def _k(catalog, cid: int, auto: bool) -> int:
    """A sample index of comparison `cid` whose token is (auto) or is not the true token."""
    y = catalog.pairwise_true[cid]
    return next(k for k, x in enumerate(catalog.pairwise_samples[cid]) if (x == y) == auto)


def _count(store: Path, table: str) -> int:
    with sqlite3.connect(store) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_guesses_are_validated_and_one_per_player_and_question(tmp_path, catalog):
    store = live.store_path(tmp_path)
    me = live.new_player(store)
    kw = dict(player_id=me, session_id="s1", corpus="lm_game", doc_id="2541")
    first = live.record_top1(store, catalog, position=2, guess=" the", **kw)
    assert first == 1
    with pytest.raises(live.LiveError, match="^answer: this player already answered"):
        live.record_top1(store, catalog, position=2, guess=" a", **kw)
    with pytest.raises(live.LiveError, match="^guess: .* is not a token of the game's GPT-2 vocabulary"):
        live.record_top1(store, catalog, position=3, guess=" thexq", **kw)
    with pytest.raises(live.LiveError, match="^question: no question at lm_game document 2541 position 999"):
        live.record_top1(store, catalog, position=999, guess=" the", **kw)
    with pytest.raises(live.LiveError, match="^guess: 51 characters; at most 50"):
        live.record_top1(store, catalog, position=3, guess="x" * 51, **kw)
    with pytest.raises(live.LiveError, match="^player: unknown player id"):
        live.record_top1(store, catalog, position=3, guess=" the", **{**kw, "player_id": "pnobody"})
    # a newline token and a token of U+FFFD are real vocabulary entries
    assert live.record_top1(store, catalog, position=3, guess="\n", **kw) == 2
    assert _count(store, "top1_answers") == 2


def test_typed_text_reaches_sqlite_only_as_parameters(tmp_path, catalog):
    store = live.store_path(tmp_path)
    evil = "Robert'); DROP TABLE top1_answers;--"[:40]
    me = live.new_player(store, evil, consent=True)
    with pytest.raises(live.LiveError, match="is not a token"):
        live.record_top1(
            store,
            catalog,
            player_id=me,
            session_id="s1",
            corpus="lm_game",
            doc_id="2541",
            position=2,
            guess="'); DROP TABLE players;--",
        )
    with pytest.raises(live.LiveError, match="^question"):
        live.record_top1(
            store,
            catalog,
            player_id=me,
            session_id="s1",
            corpus="lm_game' OR '1'='1",
            doc_id="2541",
            position=2,
            guess=" the",
        )
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT display_name FROM players").fetchall() == [(evil,)]
        assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} >= {
            "players",
            "top1_answers",
            "pairwise_answers",
        }


def test_a_name_is_kept_as_typed_only_with_consent(tmp_path):
    store = live.store_path(tmp_path)
    shown = live.new_player(store, "  Ada Lovelace ", consent=True)
    hidden = live.new_player(store, "Grace Hopper", consent=False)
    anon = live.new_player(store)
    with sqlite3.connect(store) as con:
        rows = {
            r[0]: r[1:] for r in con.execute("SELECT player_id, display_name, name_hash, name_consent FROM players")
        }
    assert rows[shown] == ("Ada Lovelace", None, 1)
    assert rows[hidden][0] is None and rows[hidden][2] == 0
    assert rows[hidden][1] == live.name_hash(store, "Grace Hopper") and len(rows[hidden][1]) == 16
    assert rows[anon] == (None, None, 0)
    # the salt is per store: the same name hashes differently elsewhere, and the name is nowhere in the files
    other = live.store_path(tmp_path / "other")
    assert live.name_hash(other, "Grace Hopper") != rows[hidden][1]
    for f in store.parent.iterdir():
        assert b"Grace Hopper" not in f.read_bytes(), f.name
    assert oct((store.parent / live.SALT_FILE).stat().st_mode & 0o777) == "0o600"
    with pytest.raises(live.LiveError, match=f"^name: 41 characters; at most {live.MAX_NAME_CHARS}"):
        live.new_player(store, "x" * 41, consent=True)
    with pytest.raises(live.LiveError, match="^name: holds a control character"):
        live.new_player(store, "Ada\x00", consent=True)


def test_pairwise_answers_are_stored_as_the_study_stores_them(tmp_path, catalog):
    store = live.store_path(tmp_path)
    me = live.new_player(store)
    kw = dict(player_id=me, session_id="s1")
    k = _k(catalog, 10000, auto=False)
    # the true token shown as B and 70 % for A: the study's p_percent (true token is real) is 30
    live.record_pairwise(store, catalog, comparison_id=10000, k=k, true_token_shown_as="B", p_a_percent=70.0, **kw)
    ka = _k(catalog, 10001, auto=True)
    with pytest.raises(live.LiveError, match="the game answers 50 %"):
        live.record_pairwise(store, catalog, comparison_id=10001, k=ka, true_token_shown_as="A", p_a_percent=90.0, **kw)
    live.record_pairwise(store, catalog, comparison_id=10001, k=ka, true_token_shown_as="A", p_a_percent=50.0, **kw)
    with pytest.raises(live.LiveError, match="is not one of the game's choices"):
        live.record_pairwise(store, catalog, comparison_id=20000, k=0, true_token_shown_as="A", p_a_percent=75.0, **kw)
    with pytest.raises(live.LiveError, match="no comparison 99999"):
        live.record_pairwise(store, catalog, comparison_id=99999, k=0, true_token_shown_as="A", p_a_percent=50.0, **kw)
    with pytest.raises(live.LiveError, match="has no sample 400"):
        live.record_pairwise(
            store, catalog, comparison_id=20000, k=400, true_token_shown_as="A", p_a_percent=50.0, **kw
        )
    with pytest.raises(live.LiveError, match="already answered this comparison"):
        live.record_pairwise(store, catalog, comparison_id=10000, k=k, true_token_shown_as="A", p_a_percent=99.0, **kw)
    with sqlite3.connect(store) as con:
        assert con.execute(
            "SELECT comparison_id, k, true_token_shown_as, p_percent, auto_answered FROM "
            "pairwise_answers ORDER BY answer_id"
        ).fetchall() == [(10000, k, "B", 30.0, 0), (10001, ka, "A", 50.0, 1)]


def test_rate_limit_per_session(tmp_path, catalog):
    store = live.store_path(tmp_path)
    me = live.new_player(store)
    for p in range(2, 2 + live.RATE_MAX):
        live.record_top1(
            store, catalog, player_id=me, session_id="busy", corpus="lm_game", doc_id="2541", position=p, guess=" the"
        )
    with pytest.raises(live.LiveError, match=f"^rate: {live.RATE_MAX} answers in 60 s"):
        live.record_top1(
            store, catalog, player_id=me, session_id="busy", corpus="lm_game", doc_id="2541", position=200, guess=" the"
        )
    # another session is not held back; the refused answer left nothing behind
    live.record_top1(
        store, catalog, player_id=me, session_id="other", corpus="lm_game", doc_id="2541", position=200, guess=" the"
    )
    assert _count(store, "top1_answers") == live.RATE_MAX + 1


# --------------------------------------------------------------------------- many clients at once

CLIENTS = 16  # parallel client processes (bounded: twice this machine's cores is plenty of contention)
ANSWERS = 24  # distinct questions each client answers (under the session rate limit)
REPEATS = 6  # of those, each client sends this many twice (a double click, a retry)


def _client(store: str, catalog: live.Catalog, player: str, n: int, offset: int, out) -> None:
    """One client: its own session, ANSWERS distinct questions, REPEATS of them sent again; reports what the
    store answered for each attempt."""
    accepted, refused, other = [], 0, []
    session = f"s{n}"
    positions = [2 + offset + i for i in range(ANSWERS)]
    for _i, pos in enumerate(positions + positions[:REPEATS]):
        try:
            aid = live.record_top1(
                Path(store),
                catalog,
                player_id=player,
                session_id=session,
                corpus="lm_game",
                doc_id="2541",
                position=pos,
                guess=" the",
            )
            accepted.append((pos, aid))
        except live.LiveError as exc:
            if exc.field_name == "answer":
                refused += 1
            else:
                other.append(str(exc))
    out.put(json.dumps({"n": n, "accepted": accepted, "refused": refused, "other": other}))


def test_parallel_clients_lose_and_duplicate_nothing(tmp_path, catalog):
    """16 processes answer at once, two of them as the SAME player on the same questions (a player in two
    tabs): every distinct (player, question) lands exactly once, every repeat is refused, and the counts add
    up: attempts = stored + refused."""
    store = live.store_path(tmp_path)
    players = [live.new_player(store) for _ in range(CLIENTS - 1)]
    players.append(players[0])  # client 15 plays as client 0, on client 0's questions
    offsets = [100 * (n % (CLIENTS - 1)) for n in range(CLIENTS)]
    offsets = [o % 398 for o in offsets]
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_client, args=(str(store), catalog, players[n], n, offsets[n], out)) for n in range(CLIENTS)
    ]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results = [json.loads(out.get(timeout=120)) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    elapsed = time.perf_counter() - t0
    attempts = CLIENTS * (ANSWERS + REPEATS)
    accepted = sum(len(r["accepted"]) for r in results)
    refused = sum(r["refused"] for r in results)
    assert not any(r["other"] for r in results), [r["other"] for r in results]
    distinct = {(players[r["n"]], pos) for r in results for pos, _ in r["accepted"]}
    with sqlite3.connect(store) as con:
        stored = con.execute("SELECT player_id, position, answer_id FROM top1_answers").fetchall()
    expected_distinct = len({(players[n], 2 + offsets[n] + i) for n in range(CLIENTS) for i in range(ANSWERS)})
    print(
        f"\n{CLIENTS} clients, {attempts} attempts in {elapsed:.2f} s: {len(stored)} stored, {refused} refused as "
        f"repeats, {expected_distinct} distinct (player, question)"
    )
    assert expected_distinct == (CLIENTS - 1) * ANSWERS  # the shared player's questions coincide
    assert len(stored) == accepted == expected_distinct == len(distinct)
    assert refused == attempts - expected_distinct
    assert len({(p, pos) for p, pos, _ in stored}) == len(stored)
    # every id a client was told is a stored row, with that client's player and position
    by_id = {aid: (p, pos) for p, pos, aid in stored}
    assert all(by_id[aid] == (players[r["n"]], pos) for r in results for pos, aid in r["accepted"])


def _writer_until_killed(store: str, catalog: live.Catalog, player: str, log: str) -> None:
    for pos in range(2, 400):
        aid = live.record_top1(
            Path(store),
            catalog,
            player_id=player,
            session_id=f"w{pos // 20}",
            corpus="lm_game",
            doc_id="2541",
            position=pos,
            guess=" the",
        )
        with open(log, "a") as f:  # written only after the commit returned
            f.write(f"{aid}\n")
            f.flush()
            os.fsync(f.fileno())


def test_a_killed_writer_loses_no_committed_answer(tmp_path, catalog):
    """SIGKILL a client mid-stream (an app that dies): every answer it was told was stored is in the store, and
    the store opens and takes new answers afterwards."""
    store = live.store_path(tmp_path)
    me = live.new_player(store)
    log = tmp_path / "acks.txt"
    ctx = mp.get_context("fork")
    proc = ctx.Process(target=_writer_until_killed, args=(str(store), catalog, me, str(log)))
    proc.start()
    deadline = time.time() + 60
    while (not log.exists() or len(log.read_text().split()) < 25) and time.time() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    acked = {int(x) for x in log.read_text().split()}
    with sqlite3.connect(store) as con:
        stored = {r[0] for r in con.execute("SELECT answer_id FROM top1_answers")}
    assert len(acked) >= 25 and acked <= stored and len(stored) - len(acked) <= 1
    live.record_top1(
        store, catalog, player_id=me, session_id="after", corpus="lm_game", doc_id="2541", position=401, guess=" the"
    )
    assert _count(store, "top1_answers") == len(stored) + 1
