"""The `predictabase` command line.

Every command that writes holds the warehouse's writer lock (`predictabase.warehouse.lock`) and reports bad input
as one line, `error: <file or option>: <problem>`, never a traceback. Exit codes (`predictabase.core.errors`): 0 done,
2 usage or input error, 75 the writer lock is busy, 130 interrupted, 1 internal error. Every option that has an
environment variable shows it in --help; `--json` prints a command's summary as one JSON object on stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from predictabase import __version__, runs
from predictabase.core.config import (
    WAREHOUSE_MARKERS,
    WRITER_LOCK,
    Paths,
    can_hold_new_warehouse,
    is_warehouse,
    is_warehouse_or_being_made,
)
from predictabase.core.config import paths as get_paths
from predictabase.core.errors import (
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    OptionError,
    PredictabaseError,
    WarehouseError,
)
from predictabase.core.fsutil import refuse_inside_warehouse
from predictabase.ingest import corpus_table
from predictabase.ingest.corpus_declarations import MEASURES, scored_corpora
from predictabase.ingest.scoring.model_table import DEFAULT_MODEL, MODEL_HELP
from predictabase.ingest.scoring.steps import TEMPERATURES as TEMPERATURE_GRID
from predictabase.models_config import DTYPES
from predictabase.plan import PLAN

EPILOG = "Exit codes: " + "; ".join(f"{code} {what}" for code, what in EXIT_CODES.items()) + "."
app = typer.Typer(
    help="predictabase: how well humans and language models predict the next word.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)


WarehouseOpt = Annotated[
    Path | None,
    typer.Option(
        "--warehouse",
        envvar="PREDICTABASE_WAREHOUSE",
        help="warehouse directory (default: warehouse/ of the checkout, or of the current directory for an installed package)",
    ),
]
MirrorOpt = Annotated[
    Path | None,
    typer.Option(
        "--mirror", envvar="PREDICTABASE_MIRROR", help="local mirror of the upstream files (default: none, download)"
    ),
]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        envvar="PREDICTABASE_WAIT",
        help="seconds to wait for another writer of this warehouse, 0 to 86,400 (0: refuse at once, exit 75)",
    ),
]
ModelOpt = Annotated[str, typer.Option("--model", "-m", envvar="PREDICTABASE_MODEL", help=MODEL_HELP)]
DeviceOpt = Annotated[
    str | None, typer.Option(envvar="PREDICTABASE_DEVICE", help="cpu, cuda, cuda:N (default: cuda when present)")
]
DtypeOpt = Annotated[
    str | None,
    typer.Option(
        envvar="PREDICTABASE_DTYPE",
        help="float32, bfloat16, float16 (default float32 on every device; bfloat16 is faster on a GPU and moves SmolLM2's log-probabilities by 0.1 nats on average)",
    ),
]
PortOpt = Annotated[int, typer.Option(envvar="PREDICTABASE_PORT", help="dashboard port (1..65535)")]
EngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        envvar="PREDICTABASE_ENGINE",
        help="local (this process) or ray (model replicas on a Ray cluster, identical results; docs/guides/scale.md)",
    ),
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address",
        envvar="PREDICTABASE_RAY_ADDRESS",
        help="with --engine ray: the cluster to join (ray://host:10001, auto); default a local Ray instance on this machine",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        envvar="PREDICTABASE_RAY_WORKERS",
        help="with --engine ray: model replicas, 1 to 1024 (default one per GPU, else one per --worker-cpus cores)",
    ),
]
WorkerCpusOpt = Annotated[
    int,
    typer.Option(
        "--worker-cpus",
        envvar="PREDICTABASE_RAY_WORKER_CPUS",
        help="with --engine ray: CPU cores (torch threads) per replica, 1 to 256",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the summary as one JSON object on stdout")]


def command(name: str | None = None) -> Callable:
    """`app.command`, with the help taken from the docstring with its paragraphs unwrapped (the terminal wraps
    them; a docstring's own line breaks would cut sentences in the command list)."""

    def deco(fn: Callable) -> Callable:
        paragraphs = (fn.__doc__ or "").strip().split("\n\n")
        return app.command(name, help="\n\n".join(" ".join(p.split()) for p in paragraphs))(fn)

    return deco


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"predictabase {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    pass  # the app's help is Typer(help=...); this callback only adds --version


def emit_json(summary: dict) -> None:
    """A command's summary as one JSON object on stdout (--json)."""
    typer.echo(json.dumps(_jsonable(summary), sort_keys=True))


def one_line(exc: BaseException | str) -> str:
    """An error message on one line (dbt's and transformers' messages span several)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 600 else text[:597] + "..."


def _fail(exc: BaseException | str, code: int | None = None) -> None:
    message = one_line(exc)
    run = runs.current()
    if run is not None and run.error is None:
        run.error = message
    console.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(code=code if code is not None else getattr(exc, "exit_code", EXIT_USAGE))


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def recorded(command: str) -> Callable:
    """Record every call of a command in the warehouse's runs log (`predictabase.runs`): its options,
    start, end, status, rows in/out and one-line error. A step of `all` records its parent's run id."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            log = get_paths(kwargs.get("warehouse")).runs_log
            with runs.recorded(log, command, {k: _jsonable(v) for k, v in kwargs.items()}):
                return fn(*args, **kwargs)

        return inner

    return wrap


def _set_rows(rows_in: int | None = None, rows_out: int | None = None) -> None:
    run = runs.current()
    if run is not None:
        run.rows_in, run.rows_out = rows_in, rows_out


def check(option: str, value, ok: bool, allowed: str) -> None:
    """Refuse an option value outside its domain, naming the option and the allowed range."""
    if not ok:
        raise OptionError(option, f"{value!r} is not allowed; {allowed}")


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    """Turn every expected failure into the one-line error, with its exit code (2; 75 for a busy writer lock;
    130 when interrupted)."""
    import duckdb

    try:
        yield
    except PredictabaseError as exc:
        _fail(exc)
    except duckdb.Error as exc:
        _fail(f"the warehouse database: {type(exc).__name__}: {exc}")
    except OSError as exc:  # disk full, permissions, ...
        _fail(f"{exc.filename or 'file system'}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        _fail(
            "interrupted; the warehouse and the published snapshot are as they were before this step "
            "(an interrupted scoring run resumes next time)",
            EXIT_INTERRUPTED,
        )
    except BaseException as exc:  # noqa: BLE001 - only running out of memory is handled here
        if not out_of_memory(exc):
            raise
        _fail(OUT_OF_MEMORY)


def engine_options(engine: str, address: str | None, workers: int | None, worker_cpus: int, output: str | None = None):
    """None for the local engine, else the Ray engine's options (checked)."""
    check("--engine", engine, engine in ("local", "ray"), "local or ray")
    if engine == "local":
        for name, value in (("--address", address), ("--workers", workers), ("--output", output)):
            check(name, value, value is None, "only with --engine ray")
        check("--worker-cpus", worker_cpus, worker_cpus == 1, "only with --engine ray")
        return None
    from predictabase.ingest.scoring.distributed import RayOptions

    options = RayOptions(address=address, workers=workers, cpus=worker_cpus)
    options.check()  # --workers, --worker-cpus
    return options


def check_device_dtype(device: str | None, dtype: str | None) -> None:
    check(
        "--device",
        device,
        device is None or bool(re.fullmatch(r"cpu|cuda(:\d+)?|mps", device)),
        "cpu, cuda, cuda:N or mps",
    )
    check("--dtype", dtype, dtype is None or dtype in DTYPES, f"one of {', '.join(DTYPES)}")


def check_port(port: int) -> None:
    check("--port", port, 1 <= port <= 65535, "a port number from 1 to 65535")


#: score --batch-tokens: 16 times the largest batch a GPU's memory is given (engine.GPU_BATCH_TOKENS_MAX)
MAX_BATCH_TOKENS = 1 << 20
#: score --part-tokens: 64 times the largest default part (pipeline.PART_TOKENS), a few GB of results in memory
MAX_PART_TOKENS = 1 << 22
OUT_OF_MEMORY = (
    "out of memory: this machine's memory (or the process's limit) ran out before the command "
    "finished; the warehouse and the published snapshot are as they were before it"
)
#: what a Rust extension's panic says when Python could not allocate an object for it (polars turning rows into
#: tuples under a memory limit: pyo3 gets a NULL object back and panics instead of raising MemoryError)
OOM_PANICS = ("PyObject pointer is null", "memory allocation of")


def out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` says the process ran out of memory: a MemoryError, or such a panic (`OOM_PANICS`)."""
    if isinstance(exc, MemoryError):
        return True
    return type(exc).__name__ == "PanicException" and any(s in str(exc) for s in OOM_PANICS)


NO_WAREHOUSE_HINT = (
    "check --warehouse / PREDICTABASE_WAREHOUSE; `predictabase fetch` or `predictabase all` creates "
    "one, as `corpus add` and `refresh` do with --create"
)
#: --wait and --timeout: at most a day (a finite wait; a scheduled job that waits longer is stuck)
MAX_SECONDS = 86_400.0


def existing_warehouse(warehouse: Path | None, being_made_ok: bool = False) -> Paths:
    """The warehouse of a command that needs one already there (all but fetch and all, and corpus add and
    refresh without --create): a folder that holds a warehouse (`config.is_warehouse`), else WarehouseError.
    `being_made_ok` (a writer, which takes the lock next and looks again): also a folder whose first writer has
    taken its lock (`config.is_warehouse_or_being_made`)."""
    p = get_paths(warehouse)
    if not p.warehouse.is_dir():
        raise WarehouseError(p.warehouse, f"no such warehouse directory ({NO_WAREHOUSE_HINT})")
    if being_made_ok and is_warehouse_or_being_made(p.warehouse):
        return p
    if not is_warehouse(p.warehouse):
        raise WarehouseError(
            p.warehouse, f"not a warehouse: it holds none of {', '.join(WAREHOUSE_MARKERS)} ({NO_WAREHOUSE_HINT})"
        )
    return p


def new_warehouse(warehouse: Path | None) -> tuple[Paths, Path | None]:
    """The warehouse of a command that may create one: an existing warehouse, or a folder that is new (created
    here, with its missing parents) or empty. Also the topmost folder created (None when none was), which the
    command removes again when it fails before writing anything there."""
    p = get_paths(warehouse)
    if is_warehouse(p.warehouse):
        return p, None
    if not can_hold_new_warehouse(p.warehouse):
        raise WarehouseError(
            p.warehouse,
            "not a warehouse, and not an empty folder: a new warehouse goes into a new "
            "or empty folder (check --warehouse / PREDICTABASE_WAREHOUSE)",
        )
    created = next((f for f in reversed([p.warehouse, *p.warehouse.parents]) if not f.exists()), None)
    p.warehouse.mkdir(parents=True, exist_ok=True)
    return p, created


def _remove_if_unused(created: Path | None, p: Paths) -> None:
    """Remove the folders `new_warehouse` created when the command left nothing in them but its lock file."""
    if created is None or not p.warehouse.is_dir() or any(f.name != WRITER_LOCK for f in p.warehouse.iterdir()):
        return
    (p.warehouse / WRITER_LOCK).unlink(missing_ok=True)
    for folder in [p.warehouse, *p.warehouse.parents]:
        with contextlib.suppress(OSError):
            folder.rmdir()
        if folder == created:
            break


def check_wait(wait: float) -> None:
    check("--wait", wait, 0 <= wait <= MAX_SECONDS, f"seconds from 0 to {MAX_SECONDS:,.0f} (a day)")


@contextlib.contextmanager
def writing(
    command: str, warehouse: Path | None, wait: float, create: bool = False, dry_run: bool = False
) -> Iterator[Paths]:
    """The warehouse of a writing command, with its writer lock held and errors on one line. `create`: the
    command may create the warehouse (`new_warehouse`); else it must exist (`existing_warehouse`). `dry_run`: the
    command writes nothing, so it creates nothing either (a folder a new warehouse may go into is planned for as
    it is) and takes no lock where it cannot (`writer_lock`'s read_only_ok)."""
    from predictabase.warehouse.lock import writer_lock

    with _errors():
        check_wait(wait)
        if create and dry_run:
            p, created = get_paths(warehouse), None
            if not can_hold_new_warehouse(p.warehouse):
                p = existing_warehouse(warehouse)
        elif create:
            p, created = new_warehouse(warehouse)
        else:
            p, created = existing_warehouse(warehouse, being_made_ok=True), None
        try:
            with writer_lock(p, command, wait, read_only_ok=dry_run):
                if not (create or is_warehouse(p.warehouse)):  # a first writer that did not make it
                    existing_warehouse(warehouse)
                yield p
        finally:
            _remove_if_unused(created, p)


@command()
@recorded("fetch")
def fetch(
    mirror: MirrorOpt = None,
    dataset: Annotated[str | None, typer.Option(help="only this dataset")] = None,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Fetch every catalog file (copy from a mirror or download) and verify its sha256. Creates the warehouse
    when --warehouse names a new or empty folder."""
    from predictabase.ingest.sources.catalog import datasets
    from predictabase.ingest.sources.fetch import fetch_and_record

    with writing("fetch", warehouse, wait, create=True) as p:
        if dataset is not None:
            check("--dataset", dataset, dataset in datasets(), f"choose from {', '.join(datasets())}")
        if mirror is not None:
            check("--mirror", str(mirror), Path(mirror).is_dir(), "an existing directory")
        results = fetch_and_record(p, mirror, dataset)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    _set_rows(len(results), len(results) - counts.get("present", 0))  # files checked, files copied/downloaded
    if as_json:
        emit_json(
            {
                "command": "fetch",
                "warehouse": p.warehouse,
                "files": len(results),
                "by_status": counts,
                "fetched": [r.file.path for r in results if r.status != "present"],
            }
        )
    else:
        console.print(f"fetched {len(results)} files, all checksums verified: {counts}")


@command("ingest")
@recorded("ingest")
def ingest_cmd(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="the ingest jobs to run (default: every job; `predictabase ingest --list` names them)"),
    ] = None,
    list_jobs: Annotated[
        bool,
        typer.Option("--list", help="print the ingest jobs, one per line (with the jobs each comes after), and exit"),
    ] = False,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Load fetched sources into the warehouse's raw tables: every file is validated before
    anything is written, then all tables are replaced in one transaction (all or nothing)."""
    from predictabase.ingest.datasets.registry import JOBS, NAMES, run_ingest

    if list_jobs:
        for name in NAMES:
            after = f"  (after {', '.join(JOBS[name].after)})" if JOBS[name].after else ""
            typer.echo(f"{name}{after}")
        return
    with writing("ingest", warehouse, wait) as p:
        counts = run_ingest(p, names or None)
    _set_rows(
        None,
        sum(n for n in counts.values() if isinstance(n, int))
        + sum(n.get("n_tokens", 0) for n in counts.values() if isinstance(n, dict)),
    )  # rows written
    if as_json:
        emit_json({"command": "ingest", "warehouse": p.warehouse, "jobs": counts})
        return
    for name, n in counts.items():
        console.print(f"{name}: {n}")


@command()
@recorded("score")
def score(
    model: ModelOpt = DEFAULT_MODEL,
    corpus: Annotated[
        list[str], typer.Option("--corpus", "-c", help="corpus to score (repeatable; 'all' for every corpus)")
    ] = ["all"],  # noqa: B006 - Typer reads the default; it is never mutated
    limit: Annotated[
        int | None, typer.Option(help="score only the first N >= 1 documents (quick runs; not used by marts)")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="score whole LM-game documents, not just the guessed prefix")
    ] = False,
    context_length: Annotated[
        int | None,
        typer.Option(help="tokens per window including BOS, 2..model maximum (default: model maximum, capped at 2048)"),
    ] = None,
    stride: Annotated[
        int | None,
        typer.Option(help="new tokens per sliding window, 1..context_length-1 (default: half the context)"),
    ] = None,
    top_k: Annotated[int, typer.Option(help="alternatives stored per position, 0..vocabulary size")] = 10,
    batch_tokens: Annotated[
        int | None,
        typer.Option(
            help="padded tokens per forward batch (1 to 1,048,576; default 1024 on CPU, sized to the memory of a GPU)"
        ),
    ] = None,
    part_tokens: Annotated[
        int | None,
        typer.Option(
            help="tokens per part file, the unit a run resumes from and a Ray worker scores (1 to 4,194,304; default about 30 s of work on the device)"
        ),
    ] = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    worker_cpus: WorkerCpusOpt = 1,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            envvar="PREDICTABASE_SCORE_OUTPUT",
            help="with --engine ray: the token-score root the workers write, a folder they share or an fsspec URL (s3://bucket/lake); default the warehouse's",
        ),
    ] = None,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """Score every token of a corpus with a causal LM and write token-level Parquet."""
    from predictabase.ingest.scoring import ScoreSettings, score_corpora

    with writing("score", warehouse, wait) as p:
        known = list(scored_corpora(p))  # the shipped corpora and this warehouse's own (`corpus add`)
        for c in corpus:
            check("--corpus", c, c in [*known, "all"], f"choose from {', '.join([*known, 'all'])}")
        check("--limit", limit, limit is None or limit >= 1, "an integer >= 1 (leave it out to score everything)")
        check(
            "--context-length",
            context_length,
            context_length is None or context_length >= 2,
            "an integer from 2 to the model's maximum",
        )
        check("--stride", stride, stride is None or stride >= 1, "an integer from 1 to context_length - 1")
        check("--top-k", top_k, top_k >= 0, "an integer from 0 to the model's vocabulary size")
        check(
            "--batch-tokens",
            batch_tokens,
            batch_tokens is None or 1 <= batch_tokens <= MAX_BATCH_TOKENS,
            f"an integer from 1 to {MAX_BATCH_TOKENS:,} (a batch's activations must fit the device's memory)",
        )
        check(
            "--part-tokens",
            part_tokens,
            part_tokens is None or 1 <= part_tokens <= MAX_PART_TOKENS,
            f"an integer from 1 to {MAX_PART_TOKENS:,} (a part is held in memory until it is written)",
        )
        check_device_dtype(device, dtype)
        ray = engine_options(engine, address, workers, worker_cpus, output)
        if output is not None and ("://" not in output or output.startswith("file://")):  # a local folder
            refuse_inside_warehouse(
                "--output", Path(output.removeprefix("file://")), p.warehouse, allowed=(p.token_scores,)
            )
        corpora = known if "all" in corpus else list(dict.fromkeys(corpus))
        settings = ScoreSettings(
            context_length=context_length,
            stride=stride,
            top_k=top_k,
            batch_tokens=batch_tokens,
            limit=limit,
            full=full,
            device=device,
            dtype=dtype,
            part_tokens=part_tokens,
        )
        if ray is None:
            scored = score_corpora(p, model, corpora, settings, show_progress=True)
        else:
            from predictabase.ingest.scoring.pipeline import score_corpora_ray

            scored = score_corpora_ray(p, model, corpora, settings, ray, output=output)
        if output is None and limit is None and not full:  # whole corpora, as a refresh scores them
            from predictabase.ingest.scoring.pipeline import step_runs
            from predictabase.refresh.scoring import record_command_runs

            record_command_runs(
                p,
                "score",
                model,
                step_runs(p, scored),
                context_length=context_length,
                stride=stride,
                top_k=top_k,
                dtype=dtype,
                device=device,
            )
    _set_rows(sum(r["n_docs"] for r in scored), sum(r["n_tokens"] for r in scored))  # documents, token rows
    for run in scored:
        console.print(
            f"{run['model_key']} / {run['corpus']}: {run['n_tokens']} tokens in {run['n_docs']} documents "
            f"(run {run['run_id']}, {run['status']})"
        )


@command()
@recorded("top1")
def top1(
    model: ModelOpt = DEFAULT_MODEL,
    max_expansions: Annotated[int, typer.Option(help="forward steps per question at most, 1..100000")] = 64,
    candidates: Annotated[
        int,
        typer.Option(
            help="most probable words found and kept per question, 1..100 (1 = the prediction; each more costs about 1.5 forward steps per question)"
        ),
    ] = 1,
    limit: Annotated[int | None, typer.Option(help="only the first N >= 1 documents (quick runs)")] = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    worker_cpus: WorkerCpusOpt = 1,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """The model's most probable next word on the top-1 game's word-token questions (Shlegeris et al. 2024, section 3)."""
    from predictabase.ingest.scoring.top1_words import Top1Settings, run_top1

    with writing("top1", warehouse, wait) as p:
        check_device_dtype(device, dtype)
        ray = engine_options(engine, address, workers, worker_cpus)
        wanted = Top1Settings(max_expansions=max_expansions, n_candidates=candidates)
        run = run_top1(p, model, wanted, device=device, dtype=dtype, limit=limit, engine=ray)
        if wanted == Top1Settings() and limit is None:  # as a refresh runs the step
            from predictabase.ingest.scoring.top1_words import step_run
            from predictabase.refresh.scoring import record_command_runs

            record_command_runs(p, "top1", model, [step_run(p, corpus_table.GAME, run)], dtype=dtype, device=device)
    _set_rows(run.get("n_questions"), run.get("n_questions"))  # questions asked, predictions written
    if run.get("method") == "exact_token":
        console.print(f"{run['model_key']}: {run['note']}")
    else:
        console.print(
            f"{run['model_key']} / top-1 game: {run['n_questions']} word-token questions, "
            f"{run['n_expanded']} expansions (run {run['run_id']}{', already complete' if run.get('skipped') else ''})"
        )


@command()
@recorded("cloze")
def cloze(
    model: ModelOpt = DEFAULT_MODEL,
    limit: Annotated[
        int | None,
        typer.Option(help="only the first N >= 1 documents of each corpus (quick runs; never in the marts)"),
    ] = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    worker_cpus: WorkerCpusOpt = 1,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """The model's probability of every human cloze response word after its context (UCL), and of Provo's
    modal responses and the true words: ln p(tokens), ln B before and after (Oh & Schuler 2024, eqs. 5-6)."""
    from predictabase.ingest.scoring.cloze_responses import run_cloze

    with writing("cloze", warehouse, wait) as p:
        check_device_dtype(device, dtype)
        check("--limit", limit, limit is None or limit >= 1, "an integer >= 1 (leave it out for every document)")
        ray = engine_options(engine, address, workers, worker_cpus)
        run = run_cloze(p, model, device=device, dtype=dtype, limit=limit, engine=ray)
        if limit is None:  # as a refresh runs the step
            from predictabase.ingest.scoring.cloze_responses import step_run
            from predictabase.refresh.scoring import record_command_runs

            record_command_runs(p, "cloze", model, [step_run(p, None, run)], dtype=dtype, device=device)
    _set_rows(run.get("n_contexts"), run.get("n_candidates"))  # contexts, (position, word) pairs scored
    console.print(
        f"{run['model_key']} / cloze: {run['n_candidates']} (position, word) pairs in {run['n_contexts']} "
        f"contexts, {run['n_nodes']} candidate tokens (run {run['run_id']}"
        f"{', already complete' if run.get('skipped') else ''})"
    )


@command()
@recorded("temperature")
def temperature(
    model: ModelOpt = DEFAULT_MODEL,
    corpus: Annotated[
        list[str], typer.Option("--corpus", "-c", help="corpus with reading times (repeatable; 'all' for every one)")
    ] = ["all"],  # noqa: B006 - Typer reads the default; it is never mutated
    temperatures: Annotated[
        str,
        typer.Option(help="the grid of T, comma-separated, 1 to 32 values from 0.05 to 100, holding 1"),
    ] = ",".join(f"{t:g}" for t in TEMPERATURE_GRID),
    context_length: Annotated[int | None, typer.Option(help="tokens per window incl. BOS (as for score)")] = None,
    stride: Annotated[int | None, typer.Option(help="tokens between window starts (as for score)")] = None,
    limit: Annotated[int | None, typer.Option(help="only the first N >= 1 texts of each corpus (quick runs)")] = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """Each token's log-probability and word-boundary mass under softmax(logits / T) for a grid of temperatures
    (Liu, Škrjanec & Demberg 2024), from one forward pass, on the corpora with reading times."""
    from predictabase.ingest.scoring.temperature import (
        CORPORA,
        TemperatureSettings,
        parse_temperatures,
        run_temperature,
    )

    with writing("temperature", warehouse, wait) as p:
        check_device_dtype(device, dtype)
        wanted = list(CORPORA) if corpus == ["all"] else list(dict.fromkeys(corpus))
        settings = TemperatureSettings(
            temperatures=parse_temperatures(temperatures), context_length=context_length, stride=stride, limit=limit
        )
        settings.check()
        done = run_temperature(p, model, wanted, settings, device=device, dtype=dtype)
    _set_rows(sum(r["n_tokens"] for r in done), sum(r["n_tokens"] for r in done))
    for r in done:
        console.print(
            f"{r['model_key']} / temperature / {r['corpus']}: {r['n_tokens']} tokens x {len(r['temperatures'])} T "
            f"(run {r['run_id']}{', already complete' if r.get('skipped') else ''})"
        )


@command()
@recorded("entropy")
def entropy(
    model: ModelOpt = DEFAULT_MODEL,
    corpus: Annotated[
        list[str], typer.Option("--corpus", "-c", help="corpus with reading times (repeatable; 'all' for every one)")
    ] = ["all"],  # noqa: B006 - Typer reads the default; it is never mutated
    samples: Annotated[int, typer.Option(help="whole words sampled per word position, 2..4096")] = 16,
    alpha: Annotated[float, typer.Option(help="Rényi's order, > 0 and <= 10, not 1 (Pimentel et al. 2023: 0.5)")] = 0.5,
    max_tokens: Annotated[int, typer.Option(help="a sampled word is cut at this many tokens, 1..64")] = 8,
    seed: Annotated[int, typer.Option(help="the run's seed, 0..2^63-1 (each word's generator is derived from it)")] = 0,
    limit: Annotated[int | None, typer.Option(help="only the first N >= 1 texts of each corpus (quick runs)")] = None,
    device: DeviceOpt = None,
    dtype: DtypeOpt = None,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """Each word's contextual entropy by Monte Carlo over whole words (Clark, Oh & Schuler 2025), its Rényi entropy
    (Pimentel et al. 2023) and the first-token entropy, with standard errors, on the corpora with reading times."""
    from predictabase.ingest.scoring.anticipation import CORPORA, EntropySettings, run_entropy

    with writing("entropy", warehouse, wait) as p:
        check_device_dtype(device, dtype)
        wanted = list(CORPORA) if corpus == ["all"] else list(dict.fromkeys(corpus))
        settings = EntropySettings(samples=samples, alpha=alpha, max_tokens=max_tokens, seed=seed, limit=limit)
        settings.check()
        done = run_entropy(p, model, wanted, settings, device=device, dtype=dtype)
    _set_rows(sum(r["n_words"] for r in done), sum(r["n_words"] for r in done))
    for r in done:
        console.print(
            f"{r['model_key']} / entropy / {r['corpus']}: {r['n_words']} words, N = {r['samples']} "
            f"(run {r['run_id']}{', already complete' if r.get('skipped') else ''})"
        )


@command()
@recorded("build")
def build(
    select: Annotated[str | None, typer.Option(help="dbt selection (default: everything)")] = None,
    allow_shrink: Annotated[
        bool,
        typer.Option(
            "--allow-shrink",
            help="publish even if the new marts lose a mart, its rows, or a corpus/model the published snapshot has",
        ),
    ] = False,
    lmer: Annotated[
        bool,
        typer.Option(
            "--lmer",
            help="also fit Oh & Schuler's (2024) mixed models in R (lme4, Natural Stories; minutes per model; needs Rscript)",
        ),
    ] = False,
    gam: Annotated[
        bool,
        typer.Option(
            "--gam",
            help="also fit the link-shape GAMs in R (mgcv: linear vs smooth surprisal per corpus and model; a minute or two, only for inputs that changed; needs Rscript)",
        ),
    ] = False,
    docs: Annotated[
        bool,
        typer.Option(
            "--docs/--no-docs",
            envvar="PREDICTABASE_DBT_DOCS",
            help="also publish dbt's documentation site beside the snapshot (<warehouse>/dbt_docs.html)",
        ),
    ] = True,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Run `dbt build` (models and schema tests) and publish the marts snapshot for the dashboard."""
    from predictabase.warehouse.build import build_and_publish

    with writing("build", warehouse, wait) as p:
        if not p.duckdb.exists():
            raise WarehouseError(
                p.duckdb,
                "nothing ingested into this warehouse yet; run `predictabase ingest` (or `predictabase all`) first",
            )
        from predictabase.refresh import fingerprints, record_full_build

        inputs = fingerprints(p)  # what this build reads; recorded for `refresh` when it builds everything
        if lmer and shutil.which("Rscript") is None:
            raise OptionError("--lmer", "needs R: Rscript is not on PATH (apt-get install r-base-core r-cran-lme4)")
        if gam and shutil.which("Rscript") is None:
            raise OptionError("--gam", "needs R: Rscript is not on PATH (apt-get install r-base-core r-cran-mgcv)")
        from predictabase.ingest.datasets.registry import live_store_changed, run_ingest

        if live_store_changed(p):  # the live games' new answers join the warehouse with this build
            run_ingest(p, ["live"], show_progress=False)
            inputs = fingerprints(p)
        result = build_and_publish(
            p, select=select, allow_shrink=allow_shrink, docs=docs, extra_dbt_args=r_engine_vars(lmer=lmer, gam=gam)
        )
        if select is None:
            record_full_build(p, inputs)
        rows = _table_rows(p)
        _set_rows(*rows)
    if as_json:
        emit_json(
            {
                "command": "build",
                "warehouse": p.warehouse,
                "snapshot": p.marts,
                "select": select,
                "raw_rows": rows[0],
                "mart_rows": rows[1],
                "dbt_warnings": result.warnings,
            }
        )
    else:
        console.print(f"built and published {p.marts}")


def r_engine_vars(**on: bool) -> list[str] | None:
    """dbt's --vars turning on the R analyses asked for (var lmer, var gam), or None."""
    wanted = {name: True for name, flag in on.items() if flag}
    return ["--vars", json.dumps(wanted)] if wanted else None


def _table_rows(p: Paths) -> tuple[int | None, int | None]:
    """Rows in the raw tables read by dbt, and rows in the published marts (DuckDB's table statistics)."""
    import duckdb

    def total(path, where: str) -> int | None:
        try:
            with duckdb.connect(str(path), read_only=True) as con:
                return int(
                    con.execute(
                        f"SELECT coalesce(sum(estimated_size), 0) FROM duckdb_tables() WHERE {where}"
                    ).fetchone()[0]
                )
        except duckdb.Error:
            return None

    return total(p.duckdb, "schema_name = 'raw'"), total(p.marts, "schema_name = 'main' AND table_name LIKE 'mart_%'")


@command()
@recorded("refresh")
def refresh(
    mirror: MirrorOpt = None,
    models: Annotated[
        Path | None,
        typer.Option(
            "--models",
            envvar="PREDICTABASE_MODELS",
            help="the models to keep scored (default: the models.toml shipped with predictabase)",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="say what each step would do; write nothing (on a warehouse that cannot be written, it takes no lock)",
        ),
    ] = False,
    create: Annotated[
        bool,
        typer.Option(
            "--create",
            help="create the warehouse when --warehouse names a new or empty folder (without it such a folder is refused: a typo never builds a warehouse); with --dry-run, plan for it without creating it",
        ),
    ] = False,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    worker_cpus: WorkerCpusOpt = 1,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Do only what changed: fetch (checksums decide), re-ingest changed sources, score the models.toml
    entries not scored yet, dbt build the affected models, publish. Nothing changed: nothing is written.
    With --create it builds a new warehouse from nothing."""
    from predictabase.models_config import load_models_config
    from predictabase.refresh import format_report
    from predictabase.refresh import refresh as run_refresh

    with _errors():  # the options before the warehouse: a bad one creates nothing
        if mirror is not None:
            check("--mirror", str(mirror), Path(mirror).is_dir(), "an existing directory")
        entries = load_models_config(models)
        ray = engine_options(engine, address, workers, worker_cpus)
    with writing("refresh", warehouse, wait, create=create, dry_run=dry_run) as p:
        report = run_refresh(
            p,
            mirror,
            entries,
            dry_run=dry_run,
            show_progress=sys.stdout.isatty(),  # no bars in cron's mail
            engine=ray,
        )
        _set_rows(
            None, sum(1 for st in report.steps if not st.action.startswith(("nothing", "would")))
        )  # steps that did work
    if as_json:
        from dataclasses import asdict

        emit_json({"command": "refresh", "warehouse": p.warehouse, "dry_run": dry_run, **asdict(report)})
    else:
        typer.echo(format_report(report))


@command()
@recorded("serve")
def serve(port: PortOpt = 8501, warehouse: WarehouseOpt = None) -> None:
    """Serve the Streamlit dashboard (reads only the published marts snapshot; takes no lock)."""
    from predictabase.warehouse.serve import serve as run_server

    with _errors():
        check_port(port)
        p = existing_warehouse(warehouse)
    run_server(p, port=port)


def max_threads() -> int:
    """The most threads an option may ask for: 4 per core this process may run on (more only contend, and an
    unbounded number can exhaust the machine's threads before any watchdog runs)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 4 * cores


def machine_memory() -> float:
    """This machine's physical memory in bytes (the most a memory limit may name)."""
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _memory_size(text: str) -> float:
    """Bytes of a memory size like DuckDB's (`2GB`, `512 MiB`); -1 for anything else (DuckDB reads `-1GB` as
    'no limit', which a limit option must not mean)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(b|bytes?|[kmgt]i?b?)\s*", text.lower())
    if not m:
        return -1
    unit = m.group(2)
    power = 0 if unit.startswith("b") else "kmgt".index(unit[0]) + 1
    return float(m.group(1)) * (1024 if "i" in unit else 1000) ** power


SQL_FORMATS = ["table", "csv", "json", "parquet", "markdown"]


@command()
@recorded("sql")
def sql(
    query: Annotated[
        str | None, typer.Option("--command", "-c", help="run this query and exit (default: an interactive shell)")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="output of -c: table, csv, json (an array of objects), parquet or markdown"
        ),
    ] = "table",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="write the result to this file (required for parquet)")
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            help="seconds opening the snapshot and each query may take, more than 0 and at most 86,400 (a day)"
        ),
    ] = 60.0,
    memory_limit: Annotated[
        str, typer.Option(help="DuckDB memory limit, e.g. 2GB: more than 0, at most this machine's memory")
    ] = "2GB",
    threads: Annotated[int, typer.Option(help="DuckDB threads, 1 to 4 per core of this machine")] = 2,
    warehouse: WarehouseOpt = None,
) -> None:
    """A read-only SQL shell on the published marts snapshot (DuckDB SQL; `-c` for scripts)."""
    with _errors():
        check("--format", fmt, fmt in SQL_FORMATS, f"one of {', '.join(SQL_FORMATS)}")
        check(
            "--timeout",
            timeout,
            0 < timeout <= MAX_SECONDS,
            f"seconds, more than 0 and at most {MAX_SECONDS:,.0f} (a day)",
        )
        check("--threads", threads, 1 <= threads <= max_threads(), f"an integer from 1 to {max_threads()} (4 per core)")
        memory = machine_memory()
        check(
            "--memory-limit",
            memory_limit,
            0 < _memory_size(memory_limit) <= memory,
            f"a size > 0 with its unit, e.g. 500MB, 2GB, 1.5GiB, at most this machine's memory ({memory / 1e9:.1f}GB)",
        )
        p = existing_warehouse(warehouse)
        if output is not None:
            refuse_inside_warehouse("--output", output, p.warehouse)
        from predictabase.sql import cli_sql

        n = cli_sql(
            p, query=query, fmt=fmt, output=output, timeout_s=timeout, memory_limit=memory_limit, threads=threads
        )
        _set_rows(None, n if isinstance(n, int) else None)  # result rows of -c (None for the shell)


@command("all")
@recorded("all")
def run_all(
    mirror: MirrorOpt = None,
    model: ModelOpt = DEFAULT_MODEL,
    serve_after: Annotated[bool, typer.Option("--serve/--no-serve", help="serve the dashboard afterwards")] = True,
    port: PortOpt = 8501,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
) -> None:
    """The main job: fetch, ingest, score every corpus with the default model (MECO's eleven languages included),
    its top-1 words, cloze responses and temperature-scaled scores, dbt build, serve. Creates the warehouse when --warehouse names a new or
    empty folder."""
    with _errors():
        check_port(port)  # before the long job, not after it
    where = {"warehouse": warehouse, "wait": wait}
    commands = {  # each stage of the pipeline plan (predictabase.plan), as its command with the defaults
        "fetch": lambda: fetch(mirror=mirror, dataset=None, **where),
        "ingest": lambda: ingest_cmd(names=None, **where),
        "score": lambda: score(
            model=model,
            corpus=list(scored_corpora(get_paths(warehouse))),
            limit=None,
            full=False,
            context_length=None,
            stride=None,
            top_k=10,
            batch_tokens=None,
            device=None,
            dtype=None,
            **where,
        ),
        "top1": lambda: top1(
            model=model, max_expansions=64, candidates=1, limit=None, device=None, dtype=None, **where
        ),
        "cloze": lambda: cloze(model=model, limit=None, device=None, dtype=None, **where),
        # minutes per thousand words on a CPU: a refresh runs it for the models that ask (models.toml `entropy`)
        "entropy": lambda: console.print(
            "entropy: not in the main job (`predictabase entropy`, or `entropy = true` in models.toml for `refresh`)"
        ),
        "temperature": lambda: temperature(
            model=model,
            corpus=["all"],
            temperatures=",".join(f"{t:g}" for t in TEMPERATURE_GRID),
            context_length=None,
            stride=None,
            limit=None,
            device=None,
            dtype=None,
            **where,
        ),
        "build": lambda: build(
            select=None, allow_shrink=False, lmer=False, gam=shutil.which("Rscript") is not None, docs=True, **where
        ),
    }
    with writing("all", warehouse, wait, create=True):  # one lock over every stage
        for stage in PLAN:
            commands[stage.name]()
    if serve_after:
        serve(port=port, warehouse=warehouse)


corpus_app = typer.Typer(
    help="A researcher's own corpus: texts, reading times, cloze norms and frequencies, "
    "declared once; `refresh` then scores it with every model and builds every comparison.",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")
MEASURE_HELP = f"{', '.join(list(MEASURES)[:-1])} or {list(MEASURES)[-1]}"  # the declared measures


@corpus_app.command("add")
@recorded("corpus add")
def corpus_add(
    name: Annotated[
        str, typer.Argument(help="the corpus's key: lowercase letters, digits and _ (not a shipped corpus's)")
    ],
    texts: Annotated[
        Path,
        typer.Option(
            "--texts",
            help="CSV/TSV/JSONL with text_id,text (one row per text) or text_id,word[,word_id][,after] (one row per word), or a folder of .txt files",
        ),
    ],
    reading_times: Annotated[
        list[Path] | None,
        typer.Option(
            "--reading-times",
            help="CSV/TSV/JSONL: text_id, word_id, [reader_id,] one column per measure (or rt_ms/rt/time); repeatable",
        ),
    ] = None,
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            help=f"what the reading times measure: {MEASURE_HELP}; repeatable (one per file, or several in one file)",
        ),
    ] = None,
    units: Annotated[str, typer.Option("--units", help="units of the reading times: ms or s")] = "ms",
    cloze_file: Annotated[
        Path | None,
        typer.Option(
            "--cloze", help="CSV/TSV/JSONL: text_id, word_id, and cloze_probability or response_count,n_responses"
        ),
    ] = None,
    frequencies: Annotated[
        Path | None,
        typer.Option("--frequencies", help="CSV/TSV/JSONL: text_id, word_id, zipf_frequency (default: wordfreq)"),
    ] = None,
    encoding: Annotated[str, typer.Option("--encoding", help="encoding of every file, e.g. utf-8, latin-1")] = "utf-8",
    title: Annotated[
        str | None, typer.Option("--title", help="the corpus's name for people (default: from NAME)")
    ] = None,
    language: Annotated[
        str,
        typer.Option(
            "--language",
            help="the texts' language, ISO 639-1 (en, de, nl, ...): wordfreq's word list for it gives the frequencies",
        ),
    ] = "en",
    published: Annotated[
        str | None,
        typer.Option(
            "--published", help="published results on this same corpus to import next to yours: pimentel_meister:brown"
        ),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="replace the files of a corpus added before")] = False,
    create: Annotated[
        bool,
        typer.Option(
            "--create",
            help="create the warehouse when --warehouse names a new or empty folder (without it such a folder is refused: a typo never makes a warehouse nobody reads)",
        ),
    ] = False,
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Validate a corpus's files (every reading time, cloze norm and frequency must join a word of the texts),
    copy them into the warehouse with their sha256 and declare the corpus; nothing is written on error.
    `predictabase refresh` then scores it with every model of models.toml and builds its word surprisal (LW and
    WT), delta log-likelihood where it has reading times and PNC where it has cloze norms."""
    from predictabase import corpora

    with writing("corpus add", warehouse, wait, create=create) as p:
        added = corpora.add(
            p,
            name,
            texts,
            reading_times or [],
            measure or [],
            units,
            cloze_file,
            frequencies,
            encoding,
            title,
            published,
            replace,
            language,
        )
    _set_rows(added["words"], added["words"])
    if as_json:
        emit_json({"command": "corpus add", **added})
        return
    rt = f", {added['reading_time_rows']} reading times ({', '.join(added['measures'])})" if added["measures"] else ""
    cz = f", {added['cloze_rows']} cloze norms" if added["cloze_rows"] else ""
    console.print(
        f"added corpus {name} ({added['title']}): {added['texts']} texts, {added['words']} words{rt}{cz}. "
        "Next: `predictabase refresh` scores it with every model of models.toml and builds its marts."
    )


@corpus_app.command("list")
def corpus_list(warehouse: WarehouseOpt = None, as_json: JsonOpt = False) -> None:
    """Every corpus of the warehouse: the shipped ones and those added with `corpus add`."""
    from predictabase import corpora

    with _errors():
        rows = corpora.listing(existing_warehouse(warehouse))
    if as_json:
        emit_json({"command": "corpus list", "corpora": rows})
        return
    from rich.table import Table

    t = Table("corpus", "title", "language", "origin", "texts", "words", "reading measures", "cloze", "frequencies")
    for r in rows:
        t.add_row(
            r["corpus"],
            r["title"],
            r["language"],
            r["origin"],
            "" if r["texts"] is None else str(r["texts"]),
            "" if r["words"] is None else str(r["words"]),
            ", ".join(r["measures"]) or "-",
            "yes" if r["cloze"] else "-",
            r["frequencies"],
        )
    Console().print(t)


@corpus_app.command("show")
def corpus_show(name: Annotated[str, typer.Argument(help="the corpus")], warehouse: WarehouseOpt = None) -> None:
    """A corpus's declaration: its files with their sha256, measures, units, encoding and counts (JSON)."""
    from predictabase import corpora

    with _errors():
        emit_json(corpora.show(existing_warehouse(warehouse), name))


@corpus_app.command("remove")
@recorded("corpus remove")
def corpus_remove(
    name: Annotated[str, typer.Argument(help="a corpus added with `corpus add`")],
    warehouse: WarehouseOpt = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Remove a corpus added with `corpus add`: its declaration, its files and its scoring runs. The next
    `predictabase refresh` deletes its rows and rebuilds the marts without it; the other corpora's stay as they
    are."""
    from predictabase import corpora

    with writing("corpus remove", warehouse, wait) as p:
        out = corpora.remove(p, name)
    if as_json:
        emit_json({"command": "corpus remove", **out})
        return
    console.print(f"removed corpus {name} ({out['removed_scoring_runs']} scoring runs). Next: `predictabase refresh`.")


export_app = typer.Typer(
    help="Paper-ready files and tables for your own analysis, from the published snapshot: "
    "`export --out DIR` writes every chart and table of the dashboard; `export words` the "
    "one-row-per-word table.",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")


@export_app.callback(invoke_without_command=True)
def export_cmd(
    ctx: typer.Context,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="the directory to write (new, empty or a previous export, which is replaced): <page>/NN-<title>.svg/.png per chart, .csv/.tex per table, provenance.json, manifest.json",
        ),
    ] = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Every chart (SVG, PNG) and table (CSV, LaTeX) of every dashboard page at its default view, each with the
    snapshot's provenance, from the published snapshot only (takes no lock). Interrupted or failed, it leaves
    --out as it was."""
    if ctx.invoked_subcommand is None:
        export_all_cmd(out=out, warehouse=warehouse, as_json=as_json)


@recorded("export")
def export_all_cmd(*, out: Path | None, warehouse: Path | None, as_json: bool) -> None:
    from predictabase.export import export_all

    with _errors():
        if out is None:
            raise OptionError("--out", "the directory to write is required: predictabase export --out DIR")
        p = existing_warehouse(warehouse)
        refuse_inside_warehouse("--out", out, p.warehouse)
        done = export_all(p.marts, out, show_progress=sys.stderr.isatty())
    _set_rows(None, done["files"])
    if as_json:
        emit_json({"command": "export", **done})
        return
    console.print(
        f"wrote {done['files']} files ({done['charts']} charts, {done['tables']} tables) of snapshot "
        f"{(done['snapshot_id'] or '?')[:12]} to {escape(str(out))} in {done['seconds']:.1f} s",
        soft_wrap=True,
    )


@export_app.command("words")
@recorded("export words")
def export_words_cmd(
    corpus: Annotated[str, typer.Option("--corpus", "-c", help="the corpus (`predictabase corpus list`)")],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="the file to write: .csv (provenance in '# ' header lines) or .parquet (in its metadata)",
        ),
    ],
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--models", "-m", help="model keys to include (repeatable; default: every model scored on the corpus)"
        ),
    ] = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One row per word of a corpus: every model's LW and WT surprisal (bits and nats) and boundary terms, word
    length, frequency, reading-time means and cloze, with the provenance (model revisions, run ids, settings).
    Reads the published snapshot only (takes no lock)."""
    from predictabase.export import export_words

    with _errors():
        p = existing_warehouse(warehouse)
        refuse_inside_warehouse("--out", out, p.warehouse)
        done = export_words(p.marts, corpus, models, out)
    _set_rows(None, done["rows"])
    if as_json:
        emit_json({"command": "export words", **done})
        return
    console.print(
        f"wrote {done['rows']} words of {corpus} x {len(done['models'])} model(s) "
        f"({', '.join(done['models'])}) to {out}"
    )


def main() -> None:
    """The `predictabase` entry point: the exit codes of EPILOG, whatever ends the command."""
    try:
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):  # Ctrl-C outside a command's own handling (click makes it Abort)
        console.print("[bold red]error:[/] interrupted", highlight=False)
        code = EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001
        code = _unexpected(exc)
    except BaseException as exc:  # a Rust extension's panic is no Exception (see OOM_PANICS)
        if not out_of_memory(exc):
            raise
        code = _unexpected(exc)
    _exit(code if isinstance(code, int) else 0)


def _unexpected(exc: BaseException) -> int:
    """The exit code of an error no command handled (and its one line): out of memory (outside a command's own
    handling, as in loading its modules) 2, click's usage errors theirs, a bug 1."""
    if out_of_memory(exc):
        console.print(f"[bold red]error:[/] {OUT_OF_MEMORY}", highlight=False, soft_wrap=True)
        return EXIT_USAGE
    if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
        exc.show()  # click's usage errors (Typer's own copy of click): an unknown option, a bad value
        sys.exit(exc.exit_code)
    if os.environ.get("PREDICTABASE_DEBUG"):  # a bug: one line, the traceback on request
        raise exc
    console.print(
        f"[bold red]internal error:[/] {escape(one_line(f'{type(exc).__name__}: {exc}'))} "
        "(a bug; PREDICTABASE_DEBUG=1 shows the traceback)",
        highlight=False,
        soft_wrap=True,
    )
    return EXIT_INTERNAL


def _exit(code: int) -> None:
    """Exit with `code`. After an interrupt inside dbt, its other node threads may still be in native code (a
    DuckDB query, a statistics library): the interpreter's shutdown ends such a thread by unwinding through C++
    frames that swallow the unwinding, and the process aborts (exit -6, "FATAL: exception not rethrown"; 2 of 3
    interrupted builds on a busy machine). Everything the command had to do is done by now (the one line said, the
    runs log written, the warehouse restored), so an interrupted command with other threads alive runs the exit
    handlers, flushes and leaves at once."""
    if code == EXIT_INTERRUPTED and threading.active_count() > 1:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
