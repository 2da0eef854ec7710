"""Many players at once: N players, each in their own Chromium page against one dashboard server,
play the pairwise game at the same time; how long each answer takes to show its feedback, and every answer
stored once.

    python bench/players.py --warehouse /tmp/wh-copy [--players 20] [--answers 5]

WRITES live answers into the warehouse's live store: give it a copy (cp -r warehouse /tmp/wh-copy), never the
warehouse you publish from. Localhost only; Chromium from Debian (`chromium` on PATH), headless.

Per answer it measures, from the click on an answer button: feedback = until the page shows the points (the
"Next question" button); redraw = from the click on "Next question" until the next question's answer buttons.
Prints a table: players, answers, the 50th/95th percentile and max of each, and whether every answer was stored
exactly once (the store's rows per player against the answers clicked). Also, from the moment every player
is in: how long the answering took, the CPU seconds the dashboard server used meanwhile (all its threads;
per answer: with its "Next question" redraw), and those of the whole machine (the server, the Chromium pages and
this script), to tell the server's share from the browsers' on the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.core import live  # noqa: E402
from predictabase.core.config import paths as make_paths  # noqa: E402
from predictabase.warehouse.serve import PROJECT_ROOT, streamlit_command  # noqa: E402
from tests.helpers import APP_READY  # noqa: E402

CHOICES = ["70%", "30%", "90%", "10%", "60%", "40%", "80%", "20%"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    warehouse: Path, tmp: Path, app: Path | None = None, cpus: set[int] | None = None
) -> tuple[subprocess.Popen, str]:
    """The dashboard on a free localhost port (`app`: another checkout's dashboards/ entry script, the one
    `predictabase serve` runs, for a comparison; `cpus`: the cores the server may run on, taskset's way)."""
    port = _free_port()
    argv, env = streamlit_command(make_paths(warehouse), port, address="127.0.0.1")
    if app is not None:
        entry = Path(argv[argv.index("run") + 1]).name
        theirs = app.parent / entry if (app.parent / entry).exists() else app  # an older checkout: its app.py
        argv = [str(theirs) if a.endswith(entry) else a for a in argv]
    if cpus:
        argv = ["taskset", "--cpu-list", ",".join(map(str, sorted(cpus))), *argv]
    env["HOME"] = str(tmp)
    proc = subprocess.Popen(
        argv, env=env, cwd=PROJECT_ROOT, stdout=open(tmp / "streamlit.log", "wb"), stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"the dashboard did not start: {tmp / 'streamlit.log'}")


async def idle(page) -> None:
    await page.wait_for_selector(APP_READY, state="attached", timeout=120_000)


async def one_player(
    browser, url: str, i: int, answers: int, ready: list, start: asyncio.Event, logins: asyncio.Semaphore
) -> dict:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    page.set_default_timeout(180_000)
    async with logins:  # the players arrive a few at a time (a class logging in), then answer together
        await page.goto(url + "/play-pairwise", timeout=180_000)
        await page.get_by_role("button", name="Play anonymously").click()
        await page.get_by_text("Playing as").wait_for(timeout=180_000)
        await idle(page)
    text = await page.locator('[data-testid="stMain"]').inner_text()
    code = re.search(r"player code (p[0-9a-f]{12})", text).group(1)
    feedback, redraw, clicked = [], [], 0
    ready.append(code)
    if len(ready) == ready[0]:  # the last player in: everyone answers from now on, at the same time
        start.set()
    await start.wait()
    for k in range(answers):
        choice = CHOICES[(i + k) % len(CHOICES)]
        buttons = page.get_by_role("button", name=choice, exact=True).or_(page.get_by_role("button", name="Continue"))
        await buttons.first.wait_for(timeout=120_000)
        t0 = time.perf_counter()
        await buttons.first.click()
        await page.get_by_role("button", name="Next question").wait_for(timeout=120_000)
        feedback.append(time.perf_counter() - t0)
        clicked += 1
        await idle(page)
        t1 = time.perf_counter()
        await page.get_by_role("button", name="Next question").click()
        if k + 1 < answers:
            await (
                page.get_by_role("button", name=CHOICES[(i + k + 1) % len(CHOICES)], exact=True)
                .or_(page.get_by_role("button", name="Continue"))
                .first.wait_for(timeout=120_000)
            )
            redraw.append(time.perf_counter() - t1)
    await ctx.close()
    return {"code": code, "feedback": feedback, "redraw": redraw, "clicked": clicked}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` and its threads so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds every process of the machine has spent so far, all cores (/proc/stat: user, nice, system,
    irq, softirq, steal), to tell the browsers' share of the answering from the server's."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]) / os.sysconf("SC_CLK_TCK")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


async def run(url: str, players: int, answers: int, server_pid: int) -> tuple[list[dict], float, float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=shutil.which("chromium"),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        start, ready = asyncio.Event(), [players + 1]  # ready[0]: how many entries mean "all logged in"
        logins = asyncio.Semaphore(4)
        marks = {}

        async def mark() -> None:  # the server's CPU and the clock from the moment everyone answers
            await start.wait()
            marks.update(cpu=cpu_seconds(server_pid), t=time.perf_counter(), busy=machine_busy_seconds())

        marker = asyncio.ensure_future(mark())
        results = await asyncio.gather(
            *(one_player(browser, url, i, answers, ready, start, logins) for i in range(players))
        )
        await marker
        server_cpu, wall = cpu_seconds(server_pid) - marks["cpu"], time.perf_counter() - marks["t"]
        busy = machine_busy_seconds() - marks["busy"]
        await browser.close()
    return results, server_cpu, wall, busy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True, help="a COPY of a built warehouse (answers are written)")
    ap.add_argument("--players", type=int, nargs="+", default=[1, 20])
    ap.add_argument("--answers", type=int, default=5)
    ap.add_argument(
        "--server-cpus",
        type=lambda v: {int(c) for c in v.split(",")},
        default=None,
        help="pin the dashboard server to these cores (e.g. 0) and the browsers and this script to the "
        "others, so that the figures are the server's alone (taskset)",
    )
    args = ap.parse_args()
    if args.server_cpus:
        others = set(range(os.cpu_count() or 1)) - args.server_cpus
        if not others:
            raise SystemExit("--server-cpus: leave at least one core to the browsers")
        os.sched_setaffinity(0, others)  # the browsers this script starts inherit it
    if not shutil.which("chromium"):
        raise SystemExit("chromium is not on PATH (apt-get install chromium)")
    store = live.store_path(args.warehouse)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(args.warehouse, Path(tmp), cpus=args.server_cpus)
        try:
            for n in args.players:
                t0 = time.perf_counter()
                results, server_cpu, answering, busy = asyncio.run(run(url, n, args.answers, proc.pid))
                wall = time.perf_counter() - t0
                fb = [x for r in results for x in r["feedback"]]
                rd = [x for r in results for x in r["redraw"]]
                with sqlite3.connect(store) as con:
                    stored = {
                        r["code"]: con.execute(
                            "SELECT count(*), count(DISTINCT comparison_id) FROM pairwise_answers WHERE player_id = ?",
                            [r["code"]],
                        ).fetchone()
                        for r in results
                    }
                once = all(stored[r["code"]] == (r["clicked"], r["clicked"]) for r in results)
                rows.append(
                    (
                        n,
                        len(fb),
                        statistics.median(fb),
                        pct(fb, 0.95),
                        max(fb),
                        statistics.median(rd) if rd else float("nan"),
                        pct(rd, 0.95) if rd else float("nan"),
                        wall,
                        server_cpu,
                        answering,
                        busy,
                        once,
                    )
                )
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    pinned = (
        f"; the server pinned to core(s) {sorted(args.server_cpus)}, the browsers to the others"
        if args.server_cpus
        else ""
    )
    print(
        f"bench/players.py: {os.cpu_count()} CPUs{pinned}; {args.answers} pairwise answers per player, all "
        "players answering at once; localhost, headless Chromium"
    )
    print(
        "| players | answers | feedback p50 (s) | feedback p95 (s) | feedback max (s) | redraw p50 (s) | "
        "redraw p95 (s) | wall (s) | answering (s) | server CPU (s) | server CPU per answer (s) | "
        "machine CPU (s) | every answer stored once |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, a, f50, f95, fmax, r50, r95, wall, cpu, answering, busy, once in rows:
        print(
            f"| {n} | {a} | {f50:.2f} | {f95:.2f} | {fmax:.2f} | {r50:.2f} | {r95:.2f} | {wall:.0f} | "
            f"{answering:.0f} | {cpu:.1f} | {cpu / a:.3f} | {busy:.1f} | {'yes' if once else 'NO'} |"
        )


if __name__ == "__main__":
    main()
