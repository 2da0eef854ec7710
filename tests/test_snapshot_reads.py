"""The dashboard reads the snapshot that is published now, even while a connection to an older one
is open in the same process.

DuckDB hands `duckdb.connect(path)` the database instance of any connection to that path still open
in the process: after a publish (os.replace) that is the old, replaced file. The first test shows
that behaviour, so the others are known to test something; the read layer (`dashboards/data.py`)
opens the file through ATTACH and keys its cache on the id stored inside the file.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from .dashboard_fixtures import create_marts

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "dashboards" / "app_pages" / "home.py"


@pytest.fixture
def data_module(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    sys.modules.pop("data", None)
    import data

    data.st.cache_data.clear()
    yield data
    data.st.cache_data.clear()


@contextmanager
def _held_open(marts: Path):
    """Another session holding the published file open (read-only) meanwhile: DuckDB's instance cache then hands
    a plain `connect` that file, even after a publish replaced it."""
    holder = duckdb.connect(str(marts), read_only=True)
    try:
        yield holder
    finally:
        holder.close()


def _built_at(df) -> str:
    return str(df["built_at"].iloc[0])[:19]


def test_plain_connect_sees_the_replaced_file_while_a_connection_is_open(tmp_path: Path):
    marts = tmp_path / "marts.duckdb"
    create_marts(marts, built_at="2025-11-23 09:41:07")
    with _held_open(marts):
        create_marts(marts, built_at="2025-11-24 10:00:00")
        con = duckdb.connect(str(marts), read_only=True)
        try:  # DuckDB's instance cache: still the first file
            assert str(con.execute("SELECT built_at FROM mart_build_info").fetchone()[0]).startswith("2025-11-23")
        finally:
            con.close()


def test_read_layer_sees_each_publish_while_another_connection_is_open(tmp_path: Path, data_module):
    data = data_module
    marts = tmp_path / "marts.duckdb"
    create_marts(marts, built_at="2025-11-23 09:41:07", snapshot_id="a" * 32)
    assert data.snapshot().snapshot_id == "a" * 32
    assert _built_at(data.table("mart_build_info")) == "2025-11-23 09:41:07"
    with _held_open(marts):  # another session, mid-query on the old file
        create_marts(marts, built_at="2025-11-24 10:00:00", scale=1.1, snapshot_id="b" * 32)
        assert data.snapshot().snapshot_id == "b" * 32
        assert _built_at(data.table("mart_build_info")) == "2025-11-24 10:00:00"
        create_marts(marts, built_at="2025-11-25 11:00:00", scale=1.2, snapshot_id="c" * 32)
        assert _built_at(data.table("mart_build_info")) == "2025-11-25 11:00:00"


def test_a_read_never_caches_another_snapshot_under_its_key(tmp_path: Path, data_module):
    """A publish landing between taking the id and reading: the read notices and retries."""
    data = data_module
    marts = tmp_path / "marts.duckdb"
    create_marts(marts, built_at="2025-11-23 09:41:07", snapshot_id="a" * 32)
    stale = data.snapshot()
    create_marts(marts, built_at="2025-11-24 10:00:00", snapshot_id="b" * 32)
    with pytest.raises(data._Moved):
        data._cached_table(stale.path, stale.snapshot_id, "mart_build_info")
    assert _built_at(data.table("mart_build_info")) == "2025-11-24 10:00:00"


def test_two_page_sessions_see_the_new_snapshot_after_a_publish(tmp_path: Path, data_module):
    """Two sessions of the home page in one process: both show the new build after a publish,
    while a third connection to the old file stays open."""
    from streamlit.testing.v1 import AppTest

    marts = tmp_path / "marts.duckdb"
    create_marts(marts, built_at="2025-11-23 09:41:07")

    def last_build(at) -> str:
        assert not at.exception, [e.message for e in at.exception]
        line = next(m.value for m in at.markdown if m.value.startswith("**Last build:**"))
        return line.removeprefix("**Last build:** ")

    first = AppTest.from_file(str(HOME), default_timeout=60).run()
    assert last_build(first).startswith("2025-11-23 09:41")
    with _held_open(marts):
        create_marts(marts, built_at="2025-11-24 10:00:00", scale=1.1)
        second = AppTest.from_file(str(HOME), default_timeout=60).run()
        assert last_build(second).startswith("2025-11-24 10:00")
        assert last_build(first.run()).startswith("2025-11-24 10:00")
