"""Errors that name the file and the problem."""
from __future__ import annotations

from pathlib import Path


class IngestError(Exception):
    """A bad input: names the offending file (or model) and what is wrong with it.

    Raised before anything is written, so the warehouse stays as it was.
    """

    def __init__(self, file: str | Path | None, problem: str):
        self.file = catalog_name(file) if file is not None else None
        self.problem = problem
        super().__init__(f"{self.file}: {problem}" if self.file else problem)


class ChecksumError(IngestError):
    pass


class ModelLoadError(IngestError):
    pass


def catalog_name(file: str | Path) -> str:
    """A source file by its catalog path (`ucl_devarda/all_measures.csv`) wherever it lies (under
    warehouse/raw/, in a mirror), so errors name it the same way; anything else unchanged."""
    from ingest.sources.catalog import load_catalog
    text = str(file)
    parts = Path(text).parts
    known = _catalog_paths(load_catalog())
    for i in range(len(parts)):
        candidate = "/".join(parts[i:])
        if candidate in known:
            return candidate
    return text


_KNOWN: dict[int, frozenset] = {}


def _catalog_paths(catalog) -> frozenset:
    key = id(catalog)
    if key not in _KNOWN:
        _KNOWN[key] = frozenset(f.path for f in catalog)
    return _KNOWN[key]
