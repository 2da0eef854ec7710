"""Corpus ingest: load, validate and write the texts, words and game tokens of every corpus.

`ingest(paths, names)` reads only catalog files fetched into `paths.raw` (through
`ingest.sources.fetch.verified_path`), parses and validates ALL requested corpora in memory first,
then writes all their tables (raw.documents, raw.words, raw.game_doc_tokens,
raw.imported_word_surprisal) in one transaction. A bad file raises
`IngestError(file, problem)` before anything is written; re-running replaces, never duplicates.
No metric is computed here.
"""
from __future__ import annotations

from collections.abc import Callable

import polars as pl

from predictabase.config import Paths
from predictabase.errors import IngestError
from ingest.datasets import lm_game, natural_stories, provo, ucl
from ingest.datasets._common import CorpusLoad

LOADERS: dict[str, Callable[[Paths], CorpusLoad]] = {
    "lm_game": lm_game.load,
    "natural_stories": natural_stories.load,
    "provo": provo.load,
    "ucl": ucl.load,
    "ucl_imported_surprisal": ucl.load_imported,
}
NAMES = list(LOADERS)

def prepared_or_loaded(paths: Paths, prepared: dict | None, corpus: str) -> CorpusLoad:
    """`corpus`'s documents and words for a job that joins to them: this command's prepared corpus job when it
    ingests that corpus too, else the corpus loader (reads and validates, writes nothing)."""
    load = (prepared or {}).get(corpus)
    return load if isinstance(load, CorpusLoad) else LOADERS[corpus](paths)


def corpus_frames(paths: Paths, prepared: dict | None, corpus: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(raw.documents, raw.words) of `corpus` (see `prepared_or_loaded`)."""
    frames = {t: f for t, f, _ in prepared_or_loaded(paths, prepared, corpus).tables}
    return frames["raw.documents"], frames["raw.words"]


#: notes of the last ingest per name (row counts, quirks found), for reports and tests
LAST_NOTES: dict[str, dict] = {}


def _wanted(names: list[str] | None) -> list[str]:
    wanted = list(NAMES) if not names else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in LOADERS]
    if unknown:
        raise IngestError(None, f"unknown corpus name(s) {unknown}; choose from {NAMES}")
    return wanted


def load(paths: Paths, names: list[str] | None = None, show_progress: bool = False) -> dict[str, CorpusLoad]:
    """Parse and validate (no writing), through the job registry."""
    from ingest.datasets.registry import prepare_all  # the registry imports this module
    return prepare_all(paths, _wanted(names), show_progress)


def ingest(paths: Paths, names: list[str] | None = None, show_progress: bool = True) -> dict[str, int]:
    """Ingest the named corpora (None: all) through the job registry (validate all, then one
    transaction). Returns name -> rows written (all tables of that name)."""
    from ingest.datasets.registry import run_ingest  # the registry imports this module
    return run_ingest(paths, _wanted(names), show_progress)


__all__ = ["ingest", "load", "prepared_or_loaded", "corpus_frames", "NAMES", "LAST_NOTES"]
