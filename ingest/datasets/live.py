"""The live games' answers as `raw.live_players`, `raw.live_top1_answers`, `raw.live_pairwise_answers`.

The dashboard's game pages append answers to the live store (`predictabase/core/live.py`: SQLite in
`<warehouse>/live/`, validated there). This job copies the whole store into the warehouse, replacing the three
tables: the store only grows, so replacing is appending what is new, and re-running never duplicates. `build`
runs it first whenever the store changed since it last ran; `refresh` re-ingests it when the store's digest
(`INPUT_KEY`, recorded in raw.ingest_log) changed. The rows are checked again here (types, the 11 choices), and
in dbt (relationships to the game's vocabulary and questions). Nothing is computed. No session ids and no salt
leave the store.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from predictabase.core import live
from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.sources.fetch import record_input

INPUT_KEY = "warehouse:live/answers.sqlite"  # how raw.ingest_log records the store among the job's inputs
SOURCE_PATH = f"{live.STORE_DIR}/{live.STORE_FILE}"
TABLES = ("live_players", "live_top1_answers", "live_pairwise_answers")
_PROV = {"source": pl.String, "source_path": pl.String, "source_sha256": pl.String, "store_id": pl.String}
SCHEMAS = {
    "live_players": {
        "player_id": pl.String,
        "display_name": pl.String,
        "name_hash": pl.String,
        "name_consent": pl.Boolean,
        "created_at": pl.Datetime("us", "UTC"),
        **_PROV,
    },
    "live_top1_answers": {
        "answer_id": pl.Int64,
        "player_id": pl.String,
        "corpus": pl.String,
        "doc_id": pl.String,
        "position": pl.Int32,
        "guess": pl.String,
        "guess_token_id": pl.Int32,
        "input_mode": pl.String,
        "answered_at": pl.Datetime("us", "UTC"),
        **_PROV,
    },
    "live_pairwise_answers": {
        "answer_id": pl.Int64,
        "player_id": pl.String,
        "comparison_id": pl.Int32,
        "k": pl.Int32,
        "true_token_shown_as": pl.String,
        "p_percent": pl.Float64,
        "auto_answered": pl.Boolean,
        "answered_at": pl.Datetime("us", "UTC"),
        **_PROV,
    },
}


def _when(unix: float) -> datetime:
    return datetime.fromtimestamp(float(unix), tz=UTC)


def _check(table: str, rows: list[tuple]) -> None:
    where = f"{SOURCE_PATH} ({table})"
    for r in rows:
        if table == "live_pairwise_answers" and (float(r[5]) not in live.CHOICES_PERCENT or r[4] not in ("A", "B")):
            raise IngestError(where, f"answer {r[0]}: p_percent {r[5]!r} / shown as {r[4]!r} is not a game answer")
        if table == "live_top1_answers" and (
            not r[5] or len(r[5]) > live.MAX_GUESS_CHARS or r[7] not in live.TOP1_MODES
        ):
            raise IngestError(where, f"answer {r[0]}: guess {r[5]!r:.60} / input mode {r[7]!r} is not a game answer")


def load(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    path = live.store_path(paths.warehouse)
    stamp = live.digest(path)
    try:
        data = live.read_all(path)
    except Exception as exc:  # sqlite3.DatabaseError: not a database, truncated, locked past the timeout
        raise IngestError(path, f"cannot read the live answer store ({type(exc).__name__}: {exc})") from None
    record_input(INPUT_KEY, stamp)
    store_id = data["store_id"][0] if data["store_id"] else None
    prov = {"source": "live", "source_path": SOURCE_PATH, "source_sha256": stamp, "store_id": store_id}
    rows = {
        "live_players": [
            dict(player_id=p, display_name=n, name_hash=h, name_consent=bool(c), created_at=_when(t))
            for p, n, h, c, t in data["players"]
        ],
        "live_top1_answers": [
            dict(
                answer_id=a,
                player_id=p,
                corpus=c,
                doc_id=d,
                position=pos,
                guess=g,
                guess_token_id=tid,
                input_mode=m,
                answered_at=_when(t),
            )
            for a, p, c, d, pos, g, tid, m, t in data["top1_answers"]
        ],
        "live_pairwise_answers": [
            dict(
                answer_id=a,
                player_id=p,
                comparison_id=cid,
                k=k,
                true_token_shown_as=s,
                p_percent=float(pp),
                auto_answered=bool(au),
                answered_at=_when(t),
            )
            for a, p, cid, k, s, pp, au, t in data["pairwise_answers"]
        ],
    }
    _check("live_top1_answers", data["top1_answers"])
    _check("live_pairwise_answers", data["pairwise_answers"])
    return {t: pl.DataFrame([{**r, **prov} for r in rows[t]], schema=SCHEMAS[t]) for t in TABLES}
