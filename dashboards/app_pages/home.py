"""What the warehouse holds: sources, scoring runs, table sizes, last build."""
from __future__ import annotations

import streamlit as st

import data
import labels

st.title("predictabase warehouse")
st.caption("How well do humans and language models predict the next word? "
           "Everything below is read from the published snapshot; nothing is computed here.")

snap = data.require_snapshot()

build = data.table("mart_build_info")
if build is None:
    data.missing("mart_build_info")
elif len(build):
    row = build.iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric("Last build (UTC)", labels.timestamp(row["built_at"]), help=f"snapshot: {data.marts_path()} (id {snap.snapshot_id})")
    c2.metric("dbt version", str(row.get("dbt_version", "?")),
              help=f"DuckDB {row['duckdb_version']}" if "duckdb_version" in row else None)
    if "n_runs_used_in_marts" in row and "n_complete_runs" in row:
        c3.metric("Scoring runs used in marts", f"{row['n_runs_used_in_marts']} of {row['n_complete_runs']} complete",
                  help="the latest complete run without --limit, per model and corpus")

st.header("Sources", anchor="sources")
st.caption("Every upstream file is copied from a mirror or downloaded, then checked against the "
           "sha256 recorded in the source catalog.")
sources = data.table("mart_sources")
if sources is None:
    data.missing("mart_sources")
else:
    # a DuckDB table has no row order: sort every grid, so it looks the same on every build
    sources = sources.sort_values("dataset")
    labels.show(sources, ["dataset", "license", "all_verified", "n_verified", "n_files", "total_bytes", "commit",
                          "repo", "last_fetched_at", "citation"], key="sources")

st.header("Models and scoring runs", anchor="models")
st.caption("One row per completed scoring run; `used in marts` marks the runs the metrics are built from.")
models = data.table("mart_models")
if models is None:
    data.missing("mart_models")
else:
    models = models.sort_values(["model_key", "corpus", "finished_at"])
    labels.show(models, ["model_key", "corpus", "used_in_marts", "source", "n_docs", "n_tokens", "model_id",
                         "model_revision", "tokenizer", "vocab_size", "dtype", "device", "context_length", "stride",
                         "bos_policy", "bos_token", "run_limit", "full_document", "finished_at", "run_id"], key="models")

st.header("Warehouse tables", anchor="tables")
tables = data.table("mart_warehouse_tables")
if tables is None:
    data.missing("mart_warehouse_tables")
else:
    layer_order = {"raw": 0, "parquet": 1, "mart": 2}  # the order data flows in
    tables = tables.sort_values(["layer", "table_name"], key=lambda c: c.map(layer_order) if c.name == "layer" else c)
    labels.show(tables, key="tables")
