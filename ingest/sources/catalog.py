"""The source catalog (ingest/sources/catalog.toml): one entry per upstream file.

Each file is pinned to a repository commit and a sha256; `url` is where a machine
with internet downloads it, `path` where it sits in a local mirror and in
`warehouse/raw/`.
"""

from __future__ import annotations

import tomllib
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("catalog.toml")


@dataclass(frozen=True)
class Repo:
    folder: str
    repo: str
    commit: str
    prefix: str
    license: str
    citation: str


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative path in the mirror and under warehouse/raw
    repo: Repo
    upstream_path: str
    sha256: str
    bytes: int
    dataset: str

    @property
    def url(self) -> str:
        return (
            f"https://raw.githubusercontent.com/{self.repo.repo}/{self.repo.commit}/"
            f"{urllib.parse.quote(self.upstream_path)}"
        )


@lru_cache(maxsize=1)
def load_catalog() -> tuple[SourceFile, ...]:
    data = tomllib.loads(CATALOG_FILE.read_text())
    repos = {r["folder"]: Repo(**{k: r[k] for k in Repo.__dataclass_fields__}) for r in data["repo"]}
    return tuple(
        SourceFile(
            path=f["path"],
            repo=repos[f["repo_folder"]],
            upstream_path=f["upstream_path"],
            sha256=f["sha256"],
            bytes=f["bytes"],
            dataset=f["dataset"],
        )
        for f in data["file"]
    )


def files_for(dataset: str | None = None) -> list[SourceFile]:
    return [f for f in load_catalog() if dataset is None or f.dataset == dataset]


def by_path(path: str) -> SourceFile:
    for f in load_catalog():
        if f.path == path:
            return f
    raise KeyError(f"{path} is not in the source catalog")


def datasets() -> list[str]:
    return sorted({f.dataset for f in load_catalog()})
