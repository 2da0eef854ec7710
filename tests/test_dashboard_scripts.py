"""The dashboard shows every script of MECO's languages readably and keeps the reader's theme, in Debian's headless
Chromium (a machine without any Hangul font: fc-list :lang=ko is empty here).

One server (`predictabase serve`'s command, tests/test_dashboard_browser.py's `serving`) on a synthetic snapshot:
tests/dashboard_fixtures.py's, with two corpora of the word-surprisal page's marts in Hebrew and Korean.
"""

from __future__ import annotations

import re

import duckdb
import pytest

from predictabase.core.config import paths as make_paths

from .dashboard_fixtures import USER_CORPUS, add_user_corpus, create_marts
from .helpers import APP_READY
from .test_dashboard_browser import browser, serving  # noqa: F401 - the module's browser fixture

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

HEBREW = ["בראשית", "ברא", "אלוהים", "את", "השמים", "ואת", "הארץ", "והארץ", "הייתה", "תוהו", "ובוהו"]
#: long enough to fill several lines at 1280 px, so that a word could be split at a line's end
KOREAN = [
    "옛날",
    "옛적에",
    "깊은",
    "산골",
    "마을에",
    "마음씨",
    "착한",
    "나무꾼이",
    "어머니를",
    "모시고",
    "살았습니다",
    "그는",
    "날마다",
    "산에",
    "올라가",
    "나무를",
    "베어",
    "시장에",
    "내다",
    "팔았습니다",
    "어느",
    "날",
    "연못가에서",
    "도끼를",
    "떨어뜨렸습니다",
] * 4
CORPORA = {"meco_he": ("Hebrew (MECO)", "he", HEBREW), "meco_ko": ("Korean (MECO)", "ko", KOREAN)}


def add_scripts(path) -> None:
    """The user corpus's word-surprisal rows copied to meco_he and meco_ko, its words replaced by the language's
    (one text each), with mart_corpora's language column as the real mart has it."""
    con = duckdb.connect(str(path))
    try:
        con.execute("ALTER TABLE mart_corpora ADD COLUMN language VARCHAR")
        con.execute("UPDATE mart_corpora SET language = 'en'")
        for corpus, (title, lang, words) in CORPORA.items():
            con.execute(
                "INSERT INTO mart_corpora SELECT * REPLACE (? AS corpus, ? AS title, 'shipped' AS origin, "
                "? AS language) FROM mart_corpora WHERE corpus = ?",
                [corpus, title, lang, USER_CORPUS],
            )
            con.execute(
                "CREATE TEMP TABLE w AS SELECT unnest(?::VARCHAR[]) AS word, "
                "generate_subscripts(?::VARCHAR[], 1) - 1 AS i",
                [words, words],
            )
            for table in ("mart_word_surprisal", "mart_words_export"):
                con.execute(
                    f"""INSERT INTO {table} SELECT m.* REPLACE (? AS corpus, '1' AS doc_id, w.i AS word_index,
                    w.word AS word) FROM w JOIN (SELECT * FROM {table} WHERE corpus = ? AND doc_id = '1'
                    AND word_index = 1) m ON true""",
                    [corpus, USER_CORPUS],
                )
            con.execute(
                "INSERT INTO mart_word_surprisal_summary SELECT * REPLACE (? AS corpus) "
                "FROM mart_word_surprisal_summary WHERE corpus = ?",
                [corpus, USER_CORPUS],
            )
            con.execute("DROP TABLE w")
        con.execute("CHECKPOINT")
    finally:
        con.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scripts")
    p = make_paths(tmp / "warehouse")
    create_marts(p.marts)
    add_user_corpus(p.marts)
    add_scripts(p.marts)
    with serving(p, tmp) as url:
        yield url


class Tab:
    """A page at 1280x900 that records every response (status, url)."""

    def __init__(self, chromium, color_scheme: str = "light"):
        self.context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme)
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.responses: list[tuple[int, str]] = []
        self.page.on("response", lambda r: self.responses.append((r.status, r.url)))

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.ready()

    def ready(self) -> None:
        self.page.wait_for_selector('[data-testid="stMain"] h1')
        self.page.wait_for_selector(APP_READY, state="attached")
        self.page.wait_for_load_state("networkidle")

    def failed(self) -> list[tuple[int, str]]:
        return [(s, u) for s, u in self.responses if s >= 400]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser):  # noqa: F811 - the imported fixture
    t = Tab(browser)
    yield t
    t.close()


def _passage(tab: Tab, corpus: str):
    tab.open(f"{tab.base}/word-surprisal?corpus={corpus}")
    text = tab.page.locator(".ws-text").first
    text.wait_for()
    return text


@pytest.fixture
def opened(app, tab):
    tab.base = app
    return tab


def test_hebrew_reads_right_to_left_from_the_right(opened):
    text = _passage(opened, "meco_he")
    got = text.evaluate("""el => {
        const box = el.getBoundingClientRect(), first = el.querySelector('span').getBoundingClientRect();
        return {direction: getComputedStyle(el).direction, lang: el.closest('[lang]').lang,
                gap_right: box.right - first.right, gap_left: first.left - box.left};
    }""")
    assert got["direction"] == "rtl" and got["lang"] == "he", got
    # the first word at the right edge of the text, not at its left
    assert got["gap_right"] < 8 < got["gap_left"], got


def test_hangul_comes_from_the_apps_own_font_and_no_word_is_split(opened):
    text = _passage(opened, "meco_ko")
    opened.page.wait_for_function("() => document.fonts.status === 'loaded'")
    fonts = opened.page.evaluate("""() => [...document.fonts].filter(f => f.status === 'loaded'
        && /U\\+AC00|U\\+D7/i.test(f.unicodeRange)).length""")
    assert fonts > 0, "no loaded font face covers Hangul"
    assert opened.page.evaluate("() => document.fonts.check('16px \"Source Sans\"', '한국어 나무꾼이')")
    served = [u for s, u in opened.responses if s == 200 and re.search(r"/_fonts/noto-sans-kr/files/.*\.woff2$", u)]
    assert served, opened.responses
    lines = text.evaluate("""el => {
        const spans = [...el.querySelectorAll('span')];
        return {split: spans.filter(s => s.getClientRects().length > 1).map(s => s.textContent),
                lines: new Set(spans.map(s => Math.round(s.getBoundingClientRect().top))).size,
                lang: el.closest('[lang]').lang};
    }""")
    assert lines["lang"] == "ko" and lines["lines"] >= 3, lines  # several lines, so words met lines' ends
    assert lines["split"] == [], lines


def test_no_404_when_a_page_is_opened_by_its_address_or_reloaded(opened):
    for path in ("/languages", "/word-surprisal", "/sql", "/"):
        opened.responses.clear()
        opened.open(opened.base + path)
        opened.page.reload()
        opened.ready()
        assert opened.failed() == [], (path, opened.failed())


def test_home_opens_the_warehouse_page(opened):
    opened.open(opened.base + "/home")
    opened.page.wait_for_timeout(1500)  # "Page not found" came as a dialog after the first run
    assert opened.page.locator('[data-testid="stMain"] h1').first.inner_text() == "predictabase warehouse"
    assert opened.page.get_by_text("Page not found").count() == 0
    assert opened.failed() == []


def _background(tab: Tab) -> str:
    return tab.page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )


def _dark(colour: str) -> bool:
    r, g, b = (int(v) for v in re.findall(r"\d+", colour)[:3])
    return r + g + b < 200


def _choose_dark(tab: Tab) -> None:
    tab.page.get_by_test_id("stMainMenu").click()
    tab.page.get_by_test_id("stMainMenuItem-theme-Dark").click()
    tab.page.keyboard.press("Escape")


def test_dark_theme_survives_reload_and_opening_another_page(opened):
    opened.open(opened.base + "/")
    assert not _dark(_background(opened))
    _choose_dark(opened)
    opened.page.wait_for_function(
        "() => { const c = getComputedStyle(document.querySelector("
        "'[data-testid=\"stApp\"]')).backgroundColor.match(/\\d+/g);"
        " return c && (+c[0] + +c[1] + +c[2]) < 200; }"
    )
    # to another page inside the app, then reload there
    opened.page.get_by_test_id("stSidebarNav").get_by_text("Languages").click()
    opened.page.wait_for_url(re.compile(r"/languages$"))
    opened.ready()
    opened.page.reload()
    opened.ready()
    assert _dark(_background(opened)), "dark mode lost on reload"
    for path in ("/perplexity", "/sql", "/"):
        opened.open(opened.base + path)
        assert _dark(_background(opened)), f"dark mode lost opening {path} by its address"
