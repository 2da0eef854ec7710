"""The live games' answer store: where the dashboard's two games append players' answers.

Why a store beside the warehouse, not the warehouse itself: DuckDB admits one writing process per file, and
that process is the build (`predictabase build` / `refresh` hold the writer lock for minutes). The dashboard
must keep serving readers, and keep accepting answers, while a build runs. So the app never opens DuckDB for
writing. Each answer is one short SQLite transaction in `<warehouse>/live/answers.sqlite`:

- SQLite serialises writers itself (`BEGIN IMMEDIATE`, a 30 s busy timeout), across the threads of one
  Streamlit server and across processes, so two players answering at once both land, in some order;
- the write-ahead log and `synchronous=FULL` make a committed answer survive a killed or restarted app;
- `UNIQUE (player, question)` makes "one answer per player and question" a constraint, not a check that a
  race could slip past; the per-session rate limit is counted in the same transaction;
- every value a player typed reaches SQLite as a bound parameter only.

The build flushes the store into the warehouse: the ingest job `live` (ingest/datasets/live.py) copies it into
`raw.live_*` (whole tables, so re-running never duplicates), and dbt appends those rows to the human tables
(`stg_top1_guesses`, `stg_pairwise_answers`) with `source = 'live'`. The store only grows; nothing deletes.

Validation happens here, before the write, against the published snapshot's game marts (`Catalog`): the
guess is a token of the game's GPT-2 vocabulary, the question exists, the pairwise answer is one of the
game's 11 choices. A player's name is stored as typed only when they agree; otherwise only a salted hash
(the salt is `<warehouse>/live/salt`, created once, never copied into the warehouse).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import time
import unicodedata
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from predictabase.core.db import transaction

STORE_DIR = "live"
STORE_FILE = "answers.sqlite"
SALT_FILE = "salt"
MAX_NAME_CHARS = 40
MAX_GUESS_CHARS = 50
#: the per-session rate limit: at most RATE_MAX answers (both games together) in any RATE_WINDOW_S seconds
RATE_MAX = 30
RATE_WINDOW_S = 60.0
#: the pairwise game's 11 buttons: percent that token A is the original (Shlegeris et al. 2024, Figure 6)
CHOICES_PERCENT = (99.0, 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 20.0, 10.0, 1.0)
TOP1_MODES = ("list", "typed")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    player_id TEXT PRIMARY KEY,
    display_name TEXT,                 -- the name as typed, only when the player agreed
    name_hash TEXT,                    -- sha256(salt, name), 16 hex, when a name was given without consent
    name_consent INTEGER NOT NULL,
    created_unix REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS top1_answers (
    answer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    player_id TEXT NOT NULL REFERENCES players (player_id),
    session_id TEXT NOT NULL,
    corpus TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    guess TEXT NOT NULL,
    guess_token_id INTEGER NOT NULL,
    input_mode TEXT NOT NULL,
    answered_unix REAL NOT NULL,
    UNIQUE (player_id, corpus, doc_id, position)
);
CREATE TABLE IF NOT EXISTS pairwise_answers (
    answer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    player_id TEXT NOT NULL REFERENCES players (player_id),
    session_id TEXT NOT NULL,
    comparison_id INTEGER NOT NULL,
    k INTEGER NOT NULL,
    true_token_shown_as TEXT NOT NULL,  -- 'A' or 'B'
    p_percent REAL NOT NULL,            -- percent that the TRUE token is the original (the study's encoding)
    auto_answered INTEGER NOT NULL,     -- the sample was the true token itself: answered 50 % by the game
    answered_unix REAL NOT NULL,
    UNIQUE (player_id, comparison_id)
);
CREATE INDEX IF NOT EXISTS top1_by_session ON top1_answers (session_id, answered_unix);
CREATE INDEX IF NOT EXISTS pairwise_by_session ON pairwise_answers (session_id, answered_unix);
"""


class LiveError(ValueError):
    """An answer or a name the store refuses; `str()` is one line naming the field and the problem."""

    def __init__(self, field_name: str, problem: str):
        super().__init__(f"{field_name}: {problem}")
        self.field_name, self.problem = field_name, problem


@dataclass(frozen=True)
class Catalog:
    """What may be answered, from the published snapshot's game marts (`from_snapshot`)."""

    vocabulary: dict[str, int]  # token string -> its first GPT-2 id
    top1_questions: frozenset[tuple[str, str, int]] = frozenset()  # (corpus, doc_id, position)
    pairwise_true: dict[int, str] = field(default_factory=dict)  # comparison_id -> the true token y
    pairwise_samples: dict[int, tuple[str, ...]] = field(default_factory=dict)  # comparison_id -> x_0 .. x_399

    @classmethod
    def from_snapshot(cls, marts: Path) -> Catalog:
        import duckdb

        con = duckdb.connect(":memory:")
        try:
            con.execute(f"ATTACH '{str(marts).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
            have = {
                r[0]
                for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'snap'").fetchall()
            }
            vocab = {}
            if "mart_game_vocabulary" in have:
                for tid, tok in con.execute(
                    "SELECT token_id, token FROM snap.mart_game_vocabulary ORDER BY token_id"
                ).fetchall():
                    vocab.setdefault(tok, tid)
            questions = frozenset()
            if "mart_live_top1_questions" in have:
                questions = frozenset(
                    con.execute("SELECT corpus, doc_id, position FROM snap.mart_live_top1_questions").fetchall()
                )
            true, samples = {}, {}
            if "mart_pairwise_game_questions" in have and "mart_pairwise_game_samples" in have:
                true = dict(
                    con.execute("SELECT comparison_id, true_token FROM snap.mart_pairwise_game_questions").fetchall()
                )
                for cid, toks in con.execute(
                    "SELECT comparison_id, list(sample_token ORDER BY k) FROM "
                    "snap.mart_pairwise_game_samples GROUP BY ALL"
                ).fetchall():
                    samples[cid] = tuple(toks)
        finally:
            con.close()
        return cls(vocab, questions, true, samples)


def store_path(warehouse: Path) -> Path:
    return Path(warehouse) / STORE_DIR / STORE_FILE


_CREATED: set[str] = set()  # stores whose schema this process has made sure of


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection. SQLite reads a WAL-mode store through its `-shm` file, which it creates beside
    the store: in a folder this process cannot write (a read-only mount, another user's folder) that fails with
    "unable to open database file" though the store itself is readable. Then, when no answers wait in a `-wal`
    file (nobody can be writing: a writer needs the folder too), the store is read as immutable; otherwise the
    error says what to fix."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0, isolation_level=None)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return con
    except sqlite3.OperationalError as exc:
        con.close()
        if "unable to open" not in str(exc) or os.access(path.parent, os.W_OK) or not path.is_file():
            raise
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise sqlite3.OperationalError(
            f"the folder {path.parent} is not writable, and SQLite must create {path.name}-shm there to read the "
            f"answers still in {wal.name}; make the folder writable for this user"
        )
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True, timeout=30.0, isolation_level=None)


@contextlib.contextmanager
def connect(path: Path, read_only: bool = False) -> Iterator[sqlite3.Connection]:
    """A short-lived connection (one per call: cheap, and safe from any thread). Read-only connections never
    create the file."""
    path = Path(path)
    if read_only:
        con = _open_read_only(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists()
        con = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        con.execute("PRAGMA synchronous=FULL")  # per connection; WAL is kept in the file
        if fresh or str(path) not in _CREATED:  # the schema once per store and process, not on every answer
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(_DDL)
            con.execute("INSERT OR IGNORE INTO meta VALUES ('store_id', ?)", (uuid.uuid4().hex,))
            _CREATED.add(str(path))
    try:
        con.execute("PRAGMA foreign_keys=ON")
        yield con
    finally:
        con.close()


@contextlib.contextmanager
def _write(path: Path) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (BEGIN IMMEDIATE), committed or rolled back whole."""
    with connect(path) as con, transaction(con, "BEGIN IMMEDIATE"):
        yield con


def _salt(path: Path) -> bytes:
    f = Path(path).parent / SALT_FILE
    if not f.exists():
        f.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError), open(f, "x", encoding="ascii") as out:
            out.write(secrets.token_hex(32))
        f.chmod(0o600)
    return f.read_text(encoding="ascii").strip().encode()


def clean_name(name: str | None) -> str | None:
    """A player's name: stripped, at most MAX_NAME_CHARS, no control characters; None when empty."""
    if name is None:
        return None
    name = unicodedata.normalize("NFC", str(name)).strip()
    if not name:
        return None
    if len(name) > MAX_NAME_CHARS:
        raise LiveError("name", f"{len(name)} characters; at most {MAX_NAME_CHARS}")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise LiveError("name", "holds a control character")
    return name


def name_hash(path: Path, name: str) -> str:
    return hashlib.sha256(_salt(path) + b"\x00" + name.encode("utf-8")).hexdigest()[:16]


def new_player(path: Path, name: str | None = None, consent: bool = False) -> str:
    """Register a player and return their generated id. With a name and `consent`, the name is stored as
    typed; with a name and no consent, only its salted hash; without a name the player is anonymous."""
    name = clean_name(name)
    player_id = "p" + secrets.token_hex(6)
    shown = name if (name and consent) else None
    hashed = name_hash(path, name) if (name and not consent) else None
    with _write(path) as con:
        con.execute(
            "INSERT INTO players VALUES (?, ?, ?, ?, ?)",
            (player_id, shown, hashed, int(bool(name and consent)), time.time()),
        )
    return player_id


def player_exists(path: Path, player_id: str) -> bool:
    if not Path(path).exists() or not isinstance(player_id, str) or len(player_id) > 32:
        return False
    with connect(path, read_only=True) as con:
        return con.execute("SELECT count(*) FROM players WHERE player_id = ?", (player_id,)).fetchone()[0] == 1


def _check_rate(con: sqlite3.Connection, session_id: str, now: float) -> None:
    since = now - RATE_WINDOW_S
    n = con.execute(
        "SELECT (SELECT count(*) FROM top1_answers WHERE session_id = ? AND answered_unix > ?) + "
        "(SELECT count(*) FROM pairwise_answers WHERE session_id = ? AND answered_unix > ?)",
        (session_id, since, session_id, since),
    ).fetchone()[0]
    if n >= RATE_MAX:
        raise LiveError("rate", f"{RATE_MAX} answers in {RATE_WINDOW_S:.0f} s is this session's limit; wait a moment")


def _check_ids(player_id: str, session_id: str) -> None:
    for name, v in (("player", player_id), ("session", session_id)):
        if not isinstance(v, str) or not 1 <= len(v) <= 64 or not v.isalnum():
            raise LiveError(name, f"{str(v)[:40]!r} is not a valid id")


def _insert(path: Path, sql: str, values: tuple, session_id: str, duplicate: str) -> int:
    now = time.time()
    try:
        with _write(path) as con:
            _check_rate(con, session_id, now)
            cur = con.execute(sql, (*values, now))
            return int(cur.lastrowid)
    except sqlite3.IntegrityError as exc:
        if "UNIQUE" in str(exc):
            raise LiveError("answer", duplicate) from None
        if "FOREIGN KEY" in str(exc):
            raise LiveError("player", "unknown player id; start again") from None
        raise


def record_top1(
    path: Path,
    catalog: Catalog,
    *,
    player_id: str,
    session_id: str,
    corpus: str,
    doc_id: str,
    position: int,
    guess: str,
    input_mode: str = "list",
) -> int:
    """Append one top-1 guess; returns its answer id. LiveError (nothing written) when the guess is not a
    game token, the question does not exist, the player answered it already or the session is over its rate."""
    _check_ids(player_id, session_id)
    if input_mode not in TOP1_MODES:
        raise LiveError("input_mode", f"{input_mode!r}; one of {', '.join(TOP1_MODES)}")
    if not isinstance(guess, str) or not guess:
        raise LiveError("guess", "empty")
    if len(guess.removeprefix(" ")) > MAX_GUESS_CHARS:  # the word's space, which the game adds, is not counted
        raise LiveError("guess", f"{len(guess.removeprefix(' '))} characters; at most {MAX_GUESS_CHARS}")
    token_id = catalog.vocabulary.get(guess)
    if token_id is None:
        raise LiveError("guess", f"{guess[:MAX_GUESS_CHARS]!r} is not a token of the game's GPT-2 vocabulary")
    if (corpus, doc_id, position) not in catalog.top1_questions:
        raise LiveError("question", f"no question at {corpus} document {doc_id} position {position}")
    return _insert(
        path,
        "INSERT INTO top1_answers (player_id, session_id, corpus, doc_id, position, guess, "
        "guess_token_id, input_mode, answered_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (player_id, session_id, corpus, doc_id, int(position), guess, token_id, input_mode),
        session_id,
        "this player already answered this position",
    )


def record_pairwise(
    path: Path,
    catalog: Catalog,
    *,
    player_id: str,
    session_id: str,
    comparison_id: int,
    k: int,
    true_token_shown_as: str,
    p_a_percent: float,
) -> int:
    """Append one pairwise answer: `p_a_percent` is the button pressed (percent that token A is the original).
    Stored as the study stores it: p_percent, the percent that the TRUE token is the original. When the sample
    x_k is the true token itself the game answers 50 % (Shlegeris et al. 2024, sec. 4.1.2) and only 50 is accepted."""
    _check_ids(player_id, session_id)
    if comparison_id not in catalog.pairwise_true:
        raise LiveError("question", f"no comparison {comparison_id!r}")
    samples = catalog.pairwise_samples.get(comparison_id, ())
    if not isinstance(k, int) or not 0 <= k < len(samples):
        raise LiveError("question", f"comparison {comparison_id} has no sample {k!r}")
    if true_token_shown_as not in ("A", "B"):
        raise LiveError("true_token_shown_as", f"{true_token_shown_as!r}; 'A' or 'B'")
    if p_a_percent not in CHOICES_PERCENT:
        raise LiveError("answer", f"{p_a_percent!r} is not one of the game's choices")
    auto = samples[k] == catalog.pairwise_true[comparison_id]
    if auto and p_a_percent != 50.0:
        raise LiveError("answer", "both candidates are the same token: the game answers 50 %")
    p_true = float(p_a_percent) if true_token_shown_as == "A" else 100.0 - float(p_a_percent)
    return _insert(
        path,
        "INSERT INTO pairwise_answers (player_id, session_id, comparison_id, k, true_token_shown_as, "
        "p_percent, auto_answered, answered_unix) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (player_id, session_id, int(comparison_id), int(k), true_token_shown_as, p_true, int(auto)),
        session_id,
        "this player already answered this comparison",
    )


def read_all(path: Path) -> dict[str, list[tuple]]:
    """Every row of the store's three tables (what the `live` ingest job copies), with the store's id."""
    if not Path(path).exists():
        return {"store_id": [], "players": [], "top1_answers": [], "pairwise_answers": []}
    with connect(path, read_only=True) as con:
        con.execute("BEGIN")  # one consistent read of all three tables
        out = {
            "store_id": [r[0] for r in con.execute("SELECT value FROM meta WHERE key = 'store_id'")],
            "players": con.execute("SELECT * FROM players ORDER BY player_id").fetchall(),
            "top1_answers": con.execute(
                "SELECT answer_id, player_id, corpus, doc_id, position, guess, "
                "guess_token_id, input_mode, answered_unix FROM top1_answers "
                "ORDER BY answer_id"
            ).fetchall(),
            "pairwise_answers": con.execute(
                "SELECT answer_id, player_id, comparison_id, k, true_token_shown_as, "
                "p_percent, auto_answered, answered_unix FROM pairwise_answers "
                "ORDER BY answer_id"
            ).fetchall(),
        }
        con.execute("COMMIT")
    return out


def digest(path: Path) -> str:
    """What the store holds, cheaply (store id, rows and last id per table): changes with every answer or
    player added. `refresh` re-ingests the `live` job when it differs from the one it recorded, `build` too.
    Never raises: a store that cannot be read is "unreadable"."""
    if not Path(path).exists():
        return "empty"
    try:
        with connect(path, read_only=True) as con:
            parts = [r[0] for r in con.execute("SELECT value FROM meta WHERE key = 'store_id'")]
            for table, key in (
                ("players", "created_unix"),
                ("top1_answers", "answer_id"),
                ("pairwise_answers", "answer_id"),
            ):
                parts += list(con.execute(f"SELECT count(*), max({key}) FROM {table}").fetchone())
    except sqlite3.Error:  # a broken store differs from any recorded digest: the `live` job then reads it and says why
        return "unreadable"
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def player_answers(path: Path, player_id: str) -> dict[str, list[dict]]:
    """One player's answers in both games (for the game pages' running scores), oldest first."""
    out: dict[str, list[dict]] = {"top1": [], "pairwise": []}
    if not Path(path).exists():
        return out
    with connect(path, read_only=True) as con:
        con.row_factory = sqlite3.Row
        out["top1"] = [
            dict(r)
            for r in con.execute(
                "SELECT answer_id, player_id, corpus, doc_id, position, guess FROM top1_answers WHERE player_id = ? "
                "ORDER BY answer_id",
                (player_id,),
            )
        ]
        out["pairwise"] = [
            dict(r)
            for r in con.execute(
                "SELECT answer_id, player_id AS player, comparison_id, k, p_percent, true_token_shown_as, auto_answered "
                "FROM pairwise_answers WHERE player_id = ? ORDER BY answer_id",
                (player_id,),
            )
        ]
    return out
