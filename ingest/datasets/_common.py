"""Shared pieces of the corpus loaders: verified reads, strict parsing helpers, span
helpers and the one-transaction-per-corpus writer.

Every loader works in two phases: `load_*` reads its source files (through
`verified_path` only), parses and validates everything in memory and returns a
`CorpusLoad`; only then does `write_corpus` replace the corpus's partitions of all
its tables inside ONE transaction. A bad file therefore raises `IngestError`
before anything is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import duckdb
import polars as pl

from predictabase.core.config import Paths
from predictabase.core.db import transaction
from predictabase.core.errors import IngestError
from predictabase.ingest.raw import replace_partitions_in
from predictabase.ingest.sources.readers import Source, decode, parse_delimited, read_source  # noqa: F401 (re-exported)


def corpus_version(sources: Iterable[Source]) -> str:
    """sha256 over the sha256s of the corpus's source files (sorted by catalog path, one per line)."""
    lines = "\n".join(s.sha256 for s in sorted(sources, key=lambda s: s.path))
    return hashlib.sha256(lines.encode("ascii")).hexdigest()


# --------------------------------------------------------------------------- parsing helpers


def to_int(value: str, name: str, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise IngestError(name, f"{what}: {value!r} is not an integer") from exc


def to_float(value: str, name: str, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise IngestError(name, f"{what}: {value!r} is not a number") from exc


# --------------------------------------------------------------------------- frames

DOC_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "doc_index": pl.Int32,
    "text": pl.String,
    "n_chars": pl.Int32,
    "n_bytes": pl.Int32,
    "score_prefix_chars": pl.Int32,
    "corpus_version": pl.String,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
WORD_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "word": pl.String,
    "char_start": pl.Int32,
    "char_end": pl.Int32,
    "native_id": pl.String,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: raw.cloze_norms: every corpus's cloze norms, the shipped ones' (cloze.py) and a user corpus's (user_corpus.py)
CLOZE_NORMS_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    "upstream_word": pl.String,
    "upstream_row": pl.Int32,
    "upstream_id": pl.String,
    "word_matches": pl.Boolean,
    "n_responses": pl.Int32,
    "response_count": pl.Int32,
    "cloze_probability_published": pl.Float64,
    "smoothing": pl.String,
    "modal_response": pl.String,
    "rating_mean": pl.Float64,
    "rating_sd": pl.Float64,
    "cloze_surprisal_published_nats": pl.Float64,
    "entropy_published_nats": pl.Float64,
    "competition_published": pl.Float64,
    "upstream_list": pl.Int32,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: raw.word_frequencies: a frequency per corpus word and source: wordfreq's for every corpus (word_frequencies.py),
#: a user corpus's own file (user_corpus.py, frequency_source "user"; only zipf_frequency and the provenance)
WORD_FREQUENCIES_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    "lookup_form": pl.String,
    "n_lookup_tokens": pl.Int32,
    "wordfreq_frequency": pl.Float64,
    "zipf_frequency": pl.Float64,
    "wordfreq_language": pl.String,
    "wordfreq_wordlist": pl.String,
    "wordfreq_version": pl.String,
    "google_books_count": pl.Int64,
    "google_books_token": pl.String,
    "google_books_code": pl.String,
    "google_books_source_path": pl.String,
    "google_books_source_sha256": pl.String,
    "frequency_source": pl.String,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: raw.reading_times: every corpus's reading times per (measure, reader, word), or per-word means (reader_id NULL,
#: n_readers where known): the shipped self-paced reading (self_paced_reading.py; with the upstream's reader and
#: trial columns) and a user corpus's file (user_corpus.py). A word not read has no row (never 0 ms). Eye tracking
#: upstream of its measures is raw.eye_tracking_fixations (dbt derives the measures).
READING_TIMES_SCHEMA = {
    "corpus": pl.String,
    "measure": pl.String,
    "reader_id": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    "rt_ms": pl.Float64,
    "n_readers": pl.Int32,
    "reader_correct_answers": pl.Int32,
    "reader_accuracy": pl.Float64,
    "trial_order": pl.Int32,
    "trial_answer_correct": pl.Boolean,
    "upstream_sentence_id": pl.Int32,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
TOKEN_SCHEMA = {
    "doc_id": pl.String,
    "token_index": pl.Int32,
    "token": pl.String,
    "char_start": pl.Int32,
    "char_end": pl.Int32,
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def doc_row(
    corpus: str,
    doc_id: str,
    doc_index: int,
    text: str,
    src: Source,
    version: str,
    score_prefix_chars: int | None = None,
) -> dict:
    return dict(
        corpus=corpus,
        doc_id=doc_id,
        doc_index=doc_index,
        text=text,
        n_chars=len(text),
        n_bytes=len(text.encode("utf-8")),
        score_prefix_chars=score_prefix_chars,
        corpus_version=version,
        source_path=src.path,
        source_sha256=src.sha256,
    )


def frame(rows: list[dict] | dict[str, list], schema: dict) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, strict=True)


def check_word_spans(docs: pl.DataFrame, words: pl.DataFrame, name: str) -> None:
    """Every word's span lies in its document and covers exactly the word's characters; indices 0..n-1."""
    texts = dict(zip(docs["doc_id"].to_list(), docs["text"].to_list()))
    last: dict[str, int] = {}
    for doc_id, wi, w, a, b in words.select("doc_id", "word_index", "word", "char_start", "char_end").iter_rows():
        t = texts.get(doc_id)
        if t is None:
            raise IngestError(name, f"word {wi} refers to unknown document {doc_id}")
        if t[a:b] != w or not (0 <= a < b <= len(t)):
            raise IngestError(name, f"document {doc_id} word {wi} {w!r}: span [{a},{b}) holds {t[a:b]!r}")
        if wi != last.get(doc_id, -1) + 1:
            raise IngestError(name, f"document {doc_id}: word_index {wi} out of order")
        last[doc_id] = wi


# --------------------------------------------------------------------------- writing


@dataclass
class CorpusLoad:
    """Everything one ingest name writes: (table, frame, partition) triples, plus notes for the report."""

    name: str
    tables: list[tuple[str, pl.DataFrame, dict[str, object]]]
    notes: dict[str, object] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(f.height for _, f, _ in self.tables)


def write_partitions(con: duckdb.DuckDBPyConnection, load: CorpusLoad) -> int:
    """Replace every partition of `load` inside the caller's transaction (idempotent)."""
    return replace_partitions_in(con, load.tables)


def write_corpus(con: duckdb.DuckDBPyConnection, load: CorpusLoad) -> int:
    """Replace every partition of `load` in ONE transaction of its own: all or nothing, idempotent."""
    with transaction(con):
        return write_partitions(con, load)


# --------------------------------------------------------------------------- jobs


@dataclass(frozen=True)
class Job:
    """One ingest job (`predictabase ingest NAME`). `prepare(paths, prepared)` reads its verified source files,
    parses and validates everything in memory and writes nothing (`prepared` holds what the jobs before it prepared
    in this command). `write(con, prep)` replaces the job's raw tables inside the caller's transaction. `finish(prep)`
    writes what is not in DuckDB (the GPT-3 Parquet run) after COMMIT."""

    name: str
    prepare: Callable[[Paths, dict], object]
    write: Callable[[duckdb.DuckDBPyConnection, object], object] | None = None
    finish: Callable[[object], object] | None = None
    after: tuple[str, ...] = field(default=())  # jobs that must come first when both run
    #: what it writes: raw tables ("raw.documents"), and outside DuckDB what `finish` writes ("parquet:token_scores").
    #: Declared with the job, checked against what `prepare` returns (registry.tables_of), and read by refresh, the
    #: Dagster assets and the docs: nothing else lists them.
    writes: tuple[str, ...] = field(default=())


def paths_only(load: Callable[[Paths], object]) -> Callable[[Paths, dict], object]:
    """A job's prepare from a loader that reads its sources only, not what the jobs before it prepared."""
    return lambda paths, _prepared: load(paths)


#: what a corpus's texts job writes (a corpus adapter's job named after the corpus)
TEXTS_WRITES = ("raw.documents", "raw.words")
