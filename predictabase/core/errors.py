"""The errors of predictabase, one type per stage, and the command line's exit codes. Each error names what it is
about (a file by its catalog path, an option, the warehouse, a model) and the problem; the CLI prints it as one
line, `error: <subject>: <problem>`, and exits with the error's `exit_code`. Each is raised before anything is
written, or leaves the warehouse and the published snapshot as they were."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

#: the exit codes of the `predictabase` command, for scripts (docs/guides/operations.md, "Exit codes")
EXIT_OK = 0
EXIT_INTERNAL = 1  # an unexpected error: a bug (one line; PREDICTABASE_DEBUG=1 shows the traceback)
EXIT_USAGE = 2  # a usage or input error: a bad option, a bad source file, a model that does not load, ...
EXIT_BUSY = 75  # EX_TEMPFAIL: another process holds the warehouse's writer lock; try again later
EXIT_INTERRUPTED = 130  # interrupted (Ctrl-C, SIGINT): 128 + 2, as shells report it
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_INTERNAL: "internal error (a bug)",
    EXIT_USAGE: "usage or input error",
    EXIT_BUSY: "the warehouse's writer lock is held by another process",
    EXIT_INTERRUPTED: "interrupted",
}


class PredictabaseError(Exception):
    """Base: `subject` (file, option, model, warehouse; may be None) and `problem`."""

    exit_code = EXIT_USAGE

    def __init__(self, file: str | Path | None, problem: str):
        self.file = catalog_name(file) if file is not None else None
        self.problem = problem
        super().__init__(f"{self.file}: {problem}" if self.file else problem)

    @property
    def subject(self) -> str | None:
        return self.file

    def __reduce__(self):  # pickled as it is (a Ray worker's error reaches the driver whole)
        return _rebuild, (type(self), self.file, self.problem)


def _rebuild(cls: type, file: str | None, problem: str) -> PredictabaseError:
    err = cls.__new__(cls)
    Exception.__init__(err, f"{file}: {problem}" if file else problem)
    err.file, err.problem = file, problem
    return err


class IngestError(PredictabaseError):
    """A bad source file or dataset (fetch, ingest): truncated, wrong encoding, missing column, ..."""


class ChecksumError(IngestError):
    """A fetched or mirrored file whose sha256 is not the catalog's."""


class OptionError(PredictabaseError):
    """A command-line option (or setting) outside its domain; the subject is the option."""


class ModelLoadError(PredictabaseError):
    """A model that cannot be found or loaded (scoring)."""


class ScoringError(PredictabaseError):
    """Scoring cannot run on what the warehouse holds (no documents for a corpus, ...)."""


class WarehouseError(PredictabaseError):
    """The warehouse itself: missing directory, nothing ingested, in use by another writer."""


class BuildError(PredictabaseError):
    """dbt failed (a model or a schema test), or a publish was refused or failed."""


#: the source files' catalog paths, given by whoever knows the catalog (`ingest` registers its catalog when it is
#: imported: `name_files_by`); this foundation imports nothing of the project
_CATALOG_PATHS: Callable[[], frozenset[str]] | None = None


def name_files_by(catalog_paths: Callable[[], frozenset[str]]) -> None:
    """Name source files in errors by their catalog paths, as `catalog_paths()` (called on the first error that
    names a file) lists them."""
    global _CATALOG_PATHS
    _CATALOG_PATHS = catalog_paths


def catalog_name(file: str | Path) -> str:
    """A source file by its catalog path (`ucl_devarda/all_measures.csv`) wherever it lies (under
    warehouse/raw/, in a mirror), so errors name it the same way; anything else unchanged."""
    text = str(file)
    if _CATALOG_PATHS is None:
        return text
    try:
        known = _CATALOG_PATHS()
    except ImportError:  # a scoring-only environment (a GPU box without polars): the path as given
        return text
    parts = Path(text).parts
    for i in range(len(parts)):
        candidate = "/".join(parts[i:])
        if candidate in known:
            return candidate
    return text
