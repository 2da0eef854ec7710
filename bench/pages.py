"""Every page interactive within 2 s (issue 32): load each dashboard page in headless Chromium and move two of its
controls, timing each until the page is idle again (Streamlit's script finished and the page settled).

    python bench/pages.py --warehouse warehouse [--repeat 2]

Reads only (the play pages are opened, not played). Localhost, Debian's `chromium`. Per page: the load (from
navigation to idle, charts drawn), then up to two select boxes of the page's main column set to their second
option, each timed from the click on the option to idle. Prints a table: the median over --repeat fresh
browser pages, and the worst.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from players import APP_READY, start_server  # noqa: E402

PAGES = ["/", "/scoreboard", "/perplexity", "/human-perplexity", "/top1", "/play-top1", "/play-pairwise",
         "/word-surprisal", "/next-word", "/reading-times", "/wild", "/sql"]


def settle(page) -> None:
    """Idle twice 200 ms apart (a run that ends in a rerun is idle for a moment between), charts drawn."""
    page.wait_for_selector(APP_READY, state="attached", timeout=120_000)
    while True:
        page.wait_for_timeout(200)
        if page.locator(APP_READY).count():
            break
        page.wait_for_selector(APP_READY, state="attached", timeout=120_000)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    for i in range(charts.count()):
        charts.nth(i).locator("canvas, svg").first.wait_for(timeout=60_000)


def measure(browser, url: str, path: str) -> tuple[float, list[tuple[str, float]]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url + path)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
    settle(page)
    load = time.perf_counter() - t0
    moves = []
    boxes = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]')
    for i in range(boxes.count()):
        if len(moves) == 2:
            break
        box = boxes.nth(i)
        if box.locator("input[disabled]").count() or not box.is_visible():  # disabled, or in a closed expander
            continue
        label = box.locator("label").first.inner_text().strip()[:40]
        box.locator("input").first.click()
        options = page.get_by_role("option")
        try:
            options.first.wait_for(timeout=10_000)
        except Exception:  # noqa: BLE001 - a box that opens no list (none to move)
            page.keyboard.press("Escape")
            continue
        if options.count() < 2:
            page.keyboard.press("Escape")
            continue
        t1 = time.perf_counter()
        options.nth(1).click()
        page.wait_for_timeout(50)  # the click's rerun has begun
        settle(page)
        moves.append((label, time.perf_counter() - t1))
    ctx.close()
    return load, moves


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    results: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(args.warehouse, Path(tmp))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
                measure(browser, url, "/")  # the server's first run (imports) is not a page's
                for _ in range(args.repeat):
                    for path in PAGES:
                        results.setdefault(path, []).append(measure(browser, url, path))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    print(f"bench/pages.py: {args.warehouse}; median of {args.repeat} fresh pages (worst in brackets); seconds "
          "until idle; localhost, headless Chromium")
    print("| page | load (s) | control 1 | control 1 (s) | control 2 | control 2 (s) | within 2 s |")
    print("|---|---|---|---|---|---|---|")
    for path, runs in results.items():
        loads = [r[0] for r in runs]
        cells = [f"{statistics.median(loads):.2f} ({max(loads):.2f})"]
        worst = max(loads)
        for j in range(2):
            xs = [r[1][j][1] for r in runs if len(r[1]) > j]
            name = next((r[1][j][0] for r in runs if len(r[1]) > j), "")
            cells += [name or "—", f"{statistics.median(xs):.2f} ({max(xs):.2f})" if xs else "—"]
            worst = max([worst] + xs)
        print(f"| {path} | " + " | ".join(cells) + f" | {'yes' if worst <= 2 else 'no'} |")


if __name__ == "__main__":
    main()
