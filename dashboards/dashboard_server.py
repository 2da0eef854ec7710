"""The dashboard's server: `predictabase serve` runs `streamlit run dashboards/dashboard_server.py`, which serves
app.py with Streamlit's own server plus page_head.py's additions to every page (the fonts of MECO's scripts, the
theme kept across pages, no 404 for a page opened by its address, /home).

`streamlit run dashboards/app.py` still serves the same app without them.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import page_head

#: the fonts `make setup` installs with npm (package.json at the repository's root); absent in an installed wheel,
#: where the pages fall back on the reader's own fonts
FONTSOURCE = Path(__file__).resolve().parents[1] / "node_modules" / "@fontsource"
BASE = st.get_option("server.baseUrlPath").strip("/")
_prefix = f"/{BASE}" if BASE else ""
_css = page_head.font_css(FONTSOURCE)


async def _font_css(_request) -> Response:
    return Response(_css, media_type="text/css", headers={"Cache-Control": "public, max-age=86400"})


_routes = [Route(f"{_prefix}/{page_head.FONT_ROUTE}/{page_head.FONT_CSS}", _font_css)]
if _css:
    _routes.append(Mount(f"{_prefix}/{page_head.FONT_ROUTE}", StaticFiles(directory=FONTSOURCE)))

app = st.App("app.py", routes=_routes, middleware=[Middleware(page_head.PageHead, base=BASE, with_fonts=bool(_css))])
