"""`predictabase serve` starts Streamlit with usage statistics off and the warehouse set, whatever the config files say."""

from __future__ import annotations

from predictabase.core.config import paths as make_paths
from predictabase.warehouse.serve import APP, streamlit_command


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_streamlit_command(tmp_path):
    p = make_paths(tmp_path / "warehouse")
    argv, env = streamlit_command(p, 8599)
    assert argv[1:4] == ["-m", "streamlit", "run"] and argv[4] == str(APP) and APP.exists()
    assert _flag(argv, "--server.port") == "8599"
    assert _flag(argv, "--browser.gatherUsageStats") == "false"
    assert _flag(argv, "--server.headless") == "true"
    assert _flag(argv, "--global.developmentMode") == "false"
    assert "--server.address" not in argv
    assert env["PREDICTABASE_WAREHOUSE"] == str(p.warehouse)
    assert env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] == "false"
    argv, _ = streamlit_command(p, 8599, address="127.0.0.1")
    assert _flag(argv, "--server.address") == "127.0.0.1"


def test_dashboard_never_opens_the_working_warehouse():
    """Pages read marts only through dashboards/data.py, which opens the snapshot read-only."""
    root = APP.parent
    data = (root / "data.py").read_text()
    # one in-memory connection that ATTACHes the snapshot read-only; never paths().duckdb
    assert data.count("= duckdb.connect(") == 1 and 'con = duckdb.connect(":memory:")' in data
    assert "AS snap (READ_ONLY)" in data and ".duckdb)" not in data
    for page in (root / "app_pages").glob("*.py"):
        text = page.read_text()
        assert "import duckdb" not in text, f"{page.name} must read marts through data.py"


def test_the_read_layer_cannot_write_the_snapshot(tmp_path, monkeypatch):
    import sys

    import duckdb
    import pytest

    from .dashboard_fixtures import create_marts

    create_marts(tmp_path / "marts.duckdb")
    monkeypatch.syspath_prepend(str(APP.parent))
    sys.modules.pop("data", None)
    import data

    with data._open(str(tmp_path / "marts.duckdb")) as con:
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("CREATE TABLE main.x AS SELECT 1")
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("DELETE FROM mart_models")
