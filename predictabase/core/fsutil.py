"""Files the warehouse writes: one "write under a temporary name, then rename" helper, one sha256.

Temporary files and folders are named `.tmp-<pid>-...` (or `.<name>-<pid>-...`) in the folder of
their destination, so that a process killed half-way leaves something the next writer can
recognise as its own leftover (`predictabase.warehouse.lock.clean_leftovers`). The files that end up in the
warehouse get the user's umask (mkstemp/mkdtemp would leave them 0600/0700).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain `open(path, "w")` would give a new file (0666 less the umask)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    return 0o777 & ~_umask()


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def temp_prefix(name: str = "tmp") -> str:
    """`.<name>-<pid>-`: a temporary's name says which process made it."""
    return f".{name}-{os.getpid()}-"


@contextlib.contextmanager
def atomic_path(dest: Path, suffix: str = "", tag: str = "tmp") -> Iterator[Path]:
    """Yield a temporary path beside `dest` (`.<tag>-<pid>-...<suffix>`); when the block ends without an error,
    give the file the user's umask mode and rename it onto `dest` (atomic on one file system). On an error the
    temporary is removed and `dest` is untouched."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=temp_prefix(tag), suffix=suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_dir(dest: Path) -> Iterator[Path]:
    """Like `atomic_path` for a folder: fill the yielded temporary folder, then it replaces `dest`."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=temp_prefix(dest.name)))
    try:
        yield tmp
        os.chmod(tmp, dir_mode())
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def pid_of_temp(name: str) -> int | None:
    """The pid in a temporary's name made by `temp_prefix` (`.tmp-123-k2x9_a1b.parquet`,
    `.marts-123-new.duckdb.wal`, `.smollm2-135m-0123abcd-123-q8w7e6r5`): the piece before the last `-`."""
    pieces = name.split("-")
    if len(pieces) >= 3 and pieces[-2].isdigit():
        return int(pieces[-2])
    return None


def remove_dead_temporaries(folder: Path, name: str, suffix: str = "") -> list[Path]:
    """Remove the temporaries `.<name>-<pid>-*<suffix>` in `folder` (`temp_prefix(name)`) whose process is gone:
    what a command killed while writing an output outside the warehouse left beside it (no lock covers a folder
    of the user's, so the next command writing the same output cleans up). Returns what it removed."""
    removed = []
    for p in Path(folder).glob(glob.escape(f".{name}") + "-*" + glob.escape(suffix)):
        stem = p.name[: len(p.name) - len(suffix)] if suffix else p.name
        pid = pid_of_temp(stem)
        if pid is None or pid_alive(pid) or p.is_symlink():
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    return removed


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it, with every link followed on both sides (a path that
    does not exist yet is resolved through its nearest existing parent)."""
    return Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(folder)))


def refuse_inside_warehouse(option: str, path: Path, warehouse: Path, allowed: tuple[Path, ...] = ()) -> None:
    """An output option's path must lie outside the warehouse, whose files only its own commands write (through
    their lock, temporaries and checks): `sql -o warehouse/marts.duckdb` would replace the published snapshot.
    `allowed`: folders inside the warehouse that the option may name (its own default). OptionError else."""
    from predictabase.core.errors import OptionError

    if not inside(path, warehouse) or any(inside(path, a) for a in allowed):
        return
    raise OptionError(
        option,
        f"{path} is inside the warehouse {warehouse}; write the file outside it (the "
        "warehouse's files are written only by predictabase's own commands)",
    )
