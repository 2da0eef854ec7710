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
    c1.metric("Last build (UTC)", str(row["built_at"])[:19])
    c2.metric("dbt version", str(row.get("dbt_version", "?")))
    c3.metric("Snapshot", data.marts_path().name, help=str(data.marts_path()))

st.header("Sources", anchor="sources")
st.caption("Every upstream file is copied from a mirror or downloaded, then checked against the "
           "sha256 recorded in the source catalog.")
sources = data.table("mart_sources")
if sources is None:
    data.missing("mart_sources")
else:
    labels.show(sources, key="sources")

st.header("Models and scoring runs", anchor="models")
st.caption("One row per completed scoring run; `used in marts` marks the runs the metrics are built from.")
models = data.table("mart_models")
if models is None:
    data.missing("mart_models")
else:
    labels.show(models, key="models")

st.header("Warehouse tables", anchor="tables")
tables = data.table("mart_warehouse_tables")
if tables is None:
    data.missing("mart_warehouse_tables")
else:
    labels.show(tables, key="tables")
