"""The corpus loaders: the texts, words and game tokens of every corpus (`ingest/corpora.toml` declares the
corpora; the registry runs these loaders as jobs, and `ingest_corpora(paths, names)` runs just them).

A loader reads only catalog files fetched into `paths.raw` (through
`predictabase.ingest.sources.fetch.verified_path`) and parses and validates in memory; the registry then writes all
the tables of a command (raw.documents, raw.words, raw.game_doc_tokens, raw.imported_word_surprisal) in one
transaction. A bad file raises `IngestError(file, problem)` before anything is written; re-running replaces, never
duplicates. No metric is computed here.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from predictabase.core.config import Paths
from predictabase.ingest.datasets import lm_game, meco, natural_stories, provo, ucl
from predictabase.ingest.datasets._common import CorpusLoad

LOADERS: dict[str, Callable[[Paths], CorpusLoad]] = {
    "lm_game": lm_game.load,
    "natural_stories": natural_stories.load,
    "provo": provo.load,
    "ucl": ucl.load,
    "ucl_imported_surprisal": ucl.load_imported,
    **meco.loaders(),  # one per language (ingest/corpora.toml: adapter = "meco")
}
NAMES = list(LOADERS)


def prepared_or_loaded(paths: Paths, prepared: dict | None, corpus: str) -> CorpusLoad:
    """`corpus`'s documents and words for a job that joins to them: this command's prepared corpus job when it
    ingests that corpus too, else the corpus loader (reads and validates, writes nothing)."""
    if corpus not in LOADERS:  # a user's corpus (`predictabase corpus add`): the declared_corpora job's
        return _user_corpus(paths, prepared, corpus)
    load = (prepared or {}).get(corpus)
    return load if isinstance(load, CorpusLoad) else LOADERS[corpus](paths)


def _user_corpus(paths: Paths, prepared: dict | None, corpus: str) -> CorpusLoad:
    from predictabase.ingest.corpus_declarations import load_declarations
    from predictabase.ingest.datasets import user_corpus

    load = (prepared or {}).get(user_corpus.JOB)
    if not isinstance(load, CorpusLoad):
        decls = load_declarations(paths)
        if corpus not in decls:
            from predictabase.core.errors import IngestError

            raise IngestError(corpus, "not a corpus of this warehouse (`predictabase corpus list`)")
        parsed = user_corpus.load_declared(paths, decls[corpus])
        return CorpusLoad(
            corpus,
            [
                ("raw.documents", parsed.texts.docs, {"corpus": corpus}),
                ("raw.words", parsed.texts.words, {"corpus": corpus}),
            ],
        )
    return CorpusLoad(
        corpus,
        [(t, f, w) for t, f, w in load.tables if t in ("raw.documents", "raw.words") and w.get("corpus") == corpus],
    )


def corpus_frames(paths: Paths, prepared: dict | None, corpus: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(raw.documents, raw.words) of `corpus` (see `prepared_or_loaded`)."""
    frames = {t: f for t, f, _ in prepared_or_loaded(paths, prepared, corpus).tables}
    return frames["raw.documents"], frames["raw.words"]


#: notes of the last ingest per name (row counts, quirks found), for reports and tests
LAST_NOTES: dict[str, dict] = {}


__all__ = ["prepared_or_loaded", "corpus_frames", "NAMES", "LOADERS", "LAST_NOTES"]
