"""Screenshots of every dashboard page, as a new reader sees it: `python scripts/page_screenshots.py OUT_DIR
[--warehouse DIR]`.

Serves the warehouse's published snapshot with `predictabase serve`'s exact Streamlit command and photographs
every page (full page, 1280 px wide, the window the pages are checked at) in the browser tests' headless Chromium
(tests/test_dashboard_browser.py: `serving`, `Page`), one PNG per page, quantized to 256 colours to keep them
small. The page tour of docs/pages/ is taken with it, on a warehouse `make up` and `refresh` built.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.core.config import paths as make_paths  # noqa: E402
from tests.test_dashboard_browser import CHROMIUM_ARGS, Page, serving  # noqa: E402


def nav_paths() -> dict[str, str]:
    """{file stem: url path} of every page of dashboards/app.py, in the sidebar's order."""
    import ast

    tree = ast.parse((ROOT / "dashboards" / "app.py").read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            script = node.args[0].value
            kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            out[Path(script).stem] = "/" if kw.get("default") else "/" + kw["url_path"]  # the default page is /
    return out


# Streamlit scrolls inside its main block, not the document: the viewport is grown to the block's height.
MAIN = '[data-testid="stMain"]'
WIDTH = 1280
# decrypted "prompts in the wild" text (kept out of LM training data upstream) never goes into a picture:
# the wild page is cut above the heading of its text browser
PRIVATE_FROM = {"wild": "Browse prompts, completions and answers"}


def _full_page(pg: Page, stem: str) -> Path:
    height = pg.page.evaluate(f"document.querySelector('{MAIN}').scrollHeight")
    pg.page.set_viewport_size({"width": WIDTH, "height": min(int(height) + 40, 16000)})
    pg.page.wait_for_timeout(1000)
    pg.wait_idle()
    path = pg.shots / f"{stem}.png"
    clip = None
    if stem in PRIVATE_FROM:
        heading = pg.page.get_by_text(PRIVATE_FROM[stem], exact=True)
        box = heading.bounding_box() if heading.count() else None
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": box["y"] - 8 if box else 1600}
    pg.page.screenshot(path=str(path), clip=clip)
    return path


def shoot(warehouse: Path, out: Path, pages: list[str] | None = None) -> list[Path]:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        serving(make_paths(warehouse), Path(tmp)) as url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=CHROMIUM_ARGS)
        for stem, path in nav_paths().items():
            if pages and stem not in pages:
                continue
            pg = Page(browser, out)
            try:
                pg.open(url + path)
                pg.page.wait_for_timeout(1500)  # charts draw after the script ends
                pg.wait_idle()
                shot = _full_page(pg, stem)
            finally:
                pg.close()
            Image.open(shot).convert("RGB").quantize(256).save(shot, optimize=True)
            shots.append(shot)
            print(f"{shot} ({shot.stat().st_size // 1024} KiB)")
        browser.close()
    return shots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--warehouse", type=Path, default=ROOT / "warehouse")
    ap.add_argument("--page", action="append", help="only these pages (file stems), repeatable")
    a = ap.parse_args()
    shoot(a.warehouse.resolve(), a.out.resolve(), a.page)


if __name__ == "__main__":
    main()
