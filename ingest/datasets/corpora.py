"""Every shipped corpus is its declaration (`ingest/corpora.toml`) plus one adapter module in this package: the
module named by its `adapter` (several corpora may share one, as MECO's languages do), else the module named after
the corpus. An adapter defines

    jobs(corpora: dict[str, Corpus]) -> list[Job]

every ingest job of the corpora it loads: one job named after each corpus (its texts: raw.documents and raw.words,
the LM game's tokens too), then whatever else its files hold (reading times, cloze norms, fixations), each job
declaring what it writes and the jobs it must follow. The registry gathers these jobs from the declarations; no list
anywhere names a corpus. `prepared_or_loaded` gives the jobs that join to a corpus its documents and words.

A loader reads only catalog files fetched into `paths.raw` (through
`predictabase.ingest.sources.fetch.verified_path`) and parses and validates in memory; the registry then writes all
the tables of a command in one transaction. A bad file raises `IngestError(file, problem)` before anything is
written; re-running replaces, never duplicates. No metric is computed here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

import polars as pl

from predictabase.core.config import Paths
from predictabase.ingest import corpus_table
from predictabase.ingest.datasets._common import CorpusLoad, Job


def adapter_name(corpus: str) -> str:
    """The module of this package that loads a shipped corpus: its declared `adapter`, else its own name."""
    decl = corpus_table.CORPORA[corpus]
    return decl.adapter or corpus


def adapter(corpus: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{adapter_name(corpus)}")


def corpus_jobs() -> list[Job]:
    """Every shipped corpus's ingest jobs, adapter by adapter in declared order (each adapter asked once, for all
    of its corpora)."""
    by_adapter: dict[str, dict[str, corpus_table.Corpus]] = {}
    for key, decl in corpus_table.CORPORA.items():
        by_adapter.setdefault(adapter_name(key), {})[key] = decl
    jobs: list[Job] = []
    for name, decls in by_adapter.items():
        made = importlib.import_module(f"{__package__}.{name}").jobs(decls)
        missing = [k for k in decls if k not in {j.name for j in made}]
        if missing:  # pragma: no cover - an adapter's contract
            raise AssertionError(f"adapter {name} has no texts job named after corpus(es) {missing}")
        jobs += made
    return jobs


def texts_loader(corpus: str) -> Callable[[Paths], CorpusLoad]:
    """A shipped corpus's texts job's prepare: its documents and words (reads and validates, writes nothing)."""
    decl = corpus_table.CORPORA[corpus]
    job = next(j for j in adapter(corpus).jobs({corpus: decl}) if j.name == corpus)
    return lambda paths: job.prepare(paths, {})


def prepared_or_loaded(paths: Paths, prepared: dict | None, corpus: str) -> CorpusLoad:
    """`corpus`'s documents and words for a job that joins to them: this command's prepared corpus job when it
    ingests that corpus too, else the corpus loader (reads and validates, writes nothing)."""
    if corpus not in corpus_table.CORPORA:  # a user's corpus (`predictabase corpus add`): the declared_corpora job's
        return _user_corpus(paths, prepared, corpus)
    load = (prepared or {}).get(corpus)
    return load if isinstance(load, CorpusLoad) else texts_loader(corpus)(paths)


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


__all__ = ["prepared_or_loaded", "corpus_frames", "corpus_jobs", "adapter", "texts_loader", "LAST_NOTES"]
