"""Benchmark `dbt build` of every mart (scoring excluded) on a warehouse built from real data.

    python bench/build.py                      # fresh warehouse in a temp dir (see below)
    python bench/build.py --warehouse DIR      # an existing warehouse (copied to a temp dir first)
    python bench/build.py --models 4 --repeat 2

The fresh warehouse: every catalog file fetched from the mirror ($PREDICTABASE_MIRROR, default
../shared/data) and verified, every corpus ingested by `ingest.corpora` (real raw.documents /
raw.words), the pairwise game and the wild questionnaires ingested, and token-score Parquet in the contract layout: GPT-3 davinci's real
log-probabilities on the Natural Stories (imported run) plus `--models` synthetic scored runs
over every document of every corpus (regex tokens, seeded log-probabilities; lm_game on its
score prefix). Scoring itself is not timed.

Prints a table: wall and CPU seconds of dbt parse and of each `dbt build` (first = cold, with a
full parse; later = partial parse), the slowest nodes, and the row counts. Goal: < 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402

from predictabase.core.config import Paths  # noqa: E402
from predictabase.core.config import paths as make_paths  # noqa: E402
from predictabase.warehouse import publish, run_dbt  # noqa: E402


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(label: str, fn, rows: list):
    t0, c0 = time.perf_counter(), cpu_seconds()
    out = fn()
    rows.append((label, time.perf_counter() - t0, cpu_seconds() - c0))
    return out


def fresh_warehouse(p: Paths, mirror: Path, n_models: int) -> None:
    from predictabase.ingest.datasets.registry import ingest_corpora as ingest
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.sources.fetch import fetch_and_record
    from tests.dbt_fixtures import Fixture, regex_tokens, token_rows, write_run

    fetch_and_record(p, mirror, show_progress=False)
    ingest(p, None, show_progress=False)
    run_ingest(p, ["pairwise", "wild"], show_progress=False)  # the game's answers, the questionnaires
    fx = Fixture(p)
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        docs = con.execute(
            "SELECT corpus, doc_id, text, score_prefix_chars FROM raw.documents ORDER BY corpus, doc_index"
        ).fetchall()
        versions = dict(con.execute("SELECT DISTINCT corpus, corpus_version FROM raw.documents").fetchall())
    for m in range(n_models):
        rng = np.random.default_rng(m)
        by_corpus: dict[str, list] = {}
        for corpus, doc_id, text, prefix in docs:
            end = prefix if prefix else len(text)
            try:
                spans = regex_tokens(text, end)
            except (AssertionError, StopIteration):  # a prefix inside a regex token: score the whole text
                spans = regex_tokens(text)
            by_corpus.setdefault(corpus, []).extend(
                token_rows(
                    f"bench{m:02d}{corpus[:6]}",
                    f"bench-lm-{m}",
                    corpus,
                    doc_id,
                    text,
                    spans,
                    -rng.gamma(2.0, 1.5, len(spans)),
                )
            )
        for corpus, rows in by_corpus.items():
            write_run(
                fx,
                f"bench{m:02d}{corpus[:6]}",
                f"bench-lm-{m}",
                corpus,
                rows,
                dict(finished_at=f"2024-01-{m + 1:02d}T00:00:00Z", corpus_version=versions[corpus]),
                n_parts=4,
            )
    # the real GPT-3 davinci log-probabilities, as an imported run
    import polars as pl

    g = pl.read_csv(mirror / "natural_stories" / "probs" / "all_stories_gpt3.csv", infer_schema_length=0)
    g = g.with_columns(
        pl.col("offset").cast(pl.Int64), pl.col("logprob").cast(pl.Float64), pl.col("story").cast(pl.Int64)
    )
    rows = []
    for (story,), s in g.group_by("story", maintain_order=True):
        text = "".join(s["token"].to_list())
        spans = [(o, o + len(t)) for o, t in zip(s["offset"], s["token"])]
        rows += token_rows(
            "gpt3davinci0001", "gpt3-davinci", "natural_stories", str(story + 1), text, spans, s["logprob"].to_list()
        )
    write_run(
        fx,
        "gpt3davinci0001",
        "gpt3-davinci",
        "natural_stories",
        rows,
        dict(vocab_size=None, source="imported", finished_at="2021-02-26T16:52:25Z"),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", type=Path, help="benchmark a copy of this existing warehouse")
    ap.add_argument(
        "--mirror", type=Path, default=Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data"))
    )
    ap.add_argument("--models", type=int, default=3, help="synthetic scored models (fresh warehouse only)")
    ap.add_argument("--repeat", type=int, default=2, help="dbt builds to time (first cold, then partial parse)")
    ap.add_argument("--select", default=None, help="dbt selection (default: everything)")
    ap.add_argument("--keep", action="store_true", help="keep the temp warehouse")
    ap.add_argument(
        "--added-by",
        metavar="SEL",
        default=None,
        help="also time what the nodes of SEL add: `dbt build --exclude SEL` and the full build, "
        "alternately --repeat times (pair by pair), e.g. --added-by tag:regression",
    )
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="predictabase-bench-"))
    p = make_paths(tmp / "warehouse")
    setup: list = []
    try:
        if args.warehouse:
            src = make_paths(args.warehouse)
            p.warehouse.mkdir(parents=True)
            timed(
                "copy warehouse",
                lambda: (
                    shutil.copy2(src.duckdb, p.duckdb),
                    src.token_scores.exists() and shutil.copytree(src.token_scores, p.token_scores),
                ),
                setup,
            )
        else:
            timed(
                "build fixture warehouse (fetch, ingest, Parquet)",
                lambda: fresh_warehouse(p, args.mirror, args.models),
                setup,
            )

        rows: list = []
        timed("dbt parse (full)", lambda: run_dbt(p, "parse"), rows)
        for i in range(args.repeat):
            timed(f"dbt build #{i + 1}", lambda: run_dbt(p, "build", args.select), rows)
        timed("publish marts.duckdb", lambda: publish(p), rows)

        print(
            f"\nwarehouse: {p.warehouse}   cores: {os.cpu_count()}   dbt threads: 2   load avg: "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        for label, wall, _cpu in setup:
            print(f"  (setup) {label}: {wall:.1f} s")
        print(f"\n{'step':<28}{'wall s':>9}{'cpu s':>9}")
        for label, wall, cpu in rows:
            print(f"{label:<28}{wall:>9.1f}{cpu:>9.1f}")
        rr = json.loads((p.warehouse / "dbt" / "target" / "run_results.json").read_text())
        print(f"\nlast build: {len(rr['results'])} nodes, dbt elapsed {rr['elapsed_time']:.1f} s; slowest nodes:")
        for r in sorted(rr["results"], key=lambda r: -r["execution_time"])[:8]:
            print(f"  {r['execution_time']:>6.2f} s  {r['unique_id']}")
        with duckdb.connect(str(p.marts), read_only=True) as con:
            print("\nmart_warehouse_tables:")
            for name, layer, n in con.execute("SELECT table_name, layer, n_rows FROM mart_warehouse_tables").fetchall():
                print(f"  {layer:<8}{name:<42}{n:>12,}")
        builds = [w for label, w, _ in rows if label.startswith("dbt build")]
        print(f"\ndbt build: cold {builds[0]:.1f} s, warm {min(builds):.1f} s (goal < 60 s)")
        if args.added_by:
            pairs = []
            for _ in range(args.repeat):  # alternate, so load changes hit both sides alike
                t0 = time.perf_counter()
                run_dbt(p, "build", None, extra=["--exclude", args.added_by])
                without = time.perf_counter() - t0
                t0 = time.perf_counter()
                run_dbt(p, "build", None)
                pairs.append((without, time.perf_counter() - t0))
            print(f"\nwhat {args.added_by} adds to `dbt build` (pairs, wall s):")
            print(f"{'pair':<6}{'without':>10}{'with':>10}{'added':>10}{'ratio':>8}")
            for i, (a, b) in enumerate(pairs, 1):
                print(f"{i:<6}{a:>10.1f}{b:>10.1f}{b - a:>10.1f}{b / a:>8.2f}")
            added = sorted(b - a for a, b in pairs)
            print(f"median added: {added[len(added) // 2]:.1f} s (budget: 60 s)")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
