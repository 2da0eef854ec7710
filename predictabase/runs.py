"""The runs log: one JSON line when a command starts and one when it ends, in `<warehouse>/runs.jsonl`.

Every `predictabase` command (fetch, ingest, score, top1, cloze, build, refresh, all, sql, serve)
appends a `start` line, then an `end` line with the same `run_id`:

    run_id, parent_run_id, command, args, pid, event ("start" | "end"), started_at, ended_at,
    status ("running" on start; "ok" | "error" | "interrupted" on end), rows_in, rows_out, error

`parent_run_id` is the run of the `all` or `refresh` that ran this step, else null. Lines are
appended with O_APPEND in one write each, so concurrent commands (a reader's `sql` beside a
writer's `refresh`) never interleave within a line and need no lock; a process killed mid-write
leaves at most one torn last line, which `read_runs` skips. A run with a start line only is
"running" while its process lives and "killed" after.

Standard library and `predictabase.core.config` only: the dashboard imports this module to show the latest runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from predictabase.core.config import is_warehouse_or_being_made

COLUMNS = (
    "run_id",
    "parent_run_id",
    "command",
    "args",
    "pid",
    "started_at",
    "ended_at",
    "status",
    "rows_in",
    "rows_out",
    "error",
)
STATUSES = ("running", "ok", "error", "interrupted", "killed")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class Run:
    """A command being recorded; the command sets `rows_in` / `rows_out` (and `error`) as it learns them."""

    log: Path
    command: str
    args: dict
    parent_run_id: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started_at: str = field(default_factory=_now)
    rows_in: int | None = None
    rows_out: int | None = None
    error: str | None = None
    started_logged: bool = False

    def line(self, event: str, status: str, ended_at: str | None) -> dict:
        return {
            "run_id": self.run_id,
            "parent_run_id": self.parent_run_id,
            "command": self.command,
            "args": self.args,
            "pid": os.getpid(),
            "event": event,
            "started_at": self.started_at,
            "ended_at": ended_at,
            "status": status,
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "error": self.error,
        }


def append(log: Path, record: dict) -> bool:
    """Append one line; False (and nothing raised) when the log cannot be written (no warehouse yet, a folder that
    is not a warehouse nor one being made, a read-only file system): recording a run never fails the command, and a
    command refused on a folder that is no warehouse leaves no log there."""
    data = (json.dumps(record, default=str, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        if not is_warehouse_or_being_made(log.parent):
            return False
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o664)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


_STACK: list[Run] = []  # the runs of this process, innermost last (`all` -> fetch, ...)


def current() -> Run | None:
    """The innermost run being recorded in this process (None outside a command)."""
    return _STACK[-1] if _STACK else None


@contextlib.contextmanager
def recorded(log: Path, command: str, args: dict | None = None, parent_run_id: str | None = None) -> Iterator[Run]:
    """Record the block as one run: a start line now, an end line with its status when it ends.

    `parent_run_id` defaults to the enclosing run of this process. An exception ends the run with
    status "error" (KeyboardInterrupt: "interrupted") and is re-raised; `run.error` set by the
    command (its one-line message) wins over the exception's text. SystemExit with code 0 is "ok".
    """
    parent = parent_run_id if parent_run_id is not None else (current().run_id if current() else None)
    run = Run(log=log, command=command, args=dict(args or {}), parent_run_id=parent)
    run.started_logged = append(log, run.line("start", "running", None))
    _STACK.append(run)
    status = "ok"
    try:
        yield run
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except SystemExit as exc:
        if exc.code not in (0, None):
            status = "error"
            run.error = run.error or f"exit code {exc.code}"
        raise
    except BaseException as exc:
        status = "interrupted" if getattr(exc, "exit_code", None) == 130 else "error"  # the CLI's Ctrl-C exit
        run.error = run.error or " ".join(f"{type(exc).__name__}: {exc}".split())[:600]
        raise
    finally:
        _STACK.remove(run)
        if not run.started_logged:  # the warehouse directory appeared during the command (fetch, all)
            run.started_logged = append(log, run.line("start", "running", None))
        if run.started_logged:
            append(log, run.line("end", status, _now()))


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError):
        return True
    return True


def read_runs(path: Path, limit: int | None = None) -> list[dict]:
    """The runs in the log, newest first, one dict per run (the COLUMNS keys): its end line when it has
    one; a start line alone is "running" while its pid lives, else "killed". Torn or foreign lines are
    skipped. [] when there is no log."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return []
    runs: dict[str, dict] = {}
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("run_id"), str):
            continue
        if rec.get("event") == "end" or rec["run_id"] not in runs:
            runs[rec["run_id"]] = rec
    out = []
    for rec in runs.values():
        row = {k: rec.get(k) for k in COLUMNS}
        if rec.get("event") != "end" and not _alive(rec.get("pid")):
            row["status"] = "killed"
        out.append(row)
    out.sort(key=lambda r: str(r.get("started_at") or ""), reverse=True)
    return out[:limit] if limit is not None else out
