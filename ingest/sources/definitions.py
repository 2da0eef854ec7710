"""Dataset definitions (`datasets.toml`): each dataset's files by role, with how to read them.

    spec = dataset("ucl").file("measures")      # a FileSpec: path, format, encoding, columns, ...
    spec.catalog_files()                        # the catalog entries it names (checksums, repo)

The loaders in `predictabase.ingest.datasets` look files up here and read them through
`predictabase.ingest.sources.readers`;
`scripts/make_catalog.py` assigns each catalog file to the first dataset that lists it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from predictabase.core.errors import IngestError
from predictabase.ingest.sources.catalog import SourceFile, load_catalog

DEFINITIONS_FILE = Path(__file__).with_name("datasets.toml")
FORMATS = {"delimited", "json", "python_literal", "text", "rdata", "fernet_json", "bytes"}
RDATA_ENGINES = {"pyreadr", "rdata"}


@dataclass(frozen=True)
class FileSpec:
    """One role of a dataset: which catalog file(s), and the read options the generic reader applies."""

    dataset: str
    role: str
    format: str
    path: str | None = None
    glob: str | None = None
    encoding: str = "utf-8"
    delimiter: str = ","
    quoting: str = "minimal"
    columns: tuple[str, ...] = ()
    object: str | None = None
    engine: str = "pyreadr"  # rdata format: pyreadr, or rdata (the `rdata` package: reads mac_roman, pyreadr does not)
    row_names: bool = (
        False  # delimited: every row has one more leading field than the header (R's write.table row names)
    )
    nan_keys: bool = False  # python_literal: a dict key written as the bare name `nan` (pandas' NaN) reads as None
    notes: str = ""

    def matches(self, catalog_path: str) -> bool:
        if self.path is not None:
            return catalog_path == self.path
        return _glob_re(self.glob).fullmatch(catalog_path) is not None

    def catalog_files(self) -> list[SourceFile]:
        """The catalog entries of this role, sorted by path (one for `path`, any number for `glob`)."""
        return sorted((f for f in load_catalog() if self.matches(f.path)), key=lambda f: f.path)

    @property
    def name(self) -> str:
        return f"{self.dataset}.{self.role}"


@cache
def _glob_re(pattern: str) -> re.Pattern:
    """A glob over catalog paths: `*` and `?` stay within one folder, `**/` spans folders."""
    out = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
    return re.compile(out)


@dataclass(frozen=True)
class Dataset:
    name: str
    title: str
    files: dict[str, FileSpec] = field(default_factory=dict)

    def file(self, role: str) -> FileSpec:
        try:
            return self.files[role]
        except KeyError:
            raise KeyError(f"dataset {self.name!r} has no file role {role!r}; it has {sorted(self.files)}") from None


def _spec(dataset: str, role: str, d: dict) -> FileSpec:
    if ("path" in d) == ("glob" in d):
        raise IngestError(DEFINITIONS_FILE, f"{dataset}.{role} needs exactly one of path, glob")
    if d.get("format") not in FORMATS:
        raise IngestError(DEFINITIONS_FILE, f"{dataset}.{role} format {d.get('format')!r} not in {sorted(FORMATS)}")
    if d.get("quoting", "minimal") not in {"minimal", "none"}:
        raise IngestError(DEFINITIONS_FILE, f"{dataset}.{role} quoting must be minimal or none")
    if d.get("engine", "pyreadr") not in RDATA_ENGINES:
        raise IngestError(
            DEFINITIONS_FILE, f"{dataset}.{role} engine {d.get('engine')!r} not in {sorted(RDATA_ENGINES)}"
        )
    return FileSpec(dataset=dataset, role=role, **{**d, "columns": tuple(d.get("columns", ()))})


@lru_cache(maxsize=1)
def load_definitions() -> tuple[Dataset, ...]:
    data = tomllib.loads(DEFINITIONS_FILE.read_text())
    out = []
    for d in data["dataset"]:
        files = {role: _spec(d["name"], role, spec) for role, spec in d.get("files", {}).items()}
        out.append(Dataset(d["name"], d.get("title", ""), files))
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise IngestError(DEFINITIONS_FILE, "duplicate dataset names")
    return tuple(out)


def dataset(name: str) -> Dataset:
    for d in load_definitions():
        if d.name == name:
            return d
    raise KeyError(f"no dataset {name!r} in {DEFINITIONS_FILE.name}")


def dataset_names() -> list[str]:
    return [d.name for d in load_definitions()]


def owner_of(catalog_path: str) -> str | None:
    """The first dataset that lists a catalog path (its catalog `dataset`), or None."""
    for d in load_definitions():
        if any(spec.matches(catalog_path) for spec in d.files.values()):
            return d.name
    return None
