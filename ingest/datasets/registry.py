"""The ingest jobs, in one registry, and `run_ingest`: all or nothing per command.

Each job has two halves. `prepare(paths, prepared)` reads its verified source files, parses
and validates everything in memory and writes nothing (`prepared` holds what the jobs before
it prepared in this command, so the GPT-3 import aligns to the natural_stories documents being
ingested with it). `write(con, prep)` replaces the job's raw tables inside the caller's
transaction. `finish(prep)` writes what is not in DuckDB (the GPT-3 Parquet run) after COMMIT.

`run_ingest` prepares every requested job first; one bad file stops the command before anything
is written. Then it writes all of them in ONE transaction: either every table of the command is
replaced, or none is.

`raw.ingest_log` records, in that same transaction, one row per job run: which catalog files its
`prepare` read (every path `verified_path` handed out, with its sha256), which tables it wrote, and
its `code_version` (`code_version`: a hash of the source of the modules its loader is made of).
`predictabase refresh` re-ingests a job when any of these no longer matches (predictabase/refresh.py).
A job with a `finish` (the GPT-3 import's Parquet run, written after COMMIT) gets its row after
`finish` succeeds, so a kill between the two leaves it looking un-ingested, never the reverse.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
import uuid
from functools import cache
from pathlib import Path

import duckdb

from predictabase.core.config import Paths
from predictabase.core.db import transaction
from predictabase.core.errors import IngestError
from predictabase.core.failpoints import failpoint
from predictabase.core.progress import progress_bar
from predictabase.ingest.corpus_declarations import INPUT_KEY
from predictabase.ingest.datasets import (
    corpora,
    gpt3_natural_stories,
    live,
    model_table,
    natural_stories,
    pairwise,
    pimentel_meister,
    references,
    top1_game,
    ucl_published,
    user_corpus,
    wild,
    word_frequencies,
    word_probability_sums,
)
from predictabase.ingest.datasets._common import CorpusLoad, Job, paths_only
from predictabase.ingest.datasets.live import INPUT_KEY as LIVE_KEY
from predictabase.ingest.raw import connect, now_utc, replace_tables_in
from predictabase.ingest.sources.fetch import recording_inputs, verify_raw
from predictabase.ingest.sources.references import INPUT_KEY as REFERENCES_KEY


def _ns_documents(prepared: dict) -> tuple[dict[str, str], str] | None:
    load: CorpusLoad | None = prepared.get(natural_stories.CORPUS)
    if load is None:
        return None
    docs = next(f for t, f, _ in load.tables if t == "raw.documents")
    return dict(zip(docs["doc_id"].to_list(), docs["text"].to_list())), docs["corpus_version"][0]


_CORPUS_JOBS = corpora.corpus_jobs()
_ALL: list[Job] = [
    # every shipped corpus's jobs, from its declaration and its adapter (ingest/datasets/corpora.py)
    *_CORPUS_JOBS,
    # the user's corpora (`predictabase corpus add`, <warehouse>/corpora.toml): texts, words, reading times,
    # cloze and frequencies of each, and raw.corpora (every corpus, shipped and the user's)
    Job("declared_corpora", user_corpus.prepare, user_corpus.write, writes=("raw.corpora", *user_corpus.TABLES)),
    Job(
        "gpt3_natural_stories",
        prepare=lambda paths, prepared: gpt3_natural_stories.prepare_gpt3(paths, _ns_documents(prepared)),
        finish=gpt3_natural_stories.write_gpt3,
        after=(natural_stories.CORPUS,),
        writes=("parquet:token_scores",),
    ),
    Job(
        "pairwise",
        paths_only(pairwise.build_frames),
        replace_tables_in,
        writes=("raw.pairwise_answers", "raw.pairwise_questions", "raw.pairwise_samples", "raw.pairwise_skipped_files"),
    ),
    Job(
        "wild",
        paths_only(wild.build_frames),
        replace_tables_in,
        writes=("raw.wild_efforts", "raw.wild_respondents", "raw.wild_scores", "raw.wild_tasks", "raw.wild_texts"),
    ),
    # the top-1 game (Shlegeris et al. 2024, sec. 3): raw rows only; the true tokens are joined in dbt (int_top1_guesses)
    Job("lm_game_top1", paths_only(top1_game.load_guesses), replace_tables_in, writes=("raw.top1_guesses",)),
    Job(
        "lm_game_model_perfs",
        paths_only(top1_game.load_model_perfs),
        replace_tables_in,
        writes=("raw.top1_reference_accuracies",),
    ),
    Job(
        "lm_game_vocabulary", paths_only(top1_game.load_vocabulary), replace_tables_in, writes=("raw.game_vocabulary",)
    ),
    # UCL published per-word reading means (all_measures.csv); compared with the derived ones in dbt
    Job(
        "ucl_published_measures",
        paths_only(ucl_published.load),
        replace_tables_in,
        writes=("raw.ucl_published_word_measures",),
    ),
    # de Varda et al.'s every numeric per-word column and their published results (reproduced in dbt)
    Job(
        "ucl_published_predictors",
        paths_only(ucl_published.load_values),
        replace_tables_in,
        writes=("raw.ucl_published_word_values",),
    ),
    Job(
        "ucl_published_results",
        paths_only(ucl_published.load_results),
        replace_tables_in,
        writes=("raw.ucl_published_results",),
    ),
    # wordfreq + Google Books frequency of every corpus word (raw.word_frequencies: its frequency_source 'wordfreq'
    # rows; a user's own file is declared_corpora's, frequency_source 'user')
    Job(
        "word_frequencies",
        word_frequencies.load,
        word_frequencies.write,
        after=(*word_frequencies.CORPORA, "declared_corpora"),
        writes=("raw.word_frequencies",),
    ),
    # eye tracking per reader: raw.eye_tracking_fixations holds Provo's and UCL's fixations, each job
    # replacing its corpus's rows; raw.eye_tracking_measures_upstream the UCL per-reader measures as published
    # Pimentel & Meister 2024: 11 models' word surprisals (WT and LW) next to their per-word reading
    # times on Natural Stories and Provo, joined one to one to our corpus words; their published delta LLs
    Job(
        "pimentel_meister_surprisal",
        pimentel_meister.load_surprisal,
        replace_tables_in,
        after=(*pimentel_meister.CORPORA, "declared_corpora"),
        writes=("raw.pimentel_meister_words",),
    ),
    # Wilcox et al. 2023: their rows of MECO's 11 languages (four models' surprisal and entropy, their
    # frequencies and lengths, the eye-tracking means as they merged them) and their fitted link curves
    # the models' names for people, families and sizes, from the scoring package's model table (no source file)
    Job("model_table", model_table.load, replace_tables_in, writes=("raw.model_table",)),
    # Oh & Schuler's (2024) word-probability-sums diagnostic: a bigram LM's every word, scored by the project's Scorer
    Job(
        "word_probability_sums",
        word_probability_sums.load,
        replace_tables_in,
        writes=("raw.word_probability_sums_tokens", "raw.word_probability_sums_words"),
    ),
    # the BibTeX of the papers, datasets and models the numbers come from (ingest/sources/references.toml)
    Job("references", references.load, replace_tables_in, writes=("raw.references",)),
    Job(
        "pimentel_meister_delta_llh",
        pimentel_meister.load_delta_llh,
        replace_tables_in,
        after=("declared_corpora",),
        writes=("raw.pimentel_meister_delta_llh",),
    ),
    # the dashboard's live games: the answer store <warehouse>/live/answers.sqlite, copied whole
    Job(
        "live",
        live.load,
        replace_tables_in,
        writes=("raw.live_pairwise_answers", "raw.live_players", "raw.live_top1_answers"),
    ),
]
JOBS: dict[str, Job] = {job.name: job for job in _ALL}
NAMES = list(JOBS)
#: the shipped corpora's jobs that load texts (and the surprisals UCL's file publishes beside them): `ingest_corpora`
CORPUS_TABLES = ("raw.documents", "raw.words", "raw.game_doc_tokens", "raw.imported_word_surprisal")
CORPUS_NAMES = [j.name for j in _CORPUS_JOBS if set(j.writes) & set(CORPUS_TABLES)]


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


def prepare_all(
    paths: Paths, wanted: list[str], show_progress: bool = True, inputs: dict[str, dict[str, str]] | None = None
) -> dict[str, object]:
    """Read and validate each job in `wanted` (in that order; nothing is written). `inputs`, when given,
    receives job -> {catalog path: sha256} of the files each job's prepare read."""
    prepared: dict[str, object] = {}
    with progress_bar(show=show_progress) as progress:
        task = progress.add_task("ingest: reading", total=len(wanted))
        for name in wanted:
            progress.update(task, description=f"reading and validating {name}")
            with recording_inputs() as seen:
                prepared[name] = JOBS[name].prepare(paths, prepared)
            if inputs is not None:
                inputs[name] = dict(sorted(seen.items()))
            progress.advance(task)
    return prepared


# --------------------------------------------------------------------------- what a job is made of

#: packages whose modules make up a job's loader (parsing, validation, declared read options); the fetch
#: and catalog modules are not (a changed catalog file shows up as a changed input sha256 instead)
CODE_PACKAGES = ("predictabase.ingest.datasets", "predictabase.ingest.sources")
#: single modules outside those packages that loaders read: the corpus and model tables, the diagnostic
CODE_MODULES = {
    "predictabase.ingest.corpus_table",
    "predictabase.ingest.text",
    "predictabase.ingest.scoring.model_table",
    "predictabase.ingest.scoring.diagnostics",
    "predictabase.core.live",
}
CODE_EXCLUDED = {"predictabase.ingest.sources.fetch", "predictabase.ingest.sources.catalog", __name__}
#: data files read by a module of the loader: their text counts as code
CODE_DATA = {
    "predictabase.ingest.sources.definitions": ("datasets.toml",),
    "predictabase.ingest.corpus_table": ("corpora.toml",),
}


def _in_code(module: str) -> bool:
    return (
        (module.startswith(tuple(p + "." for p in CODE_PACKAGES)) or module in CODE_MODULES)
        and module not in CODE_EXCLUDED
        and module in sys.modules
        and getattr(sys.modules[module], "__file__", None) is not None
    )


def _imports(module: str) -> set[str]:
    """The modules `module`'s source imports (statically, function-level imports included)."""
    source = Path(sys.modules[module].__file__).read_text(encoding="utf-8")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                pkg = module.rsplit(".", node.level)[0]
                base = f"{pkg}.{base}" if base else pkg
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in sys.modules else base)
    return found


def _entry_modules(job: Job) -> set[str]:
    """The modules a job's prepare / write / finish come from (through the registry's lambdas too)."""
    found: set[str] = set()
    for fn in (job.prepare, job.write, job.finish):
        if fn is None:
            continue
        todo = [fn]
        while todo:
            f = todo.pop()
            found.add(getattr(f, "__module__", "") or "")
            code = getattr(f, "__code__", None)
            if code is None:
                continue
            g = getattr(f, "__globals__", {})
            for n in code.co_names:
                v = g.get(n)
                if isinstance(v, type(sys)):
                    found.add(v.__name__)
                elif callable(v) and getattr(v, "__module__", None) == __name__ and v is not f:
                    todo.append(v)  # a registry helper (e.g. _ns_documents)
            for cell in getattr(f, "__closure__", None) or ():
                v = cell.cell_contents
                if isinstance(v, type(sys)):
                    found.add(v.__name__)
                elif callable(v):
                    found.add(getattr(v, "__module__", "") or "")
    return found


@cache
def code_version(name: str) -> str:
    """sha256 (16 hex) of the source of every module a job's loader is made of: the modules of its
    prepare / write / finish, closed over their static imports within `CODE_PACKAGES` (`_common`, the
    generic readers and the dataset definitions included), plus the data files those modules read
    (`datasets.toml`). Editing a loader changes exactly the jobs that use it."""
    todo = [m for m in _entry_modules(JOBS[name]) if _in_code(m)]
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += [i for i in _imports(m) if _in_code(i) and i not in seen]
    h = hashlib.sha256()
    for m in sorted(seen):
        f = Path(sys.modules[m].__file__)
        h.update(f"{m}\n".encode())
        h.update(f.read_bytes())
        for data in CODE_DATA.get(m, ()):
            h.update(f"{m}:{data}\n".encode())
            h.update((f.parent / data).read_bytes())
    return h.hexdigest()[:16]


def code_modules(name: str) -> list[str]:
    """The modules `code_version(name)` hashes (for the docs and tests)."""
    todo = [m for m in _entry_modules(JOBS[name]) if _in_code(m)]
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += [i for i in _imports(m) if _in_code(i)]
    return sorted(seen)


def tables_of(name: str, prepared: object) -> list[str]:
    """What a job writes (its declared `writes`), after checking that the frames it prepared are those tables."""
    job = JOBS[name]
    tables: set[str] = set()
    if isinstance(prepared, CorpusLoad):
        tables = {t for t, _, _ in prepared.tables}
    elif isinstance(prepared, dict) and job.write is replace_tables_in:
        tables = {f"raw.{k}" for k in prepared}
    undeclared = tables - set(job.writes)
    if undeclared:  # pragma: no cover - a registry invariant (the ingest tests run every job)
        raise AssertionError(f"ingest job {name} wrote {sorted(undeclared)}, not declared in its `writes`")
    return sorted(job.writes)


def writers() -> dict[str, tuple[str, ...]]:
    """Every table (and Parquet output) -> the ingest jobs that write it, in registry order."""
    out: dict[str, tuple[str, ...]] = {}
    for name, job in JOBS.items():
        for table in job.writes:
            out[table] = (*out.get(table, ()), name)
    return out


# --------------------------------------------------------------------------- raw.ingest_log

INGEST_LOG = "raw.ingest_log"
_LOG_DDL = (
    f"CREATE TABLE IF NOT EXISTS {INGEST_LOG} (job VARCHAR, ingest_id VARCHAR, ingested_at TIMESTAMPTZ, "
    "inputs JSON, tables JSON, code_version VARCHAR, datasets JSON)"
)


def catalog_versions(datasets) -> dict[str, str]:
    """dataset -> sha256 (16 hex) of its catalog entries (every file's path and sha256): a file added to,
    removed from or changed in a dataset a job read changes it, even one the job did not read before
    (a new file matching a glob role)."""
    from predictabase.ingest.sources.catalog import files_for

    out = {}
    for d in sorted(datasets or ()):
        lines = "\n".join(f"{f.path} {f.sha256}" for f in sorted(files_for(d), key=lambda f: f.path))
        out[d] = hashlib.sha256(lines.encode()).hexdigest()[:16]
    return out


def _datasets_of(inputs: dict[str, str]) -> dict[str, str]:
    from predictabase.ingest.sources.catalog import by_path

    return catalog_versions({by_path(p).dataset for p in inputs if p not in (INPUT_KEY, REFERENCES_KEY, LIVE_KEY)})


def _log_jobs(con: duckdb.DuckDBPyConnection, ingest_id: str, rows: list[tuple[str, dict, list[str]]]) -> None:
    con.execute(_LOG_DDL)
    when = now_utc()
    con.executemany(
        f"INSERT INTO {INGEST_LOG} VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                job,
                ingest_id,
                when,
                json.dumps(inputs, sort_keys=True),
                json.dumps(tables),
                code_version(job),
                json.dumps(_datasets_of(inputs), sort_keys=True),
            )
            for job, inputs, tables in rows
        ],
    )


def read_ingest_log(paths: Paths) -> dict[str, dict]:
    """job -> its latest raw.ingest_log row (ingest_id, ingested_at, inputs, tables, code_version, datasets); {} when
    the warehouse or the log does not exist yet."""
    if not paths.duckdb.exists():
        return {}
    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        if not con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = 'ingest_log'"
        ).fetchone()[0]:
            return {}
        rows = con.execute(
            f"SELECT job, ingest_id, ingested_at, inputs, tables, code_version, datasets "
            f"FROM {INGEST_LOG} QUALIFY row_number() OVER (PARTITION BY job "
            "ORDER BY ingested_at DESC) = 1"
        ).fetchall()
    return {
        job: {
            "ingest_id": iid,
            "ingested_at": at,
            "inputs": json.loads(inputs),
            "tables": json.loads(tables),
            "code_version": cv,
            "datasets": json.loads(ds) if ds else {},
        }
        for job, iid, at, inputs, tables, cv, ds in rows
    }


def run_ingest(paths: Paths, names: list[str] | None = None, show_progress: bool = True) -> dict[str, object]:
    """Ingest the named jobs (None: all); returns name -> rows written (or the run for imports)."""
    wanted = list(dict.fromkeys(names or NAMES))
    unknown = [n for n in wanted if n not in JOBS]
    if unknown:
        raise IngestError("ingest", f"unknown name(s) {', '.join(unknown)}; choose from {', '.join(NAMES)}")
    wanted = ordered(wanted)
    verify_raw(paths)  # every fetched source file, read by these jobs or not
    inputs: dict[str, dict[str, str]] = {}
    prepared = prepare_all(paths, wanted, show_progress, inputs)
    ingest_id = uuid.uuid4().hex
    counts: dict[str, object] = {}
    with connect(paths) as con, transaction(con):
        for name in wanted:
            if JOBS[name].write is not None:
                counts[name] = JOBS[name].write(con, prepared[name])
        _log_jobs(con, ingest_id, [(n, inputs[n], tables_of(n, prepared[n])) for n in wanted if JOBS[n].finish is None])
        failpoint("ingest.before_commit")
    for name in wanted:
        if JOBS[name].finish is not None:
            counts[name] = _summary(JOBS[name].finish(prepared[name]))
            with connect(paths) as con, transaction(con):
                _log_jobs(con, ingest_id, [(name, inputs[name], tables_of(name, prepared[name]))])
        if isinstance(prepared[name], CorpusLoad):
            corpora.LAST_NOTES[name] = prepared[name].notes
    return counts


def ingest_corpora(paths: Paths, names: list[str] | None = None, show_progress: bool = True) -> dict[str, object]:
    """Ingest the named corpus jobs (None: every corpus job) like `run_ingest` (validate all, then one
    transaction). Returns name -> rows written."""
    wanted = list(CORPUS_NAMES) if not names else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in CORPUS_NAMES]
    if unknown:
        raise IngestError(None, f"unknown corpus name(s) {unknown}; choose from {CORPUS_NAMES}")
    return run_ingest(paths, wanted, show_progress)


def live_store_changed(paths: Paths) -> bool:
    """Whether the live games' answer store holds something the warehouse does not: its digest differs from the
    one the last `live` ingest recorded (or the job never ran). `build` runs the job first when it does."""
    from predictabase.core.live import digest, store_path

    path = store_path(paths.warehouse)
    row = read_ingest_log(paths).get("live")
    if row is None:
        return path.exists()
    return row["inputs"].get(LIVE_KEY) != digest(path)  # "unreadable" never matches: the job names the problem
