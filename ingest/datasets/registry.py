"""The ingest jobs, in one registry, and `run_ingest`: all or nothing per command.

Each job has two halves. `prepare(paths, prepared)` reads its verified source files, parses
and validates everything in memory and writes nothing (`prepared` holds what the jobs before
it prepared in this command, so the GPT-3 import aligns to the natural_stories documents being
ingested with it). `write(con, prep)` replaces the job's raw tables inside the caller's
transaction. `finish(prep)` writes what is not in DuckDB (the GPT-3 Parquet run) after COMMIT.

`run_ingest` prepares every requested job first; one bad file stops the command before anything
is written. Then it writes all of them in ONE transaction: either every table of the command is
replaced, or none is.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb
from rich.progress import Progress

from ingest.datasets import cloze, corpora, gpt3_natural_stories, natural_stories_spr_means, pairwise, top1, wild
from ingest.datasets import ucl_published
from ingest.datasets import self_paced_reading, word_frequencies
from ingest.datasets import eye_tracking
from ingest.config import Paths
from ingest.datasets._common import CorpusLoad, write_partitions
from ingest.warehouse.raw import connect, replace_tables_in, transaction
from ingest.errors import IngestError
from ingest.failpoints import failpoint


@dataclass(frozen=True)
class Job:
    name: str
    prepare: Callable[[Paths, dict], object]
    write: Callable[[duckdb.DuckDBPyConnection, object], object] | None = None
    finish: Callable[[object], object] | None = None
    after: tuple[str, ...] = field(default=())  # jobs that must come first when both run


def _corpus_job(name: str) -> Job:
    loader = corpora.LOADERS[name]
    return Job(name, prepare=lambda paths, _prepared: loader(paths), write=write_partitions)


def _ns_documents(prepared: dict) -> tuple[dict[str, str], str] | None:
    load: CorpusLoad | None = prepared.get("natural_stories")
    if load is None:
        return None
    docs = next(f for t, f, _ in load.tables if t == "raw.documents")
    return dict(zip(docs["doc_id"].to_list(), docs["text"].to_list())), docs["corpus_version"][0]


JOBS: dict[str, Job] = {
    **{name: _corpus_job(name) for name in corpora.NAMES},
    "gpt3_natural_stories": Job("gpt3_natural_stories",
                                prepare=lambda paths, prepared: gpt3_natural_stories.prepare_gpt3(paths, _ns_documents(prepared)),
                                finish=gpt3_natural_stories.write_gpt3, after=("natural_stories",)),
    "pairwise": Job("pairwise", prepare=lambda paths, _p: pairwise.build_frames(paths), write=replace_tables_in),
    "wild": Job("wild", prepare=lambda paths, _p: wild.build_frames(paths), write=replace_tables_in),
    "natural_stories_spr_means": Job("natural_stories_spr_means",
                                     prepare=lambda paths, _p: natural_stories_spr_means.load(paths),
                                     write=replace_tables_in),
    # the top-1 game (paper 000, sec. 3): raw rows only; the true tokens are joined in dbt (int_top1_guesses)
    "lm_game_top1": Job("lm_game_top1", prepare=lambda paths, _p: top1.load_guesses(paths), write=replace_tables_in),
    "lm_game_model_perfs": Job("lm_game_model_perfs", prepare=lambda paths, _p: top1.load_model_perfs(paths),
                               write=replace_tables_in),
    "lm_game_vocabulary": Job("lm_game_vocabulary", prepare=lambda paths, _p: top1.load_vocabulary(paths),
                              write=replace_tables_in),
    # cloze norms (issue 11): raw.cloze_norms holds Provo's and UCL's rows, each job replacing its corpus's only
    "provo_cloze": Job("provo_cloze", prepare=cloze.load_provo, write=write_partitions, after=("provo",)),
    "ucl_cloze": Job("ucl_cloze", prepare=cloze.load_ucl, write=write_partitions, after=("ucl",)),
    "ucl_cloze_distributions": Job("ucl_cloze_distributions", prepare=cloze.load_distributions,
                                   write=write_partitions, after=("ucl",)),
    # UCL published per-word reading means (all_measures.csv); compared with the derived ones in dbt
    "ucl_published_measures": Job("ucl_published_measures", prepare=lambda paths, _p: ucl_published.load(paths),
                                  write=replace_tables_in),
    # self-paced reading per reader (issue 11): raw.self_paced_reading, each job replacing its corpus's rows
    "natural_stories_spr": Job("natural_stories_spr", prepare=self_paced_reading.load_natural_stories,
                               write=write_partitions, after=("natural_stories",)),
    "ucl_spr": Job("ucl_spr", prepare=self_paced_reading.load_ucl, write=write_partitions, after=("ucl",)),
    # wordfreq + Google Books frequency of every corpus word (raw.word_frequencies, the whole table)
    "word_frequencies": Job("word_frequencies", prepare=word_frequencies.load, write=replace_tables_in,
                            after=tuple(word_frequencies.CORPORA)),
    # eye tracking per reader (issue 11): raw.eye_tracking_fixations holds Provo's and UCL's fixations, each job
    # replacing its corpus's rows; raw.eye_tracking_measures_upstream the UCL per-reader measures as published
    "provo_eye_tracking": Job("provo_eye_tracking", prepare=eye_tracking.load_provo, write=write_partitions,
                              after=("provo",)),
    "ucl_fixations": Job("ucl_fixations", prepare=eye_tracking.load_ucl_fixations, write=write_partitions,
                         after=("ucl",)),
    "ucl_eye_tracking": Job("ucl_eye_tracking", prepare=eye_tracking.load_ucl_measures, write=write_partitions,
                            after=("ucl",)),
}
NAMES = list(JOBS)


def ordered(names: list[str]) -> list[str]:
    """`names` in registry order, each after the jobs it depends on (when those run too)."""
    for name in names:
        for dep in JOBS[name].after:
            if dep in JOBS and NAMES.index(dep) > NAMES.index(name):  # pragma: no cover - registry invariant
                raise AssertionError(f"job {name} is registered before its dependency {dep}")
    return [n for n in NAMES if n in names]


def _summary(result: object) -> object:
    if isinstance(result, dict) and "run_id" in result:
        return {k: result[k] for k in ("run_id", "n_tokens", "status") if k in result}
    return result


def prepare_all(paths: Paths, wanted: list[str], show_progress: bool = True) -> dict[str, object]:
    """Read and validate each job in `wanted` (in that order; nothing is written)."""
    prepared: dict[str, object] = {}
    with Progress(disable=not show_progress, transient=True) as progress:
        task = progress.add_task("ingest: reading", total=len(wanted))
        for name in wanted:
            progress.update(task, description=f"reading and validating {name}")
            prepared[name] = JOBS[name].prepare(paths, prepared)
            progress.advance(task)
    return prepared


def run_ingest(paths: Paths, names: list[str] | None = None, show_progress: bool = True) -> dict[str, object]:
    """Ingest the named jobs (None: all); returns name -> rows written (or the run for imports)."""
    wanted = list(dict.fromkeys(names or NAMES))
    unknown = [n for n in wanted if n not in JOBS]
    if unknown:
        raise IngestError("ingest", f"unknown name(s) {', '.join(unknown)}; choose from {', '.join(NAMES)}")
    wanted = ordered(wanted)
    prepared = prepare_all(paths, wanted, show_progress)
    counts: dict[str, object] = {}
    with connect(paths) as con, transaction(con):
        for name in wanted:
            if JOBS[name].write is not None:
                counts[name] = JOBS[name].write(con, prepared[name])
        failpoint("ingest.before_commit")
    for name in wanted:
        if JOBS[name].finish is not None:
            counts[name] = _summary(JOBS[name].finish(prepared[name]))
        if isinstance(prepared[name], CorpusLoad):
            corpora.LAST_NOTES[name] = prepared[name].notes
    return counts
