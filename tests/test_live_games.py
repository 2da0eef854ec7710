"""The live games end to end: headless Chromium plays both games on the real Streamlit app over a
real warehouse; the answers are in the live store at once, in the warehouse's human tables with source 'live'
after `predictabase build`, and in the marts, with the numbers the pages showed; the study's numbers do not
move. Also the `live` ingest job: idempotent, seen by refresh, and a broken store refused in one line.

The warehouse: a copy of the session's real_warehouse (UCL scored by the tiny GPT-2, the pairwise game) with
the LM game's documents, top-1 guesses and vocabulary ingested and their marts built.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import duckdb
import pytest

from predictabase.core import live
from predictabase.core.config import paths as make_paths

from .test_dashboard_browser import PAGES, Page, _assert_opens_with_finding, browser, serving  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def live_wh(real_warehouse, tmp_path_factory):
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.warehouse import dbt_build, publish

    tmp = tmp_path_factory.mktemp("live")
    p = make_paths(tmp / "warehouse")
    shutil.copytree(real_warehouse.warehouse, p.warehouse)
    run_ingest(p, ["lm_game", "lm_game_top1", "lm_game_vocabulary", "live"], show_progress=False)
    dbt_build(p, select="stg_game_doc_tokens+ stg_top1_guesses+ stg_game_vocabulary+ stg_pairwise_answers+ tag:live")
    publish(p)
    return {"paths": p, "tmp": tmp}


@contextlib.contextmanager
def _live_page(live_wh, browser, path: str):
    """A browser page on the live warehouse's dashboard, opened at `path`; closed after."""
    with serving(live_wh["paths"], live_wh["tmp"]) as url:
        page = Page(browser, live_wh["tmp"])
        try:
            page.open(url + path)
            yield page
        finally:
            page.close()


def _enter(page: Page, box, text: str) -> str:
    """Type `text` into `box` at once (as a paste), press Enter; the page's main text once it has rerun."""
    box.fill(text)
    box.press("Enter")
    page.wait_idle()
    return page.page.locator('[data-testid="stMain"]').inner_text()


def _marts(p, sql: str, params=()):
    with duckdb.connect(str(p.marts), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def _pick_token(page: Page, search: str, option: str) -> None:
    """Search the vocabulary, then choose the match that reads exactly `option` (once the search's rerun has
    finished, as a person waits for the list: a rerun ending while the list is open closes it)."""
    pg = page.page
    box = pg.get_by_label(re.compile("^Search the game's"))
    box.fill(search)
    box.press("Enter")
    page.wait_idle()
    pg.get_by_role("combobox", name=re.compile("^The next token")).and_(pg.locator(":not([disabled])")).click()
    pg.get_by_role("option", name=option, exact=True).first.click()


def _guess_and_reveal(page: Page) -> str:
    pg = page.page
    pg.get_by_role("button", name="Guess").click()
    pg.get_by_role("button", name="Next position").wait_for()
    page.wait_idle()
    text = pg.locator('[data-testid="stMain"]').inner_text()
    page.after_rerun(pg.get_by_role("button", name="Next position").click)
    return text


def _play_top1(page: Page, url: str, marts) -> dict:
    pg = page.page
    sentence = _assert_opens_with_finding(page, url + PAGES["play_top1"], "play_top1", marts)
    assert "next token" in sentence
    pg.get_by_role("button", name="Play anonymously").click()
    pg.get_by_text("Playing as").wait_for()
    page.wait_idle()
    code = re.search(r"player code (p[0-9a-f]{12})", pg.locator('[data-testid="stMain"]').inner_text()).group(1)
    reveals = []
    for search, option in (("the", "␣the"), ("␣of", "␣of"), ("↵", "↵")):
        _pick_token(page, search, option)
        reveals.append(_guess_and_reveal(page))
    pg.get_by_text("typing a word").click()
    pg.get_by_label("Your word").fill("and")
    pg.get_by_label("Your word").press("Enter")
    caption = pg.get_by_text(re.compile("^Sent as the token"))
    caption.wait_for()
    typed = " and" if "␣and" in caption.inner_text() else "and"  # no space after a newline
    reveals.append(_guess_and_reveal(page))
    # another corpus: UCL, which the tiny GPT-2 scored, so its candidates are shown
    page.pick(
        pg.locator('[data-testid="stSelectbox"]').filter(has_text="Texts"),
        pg.get_by_role("option", name=re.compile("UCL")),
        re.compile("UCL"),
    )
    pg.get_by_text("picking a token").click()
    _pick_token(page, "the", "␣the")
    pg.get_by_role("button", name="Guess").click()
    pg.get_by_role("button", name="Next position").wait_for()
    page.wait_idle()
    main = pg.locator('[data-testid="stMain"]').inner_text()
    # the model's candidates at this point (the tiny GPT-2 scored UCL with its top 3)
    assert "'s most probable next tokens here" in main, main[:800]
    assert pg.locator('[data-testid="stDataFrame"]').count() == 1
    page.screenshot("live_top1_ucl")
    page.assert_no_exception()
    return {"code": code, "reveals": reveals, "last": main, "typed": typed}


def _assert_playable(main: str) -> None:
    """A pairwise question as the page showed it: two candidates that read differently, no replacement character
    anywhere, no round answered for the player."""
    a, b = (re.search(rf"^Token {side}: (.+)$", main, re.MULTILINE) for side in "AB")
    assert a and b, main[:800]
    assert a.group(1).strip() != b.group(1).strip(), main[:800]
    assert "\ufffd" not in main and "same token" not in main, main[:800]


def _play_pairwise(page: Page, url: str) -> dict:
    pg = page.page
    page.open(url + "/play-pairwise")
    pg.get_by_label("Your name (optional)").fill("Ada Lovelace")
    pg.get_by_text("Store my name as I typed it").click()
    pg.get_by_role("button", name="Start playing").click()
    pg.get_by_text("Playing as").wait_for()
    page.wait_idle()

    def one(choice: str) -> str:
        page.wait_idle()
        pg.get_by_role("button", name=choice, exact=True).click()
        pg.get_by_role("button", name="Next question").wait_for()
        page.wait_idle()
        shown = pg.locator('[data-testid="stMain"]').inner_text()
        _assert_playable(shown)
        pg.get_by_role("button", name="Next question").click()
        return shown

    training = [one("80%")]
    assert "points" in training[0] and "was the original" in training[0]
    page.pick(
        pg.locator('[data-testid="stSelectbox"]').filter(has_text="Questions in your game"),
        pg.get_by_role("option", name="5", exact=True),
        re.compile(r"\b5\b"),
    )  # 5, not the default 10
    pg.get_by_role("button", name="Start the real game").click()
    rounds = [one(c) for c in ("70%", "30%", "99%", "10%", "60%")]
    pg.get_by_text("Your perplexity").first.wait_for()
    page.wait_idle()
    main = pg.locator('[data-testid="stMain"]').inner_text()
    page.screenshot("live_pairwise_result")
    page.assert_no_exception()
    return {"training": training, "rounds": rounds, "result": main}


def test_browser_plays_both_games_and_the_answers_reach_the_warehouse_and_marts(live_wh, browser):
    p, tmp = live_wh["paths"], live_wh["tmp"]
    before = _marts(
        p,
        "SELECT perplexity, n_answers FROM mart_pairwise_perplexity WHERE predictor_kind = 'human' "
        "ORDER BY subset, rounding, uncertainty_method",
    )
    top1_before = _marts(p, "SELECT predictor, subset, n, n_correct FROM mart_top1_summary ORDER BY ALL")
    with serving(p, tmp) as url:
        page = Page(browser, tmp)
        try:
            t1 = _play_top1(page, url, p.marts)
            pw = _play_pairwise(page, url)
        finally:
            page.close()
        assert page.outbound() == []

    # at once: in the live store, beside the warehouse (validated, one row per answer)
    store = live.store_path(p.warehouse)
    with sqlite3.connect(store) as con:
        t1_rows = con.execute(
            "SELECT player_id, corpus, guess, input_mode FROM top1_answers ORDER BY answer_id"
        ).fetchall()
        pw_rows = con.execute(
            "SELECT player_id, comparison_id, p_percent FROM pairwise_answers ORDER BY answer_id"
        ).fetchall()
        ada = con.execute("SELECT player_id FROM players WHERE display_name = 'Ada Lovelace'").fetchone()[0]
    assert [r[1:] for r in t1_rows] == [
        ("lm_game", " the", "list"),
        ("lm_game", " of", "list"),
        ("lm_game", "\n", "list"),
        ("lm_game", t1["typed"], "typed"),
        ("ucl", " the", "list"),
    ]
    assert {r[0] for r in t1_rows} == {t1["code"]}
    assert len(pw_rows) == 6 and {r[0] for r in pw_rows} == {ada}
    assert "was the original" in pw["rounds"][0]
    m = re.search(r"your estimated perplexity is ([\d.]+) per token \(±2σ: ([\d.]+) to ([\d.]+)\)", pw["result"])
    assert m, pw["result"][:500]
    shown_ppl = [float(x) for x in m.groups()]

    # then a build: the store is flushed into raw.live_* and the human tables, and the marts hold them
    env = {**__import__("os").environ, "PREDICTABASE_DBT_DOCS": "0"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "predictabase",
            "build",
            "--warehouse",
            str(p.warehouse),
            "--select",
            "stg_top1_guesses+ stg_pairwise_answers+ tag:live",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM raw.live_top1_answers").fetchone()[0] == 5
        assert con.execute("SELECT count(*) FROM raw.live_pairwise_answers").fetchone()[0] == 6
        assert con.execute(
            "SELECT source, count(*) FROM staging.stg_top1_guesses GROUP BY ALL ORDER BY 1"
        ).fetchall() == [("live", 5), ("study", 25203)]
        assert (
            con.execute(
                "SELECT count(*) FROM staging.stg_pairwise_answers WHERE source = 'live' AND player = ?",
                [f"live:{ada}"],
            ).fetchone()[0]
            == 6
        )
    answers = _marts(p, "SELECT corpus, guess, is_correct, player_label FROM mart_live_top1_answers ORDER BY answer_id")
    assert [a[:2] for a in answers] == [(r[1], r[2]) for r in t1_rows]
    assert {a[3] for a in answers} == {f"anonymous {t1['code']}"}
    n_right = sum(a[2] for a in answers)
    acc = _marts(
        p,
        "SELECT DISTINCT n_answers, n_correct, accuracy FROM mart_live_top1_players WHERE player_id = ?",
        [f"live:{t1['code']}"],
    )
    assert acc == [(5, n_right, n_right / 5)]
    assert f"{100 * n_right / 5:.0f}%" in t1["last"]  # the page showed the mart's accuracy
    row = _marts(
        p,
        "SELECT player_label, n_questions, perplexity, perplexity_low, perplexity_high "
        "FROM mart_pairwise_player_perplexity WHERE source = 'live' AND scope = 'player'",
    )
    assert len(row) == 1 and row[0][0] == "Ada Lovelace" and row[0][1] == 5
    assert [round(v, 1) for v in row[0][2:]] == shown_ppl  # the page's number is the mart's
    points = _marts(
        p,
        "SELECT count(*), count(points), count(term), count(*) FILTER (WHERE auto_answered) "
        "FROM mart_live_pairwise_answers WHERE player_label = 'Ada Lovelace'",
    )
    assert points == [(6, 6, 6, 0)]  # no round was answered for the player: every one was playable
    # the published study's numbers did not move
    after = _marts(
        p,
        "SELECT perplexity, n_answers FROM mart_pairwise_perplexity WHERE predictor_kind = 'human' "
        "ORDER BY subset, rounding, uncertainty_method",
    )
    assert [n for _, n in after] == [n for _, n in before]
    assert [v for v, _ in after] == pytest.approx([v for v, _ in before], rel=1e-12)  # summation order only
    top1_after = _marts(p, "SELECT predictor, subset, n, n_correct FROM mart_top1_summary ORDER BY ALL")
    assert top1_after == [r for r in top1_before]


def test_the_live_job_is_idempotent_and_seen_by_refresh(live_wh):
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.refresh.plans import plan_ingest

    p = live_wh["paths"]
    run_ingest(p, ["live"], show_progress=False)
    assert "live" not in plan_ingest(p)
    store = live.store_path(p.warehouse)
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        n0 = con.execute("SELECT count(*) FROM raw.live_top1_answers").fetchone()[0]
    catalog = live.Catalog.from_snapshot(p.marts)
    me = live.new_player(store)
    q = sorted(q for q in catalog.top1_questions if q[0] == "lm_game")[0]
    live.record_top1(
        store, catalog, player_id=me, session_id="t", corpus=q[0], doc_id=q[1], position=q[2], guess=" the"
    )
    assert plan_ingest(p)["live"] == "players answered in the live games"
    for _ in range(2):  # twice: replaced, never appended twice
        run_ingest(p, ["live"], show_progress=False)
        with duckdb.connect(str(p.duckdb), read_only=True) as con:
            assert con.execute("SELECT count(*), count(DISTINCT answer_id) FROM raw.live_top1_answers").fetchone() == (
                n0 + 1,
                n0 + 1,
            )
    assert "live" not in plan_ingest(p)


def test_a_broken_store_is_refused_in_one_line_and_changes_nothing(live_wh, tmp_path):
    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(live_wh["paths"].warehouse, p.warehouse)
    store = live.store_path(p.warehouse)
    for f in store.parent.glob(live.STORE_FILE + "-*"):  # no write-ahead log left beside the file we break
        f.unlink()
    store.write_bytes(store.read_bytes()[:1000])  # a truncated file
    marts = p.marts.read_bytes()
    res = subprocess.run(
        [sys.executable, "-m", "predictabase", "build", "--warehouse", str(p.warehouse)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode != 0
    lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "live/answers.sqlite" in lines[0] and "Traceback" not in res.stderr, res.stderr
    assert p.marts.read_bytes() == marts


# browsers answering at once against one app: two per core, 4 to 8 (a 2-core machine runs 4 browsers beside the
# server; 8 on 2 cores measured the browsers, not the app, and timed out under load)
CLIENTS = max(4, min(8, 2 * (os.cpu_count() or 2)))
GUESSES = 3  # top-1 guesses each
TRAINING = 2  # pairwise training answers each


async def _client_plays(browser, url: str, n: int) -> dict:
    """One client in its own browser context: top-1 guesses, then pairwise training answers, as fast as the app
    answers; returns its player codes and how many answers the app confirmed."""
    ctx = await browser.new_context(viewport={"width": 1300, "height": 1500})
    pg = await ctx.new_page()
    pg.set_default_timeout(120_000)
    out = {"n": n, "top1": 0, "pairwise": 0}
    try:
        await pg.goto(url + "/play-top1")
        await pg.get_by_role("button", name="Play anonymously").click()
        await pg.get_by_text("Playing as").wait_for()
        text = await pg.locator('[data-testid="stMain"]').inner_text()
        out["top1_player"] = re.search(r"player code (p[0-9a-f]{12})", text).group(1)
        for _ in range(GUESSES):
            box = pg.get_by_label(re.compile("^Search the game's"))
            await box.fill("the")
            await box.press("Enter")
            await (
                pg.get_by_role("combobox", name=re.compile("^The next token"))
                .and_(pg.locator(":not([disabled])"))
                .click()
            )
            await pg.get_by_role("option", name="␣the", exact=True).first.click()
            await pg.get_by_role("button", name="Guess").click()
            await pg.get_by_role("button", name="Next position").click()
            out["top1"] += 1
            await pg.get_by_role("button", name="Guess").wait_for()
        await pg.goto(url + "/play-pairwise?player=" + out["top1_player"])  # the same player, another game
        await pg.get_by_text("Playing as").wait_for()
        for _ in range(TRAINING):
            await pg.get_by_role("button", name="80%", exact=True).click()
            await pg.get_by_role("button", name="Next question").click()
            out["pairwise"] += 1
    finally:
        await ctx.close()
    return out


def test_parallel_browsers_on_the_real_app_lose_and_duplicate_nothing(live_wh):
    """CLIENTS browsers play at once against one Streamlit server (localhost): every answer the app confirmed
    (the reveal came back) is in the store exactly once, each under its own player."""
    import asyncio
    import threading

    from playwright.async_api import async_playwright

    p, tmp = live_wh["paths"], live_wh["tmp"]
    store = live.store_path(p.warehouse)

    async def run(url: str) -> list[dict]:
        async with async_playwright() as pw:
            b = await pw.chromium.launch(
                executable_path=shutil.which("chromium"),
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            )
            try:
                return await asyncio.gather(*[_client_plays(b, url, n) for n in range(CLIENTS)])
            finally:
                await b.close()

    results: list[dict] = []
    with serving(p, tmp) as url:
        # in a thread of its own: this module's sync Playwright (the `browser` fixture) holds an event loop here
        worker = threading.Thread(target=lambda: results.extend(asyncio.run(run(url))))
        worker.start()
        worker.join(timeout=600)
    assert len(results) == CLIENTS
    players = [r["top1_player"] for r in results]
    assert len(set(players)) == CLIENTS
    with sqlite3.connect(store) as con:
        marks = ",".join("?" * CLIENTS)
        t1 = con.execute(
            f"SELECT player_id, count(*), count(DISTINCT corpus || doc_id || position) FROM top1_answers "
            f"WHERE player_id IN ({marks}) GROUP BY player_id",
            players,
        ).fetchall()
        pw = con.execute(
            f"SELECT player_id, count(*), count(DISTINCT comparison_id) FROM pairwise_answers "
            f"WHERE player_id IN ({marks}) GROUP BY player_id",
            players,
        ).fetchall()
    print(
        f"\n{CLIENTS} browsers at once: top-1 {sum(r[1] for r in t1)} stored of {sum(r['top1'] for r in results)} "
        f"confirmed, pairwise {sum(r[1] for r in pw)} stored of {sum(r['pairwise'] for r in results)} confirmed"
    )
    assert sorted(t1) == sorted((pl, GUESSES, GUESSES) for pl in players)
    assert sorted(pw) == sorted((pl, TRAINING, TRAINING) for pl in players)


def test_an_app_restart_loses_nothing_and_the_player_goes_on(live_wh, browser):
    """Answer, stop the app, start it again: the answer is there, and the page's address brings the same player
    back (their score counts it; a new answer joins it)."""
    p, tmp = live_wh["paths"], live_wh["tmp"]
    store = live.store_path(p.warehouse)
    with serving(p, tmp) as url:
        page = Page(browser, tmp)
        try:
            page.open(url + PAGES["play_top1"])
            page.page.get_by_role("button", name="Play anonymously").click()
            page.page.get_by_text("Playing as").wait_for()
            _pick_token(page, "the", "␣the")
            _guess_and_reveal(page)
            address = page.page.url
        finally:
            page.close()
    code = re.search(r"player=(p[0-9a-f]{12})", address).group(1)
    with serving(p, tmp) as url:  # a new server process: nothing of the old one's memory
        page = Page(browser, tmp)
        try:
            page.open(url + "/play-top1?" + address.split("?", 1)[1])
            page.page.get_by_text(f"player code {code}").wait_for()
            page.wait_idle()
            assert "Your score" in page.page.locator('[data-testid="stMain"]').inner_text()
            _pick_token(page, "the", "␣the")
            _guess_and_reveal(page)
            page.assert_no_exception()
        finally:
            page.close()
    with sqlite3.connect(store) as con:
        assert con.execute(
            "SELECT count(*), count(DISTINCT doc_id || ':' || position) FROM top1_answers WHERE player_id = ?", [code]
        ).fetchone() == (2, 2)


_REVEAL = re.compile(r"Token (A|B) \(.*\) was the original\. You said (\d+)% for A: \*?\*?([+-]?\S+) points")


def _expected_points(p, store, player: str) -> list[tuple[str, float]]:
    """Each of the player's answers in the order given: the side the original was shown on, and sec. 4.1.2's
    points computed here from the store's row and the marts' generator log-probability (not the page's SQL):
    1000 * g(y|c) * (ln p_y - ln 0.5), p_y the stated probability that the original is the original."""
    with sqlite3.connect(store) as con:
        rows = con.execute(
            "SELECT comparison_id, true_token_shown_as, p_percent FROM pairwise_answers "
            "WHERE player_id = ? ORDER BY answer_id",
            [player],
        ).fetchall()
    import math

    out = []
    for cid, side, p_true in rows:
        (lp_y,) = _marts(
            p, "SELECT generator_logprob_y_nats FROM mart_pairwise_game_questions WHERE comparison_id = ?", [cid]
        )[0]
        out.append((side, 1000.0 * math.exp(lp_y) * (math.log(p_true / 100.0) - math.log(0.5))))
    return out


def test_pairwise_points_are_right_whichever_side_the_original_is_on_and_a_reload_shows_the_result(live_wh, browser):
    """With the original shown as B the page once said "+nan points" (the points macro was called with
    `100.0 - a.p_percent` unparenthesised). Play training questions until the original has been shown on both
    sides, each answer's points checked against an independent computation; then a game of 5 to its end, and a
    reload of its address shows the result, not a question past the end."""
    p, tmp = live_wh["paths"], live_wh["tmp"]
    store = live.store_path(p.warehouse)
    choices = ["99%", "30%", "70%", "10%", "60%", "1%", "90%", "40%", "80%", "20%"]
    with serving(p, tmp) as url:
        page = Page(browser, tmp)
        pg = page.page
        try:
            page.open(url + "/play-pairwise")
            pg.get_by_role("button", name="Play anonymously").click()
            pg.get_by_text("Playing as").wait_for()
            page.wait_idle()
            code = re.search(r"player code (p[0-9a-f]{12})", pg.locator('[data-testid="stMain"]').inner_text()).group(1)
            shown = []
            for choice in choices:  # training: 10 questions at most, each side seen with probability 1 - 2^-10
                page.wait_idle()
                pg.get_by_role("button", name=choice, exact=True).click()
                pg.get_by_role("button", name="Next question").wait_for()
                page.wait_idle()
                text = pg.locator('[data-testid="stMain"]').inner_text()
                _assert_playable(text)
                m = _REVEAL.search(text.replace("\n", " "))
                assert m, text[:600]
                shown.append((m.group(1), float(m.group(3))))
                pg.get_by_role("button", name="Next question").click()
                if {s for s, _ in shown} == {"A", "B"} and len(shown) >= 3:
                    break
            expected = _expected_points(p, store, code)
            assert [s for s, _ in shown] == [s for s, _ in expected]
            assert {s for s, _ in shown} == {"A", "B"}, shown
            for (_, got), (_, want) in zip(shown, expected):
                assert got == pytest.approx(want, abs=0.051), (shown, expected)  # shown to 0.1
            page.wait_idle()
            total = pg.locator('[data-testid="stMetric"]').filter(has_text="Your points in training").inner_text()
            assert float(re.search(r"[+-]\d+\.\d", total).group(0)) == pytest.approx(
                sum(w for _, w in expected), abs=0.051
            )

            page.pick(
                pg.locator('[data-testid="stSelectbox"]').filter(has_text="Questions in your game"),
                pg.get_by_role("option", name="5", exact=True),
                re.compile(r"\b5\b"),
            )
            pg.get_by_role("button", name="Start the real game").click()
            game_points = []
            for choice in ("70%", "30%", "99%", "10%", "60%"):
                page.wait_idle()
                pg.get_by_role("button", name=choice, exact=True).click()
                pg.get_by_role("button", name="Next question").wait_for()
                page.wait_idle()
                main = pg.locator('[data-testid="stMain"]').inner_text()
                _assert_playable(main)
                main = main.replace("\n", " ")
                game_points.append(float(_REVEAL.search(main).group(3)))
                total = pg.locator('[data-testid="stMetric"]').filter(has_text="Your points in the game").inner_text()
                # the game's running total holds its own answers only, not the training ones
                assert float(re.search(r"[+-]\d+\.\d", total).group(0)) == pytest.approx(
                    sum(game_points), abs=0.051 * len(game_points)
                )
                pg.get_by_role("button", name="Next question").click()
            pg.get_by_text("Your perplexity").first.wait_for()
            page.wait_idle()
            result = re.search(
                r"your estimated perplexity is ([\d.]+)", pg.locator('[data-testid="stMain"]').inner_text()
            )
            assert result
            address = pg.url
            assert "game=5" in address and f"player={code}" in address

            page.open(address)  # a reload of the finished game: its result again, no new question
            pg.get_by_text("Your perplexity").first.wait_for()
            page.wait_idle()
            main = pg.locator('[data-testid="stMain"]').inner_text()
            assert "question 5 of 5" in main and "question 6" not in main
            assert f"your estimated perplexity is {result.group(1)}" in main
            assert pg.get_by_role("button", name="Next question").count() == 0
            assert pg.get_by_role("button", name="70%", exact=True).count() == 0
            page.assert_no_exception()
        finally:
            page.close()
    with sqlite3.connect(store) as con:  # every answer stored once
        n, distinct = con.execute(
            "SELECT count(*), count(DISTINCT comparison_id) FROM pairwise_answers WHERE player_id = ?", [code]
        ).fetchone()
    assert n == distinct == len(shown) + 5


def test_pairwise_points_in_the_mart_are_finite_on_both_sides_and_the_build_checks_every_float(live_wh):
    """mart_live_pairwise_answers.points was once NaN for every answer whose original was shown as B, and
    no test saw it (not_null passes NaN). Answers on both sides, at every choice, then a build: the mart's points
    are the independent computation, and the build's generic test finite_or_null (on every mart) holds."""
    import math

    p = live_wh["paths"]
    store = live.store_path(p.warehouse)
    catalog = live.Catalog.from_snapshot(p.marts)
    me = live.new_player(store)
    ids = sorted(catalog.pairwise_true)[: 2 * len(live.CHOICES_PERCENT)]
    for i, (cid, choice) in enumerate(zip(ids, live.CHOICES_PERCENT * 2)):
        same = catalog.pairwise_samples[cid][0] == catalog.pairwise_true[cid]
        live.record_pairwise(
            store,
            catalog,
            player_id=me,
            session_id=f"s{i}",
            comparison_id=cid,
            k=0,
            true_token_shown_as="AB"[i % 2],
            p_a_percent=50.0 if same else choice,
        )
    env = {**__import__("os").environ, "PREDICTABASE_DBT_DOCS": "0"}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "predictabase",
            "build",
            "--warehouse",
            str(p.warehouse),
            "--select",
            "stg_pairwise_answers+ tag:live",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    rows = _marts(
        p,
        "SELECT a.true_token_shown_as, a.p_percent, a.points, q.generator_logprob_y_nats, "
        "a.auto_answered, a.term "
        "FROM mart_live_pairwise_answers a JOIN mart_pairwise_game_questions q USING (comparison_id) "
        "WHERE a.player_id = ? ORDER BY a.answer_id",
        [f"live:{me}"],
    )
    assert len(rows) == len(ids) and {r[0] for r in rows} == {"A", "B"}
    assert any(r[4] for r in rows) and not all(r[4] for r in rows)  # answers on an identical sample among them
    for side, p_true, points, lp_y, auto, term in rows:
        assert math.isfinite(points), (side, p_true, points)
        # an answer on an identical sample (the game no longer deals one) is left out of the estimate
        assert (term is None) == auto and (auto or math.isfinite(term))
        assert points == pytest.approx(1000 * math.exp(lp_y) * (math.log(p_true / 100) - math.log(0.5)), abs=1e-9)
    # the generic test ran on every mart of this build (dbt's log lists each)
    log = "".join(
        f.read_text(encoding="utf-8", errors="replace") for f in (p.warehouse / "dbt" / "logs").glob("dbt.log*")
    )
    assert "finite_or_null_mart_live_pairwise_answers" in log


def _text_of(piece: str) -> str:
    """A byte-level BPE vocabulary string as text, decoded here through transformers' own byte table (not the
    mart's SQL): UTF-8 when the bytes are whole characters, else '‹bytes …›'."""
    from predictabase.ingest.scoring.word_boundaries import byte_decoder

    raw = bytes(byte_decoder()[ch] for ch in piece)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "‹bytes " + " ".join(f"{b:02x}" for b in raw) + "›"


def test_the_models_candidates_read_as_text(live_wh):
    """The candidates once showed byte-level debris ('ĭ', '␣JosÃ©'). Every candidate of the tiny GPT-2
    (random weights, so its top 3 range over the whole vocabulary) is the text its vocabulary string stands for,
    decoded independently here; the comparison with the true token uses that text."""
    p = live_wh["paths"]
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        raw = con.execute(
            "SELECT c.doc_id, c.position, c.candidate_tokens, t.topk_tokens, c.is_model_correct, q.true_token "
            "FROM marts.mart_live_top1_model_candidates c "
            "JOIN marts.mart_live_top1_questions q USING (corpus, doc_id, position) "
            "JOIN intermediate.int_token_scores t ON t.run_id = c.run_id AND t.corpus = c.corpus "
            "AND t.doc_id = c.doc_id AND t.char_start = q.true_char_start "
            "ORDER BY c.doc_id, c.position, t.token_index"
        ).fetchall()
    assert len(raw) > 100
    seen = {}
    for doc, pos, shown, pieces, correct, true in raw:
        seen.setdefault((doc, pos), (shown, pieces, correct, true))
    non_ascii = 0
    for shown, pieces, correct, true in seen.values():
        assert shown == [_text_of(x) for x in pieces]
        assert correct == (shown[0] == true)
        non_ascii += sum(any(ord(ch) > 127 for ch in x) for x in pieces)
    assert non_ascii > 10  # the check met byte-level pieces beyond ASCII
    debris = [x for shown, *_ in seen.values() for x in shown if any(0x100 <= ord(ch) <= 0x143 for ch in x)]
    assert debris == []


def test_the_token_search_puts_the_token_that_fits_first(live_wh, browser):
    """Searching "the" once listed "The" and "the" before "␣the", so a pick mid-sentence was wrong by
    construction. Mid-sentence the word's token with its space comes first, then the other case, then the bare
    ones; no piece of a character (U+FFFD) is listed; the study's impossible questions are not asked."""
    p = live_wh["paths"]
    with _live_page(live_wh, browser, PAGES["play_top1"]) as page:
        pg = page.page
        pg.get_by_role("button", name="Play anonymously").click()
        pg.get_by_text("Playing as").wait_for()
        page.wait_idle()
        for _attempt in range(6):  # a question whose context ends mid-line (most do)
            context = pg.locator('[data-testid="stCode"]').first.inner_text()
            if not context.rstrip("▌").endswith(("\n", " ")) and context.rstrip("▌"):
                break
            page.after_rerun(pg.get_by_role("button", name="New passage").click)
        header = re.search(r"passage (\S+)\*?\*?, question (\d+)", pg.locator('[data-testid="stMain"]').inner_text())
        doc, position = header.group(1), int(header.group(2))
        impossible = _marts(
            p,
            "SELECT is_impossible FROM mart_live_top1_questions WHERE corpus = 'lm_game' "
            "AND doc_id = ? AND position = ?",
            [doc, position],
        )
        assert impossible == [(False,)]
        box = pg.get_by_label(re.compile("^Search the game's"))
        box.fill("the")
        box.press("Enter")
        page.wait_idle()
        pg.get_by_role("combobox", name=re.compile("^The next token")).and_(pg.locator(":not([disabled])")).click()
        options = [o.inner_text() for o in pg.get_by_role("option").all()]
        assert options[:6] == ["␣the", "␣The", "␣THE", "the", "The", "THE"], options[:8]
        assert not any("\ufffd" in o for o in options)
        pg.keyboard.press("Escape")
        page.assert_no_exception()


def test_input_limits_are_said_in_words(live_wh, browser):
    """A pasted 500-character name once left the box empty with no word, typing stopped silently at 40/50
    characters, a typed 50-character word was refused as "51 characters" (the space the game adds), and the
    refusals were the store's technical lines. Each case now says what happened, in a sentence."""
    with _live_page(live_wh, browser, PAGES["play_top1"]) as page:
        pg = page.page
        name = pg.get_by_label("Your name (optional)")
        main = _enter(page, name, "A" * 500)
        assert name.input_value() == "A" * 500
        assert f"Your name is 500 characters long; the game takes at most {live.MAX_NAME_CHARS}." in main
        assert pg.get_by_role("button", name="Start playing").is_disabled()
        assert "characters long" not in _enter(page, name, "Grace Hopper")
        pg.get_by_role("button", name="Start playing").click()
        pg.get_by_text("Playing as").wait_for()
        page.wait_idle()

        pg.get_by_text("typing a word").click()
        page.wait_idle()
        word = pg.get_by_label("Your word")
        _enter(page, word, "x" * live.MAX_GUESS_CHARS)  # 50 characters, sent with the word's space: 51
        pg.get_by_role("button", name="Guess").click()
        page.wait_idle()
        main = pg.locator('[data-testid="stMain"]').inner_text()
        assert "51 characters" not in main
        assert "That is not one of the game's tokens: GPT-2 writes it as several pieces." in main
        main = _enter(page, word, "y" * 60)
        assert word.input_value() == "y" * 60
        assert f"Your word is 60 characters long; the game takes at most {live.MAX_GUESS_CHARS}." in main
        assert pg.get_by_role("button", name="Guess").is_disabled()
        page.assert_no_exception()


def test_a_finished_passage_deals_the_next_one(live_wh, browser):
    """The top-1 game's branch after a passage's last question (found by 8 players at once): the page
    deals another passage in the same run and says so, instead of failing ("scope='fragment' can only be
    specified ..." when that run was the whole page's). The player's other answers of the passage are put in
    the store first, as if played; the last one is played in the browser."""
    p = live_wh["paths"]
    store = live.store_path(p.warehouse)
    with _live_page(live_wh, browser, PAGES["play_top1"]) as page:
        pg = page.page
        pg.get_by_role("button", name="Play anonymously").click()
        pg.get_by_text("Playing as").wait_for()
        page.wait_idle()
        main = pg.locator('[data-testid="stMain"]').inner_text()
        code = re.search(r"player code (p[0-9a-f]{12})", main).group(1)
        doc, position = re.search(r"passage (\S+?)\*?\*?, question (\d+)", main).groups()
        asked = [
            r[0]
            for r in _marts(
                p,
                "SELECT position FROM mart_live_top1_questions WHERE corpus = 'lm_game' "
                "AND doc_id = ? AND NOT coalesce(is_impossible, false) ORDER BY position",
                [doc],
            )
        ]
        assert int(position) == asked[0]  # a passage may have one question only: then it is the last one
        catalog = live.Catalog.from_snapshot(p.marts)
        for k, pos in enumerate(asked[1:]):  # sessions of 20 answers: the store's rate limit is per session
            live.record_top1(
                store,
                catalog,
                player_id=code,
                session_id=f"s{k // 20:04d}abcdef",
                corpus="lm_game",
                doc_id=doc,
                position=pos,
                guess=" the",
                input_mode="list",
            )
        _pick_token(page, "the", "␣the")
        # the page says so in a toast, which leaves after a few seconds: every toast text shown is recorded, so a
        # loaded machine (two full runs timed out waiting for the toast itself) cannot hide it from the test;
        # each click's run is awaited before the next click
        pg.evaluate("""() => { window.__toasts = []; new MutationObserver(() => {
            document.querySelectorAll('[data-testid="stToastText"]').forEach(t => {
                if (!window.__toasts.includes(t.innerText)) window.__toasts.push(t.innerText); }); })
            .observe(document.body, {subtree: true, childList: true, characterData: true}); }""")
        page.after_rerun(pg.get_by_role("button", name="Guess").click)
        page.after_rerun(pg.get_by_role("button", name="Next position").click)
        pg.wait_for_function(
            "m => window.__toasts.some(t => t.includes(m))",
            arg="You answered every question of that passage: here is another one.",
            timeout=60_000,
        )
        main = pg.locator('[data-testid="stMain"]').inner_text()
        new_doc = re.search(r"passage (\S+?)\*?\*?, question (\d+)", main).group(1)
        assert new_doc != doc, main[:600]
        page.assert_no_exception()
    with sqlite3.connect(store) as con:
        rows = con.execute(
            "SELECT doc_id, position FROM top1_answers WHERE player_id = ? ORDER BY position", [code]
        ).fetchall()
    assert rows == [(doc, pos) for pos in asked]


def test_macro_runs_in_parallel_threads_see_only_their_own_frames():
    """run_macro works in cursors of one in-memory DuckDB (a new connection cost ~23 ms a rerun).
    Sessions run in threads of their own and register the same names ('terms'): each must get its own rows."""
    import threading

    import pandas as pd

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "dashboards"))
    import live_games

    got: dict[int, set] = {}

    def player(i: int) -> None:
        terms = pd.DataFrame(
            {
                "player": [f"p{i}"] * 3,
                "comparison_id": [1, 2, 3],
                "term": [1.0 + i, 2.0, 3.0],
                "generator_loss_nats": [1.0, 1.0, 1.0],
            }
        )
        for _ in range(40):
            r = live_games.run_macro("{{ pairwise_group_perplexity('terms', 'player') }}", {"terms": terms})
            got.setdefault(i, set()).add((tuple(r["player"]), int(r["n_questions"].iloc[0])))

    threads = [threading.Thread(target=player, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {i: {((f"p{i}",), 3)} for i in range(4)}


def _live_games_module():
    """dashboards/live_games.py, imported as the app imports it (the dashboards folder on the path)."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "dashboards"))
    import live_games

    return live_games


def test_the_estimator_answers_identical_samples_itself_as_the_paper_does():
    """Identical candidates (Shlegeris et al. 2024, sec. 4.1.2: where x = y the website answers "both as likely",
    r = 1, and the round stays in eq. 4's mean). The live game never deals them; its summand answers them itself.
    One question by hand: n = 5 samples of G(c), two of them y itself (g(x) = g(y) = 0.4), one a different byte
    token that the file writes as y too (g = 0.1: the website answered it 50 % as well), two playable ones
    (g = 0.05 and 0.05); the player answers the playable x_3 with p = 70 % for y."""
    import math

    import pandas as pd

    lg = _live_games_module()
    gy = 0.4
    questions = pd.DataFrame(
        {
            "comparison_id": [7],
            "question_set": ["set_1"],
            "is_word_token": [True],
            "generator_logprob_y_nats": [math.log(gy)],
        }
    )
    g = [0.4, 0.4, 0.1, 0.05, 0.05]
    samples = pd.DataFrame(
        {
            "comparison_id": [7] * 5,
            "k": list(range(5)),
            "sample_token": [" on", " on", " on", " in", " at"],
            "is_true_token": [True, True, True, False, False],
            "generator_logprob_x_nats": [math.log(v) for v in g],
        }
    )

    def terms(k: int, p: float, playable: str) -> pd.DataFrame:
        answers = pd.DataFrame(
            {
                "answer_id": [1],
                "player": ["me"],
                "comparison_id": [7],
                "k": [k],
                "p_percent": [p],
                "true_token_shown_as": ["A"],
                "auto_answered": [k < 3],
            }
        )
        return lg.run_macro(
            f"{{{{ pairwise_answer_terms('answers', 'questions', 'samples', '{playable}') }}}}",
            {"answers": answers, "questions": questions, "samples": samples},
        )

    # eq. 4's summand for the live deal: the identical samples' summands g(y)/g(x_k) * 1 over n, plus the
    # playable share 2/5 times the answered summand g(y)/g(x_3) * r, r = (1 - 0.7) / 0.7
    r = 0.3 / 0.7
    by_hand = (1.0 + 1.0 + 0.4 / 0.1) / 5 + 2 / 5 * (0.4 / 0.05) * r
    t = terms(3, 70.0, "true").iloc[0]
    assert t["term"] == pytest.approx(by_hand, rel=1e-12)
    assert t["term"] == pytest.approx(18 / 7, rel=1e-12)  # the same in numbers: 6/5 + 2/5 * 8 * 3/7 = 2.5714...
    # the points are the answer's own (sec. 4.1.2): 1000 g(y) (ln 0.7 - ln 0.5)
    assert t["points"] == pytest.approx(1000 * 0.4 * (math.log(0.7) - math.log(0.5)), rel=1e-12)

    # averaged over the deal (x uniform among the playable samples), it is eq. 4's mean over all five samples with
    # every identical one answered 50 % by the game, as the study's website answered it: unbiased for the paper's
    # estimator, whatever the player says on each playable sample
    answers_by_k = {3: 70.0, 4: 20.0}
    dealt = sum(terms(k, p, "true").iloc[0]["term"] for k, p in answers_by_k.items()) / len(answers_by_k)
    paper = (
        sum(gy / g[k] * 1.0 for k in range(3)) + sum(gy / g[k] * (100 - p) / p for k, p in answers_by_k.items())
    ) / 5
    assert dealt == pytest.approx(paper, rel=1e-12)

    # the study's answers (drawn among all samples, identical ones answered 50 %) keep their own summand:
    # 1 for the same token, g(y)/g(x) for the byte token the file writes as y, g(y)/g(x) r for a played one
    assert terms(0, 50.0, "false").iloc[0]["term"] == pytest.approx(1.0, rel=1e-12)
    assert terms(2, 50.0, "false").iloc[0]["term"] == pytest.approx(4.0, rel=1e-12)
    assert terms(3, 70.0, "false").iloc[0]["term"] == pytest.approx(8 * r, rel=1e-12)
    # a live answer ON an identical sample (stored before the game stopped dealing them) is not estimated
    assert pd.isna(terms(1, 50.0, "true").iloc[0]["term"])

    # eq. 5 for a player of this question and one more question with no identical sample (n = 2): the mean of
    # ln(summand) plus L_G, the generator's mean loss; the NULL summand of the old answer is left out
    q2 = pd.DataFrame(
        {
            "comparison_id": [8],
            "question_set": ["set_1"],
            "is_word_token": [True],
            "generator_logprob_y_nats": [math.log(0.2)],
        }
    )
    s2 = pd.DataFrame(
        {
            "comparison_id": [8, 8],
            "k": [0, 1],
            "sample_token": [" a", " b"],
            "is_true_token": [False, False],
            "generator_logprob_x_nats": [math.log(0.5), math.log(0.2)],
        }
    )
    answers = pd.DataFrame(
        {
            "answer_id": [1, 2, 3],
            "player": ["me"] * 3,
            "comparison_id": [7, 8, 9],
            "k": [3, 0, 0],
            "p_percent": [70.0, 40.0, 50.0],
            "true_token_shown_as": ["A", "B", "A"],
            "auto_answered": [False, False, True],
        }
    )
    q9 = pd.DataFrame(
        {
            "comparison_id": [9],
            "question_set": ["set_1"],
            "is_word_token": [True],
            "generator_logprob_y_nats": [math.log(0.9)],
        }
    )
    s9 = pd.DataFrame(
        {
            "comparison_id": [9, 9],
            "k": [0, 1],
            "sample_token": [" x", " y"],
            "is_true_token": [True, False],
            "generator_logprob_x_nats": [math.log(0.9), math.log(0.1)],
        }
    )
    all_terms = lg.run_macro(
        "{{ pairwise_answer_terms('answers', 'questions', 'samples', 'true') }}",
        {"answers": answers, "questions": pd.concat([questions, q2, q9]), "samples": pd.concat([samples, s2, s9])},
    )
    est = lg.run_macro("{{ pairwise_group_perplexity('terms', 'player') }}", {"terms": all_terms}).iloc[0]
    t8 = 0 / 2 + 2 / 2 * (0.2 / 0.5) * (0.6 / 0.4)
    lh_minus_lg = (math.log(by_hand) + math.log(t8)) / 2
    lg_nats = (-math.log(0.4) - math.log(0.2)) / 2
    assert int(est["n_questions"]) == 2 and int(est["n_answers"]) == 2
    assert est["lh_minus_lg_nats"] == pytest.approx(lh_minus_lg, rel=1e-12)
    assert est["perplexity"] == pytest.approx(math.exp(lg_nats + lh_minus_lg), rel=1e-12)


def test_the_pairwise_game_deals_only_playable_readable_questions(real_warehouse):
    """Deal many games from the real pairwise data as the page deals them: no question shows the same token twice
    (or two candidates that read the same), no candidate or context shows the replacement character '\ufffd',
    and every question with a playable sample can be dealt. Before, the deal drew x_k among all 400 samples:
    about a third of the rounds then showed y against itself (7 of 20 in one game)."""
    import random

    lg = _live_games_module()
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        questions = con.execute("SELECT * FROM mart_pairwise_game_questions").df()
        samples = con.execute(
            "SELECT comparison_id, k, sample_token, is_true_token FROM mart_pairwise_game_samples"
        ).df()
    true = dict(zip(questions["comparison_id"], questions["true_token"]))
    context = dict(zip(questions["comparison_id"], questions["context"]))
    token = {(c, k): x for c, k, x in zip(samples["comparison_id"], samples["k"], samples["sample_token"])}
    playable = lg.playable_samples(samples)
    game_pool = questions[~questions["is_training"]]

    # the old deal, for comparison: a question uniformly, then k uniformly among its 400 samples
    rng = random.Random(0)
    old = [(c, rng.randrange(400)) for c in (rng.choice(list(game_pool["comparison_id"])) for _ in range(20_000))]
    old_identical = sum(token[(c, k)] == true[c] for c, k in old) / len(old)
    old_unreadable = sum("\ufffd" in token[(c, k)] + true[c] for c, k in old) / len(old)
    assert 0.25 < old_identical < 0.40  # about a third (0.321 of all the samples of sets 1 and 2)
    assert old_unreadable > 0.02  # '\ufffd' shown as a candidate

    rng = random.Random(1)
    dealt, byte_pieces = [], 0
    for _ in range(300):  # 300 games of 20 questions, each question at most once a game
        answered: set[int] = set()
        for _ in range(20):
            d = lg.deal_pairwise(game_pool, playable, answered, rng)
            answered.add(d["comparison_id"])
            dealt.append(d)
    for d in dealt:
        c, k = d["comparison_id"], d["k"]
        y, x = true[c], token[(c, k)]
        a, b = (y, x) if d["true_is_a"] else (x, y)
        shown = [lg.shown_token(a), lg.shown_token(b)]
        assert x != y and shown[0] != shown[1], (c, k, x, y)
        assert not any("\ufffd" in s for s in shown) and "\ufffd" not in lg.shown_text(context[c]), (c, k, shown)
        byte_pieces += lg.BYTE_PIECE in shown[0] + shown[1]
    print(
        f"\n{len(dealt)} dealt questions: 0 identical, 0 with '\ufffd' (the old deal: {old_identical:.1%} of its "
        f"rounds identical, {old_unreadable:.1%} with '\ufffd'); {byte_pieces} with a byte piece shown as "
        f"{lg.BYTE_PIECE}"
    )
    assert len(dealt) == 6000
    # every game question with a playable sample was dealt; those with none (all 400 samples written as y) never
    n_playable = {c: len(playable.get(c, [])) for c in game_pool["comparison_id"]}
    never = sorted(c for c, n in n_playable.items() if n == 0)
    assert {d["comparison_id"] for d in dealt} == {c for c, n in n_playable.items() if n > 0}
    assert never == [10018, 10032, 20038, 20040, 20042, 20047]  # 3 the same token; 3 byte tokens all written '\ufffd'
    assert byte_pieces > 0  # the questions whose original is a piece of a character (20043, 20049) are dealt, readable
    # a training question too: every one is playable
    training = questions[questions["is_training"]]
    assert all(playable.get(c) for c in training["comparison_id"])
