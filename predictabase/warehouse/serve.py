"""Serve the Streamlit dashboard (`predictabase serve`).

The dashboard (`dashboards/app.py`) reads only the published snapshot
`<warehouse>/marts.duckdb`, found through `PREDICTABASE_WAREHOUSE`, which is set here.
Streamlit is started with every setting that matters given on the command line, so
no user or project config file can turn usage statistics back on or make it open
a browser: usage statistics off, headless, not in development mode, no file
watcher.
"""
from __future__ import annotations

import os
import sys

from predictabase.core import resources
from predictabase.core.config import PROJECT_ROOT, Paths

#: what `streamlit run` serves: the app (dashboards/app.py) through its server, which adds the fonts of MECO's
#: scripts, the theme kept across pages and no 404 for a page opened by its address (dashboards/page_head.py)
APP = resources.dashboard_app().with_name("dashboard_server.py")


def streamlit_command(paths: Paths, port: int, address: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run the dashboard against `paths.warehouse`."""
    argv = [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--global.developmentMode", "false",
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--client.toolbarMode", "viewer",
        # no full garbage collection after every run: with pandas, DuckDB and Altair loaded it took ~100 ms of
        # the one core Streamlit's runs share, half the server's time with six players at once (py-spy);
        # Python's own collector still runs
        "--runner.postScriptGC", "false",
    ]
    if address:
        argv += ["--server.address", address]
    env = dict(os.environ)
    env.update({
        "PREDICTABASE_WAREHOUSE": str(paths.warehouse),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "STREAMLIT_SERVER_HEADLESS": "true",
        "STREAMLIT_GLOBAL_DEVELOPMENT_MODE": "false",
    })
    return argv, env


def serve(paths: Paths, port: int = 8501, address: str | None = None) -> None:
    """Replace this process with the Streamlit server (Ctrl-C stops it)."""
    argv, env = streamlit_command(paths, port, address)
    if not paths.marts.exists():
        print(f"note: {paths.marts} does not exist yet; the dashboard will say so until "
              "`predictabase build` publishes it.", file=sys.stderr)
    print(f"serving the dashboard on http://localhost:{port} (reading {paths.marts})", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(PROJECT_ROOT)  # so the project's .streamlit/config.toml applies too
    os.execve(argv[0], argv, env)
