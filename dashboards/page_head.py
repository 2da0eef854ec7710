"""What the dashboard's server adds to every page's HTML, for what Streamlit's frontend does not do itself
(dashboard_server.py mounts it):

- Web fonts for the scripts of MECO's languages that Streamlit's font (Source Sans: Latin, Greek, Cyrillic) lacks,
  Hangul and Hebrew, served by the app itself from the npm packages `make setup` installs (node_modules/@fontsource,
  OFL): a reader's machine without a Korean font showed boxes. The faces join Streamlit's own "Source Sans" family
  with a unicode-range of those scripts only, so every text of the app (markdown, tables drawn on a canvas, charts)
  falls back to them for those characters and to nothing else; the browser fetches only the slices (woff2, about
  20 kB each) of the characters a page shows.
- The chosen theme (light, dark) kept for the whole app: Streamlit keeps it in the browser's localStorage under a
  key named after the address the page was opened at ("stActiveTheme-<path>-v2"), so dark mode chosen on one page
  was gone after a reload on another or when a page was opened by its address. A script copies the last choice
  to the key of the address being opened before Streamlit reads it.
- No 404s when a page is opened by its address: Streamlit's frontend first looks for its server one folder below
  the page (`/languages/_stcore/health`, `/languages/_stcore/host-config`, both 404) before the right one; the
  page tells it where the server is (window.__streamlit.BACKEND_BASE_URL, the setting a host page gives
  Streamlit's frontend), so it asks there only.
- The Warehouse page at /home: the default page's url_path ("home" in app.py) is not an address Streamlit
  serves (it serves the default page at the root and said "Page not found" first); /home redirects to the root.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

FONT_ROUTE = "_fonts"  # the fonts' folder and their stylesheet, under the app's base URL path
FONT_CSS = "scripts.css"
#: the family Streamlit's theme names for all text (its frontend's "Source Sans", sans-serif)
STREAMLIT_FAMILY = "Source Sans"
#: code points per served font: Hangul (jamo, syllables, compatibility jamo) with the CJK symbols, punctuation,
#: ideographs (hanja) and full-width forms Korean text uses; Hebrew's block and presentation forms
HANGUL = [
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
]
HEBREW = [(0x0590, 0x05FF), (0xFB1D, 0xFB4F)]
#: (npm package under @fontsource, its stylesheet of weight 400, the code points taken from it)
FONTS = [("noto-sans-kr", "400.css", HANGUL), ("noto-sans-hebrew", "400.css", HEBREW)]
#: the first path segments of what is not a page: Streamlit's own routes, the app's static files, the fonts
NOT_PAGES = {"_stcore", "static", "media", "component", "app", FONT_ROUTE}
HOME = "home"  # app.py's url_path of the default page (the Warehouse)

THEME_SCRIPT = """(function () {
  try {
    var ls = window.localStorage, KEY = "predictabase.theme", streamlitKey = /^stActiveTheme-.*(-v[0-9]+)$/;
    var last = JSON.parse(ls.getItem(KEY) || "null");
    if (last && typeof last.version === "string" && typeof last.value === "string")
      ls.setItem("stActiveTheme-" + window.location.pathname + last.version, last.value);
    var setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) {
      setItem.call(this, key, value);
      var hit = this === ls && streamlitKey.exec(key);
      if (hit) setItem.call(this, KEY, JSON.stringify({version: hit[1], value: String(value)}));
    };
  } catch (e) { /* no localStorage (private mode): Streamlit's own default applies */ }
})();"""


def _ranges(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        lo, _, hi = part.strip().removeprefix("U+").removeprefix("u+").partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def _clip(ranges: list[tuple[int, int]], keep: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(max(lo, k0), min(hi, k1)) for lo, hi in ranges for k0, k1 in keep if max(lo, k0) <= min(hi, k1)]


def _range_text(ranges: list[tuple[int, int]]) -> str:
    return ",".join(f"U+{lo:X}" if lo == hi else f"U+{lo:X}-{hi:X}" for lo, hi in ranges)


def font_css(fontsource: Path) -> str:
    """@font-face rules of Streamlit's family for the FONTS' scripts, upright and italic (Streamlit's italic face
    has no such glyphs either), each a woff2 slice of a fontsource package with its unicode-range clipped to the
    script's code points (the slices also hold Latin letters, which stay Source Sans). Empty without the packages."""
    rules = []
    for package, sheet, keep in FONTS:
        css = fontsource / package / sheet
        if not css.is_file():
            continue
        for block in re.findall(r"@font-face\s*{([^}]*)}", css.read_text(encoding="utf-8")):
            src = re.search(r"url\(\./(files/[^)]+\.woff2)\)", block)
            rng = re.search(r"unicode-range:\s*([^;]+);", block)
            ranges = _clip(_ranges(rng.group(1)), keep) if src and rng else []
            if not ranges:
                continue
            for style in ("normal", "italic"):
                rules.append(
                    f'@font-face{{font-family:"{STREAMLIT_FAMILY}";font-style:{style};font-weight:100 900;'
                    f'font-display:swap;src:url({package}/{src.group(1)}) format("woff2");'
                    f"unicode-range:{_range_text(ranges)}}}"
                )
    return "\n".join(rules)


def head_html(depth: int, with_fonts: bool) -> str:
    """What goes at the top of <head> of a page `depth` path segments below the app's root (0: the root)."""
    parts = []
    if depth > 0:  # the server is at the app's root, `depth` folders up from the page's address
        up = "." if depth == 1 else "../" * (depth - 1)
        parts.append(
            "<script>window.__streamlit = Object.assign({}, window.__streamlit, "
            f"{{BACKEND_BASE_URL: new URL({json.dumps(up)}, window.location.href).href}});</script>"
        )
    parts.append(f"<script>{THEME_SCRIPT}</script>")
    if with_fonts:
        href = ("./" if depth <= 1 else "../" * (depth - 1)) + f"{FONT_ROUTE}/{FONT_CSS}"
        parts.append(f'<link rel="stylesheet" href="{href}">')
    return "".join(parts)


def page_depth(path: str, base: str) -> int | None:
    """How many segments `path` is below the app's root `base` ("" or "/prefix"); None for what is not a page
    address (Streamlit's routes, static files, the fonts) or outside the app."""
    if base and not (path == base or path.startswith(base + "/")):
        return None
    segments = [s for s in path[len(base) :].split("/") if s]
    if segments and (segments[0] in NOT_PAGES or "." in segments[-1]):
        return None
    return len(segments)


class PageHead:
    """ASGI middleware: a page's HTML (Streamlit's index.html, which it serves at every page address) gets
    `head_html` at the top of its <head>; GET /home (the default page's url_path) redirects to the root."""

    def __init__(self, app, base: str = "", with_fonts: bool = True) -> None:
        self.app = app
        self.base = "/" + base.strip("/") if base.strip("/") else ""
        self.with_fonts = with_fonts

    async def __call__(self, scope, receive, send) -> None:
        depth = (
            page_depth(scope["path"], self.base)
            if scope["type"] == "http" and scope["method"] in ("GET", "HEAD")
            else None
        )
        if depth is None:
            await self.app(scope, receive, send)
            return
        if scope["path"][len(self.base) :].strip("/") == HOME:
            query = scope.get("query_string", b"")
            location = (self.base or "") + "/" + ("?" + query.decode("latin-1") if query else "")
            await send(
                {
                    "type": "http.response.start",
                    "status": 301,
                    "headers": [(b"location", location.encode("latin-1")), (b"cache-control", b"no-cache")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["method"] == "HEAD":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Injecting(send, head_html(depth, self.with_fonts).encode()))


class _Injecting:
    """The `send` of one response: an HTML body is held until complete, `head` inserted after <head>, and sent
    uncompressed with its new length (other responses pass as they are)."""

    def __init__(self, send, head: bytes) -> None:
        self.send, self.head = send, head
        self.start: dict | None = None
        self.body: list[bytes] = []

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.start":
            headers = dict(message.get("headers", []))
            if headers.get(b"content-type", b"").startswith(b"text/html"):
                self.start = message
                return
        elif message["type"] == "http.response.body" and self.start is not None:
            self.body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            await self._send_html()
            return
        await self.send(message)

    async def _send_html(self) -> None:
        headers = [
            (k, v)
            for k, v in self.start.get("headers", [])
            if k not in (b"content-length", b"content-encoding", b"etag", b"last-modified")
        ]
        body = b"".join(self.body)
        if dict(self.start.get("headers", [])).get(b"content-encoding") == b"gzip":
            body = gzip.decompress(body)
        if b"<head>" in body:
            body = body.replace(b"<head>", b"<head>" + self.head, 1)
        headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": body})
