"""The SQL page in a real browser (headless Debian Chromium via Playwright, `predictabase serve`'s Streamlit
command; the server, browser and page helpers of tests/test_dashboard_browser.py) on the session's real
published snapshot (conftest.real_warehouse, read-only use): the example query's rows, its CSV and Parquet
downloads equal to a direct DuckDB read, refusals shown as one line, the marts with their columns."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from predictabase import sql

from .test_dashboard_browser import _browse, _grid_text, _shows_value, browser, serving  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parent.parent
EDITOR = ".st-key-sql_editor textarea"


def direct(path: Path, query: str):
    with duckdb.connect(str(path), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        return con.sql(query).to_arrow_table()


@pytest.fixture(scope="module")
def served(real_warehouse, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sql_dashboard")
    with serving(real_warehouse, tmp) as url:
        yield {"url": url, "tmp": tmp}


@pytest.fixture
def pg(browser, served):  # noqa: F811
    yield from _browse(browser, served)


def _alerts(pg) -> list[str]:
    return [
        " ".join(t.split())
        for t in pg.page.locator('[data-testid="stAlert"] [data-testid="stMarkdownContainer"]').all_inner_texts()
    ]


def _run(pg, query: str) -> None:
    pg.page.locator(EDITOR).fill(query)
    pg.page.get_by_role("button", name="Run").click()
    pg.page.wait_for_timeout(300)  # let the rerun start before waiting for it to finish
    pg.wait_idle()


def test_sql_page(real_warehouse, served, pg, tmp_path):
    snapshot = real_warehouse.marts
    before = hashlib.sha256(snapshot.read_bytes()).hexdigest()
    pg.open(served["url"] + "/sql")
    pg.assert_no_exception()
    main = pg.page.inner_text('[data-testid="stMain"]')
    assert re.search(r"Ask the published warehouse's \d+ marts \([\d,]+ rows in all\) your own question in SQL", main)
    assert "first 100,000 rows" in main  # the row cap, said on the page

    # the example query ran on opening: its rows, as DuckDB reads them from the snapshot
    query = pg.page.locator(EDITOR).input_value()
    assert "FROM mart_model_perplexity" in query
    expected = direct(snapshot, query)
    assert expected.num_rows >= 2
    cells = _grid_text(pg, 3)  # the result, the marts, the columns of one mart
    for row in expected.to_pylist():
        assert row["model_key"] in cells and row["corpus"] in cells
        assert _shows_value(cells, row["token_perplexity"]), row
    assert f"{expected.num_rows} rows, {expected.num_columns} columns" in main
    pg.screenshot("sql")

    # the downloads hold the same rows
    with pg.page.expect_download() as dl:
        pg.page.get_by_role("button", name="Download Parquet").click()
    assert dl.value.suggested_filename == "query.parquet"
    assert pq.read_table(dl.value.path()).equals(expected)
    with pg.page.expect_download() as dl:
        pg.page.get_by_role("button", name="Download CSV").click()
    rows = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text())))
    assert rows[0] == expected.schema.names and len(rows) == 1 + expected.num_rows
    assert [r[0] for r in rows[1:]] == expected.column("model_key").to_pylist()

    # refusals: one line each, with the reason in front
    for statement, reason in [
        ("DROP TABLE mart_model_perplexity", sql.READ_ONLY),
        (f"COPY mart_models TO '{tmp_path / 'x.csv'}'", sql.FILES),
        ("SET enable_external_access = true", sql.SETTINGS),
    ]:
        _run(pg, statement)
        pg.assert_no_exception()
        errors = _alerts(pg)
        assert len(errors) == 1 and errors[0].startswith(reason + ": "), (statement, errors)
    assert not (tmp_path / "x.csv").exists()

    # a query of one's own
    _run(pg, "SELECT 'own ' || count(*) AS answer FROM mart_models WHERE model_key IS NOT NULL")
    n = direct(snapshot, "SELECT count(*) AS n FROM mart_models WHERE model_key IS NOT NULL").column("n")[0].as_py()
    assert f"own {n}" in _grid_text(pg, 3)

    # the marts and their columns: descriptions from the snapshot's metadata (dbt's manifest) when present
    with duckdb.connect(str(snapshot), read_only=True) as con:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        described = "snapshot_columns" in present
        first = (
            con.execute(
                "SELECT column_name, description FROM snapshot_columns WHERE mart = 'mart_model_perplexity' "
                "ORDER BY ordinal LIMIT 1"
            ).fetchone()
            if described
            else None
        )
    main = pg.page.inner_text('[data-testid="stMain"]')
    cells = _grid_text(pg, 3)
    assert "mart_model_perplexity" in cells and "model_key" in cells and "VARCHAR" in cells
    if described:
        assert first[1] and " ".join(first[1].split())[:40] in " ".join(cells.split())
        assert "descriptions from the dbt project's documentation" in main
    else:  # a snapshot published before the metadata tables: names and types only, said so
        assert "published before the marts' descriptions were stored in it" in main
    pg.screenshot("sql_marts")

    assert hashlib.sha256(snapshot.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in snapshot.parent.iterdir() if p.name.startswith("marts")) == ["marts.duckdb"]


def test_sql_page_without_a_snapshot(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    at = AppTest.from_file(str(ROOT / "dashboards" / "app_pages" / "sql.py"), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "No warehouse snapshot yet" in at.info[0].value
