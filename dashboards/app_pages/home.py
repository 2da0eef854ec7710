"""What the warehouse holds: a one-sentence summary, the build behind the snapshot, the latest command
runs, source freshness, sources, scoring runs and every table with its size."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

import data
import findings
import labels

RUNS_SHOWN = 20  # the latest command runs listed


def _count(df: pd.DataFrame | None, col: str) -> int:
    return 0 if df is None or col not in df else int(df[col].dropna().nunique())


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def read_runs(path: Path, limit: int) -> list[dict] | None:
    """The latest runs of the runs log (predictabase.runs, standard library only); None when the module
    is not importable (the dashboard run outside the installed package)."""
    try:
        from predictabase.runs import read_runs as read
    except ImportError:
        return None
    return read(path, limit) if path.exists() else []


st.title("predictabase warehouse")
snap = data.require_snapshot()

build = data.table("mart_build_info")
info = data.table(data.SNAPSHOT_INFO)
perplexity = data.table("mart_model_perplexity")
sources = data.table("mart_sources")
marts = data.marts() or []
built_at = build.iloc[0]["built_at"] if build is not None and len(build) else None
holds = [
    _plural(len(sources) if sources is not None else 0, "source dataset"),
    f"{_plural(_count(perplexity, 'model_key'), 'model')} scored on "
    f"{_plural(_count(perplexity, 'corpus'), 'corpus', 'corpora')}",
    _plural(len(marts), "mart"),
]
gaps = data.table("mart_scoreboard_gaps")
if gaps is not None and len(gaps):  # the finding first (the scoreboard's), then what the warehouse holds
    st.markdown(findings.scoreboard(gaps))
st.write(
    f"The warehouse holds {holds[0]}, {holds[1]} and {holds[2]}"
    + (f"; last built {labels.timestamp(built_at)} UTC." if built_at is not None else ".")
)
st.caption(
    "How well do humans and language models predict the next word? "
    "Everything below is read from the published snapshot and the runs log; nothing is computed here."
)

if build is None:
    data.missing("mart_build_info")
elif len(build):
    row = build.iloc[0]
    # one line, not metric tiles: a timestamp does not fit a tile's width and was cut
    facts = [f"**Last build:** {labels.timestamp(row['built_at'])} UTC"]
    if info is not None and len(info) and "published_at" in info:
        facts.append(f"**published:** {labels.timestamp(info.iloc[0]['published_at'])} UTC")
    facts.append(
        f"**dbt** {row.get('dbt_version', '?')}"
        + (f" with DuckDB {row['duckdb_version']}" if "duckdb_version" in row else "")
    )
    if "n_runs_used_in_marts" in row and "n_complete_runs" in row:
        facts.append(
            f"**scoring runs used in the marts:** {row['n_runs_used_in_marts']} of "
            f"{row['n_complete_runs']} complete (the latest complete run without --limit, per model and "
            "corpus)"
        )
    st.markdown(" · ".join(facts))
    st.caption(f"Snapshot `{data.marts_path().name}` of this warehouse, id `{snap.snapshot_id}`.")


def options_text(args) -> str:
    """A run's options as a command line reads (`--models smollm2-135m --dry-run`), a folder or file by its last
    part: no path of this machine on a page, and no JSON."""
    if not isinstance(args, dict):
        return ""
    out = []
    for key, value in sorted(args.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None or value == [] or value == "":
            continue
        else:
            values = value if isinstance(value, list) else [value]
            out.append(
                flag + " " + ",".join(Path(str(v)).name if "/" in str(v) or "\\" in str(v) else str(v) for v in values)
            )
    return " ".join(out)


st.header("Latest runs", anchor="runs")
runs_log = data.marts_path().parent / "runs.jsonl"
st.caption(
    f"The last {RUNS_SHOWN} `predictabase` commands run on this warehouse, newest first "
    f"(the runs log, `{runs_log.name}` in the warehouse's folder)."
)
runs = read_runs(runs_log, RUNS_SHOWN)
if not runs:
    st.info("No runs recorded yet: every `predictabase` command appends its run to the runs log.")
else:
    df = pd.DataFrame(runs)
    df["run_status"] = df["status"].map(labels.run_status)
    df["arguments"] = df["args"].map(options_text)
    for col in ("started_at", "ended_at"):
        df[col] = pd.to_datetime(df[col], utc=True, errors="coerce")
    for col in ("rows_in", "rows_out"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    df = df.sort_values(["started_at", "run_id"], ascending=[False, True])
    labels.show(
        df[
            [
                "started_at",
                "command",
                "run_status",
                "ended_at",
                "rows_in",
                "rows_out",
                "error",
                "arguments",
                "run_id",
                "parent_run_id",
            ]
        ],
        mart=labels.RUNS_LOG,
        key="runs",
    )

st.header("Source freshness", anchor="freshness")
freshness = data.table("source_freshness")
if freshness is None:
    data.missing("source_freshness")
elif freshness.empty:
    st.info("This snapshot's build did not check source freshness (`predictabase build` does).")
else:
    checked = freshness["snapshotted_at"].dropna()
    st.caption(
        "How long ago each source's data was last fetched (dbt source freshness, "
        + (
            f"checked {labels.timestamp(checked.max())} UTC by the build behind this snapshot)."
            if len(checked)
            else "at build time)."
        )
        + " A file's fetch time changes only when its content does."
    )
    df = freshness.copy()
    df["source_table"] = df["source_name"].fillna("?") + "." + df["table_name"].fillna("?")
    df["freshness"] = df["status"].map(labels.freshness_status)
    df["loaded_ago"] = df["age_s"].map(labels.age)
    df = df.sort_values("source_table")
    labels.show(
        df[
            [
                "source_table",
                "freshness",
                "loaded_ago",
                "max_loaded_at",
                "warn_after",
                "error_after",
                "loaded_at_field",
                "snapshotted_at",
                "error",
            ]
        ],
        mart=labels.FRESHNESS,
        key="freshness",
    )

st.header("Sources", anchor="sources")
st.caption(
    "Every upstream file is copied from a mirror or downloaded, then checked against the "
    "sha256 recorded in the source catalog."
)
if sources is None:
    data.missing("mart_sources")
else:
    # a DuckDB table has no row order: sort every grid, so it looks the same on every build
    sources = sources.sort_values("dataset")
    labels.show(
        sources,
        [
            "dataset",
            "license",
            "all_verified",
            "n_verified",
            "n_files",
            "total_bytes",
            "commit",
            "repo",
            "last_fetched_at",
            "citation",
        ],
        mart="mart_sources",
        key="sources",
    )

st.header("Models and scoring runs", anchor="models")
st.caption("One row per completed scoring run; `used in marts` marks the runs the metrics are built from.")
models = data.table("mart_models")
if models is None:
    data.missing("mart_models")
else:
    models = models.sort_values(["model_key", "corpus", "finished_at"])
    labels.show(
        models,
        [
            "model_key",
            "corpus",
            "used_in_marts",
            "source",
            "n_docs",
            "n_tokens",
            "model_id",
            "model_revision",
            "tokenizer",
            "vocab_size",
            "dtype",
            "device",
            "context_length",
            "stride",
            "bos_policy",
            "bos_token",
            "run_limit",
            "full_document",
            "finished_at",
            "run_id",
        ],
        mart="mart_models",
        key="models",
    )

st.header("Warehouse tables", anchor="tables")
st.caption("Every raw table, Parquet dataset and mart, with its rows; a mart's description is dbt's.")
DOCS = data.marts_path().parent / "dbt_docs.html"  # written beside the snapshot by every build
if DOCS.is_file():
    st.download_button(
        "Download the dbt documentation (every model, test and column, the lineage from the "
        "sources to each dashboard page; one HTML file to open in a browser)",
        DOCS.read_bytes(),
        file_name="predictabase_dbt_docs.html",
        mime="text/html",
        icon=":material/description:",
    )
tables = data.table("mart_warehouse_tables")
if tables is None:
    data.missing("mart_warehouse_tables")
else:
    described = data.table(data.SNAPSHOT_MARTS)
    if described is not None:
        tables = tables.merge(
            described[["mart", "description"]].rename(columns={"mart": "table_name"}), on="table_name", how="left"
        )
    layer_order = {"raw": 0, "parquet": 1, "mart": 2}  # the order data flows in
    tables = tables.sort_values(["layer", "table_name"], key=lambda c: c.map(layer_order) if c.name == "layer" else c)
    # tall enough for every row: the list is the point (a grid keeps only its visible rows on the page)
    labels.show(tables, mart="mart_warehouse_tables", key="tables", height=35 * (len(tables) + 1) + 3)

labels.related(
    [
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
        ("app_pages/perplexity.py", "Perplexity by model and corpus"),
        ("app_pages/sql.py", "SQL: query the marts yourself"),
    ]
)
