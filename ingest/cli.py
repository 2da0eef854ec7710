"""The `predictabase` command line."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .config import paths as get_paths
from .errors import IngestError

app = typer.Typer(help="predictabase: how well humans and language models predict the next word.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
console = Console(stderr=True)

CORPORA = ["lm_game", "natural_stories", "provo", "ucl"]
DEFAULT_MODEL = "smollm2-135m"

WarehouseOpt = Annotated[Optional[Path], typer.Option("--warehouse", help="warehouse directory (default: ./warehouse or $PREDICTABASE_WAREHOUSE)")]
MirrorOpt = Annotated[Optional[Path], typer.Option("--mirror", help="local mirror of the upstream files (default: $PREDICTABASE_MIRROR; else download)")]


def _fail(exc: Exception) -> None:
    console.print(f"[bold red]error:[/] {exc}")
    raise typer.Exit(code=2)


@app.command()
def fetch(mirror: MirrorOpt = None, dataset: Annotated[Optional[str], typer.Option(help="only this dataset")] = None,
          warehouse: WarehouseOpt = None) -> None:
    """Fetch every catalog file (copy from a mirror or download) and verify its sha256."""
    from .sources import fetch_and_record
    try:
        results = fetch_and_record(get_paths(warehouse), mirror, dataset)
    except IngestError as exc:
        _fail(exc)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    console.print(f"fetched {len(results)} files, all checksums verified: {counts}")


# datasets loaded by their own modules (each atomic), after the corpora
DATASET_JOBS = {
    "gpt3_natural_stories": ("ingest.imports_gpt3", "import_gpt3_natural_stories"),
    "pairwise": ("ingest.pairwise", "ingest_pairwise"),
    "wild": ("ingest.wild", "ingest_wild"),
}


def run_ingest(paths, names: list[str] | None = None, show_progress: bool = True) -> dict[str, object]:
    """Ingest corpora and datasets; None means everything (corpora first: imports align to them)."""
    import importlib

    from .corpora import NAMES, ingest
    wanted = names or [*NAMES, *DATASET_JOBS]
    unknown = [n for n in wanted if n not in NAMES and n not in DATASET_JOBS]
    if unknown:
        raise IngestError(None, f"unknown ingest name(s) {unknown}; choose from {[*NAMES, *DATASET_JOBS]}")
    counts: dict[str, object] = {}
    corpora = [n for n in wanted if n in NAMES]
    if corpora:
        counts.update(ingest(paths, corpora, show_progress=show_progress))
    for name in wanted:
        if name in DATASET_JOBS:
            module, func = DATASET_JOBS[name]
            counts[name] = getattr(importlib.import_module(module), func)(paths)
    return counts


@app.command("ingest")
def ingest_cmd(names: Annotated[Optional[list[str]], typer.Argument(help="what to ingest: lm_game, natural_stories, provo, ucl, ucl_imported_surprisal, gpt3_natural_stories, pairwise, wild (default: everything)")] = None,
               warehouse: WarehouseOpt = None) -> None:
    """Load fetched sources into the warehouse's raw tables (validated, idempotent)."""
    try:
        counts = run_ingest(get_paths(warehouse), names or None)
    except IngestError as exc:
        _fail(exc)
    for name, n in counts.items():
        console.print(f"{name}: {n}")


@app.command()
def score(
    model: Annotated[str, typer.Option("--model", "-m", help="alias (smollm2-135m, gemma3-270m), hub name, local dir or .gguf file")] = DEFAULT_MODEL,
    corpus: Annotated[list[str], typer.Option("--corpus", "-c", help="corpus to score (repeatable; 'all' for every corpus)")] = ["all"],
    limit: Annotated[Optional[int], typer.Option(help="score only the first N documents (quick runs; not used by marts)")] = None,
    full: Annotated[bool, typer.Option("--full", help="score whole LM-game documents, not just the guessed prefix")] = False,
    context_length: Annotated[Optional[int], typer.Option(help="tokens per window including BOS (default: model maximum, capped at 2048)")] = None,
    stride: Annotated[Optional[int], typer.Option(help="new tokens per sliding window (default: half the context)")] = None,
    top_k: Annotated[int, typer.Option(help="alternatives stored per position")] = 10,
    batch_tokens: Annotated[int, typer.Option(help="padded tokens per forward batch")] = 8192,
    device: Annotated[Optional[str], typer.Option(help="cpu, cuda, cuda:1 (default: cuda when present)")] = None,
    dtype: Annotated[Optional[str], typer.Option(help="float32, bfloat16, float16 (default: bf16 on CUDA, fp32 on CPU)")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Score every token of a corpus with a causal LM and write token-level Parquet."""
    from .scoring import ScoreSettings, score_corpora
    corpora = CORPORA if "all" in corpus else corpus
    settings = ScoreSettings(context_length=context_length, stride=stride, top_k=top_k, batch_tokens=batch_tokens,
                             limit=limit, full=full, device=device, dtype=dtype)
    try:
        runs = score_corpora(get_paths(warehouse), model, corpora, settings)
    except IngestError as exc:
        _fail(exc)
    for run in runs:
        console.print(f"{run['model_key']} / {run['corpus']}: {run['n_tokens']} tokens in {run['n_docs']} documents "
                      f"(run {run['run_id']}, {run['status']})")


@app.command()
def build(select: Annotated[Optional[str], typer.Option(help="dbt selection (default: everything)")] = None,
          warehouse: WarehouseOpt = None) -> None:
    """Run `dbt build` (models and schema tests) and publish the marts snapshot for the dashboard."""
    from .warehouse import dbt_build, publish
    p = get_paths(warehouse)
    try:
        dbt_build(p, select=select)
        publish(p)
    except IngestError as exc:
        _fail(exc)
    console.print(f"built and published {p.marts}")


@app.command()
def serve(port: Annotated[int, typer.Option(help="port")] = 8501, warehouse: WarehouseOpt = None) -> None:
    """Serve the Streamlit dashboard (reads only the published marts snapshot)."""
    from .serve import serve as run_server
    run_server(get_paths(warehouse), port=port)


@app.command("all")
def run_all(mirror: MirrorOpt = None, model: Annotated[str, typer.Option("--model", "-m")] = DEFAULT_MODEL,
            serve_after: Annotated[bool, typer.Option("--serve/--no-serve", help="serve the dashboard afterwards")] = True,
            port: Annotated[int, typer.Option(help="dashboard port")] = 8501,
            warehouse: WarehouseOpt = None) -> None:
    """The main job: fetch, ingest, score with the default model, dbt build, serve."""
    fetch(mirror=mirror, dataset=None, warehouse=warehouse)
    ingest_cmd(names=None, warehouse=warehouse)
    score(model=model, corpus=["all"], limit=None, full=False, context_length=None, stride=None, top_k=10,
          batch_tokens=8192, device=None, dtype=None, warehouse=warehouse)
    build(select=None, warehouse=warehouse)
    if serve_after:
        serve(port=port, warehouse=warehouse)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
