"""Every page interactive within 2 s: load each dashboard page in headless Chromium and move two of its
controls, timing each until the page is idle again (Streamlit's script finished and the page settled).

    python bench/pages.py --warehouse warehouse [--repeat 2] [--baseline ../other-checkout/dashboards/app.py]

Reads only (the play pages are opened, not played). Localhost, Debian's `chromium`. Per page: the load (from
navigation to idle, charts drawn), then up to two select boxes of the page's main column set to their first
option not shown, each timed from the click on the option to the end of the script run it started (counted by a
MutationObserver on Streamlit's script state, not by waiting a fixed time), charts drawn. The 200 ms look that
confirms the page stays idle is not counted. Prints a table: the median over --repeat fresh browser pages, and
the worst. With --baseline, a second server runs another checkout's dashboard on the same snapshot, each page is
measured on the two in turn (pair by pair), and the table gives the ratio of the loads.
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

from players import start_server  # noqa: E402

from tests.helpers import APP_READY, FINISHED_RUNS  # noqa: E402

PAGES = [
    "/",
    "/scoreboard",
    "/perplexity",
    "/human-perplexity",
    "/top1",
    "/play-top1",
    "/play-pairwise",
    "/word-surprisal",
    "/next-word",
    "/reading-times",
    "/languages",
    "/wild",
    "/sql",
]


def idle_at(page) -> float:
    """The moment the page became idle for good: Streamlit's script finished and every chart drawn. A look 200 ms
    later (not counted) makes sure no other run began and ended since; if one did, its end is the moment."""
    while True:
        page.wait_for_selector(APP_READY, state="attached", timeout=120_000)
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        for i in range(charts.count()):
            charts.nth(i).locator("canvas, svg").first.wait_for(timeout=60_000)
        at, runs = time.perf_counter(), page.evaluate(FINISHED_RUNS)
        page.wait_for_timeout(200)
        if page.locator(APP_READY).count() and page.evaluate(FINISHED_RUNS) == runs:
            return at


def measure(browser, url: str, path: str) -> tuple[float, list[tuple[str, float]]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url + path)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
    page.evaluate(FINISHED_RUNS)  # count the runs from here on
    load = idle_at(page) - t0
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
        others = page.get_by_role("option", selected=False)  # the shown value again would start no run
        if options.count() < 2 or others.count() == 0:
            page.keyboard.press("Escape")
            continue
        before = page.evaluate(FINISHED_RUNS)
        t1 = time.perf_counter()
        try:
            others.first.click(timeout=10_000)
        except Exception:  # noqa: BLE001 - the list redrew under the click: this control is not timed
            page.keyboard.press("Escape")
            continue
        page.wait_for_function("n => window.__finishedRuns > n", arg=before, timeout=120_000)  # the click's run ended
        moves.append((label, idle_at(page) - t1))
    ctx.close()
    return load, moves


def _cell(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({max(xs):.2f})" if xs else "—"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--baseline",
        type=Path,
        help="another checkout's dashboards/app.py: each page is measured on "
        "both servers in turn, and the table gives the ratio",
    )
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    sides = ["this"] + (["baseline"] if args.baseline else [])
    results: dict[str, dict[str, list]] = {side: {} for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        servers = {}
        for side in sides:
            (Path(tmp) / side).mkdir()
            servers[side] = start_server(
                args.warehouse, Path(tmp) / side, args.baseline if side == "baseline" else None
            )
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=shutil.which("chromium"),
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
                )
                for side in sides:
                    measure(browser, servers[side][1], "/")  # the server's first run (imports) is not a page's
                for _ in range(args.repeat):
                    for path in PAGES:
                        for side in sides:  # pair by pair: the same page on each server, one after the other
                            results[side].setdefault(path, []).append(measure(browser, servers[side][1], path))
                browser.close()
        finally:
            for proc, _url in servers.values():
                proc.terminate()
                proc.wait(timeout=15)
    print(
        f"bench/pages.py: {args.warehouse}; median of {args.repeat} fresh pages (worst in brackets); seconds "
        "until the script run ended, charts drawn; localhost, headless Chromium"
        + (f"; baseline: {args.baseline}" if args.baseline else "")
    )
    if args.baseline:
        print(
            "| page | load (s) | baseline load (s) | ratio | control 1 (s) | baseline (s) | control 2 (s) | baseline (s) |"
        )
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("| page | load (s) | control 1 | control 1 (s) | control 2 | control 2 (s) | within 2 s |")
        print("|---|---|---|---|---|---|---|")
    for path, runs in results["this"].items():
        loads = [r[0] for r in runs]
        moves = [[r[1][j][1] for r in runs if len(r[1]) > j] for j in range(2)]
        names = [next((r[1][j][0] for r in runs if len(r[1]) > j), "—") for j in range(2)]
        if args.baseline:
            base = results["baseline"][path]
            b_loads = [r[0] for r in base]
            b_moves = [[r[1][j][1] for r in base if len(r[1]) > j] for j in range(2)]
            ratio = statistics.median(loads) / statistics.median(b_loads)
            print(
                f"| {path} | {_cell(loads)} | {_cell(b_loads)} | {ratio:.2f} | "
                + " | ".join(f"{_cell(moves[j])} | {_cell(b_moves[j])}" for j in range(2))
                + " |"
            )
        else:
            worst = max([max(loads)] + [x for xs in moves for x in xs])
            print(
                f"| {path} | {_cell(loads)} | "
                + " | ".join(f"{names[j]} | {_cell(moves[j])}" for j in range(2))
                + f" | {'yes' if worst <= 2 else 'no'} |"
            )


if __name__ == "__main__":
    main()
