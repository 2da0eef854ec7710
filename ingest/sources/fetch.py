"""Fetch catalog files from a local mirror or upstream, verify their sha256, record them in raw.source_files.

Checksums decide: a file already under `raw/` with the catalog's sha256 is not fetched again, and
`fetch_and_record` rewrites a `raw.source_files` row only for a file it copied or downloaded, or whose
row is missing or differs from the catalog; a fetch that changes nothing writes nothing (so the
row's `fetched_at` is when that content arrived, which dbt's source freshness reads).

`verified_path` is the one way ingest reads a fetched file; inside `recording_inputs()` it also notes
each file it hands out (catalog path -> sha256), which is how `raw.ingest_log` knows what a job read.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from predictabase.core.config import Paths, mirror_dir
from predictabase.core.db import transaction
from predictabase.core.errors import ChecksumError, IngestError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import atomic_path, sha256_of
from predictabase.core.progress import progress_bar
from predictabase.ingest.raw import connect, now_utc
from predictabase.ingest.sources.catalog import SourceFile, files_for

__all__ = [
    "FetchResult",
    "fetch",
    "fetch_and_record",
    "fetch_one",
    "record_input",
    "recording_inputs",
    "verified_path",
    "sha256_of",
]

_INPUTS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("ingest_inputs", default=None)


@contextlib.contextmanager
def recording_inputs() -> Iterator[dict[str, str]]:
    """Collect {catalog path: sha256} of every file `verified_path` hands out inside the block
    (context-local, so nested or concurrent recorders do not mix)."""
    seen: dict[str, str] = {}
    token = _INPUTS.set(seen)
    try:
        yield seen
    finally:
        _INPUTS.reset(token)


@dataclass
class FetchResult:
    file: SourceFile
    status: str  # "present" | "copied" | "downloaded"


def _download(url: str, dest: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, open(dest, "wb") as out:
            shutil.copyfileobj(resp, out)
    except (urllib.error.URLError, OSError) as exc:
        raise IngestError(url, f"download failed ({exc}); pass --mirror DIR or set PREDICTABASE_MIRROR") from exc


def fetch_one(sf: SourceFile, paths: Paths, mirror: Path | None) -> FetchResult:
    """Copy or download one file under a temporary name, verify it, then rename it into place.

    Errors name the file by its catalog path (`<dataset>/...`, as in the mirror and under raw/).
    """
    dest = paths.raw / sf.path
    if dest.exists() and sha256_of(dest) == sf.sha256:
        return FetchResult(sf, "present")
    with atomic_path(dest) as tmp:
        if mirror is not None:
            src = mirror / sf.path
            if not src.exists():
                raise IngestError(sf.path, f"missing from the mirror {mirror}")
            shutil.copyfile(src, tmp)
            origin, status = f"the mirror copy {src}", "copied"
        else:
            _download(sf.url, tmp)
            origin, status = sf.url, "downloaded"
        got = sha256_of(tmp)
        if got != sf.sha256:
            raise ChecksumError(
                sf.path, f"sha256 {got} of {origin} does not match the catalog's {sf.sha256}; refusing it"
            )
        failpoint("fetch.copied")
    return FetchResult(sf, status)


def fetch(
    paths: Paths, mirror: str | Path | None = None, dataset: str | None = None, show_progress: bool = True
) -> list[FetchResult]:
    """Fetch every catalog file (or one dataset's). Stops at the first bad file."""
    m = mirror_dir(mirror)
    files = files_for(dataset)
    if not files:
        raise IngestError(None, f"no catalog files for dataset {dataset!r}")
    results = []
    with progress_bar(show=show_progress) as progress:
        task = progress.add_task("fetch", total=len(files))
        for sf in files:
            results.append(fetch_one(sf, paths, m))
            progress.advance(task)
    return results


def _changed_after_fetch(sf: SourceFile, why: str = "") -> Callable[[str], Exception]:
    """The error for a fetched copy whose sha256 is no longer the catalog's (`why`: added to the reason)."""
    return lambda got: ChecksumError(
        sf.path,
        f"sha256 {got} of the fetched copy does not match the catalog's "
        f"{sf.sha256} (file changed after fetch{why}); run "
        "`predictabase fetch` again",
    )


def verified_path(sf: SourceFile, paths: Paths) -> Path:
    """The fetched local copy of a catalog file, re-verified; ingest reads only through this."""
    p = checked_copy(
        paths.raw / sf.path,
        sf.path,
        sf.sha256,
        "not fetched yet; run `predictabase fetch` first",
        _changed_after_fetch(sf),
    )
    record_input(sf.path, sf.sha256)
    return p


def verify_raw(paths: Paths) -> int:
    """Every catalog file under raw/ against its sha256, whether an ingest job reads it or not (a source file
    that no job reads, such as natural_stories/words.tsv, must not change unnoticed either). Missing files are
    the jobs' business (each names the one it needs). Raises ChecksumError naming the first changed file;
    returns how many files were checked."""
    from predictabase.ingest.sources.catalog import load_catalog

    n = 0
    for sf in load_catalog():
        p = paths.raw / sf.path
        if p.is_file():
            checked_copy(
                p,
                sf.path,
                sf.sha256,
                "",
                _changed_after_fetch(sf, "; every file under raw/ is verified at ingest, read or not"),
            )
            n += 1
    return n


def checked_copy(
    p: Path,
    name: str,
    sha256: str,
    missing: str,
    changed: Callable[[str], Exception],
    digest: Callable[[Path], str] = sha256_of,
) -> Path:
    """`p` (the copy of `name` in the warehouse), once its sha256 is the recorded one: else IngestError(name,
    `missing`) when it is not there, or the error `changed(the sha256 it has)`."""
    if not p.exists():
        raise IngestError(name, missing)
    got = digest(p)
    if got != sha256:
        raise changed(got)
    return p


def record_input(path: str, sha256: str) -> None:
    """Note an input of the job being prepared (inside `recording_inputs`; raw.ingest_log keeps it)."""
    seen = _INPUTS.get()
    if seen is not None:
        seen[path] = sha256


#: the columns of raw.source_files that say what a file is (origin and fetched_at say when and how it came)
IDENTITY = (
    "path",
    "dataset",
    "repo",
    "commit",
    "upstream_path",
    "url",
    "license",
    "citation",
    "sha256",
    "bytes",
    "status",
)


def _row(r: FetchResult, origin: str, fetched_at: datetime) -> dict:
    f = r.file
    return dict(
        path=f.path,
        dataset=f.dataset,
        repo=f.repo.repo,
        commit=f.repo.commit,
        upstream_path=f.upstream_path,
        url=f.url,
        license=f.repo.license,
        citation=f.repo.citation,
        sha256=f.sha256,
        bytes=f.bytes,
        status="verified",
        origin=origin,
        fetched_at=fetched_at,
    )


def _recorded_rows(paths: Paths) -> dict[str, tuple]:
    """path -> (identity columns..., origin, fetched_at) of raw.source_files ({} when there is none)."""
    if not paths.duckdb.exists():
        return {}
    import duckdb

    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = 'source_files'"
        ).fetchone()[0]
        if not exists:
            return {}
        cols = ", ".join(f'"{c}"' for c in (*IDENTITY, "origin", "fetched_at"))
        return {r[0]: r for r in con.execute(f"SELECT {cols} FROM raw.source_files").fetchall()}


def rows_to_write(paths: Paths, results: list[FetchResult], origin: str, when: datetime) -> list[dict]:
    """The raw.source_files rows a fetch must (re)write: every file it copied or downloaded (fetched now,
    from `origin`), and every present file whose row is missing (fetched when its file was written: its
    mtime, origin "cache") or no longer matches the catalog (its old origin and fetched_at kept)."""
    old = _recorded_rows(paths)
    out = []
    for r in results:
        if r.status != "present":
            out.append(_row(r, origin, when))
            continue
        prev = old.get(r.file.path)
        if prev is None:
            mtime = datetime.fromtimestamp(os.stat(paths.raw / r.file.path).st_mtime, UTC)
            out.append(_row(r, "cache", mtime))
            continue
        row = _row(r, prev[len(IDENTITY)], prev[len(IDENTITY) + 1])
        if tuple(row[c] for c in IDENTITY) != tuple(prev[: len(IDENTITY)]):
            out.append(row)
    return out


def fetch_and_record(
    paths: Paths, mirror: str | Path | None = None, dataset: str | None = None, show_progress: bool = True
) -> list[FetchResult]:
    """`fetch`, then record what changed in raw.source_files (`rows_to_write`; nothing when nothing did)."""
    results = fetch(paths, mirror, dataset, show_progress=show_progress)
    origin = "mirror" if mirror_dir(mirror) is not None else "download"
    rows = rows_to_write(paths, results, origin, now_utc())
    if not rows:
        return results
    frame = pl.DataFrame(rows, schema_overrides={"fetched_at": pl.Datetime("us", "UTC"), "bytes": pl.Int64})
    with connect(paths) as con, transaction(con):
        con.register("_incoming", frame.to_arrow())
        con.execute("CREATE TABLE IF NOT EXISTS raw.source_files AS SELECT * FROM _incoming LIMIT 0")
        con.execute("DELETE FROM raw.source_files WHERE path IN (SELECT path FROM _incoming)")
        con.execute("INSERT INTO raw.source_files BY NAME SELECT * FROM _incoming")
    return results
