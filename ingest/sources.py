"""Fetch the catalog and record what was verified in raw.source_files."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from .config import Paths, mirror_dir
from .db import connect, now_utc, transaction
from .fetch import FetchResult, fetch


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
