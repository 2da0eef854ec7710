"""Helpers the test modules share (instead of each module defining its own `q()`)."""

from __future__ import annotations

import signal
from pathlib import Path

import duckdb


def fetch_all(db: Path, sql: str, params: list | tuple = ()) -> list[tuple]:
    """Rows of a query on a DuckDB file, opened read-only and closed again."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def interruptible() -> None:
    """For subprocess's preexec_fn: the child takes SIGINT as a terminal delivers it. A shell's background job
    (`cmd &` without job control, as a script may start the tests) ignores SIGINT, the child inherits that, and
    Python then never raises KeyboardInterrupt (a clean clone's run started that way failed the seven Ctrl-C
    tests: every command ran to its end)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def q(where, sql: str, *params) -> list[tuple]:
    """Rows of `sql` on `where`: a DuckDB file, or a warehouse's paths (its working database, predictabase.duckdb).
    The parameters come as arguments: q(p, "... WHERE a = ? AND b = ?", a, b)."""
    _as_arguments(params)
    return fetch_all(getattr(where, "duckdb", where), sql, params)


def _as_arguments(params: tuple) -> None:
    # a list passed as the one parameter is bound as ONE list value (two test_refresh calls did, and failed with a
    # cast error far from the cause)
    if len(params) == 1 and isinstance(params[0], (list, tuple)):
        raise TypeError("pass the query's parameters as arguments, not as one list")


def marts_q(paths, sql: str, *params) -> list[tuple]:
    """Rows of `sql` on a warehouse's published snapshot (marts.duckdb); parameters as arguments, as in `q`."""
    _as_arguments(params)
    return fetch_all(paths.marts, sql, params)


# ---------------------------------------------------------------- the dashboard in a browser (tests and bench/)
#: Streamlit's app root while no script runs
APP_READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: JavaScript for page.evaluate: how many script runs (fragment runs too) have ended since its first call on the
#: page. A MutationObserver counts each change of the app's script state away from "running", watching the whole
#: document: an observer of the app's element itself missed every run once React had put a new element in its place
#: (a full run ended with the URL written and the count still 0).
FINISHED_RUNS = """() => {
    if (window.__finishedRuns === undefined) {
        window.__finishedRuns = 0;
        new MutationObserver(records => records.forEach(r => {
            if (r.oldValue === "running") window.__finishedRuns++;
        })).observe(document.body, {attributes: true, attributeOldValue: true, subtree: true,
                                    attributeFilter: ["data-test-script-state"]});
    }
    return window.__finishedRuns;
}"""


# ---------------------------------------------------------------- no machine path in what the warehouse publishes
#: what betrays a folder of the machine that built or scored a warehouse: a virtualenv or installed package, a temporary
#: folder, the workspace, a home folder
MACHINE_PATH_MARKERS = ("/.venv", "site-packages", "/tmp/", "/work/", "/home/")
#: column types that cannot hold a path (the others, text and nested values, are read as text)
_PATHLESS_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "BOOLEAN",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "INTERVAL",
    "UUID",
)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def machine_paths_in_relations(
    con, relations: list[tuple[str, str]], markers=MACHINE_PATH_MARKERS, per_column: int = 3
) -> list[tuple[str, str, str]]:
    """(relation, column, value) for up to `per_column` distinct values of each column of `relations` ((label,
    SQL relation) pairs on `con`) whose text holds one of `markers`."""
    where = " OR ".join("contains(v, ?)" for _ in markers)
    found = []
    for label, relation in relations:
        for name, dtype, *_ in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall():
            if str(dtype).upper().startswith(_PATHLESS_TYPES):
                continue
            rows = con.execute(
                f"SELECT DISTINCT v FROM (SELECT CAST({_quoted(name)} AS VARCHAR) AS v "
                f"FROM {relation}) WHERE {where} LIMIT {per_column}",
                list(markers),
            ).fetchall()
            found += [(label, name, v) for (v,) in rows]
    return found


def machine_paths_in(db_path: Path, markers=MACHINE_PATH_MARKERS) -> list[tuple[str, str, str]]:
    """(table, column, value) for every column of every table and view of a DuckDB file (a published snapshot,
    marts.duckdb) holding a machine path (`markers`); [] when it names none. Opened read-only."""
    import duckdb

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_catalog = current_database() ORDER BY 1, 2"
        ).fetchall()
        return machine_paths_in_relations(con, [(f"{s}.{t}", f"{_quoted(s)}.{_quoted(t)}") for s, t in tables], markers)
    finally:
        con.close()


def machine_paths_in_files(folder: Path, markers=MACHINE_PATH_MARKERS) -> list[tuple[str, str]]:
    """(file, what) for every file under `folder` (an export: CSV, TeX, SVG, JSON, BibTeX, Parquet, PNG and its
    text chunks) whose content names a machine path (`markers`); [] when none does."""
    import duckdb
    from PIL import Image

    found = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path.suffix == ".parquet":
            with duckdb.connect(":memory:") as con:
                relation = "read_parquet('" + str(path).replace("'", "''") + "')"
                found += [
                    (rel, f"{column}: {value}")
                    for _, column, value in machine_paths_in_relations(con, [(rel, relation)], markers)
                ]
            continue
        texts = [path.read_bytes().decode("utf-8", errors="replace")]
        if path.suffix == ".png":  # tEXt, zTXt and iTXt chunks (zTXt is compressed in the bytes)
            with Image.open(path) as image:
                texts += [f"{k}={v}" for k, v in getattr(image, "text", {}).items()]
        for text in texts:
            for marker in markers:
                at = text.find(marker)
                if at >= 0:
                    found.append((rel, text[max(0, at - 60) : at + 60]))
    return found
