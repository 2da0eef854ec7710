"""Helpers the test modules share (issue 34: thirteen modules each defined their own `q()`)."""
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
