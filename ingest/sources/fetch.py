"""Fetch catalog files from a local mirror or upstream, verify their sha256, record them in raw.source_files."""
from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from rich.progress import Progress

from ingest.sources.catalog import SourceFile, files_for
from ingest.config import Paths, mirror_dir
from ingest.errors import ChecksumError, IngestError
from ingest.failpoints import failpoint
from ingest.fsutil import atomic_path, sha256_of
from ingest.warehouse.raw import connect, now_utc, transaction

__all__ = ["FetchResult", "fetch", "fetch_and_record", "fetch_one", "verified_path", "sha256_of"]


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
            raise ChecksumError(sf.path, f"sha256 {got} of {origin} does not match the catalog's {sf.sha256}; "
                                         "refusing it")
        failpoint("fetch.copied")
    return FetchResult(sf, status)


def fetch(paths: Paths, mirror: str | Path | None = None, dataset: str | None = None,
          show_progress: bool = True) -> list[FetchResult]:
    """Fetch every catalog file (or one dataset's). Stops at the first bad file."""
    m = mirror_dir(mirror)
    files = files_for(dataset)
    if not files:
        raise IngestError(None, f"no catalog files for dataset {dataset!r}")
    results = []
    with Progress(disable=not show_progress, transient=True) as progress:
        task = progress.add_task("fetch", total=len(files))
        for sf in files:
            results.append(fetch_one(sf, paths, m))
            progress.advance(task)
    return results


def verified_path(sf: SourceFile, paths: Paths) -> Path:
    """The fetched local copy of a catalog file, re-verified; ingest reads only through this."""
    p = paths.raw / sf.path
    if not p.exists():
        raise IngestError(sf.path, "not fetched yet; run `predictabase fetch` first")
    got = sha256_of(p)
    if got != sf.sha256:
        raise ChecksumError(sf.path, f"sha256 {got} of the fetched copy does not match the catalog's "
                                     f"{sf.sha256} (file changed after fetch); run `predictabase fetch` again")
    return p


def fetch_and_record(paths: Paths, mirror: str | Path | None = None, dataset: str | None = None,
                     show_progress: bool = True) -> list[FetchResult]:
    results = fetch(paths, mirror, dataset, show_progress=show_progress)
    origin = "mirror" if mirror_dir(mirror) is not None else "download"
    when = now_utc()
    frame = pl.DataFrame([
        dict(path=r.file.path, dataset=r.file.dataset, repo=r.file.repo.repo, commit=r.file.repo.commit,
             upstream_path=r.file.upstream_path, url=r.file.url, license=r.file.repo.license,
             citation=r.file.repo.citation, sha256=r.file.sha256, bytes=r.file.bytes, status="verified",
             origin=origin if r.status != "present" else "cache", fetched_at=when)
        for r in results
    ])
    with connect(paths) as con, transaction(con):
        con.register("_incoming", frame.to_arrow())
        con.execute("CREATE TABLE IF NOT EXISTS raw.source_files AS SELECT * FROM _incoming LIMIT 0")
        con.execute("DELETE FROM raw.source_files WHERE path IN (SELECT path FROM _incoming)")
        con.execute("INSERT INTO raw.source_files BY NAME SELECT * FROM _incoming")
    return results
