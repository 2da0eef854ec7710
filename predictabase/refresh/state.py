"""What refresh keeps between runs and reports: the step reports, and the JSON files under
`<warehouse>/refresh/` (the scoring ledger and the build state), written atomically."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from predictabase.core.fsutil import atomic_path

STATE_DIR = "refresh"  # <warehouse>/refresh/: the ledger and the build state
LEDGER = "scored.json"
STATE = "state.json"


@dataclass
class StepReport:
    name: str  # fetch | ingest | score | build
    action: str  # what it did, or "nothing to do" / "would ..." (dry run)
    detail: str  # why: the files, jobs, tasks, dbt selection
    seconds: float


@dataclass
class RefreshReport:
    steps: list[StepReport] = field(default_factory=list)
    changed: bool = False  # whether anything was written
    dbt_select: str | None = None  # the dbt selection run ("" = everything); None: dbt did not run
    published: bool = False
    # what it materialized (the Dagster refresh job reports these as asset materializations)
    fetched: list[str] = field(default_factory=list)  # catalog files copied or downloaded
    ingested: list[str] = field(default_factory=list)  # ingest jobs run
    scored: list[tuple] = field(default_factory=list)  # (step, model, corpus) scoring tasks run
    dbt_models: list[str] = field(default_factory=list)  # dbt models and seeds built


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    """Write atomically (fsutil.atomic_path: a temporary beside it, then os.replace)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")


def connect_ro(path: Path):
    import duckdb

    return duckdb.connect(str(path), read_only=True)
