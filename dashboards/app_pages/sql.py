"""SQL on the published snapshot: an editor, the result, CSV/Parquet downloads, the marts and their columns.

Every query opens its own read-only connection (`predictabase.sql.readonly_connection`, the one
`predictabase sql` uses: the snapshot attached read-only, files, extensions and settings locked away
by DuckDB's configuration) and closes it, so a rebuild can publish a new snapshot at any time.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import streamlit as st

import data
import labels
import url_state

MAX_ROWS = 100_000  # rows kept for display and for the downloads
TIMEOUT_S = 30
MEMORY_LIMIT = "1GB"
THREADS = 2
DEFAULT_MART = "mart_model_perplexity"
DEFAULT_QUERY = """\
-- Every model on every corpus: tokens scored, token perplexity and bits per byte (lower is better)
SELECT model_key, corpus, source, n_tokens, token_perplexity, bits_per_byte
FROM mart_model_perplexity
ORDER BY corpus, bits_per_byte
"""

st.title("SQL")
_marts = data.marts() or []
_tables = data.table("mart_warehouse_tables")
_rows = (
    _tables.loc[(_tables["layer"] == "mart") & _tables["table_name"].isin(_marts), "n_rows"].sum()
    if _tables is not None and {"layer", "table_name", "n_rows"} <= set(_tables.columns)
    else None
)
st.markdown(
    f"Ask the published warehouse's {len(_marts)} marts"
    + (f" ({int(_rows):,} rows in all)" if _rows else "")
    + " your own question in SQL and download the answer as CSV or Parquet; the query runs on the "
    "snapshot the other pages show, read-only."
)
st.caption(
    f"DuckDB SQL on the snapshot's marts (listed below) and `runs`, the warehouse's runs log. Writes, "
    f"files, ATTACH, extensions and settings are refused by DuckDB's configuration; a query may run "
    f"{TIMEOUT_S} s and use {MEMORY_LIMIT} of memory, and the page keeps its first {MAX_ROWS:,} rows "
    f'(for every row: `predictabase sql -c "..." --format parquet --output FILE`).'
)

snap = data.require_snapshot()
try:
    from predictabase.sql import SqlError, parquet_bytes, query, write_csv
except ImportError:
    st.error("The SQL page needs the predictabase package (`pip install -e .` in the repository).")
    st.stop()

SNAPSHOT = Path(snap.path)
RUNS_LOG = SNAPSHOT.parent / "runs.jsonl"


def run(sql: str, cap: int | None = MAX_ROWS):
    return query(
        SNAPSHOT,
        sql,
        timeout_s=TIMEOUT_S,
        memory_limit=MEMORY_LIMIT,
        threads=THREADS,
        cap=cap,
        runs_log=RUNS_LOG,
        limit_name=f"the page's {TIMEOUT_S} s limit",
    )


# ---------------------------------------------------------------------------------------------- the editor
st.html("<style>.st-key-sql_editor textarea {font-family: 'Source Code Pro', monospace; font-size: 0.9rem;}</style>")
with st.container(key="sql_editor"):
    with st.form("sql_form", border=False, enter_to_submit=False):
        sql = st.text_area("Query (DuckDB SQL; Ctrl+Enter runs it)", value=DEFAULT_QUERY, height=170, key="sql_query")
        submitted = st.form_submit_button("Run", type="primary", icon=":material/play_arrow:")

# Run on Run, on a new snapshot, and on opening the page; other widgets' reruns reuse the result.
key = (snap.snapshot_id, sql)
if submitted or st.session_state.get("sql_result_key") != key:
    try:
        st.session_state["sql_result"] = run(sql)
    except SqlError as exc:
        st.session_state["sql_result"] = str(exc)
    st.session_state["sql_result_key"] = key
result = st.session_state["sql_result"]

if isinstance(result, str):
    st.error(result, icon=":material/block:")
else:
    table: pa.Table = result.table
    if result.truncated:
        st.caption(f"The first {MAX_ROWS:,} rows (the query returned more; the page keeps {MAX_ROWS:,}).")
    else:
        st.caption(
            f"{table.num_rows:,} row{'s' if table.num_rows != 1 else ''}, {table.num_columns} "
            f"column{'s' if table.num_columns != 1 else ''} (headers are the query's own column names)."
        )
    st.dataframe(table, hide_index=True, key="sql_result_grid")
    csv_buf = io.StringIO()
    write_csv(table.to_reader(), csv_buf)
    try:
        parquet, parquet_problem = parquet_bytes(table), None
    except SqlError as exc:
        parquet, parquet_problem = None, str(exc)
    with st.container(horizontal=True):
        st.download_button(
            "Download CSV",
            csv_buf.getvalue().encode("utf-8"),
            file_name="query.csv",
            mime="text/csv",
            on_click="ignore",
            icon=":material/download:",
            key="sql_csv",
        )
        st.download_button(
            "Download Parquet",
            parquet or b"",
            file_name="query.parquet",
            mime="application/vnd.apache.parquet",
            on_click="ignore",
            icon=":material/download:",
            key="sql_parquet",
            disabled=parquet is None,
            help=parquet_problem,
        )


# ---------------------------------------------------------------------------------------------- the marts
@st.cache_data(show_spinner=False, max_entries=8)
def catalog(path: str, snapshot_id: str) -> tuple[pa.Table, pa.Table, bool]:
    """(marts, columns, described): from the snapshot's own metadata tables (descriptions from dbt's
    manifest) when it has them, else from DuckDB's information_schema (names and types only)."""
    present = (
        run(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'snap' AND table_schema = 'main'",
            cap=None,
        )
        .table.column("table_name")
        .to_pylist()
    )
    if {"snapshot_marts", "snapshot_columns"} <= set(present):
        marts = run(
            "SELECT mart, domain, description, n_columns FROM snapshot_marts ORDER BY domain, mart", cap=None
        ).table
        columns = run(
            "SELECT mart, column_name, data_type, description FROM snapshot_columns ORDER BY mart, ordinal", cap=None
        ).table
        return marts, columns, True
    marts = run(
        """
        SELECT t.table_name AS mart, NULL::VARCHAR AS domain, NULL::VARCHAR AS description,
               count(c.column_name) AS n_columns
        FROM information_schema.tables t
        JOIN information_schema.columns c USING (table_catalog, table_schema, table_name)
        WHERE t.table_catalog = 'snap' AND t.table_schema = 'main' AND t.table_name LIKE 'mart\\_%' ESCAPE '\\'
        GROUP BY ALL ORDER BY mart""",
        cap=None,
    ).table
    columns = run(
        """
        SELECT table_name AS mart, column_name, data_type, NULL::VARCHAR AS description
        FROM information_schema.columns
        WHERE table_catalog = 'snap' AND table_schema = 'main' AND table_name LIKE 'mart\\_%' ESCAPE '\\'
        ORDER BY mart, ordinal_position""",
        cap=None,
    ).table
    return marts, columns, False


st.subheader("The marts and their columns")
try:
    marts, columns, described = catalog(snap.path, snap.snapshot_id)
except SqlError as exc:
    st.error(f"The list of marts could not be read: {exc}")
    st.stop()
if described:
    st.caption("Every mart in this snapshot, with the descriptions from the dbt project's documentation.")
else:
    st.caption(
        "This snapshot was published before the marts' descriptions were stored in it: names and types "
        "only. `predictabase build` publishes a snapshot with them."
    )
mart_df = marts.to_pandas()
# every mart at once (no scrolling inside the grid: the list is there to be read through)
st.dataframe(
    mart_df,
    hide_index=True,
    key="sql_marts",
    height=35 * (len(mart_df) + 1) + 3,
    column_order=(["domain", "mart", "description", "n_columns"] if described else ["mart", "n_columns"]),
    column_config={
        "mart": st.column_config.TextColumn("mart (table name)", width="medium"),
        "domain": st.column_config.TextColumn("domain", width="small"),
        "description": st.column_config.TextColumn("what it holds", width="large"),
        "n_columns": st.column_config.NumberColumn("columns", format="%d", width="small"),
    },
)
names = mart_df["mart"].tolist()
if names:
    chosen = url_state.selectbox("Columns of", names, default=DEFAULT_MART, key="sql_mart", param="mart")
    col_df = columns.to_pandas()
    col_df = col_df[col_df["mart"] == chosen]
    st.dataframe(
        col_df,
        hide_index=True,
        key="sql_columns",
        column_order=["column_name", "data_type", "description"] if described else ["column_name", "data_type"],
        column_config={
            "column_name": st.column_config.TextColumn("column"),
            "data_type": st.column_config.TextColumn("type"),
            "description": st.column_config.TextColumn("description", width="large"),
        },
    )

labels.related(
    [
        ("app_pages/home.py", "Warehouse: what the snapshot holds and where it comes from"),
        ("app_pages/scoreboard.py", "Scoreboard: humans against the best model on every measure"),
    ]
)
