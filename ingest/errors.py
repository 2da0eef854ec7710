"""Errors that name the file and the problem."""
from __future__ import annotations

from pathlib import Path


class IngestError(Exception):
    """A bad input: names the offending file (or model) and what is wrong with it.

    Raised before anything is written, so the warehouse stays as it was.
    """

    def __init__(self, file: str | Path | None, problem: str):
        self.file = str(file) if file is not None else None
        self.problem = problem
        super().__init__(f"{self.file}: {problem}" if self.file else problem)


class ChecksumError(IngestError):
    pass


class ModelLoadError(IngestError):
    pass
