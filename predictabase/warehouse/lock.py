"""One writer at a time per warehouse, and the leftovers of killed writers cleaned up.

Every command that writes (fetch, ingest, score, build, all) holds an advisory lock on
`<warehouse>/.writer.lock` (`fcntl.flock`, exclusive) for its whole run. The file also says
who holds it (command, pid, since), so a second writer can name the holder:

- it refuses at once with one line (the default), or waits up to `--wait SECONDS`, saying so;
- the kernel drops a flock when its process dies, so a killed writer never blocks the next one;
  the holder record it left behind is recognised (the lock was free but the record was not
  cleared) and the takeover is reported.

Right after taking the lock the writer removes what killed writers left behind: temporary
snapshots (`.marts-<pid>-*.duckdb`), half-fetched files (`raw/**/.tmp-*`), unfinished part
files (`parquet/**/.tmp-*`) and half-converted models (`models/.<name>-<pid>-*`, only of dead
processes, since the model cache may be shared between warehouses).
Readers (the dashboard, `serve`) never take the lock.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from predictabase.core.config import WRITER_LOCK, Paths, is_warehouse
from predictabase.core.errors import EXIT_BUSY, WarehouseError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import file_mode, pid_alive, pid_of_temp, size_of

LOCK_NAME = WRITER_LOCK


class WarehouseBusy(WarehouseError):
    """Another process holds the warehouse's writer lock (exit code 75: try again later)."""

    exit_code = EXIT_BUSY


_HELD: set[Path] = set()  # lock files this process holds (re-entrant: an inner writer just runs)


def _holder(path: Path) -> dict | None:
    try:
        text = path.read_text()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    try:
        info = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return None
    return info if isinstance(info, dict) else None


def describe(info: dict | None) -> str:
    if not info:
        return "another process"
    return f"`predictabase {info.get('command', '?')}` (pid {info.get('pid', '?')}, since {info.get('since', '?')})"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def writer_lock(paths: Paths, command: str, wait_s: float = 0.0, read_only_ok: bool = False) -> Iterator[None]:
    """Hold the warehouse's writer lock for the block (re-entrant within a process).

    The warehouse directory must exist. Raises WarehouseBusy (one line naming the holder) when
    another process holds it for longer than `wait_s` seconds. `read_only_ok` (a command that writes nothing, such
    as `refresh --dry-run`): where there is no warehouse yet, or one that cannot be written (a read-only mount or
    permissions), run the block without the lock, leaving no lock file: no writer can be changing either.
    """
    path = paths.warehouse / LOCK_NAME
    if path in _HELD:
        yield
        return
    if read_only_ok and not is_warehouse(paths.warehouse):
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, file_mode())
    except OSError as exc:
        if not (read_only_ok and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
            raise
        yield
        return
    try:
        deadline = time.monotonic() + max(wait_s, 0.0)
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            holder = _holder(path)
            if time.monotonic() >= deadline:
                hint = "; wait for it to finish or pass --wait SECONDS" if wait_s <= 0 else \
                    f"; gave up after waiting {wait_s:g} s"
                raise WarehouseBusy(paths.warehouse, f"in use by {describe(holder)}{hint}")
            if not announced:
                _say(f"waiting up to {wait_s:g} s for {describe(holder)} to release {paths.warehouse} ...")
                announced = True
            time.sleep(0.2)
        stale = _holder(path)
        if stale and stale.get("pid") != os.getpid():
            _say(f"note: took over the writer lock of {describe(stale)}, which ended without releasing it "
                 f"(killed?)")
        record = json.dumps({"command": command, "pid": os.getpid(),
                             "since": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)
        os.fsync(fd)
        _HELD.add(path)
        try:
            failpoint("lock.acquired")
            clean_leftovers(paths)
            yield
        finally:
            _HELD.discard(path)
            os.ftruncate(fd, 0)  # a clean release leaves an empty record
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def leftovers(paths: Paths) -> list[Path]:
    """Temporaries of killed writers. Call only while holding the writer lock: then no live writer
    of this warehouse owns any of them (model-cache temporaries are also checked by pid)."""
    w = paths.warehouse
    found: list[Path] = []
    found += [p for p in w.glob(".marts-*") if p.is_file()]
    found += [p for p in w.glob(".before-build-*") if p.is_file()]  # a half-written copy of the working database
    for base in (paths.raw, paths.parquet):
        if base.exists():
            found += [p for p in base.rglob(".tmp-*")]
            found += [p for p in base.rglob(".fetch-*")]  # older releases' name
    if paths.models.exists():
        private = paths.models.is_relative_to(w)  # the default cache, inside this warehouse
        for p in paths.models.glob(".*"):
            pid = pid_of_temp(p.name)
            if p.is_dir() and (not pid_alive(pid) if pid is not None else private):
                found.append(p)
    return sorted(set(found))


def clean_leftovers(paths: Paths) -> list[tuple[Path, int]]:
    """Remove `leftovers(paths)`; report them (one line) when there were any. Returns (path, bytes). First, put
    back the working database a killed build had started to change (`dbt.restore_interrupted_build`)."""
    from predictabase.warehouse.dbt import restore_interrupted_build
    if restore_interrupted_build(paths):
        _say("note: a build was killed before it finished: the working database is back as it was before it")
    removed = []
    for p in leftovers(paths):
        n = size_of(p)
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append((p, n))
    if removed:
        total = sum(n for _, n in removed) / 1e6
        names = ", ".join(str(p.relative_to(paths.warehouse)) if p.is_relative_to(paths.warehouse) else str(p)
                          for p, _ in removed[:3])
        more = f" and {len(removed) - 3} more" if len(removed) > 3 else ""
        _say(f"note: removed {len(removed)} leftover(s) of killed runs ({total:.1f} MB): {names}{more}")
    return removed
