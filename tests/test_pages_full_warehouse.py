"""The pages on a warehouse like the one people have: every shipped corpus scored, MECO's eleven languages included
(the session's `refreshed` warehouse, tests/conftest.py: one `refresh` from nothing, the tiny GPT-2 on every shipped
corpus, SmolLM2 on the user corpora; the GGUF and the model folder live in machine paths). Served and looked at in
headless Chromium at the two window widths people use, 1280 and 940 px: every page opens without an error, no chart
is drawn wider than its column and no page scrolls sideways; the Scoreboard fits 4,000 px at 1280 px. The published
marts and an export name no folder of the machine."""

from __future__ import annotations

import shutil

import pytest

from predictabase.core.config import paths as make_paths

from .helpers import machine_paths_in, machine_paths_in_files
from .test_dashboard_browser import PAGES, Page, browser, serving  # noqa: F401 - browser: a fixture

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

WIDTHS = (1280, 940)
SCOREBOARD_MAX_PX = 4000


@pytest.fixture(scope="module")
def full(refreshed, tmp_path_factory):
    """A copy of the refreshed warehouse (the pages' live games write beside the snapshot), served."""
    tmp = tmp_path_factory.mktemp("full_pages")
    p = make_paths(tmp / "warehouse")
    shutil.copytree(refreshed.paths.warehouse, p.warehouse)
    with serving(p, tmp) as url:
        yield {"url": url, "paths": p, "tmp": tmp, "refreshed": refreshed}


#: every chart drawn wider than the block it sits in (its column, else the page's main column), and whether the
#: page itself scrolls sideways
LAYOUT = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const out = [];
    for (const c of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
        const drawn = c.querySelector('canvas, svg');
        if (!drawn) continue;
        const block = c.closest('[data-testid="stColumn"]') || main;
        const box = block.getBoundingClientRect(), style = getComputedStyle(block);
        const left = box.left + parseFloat(style.paddingLeft), right = box.right - parseFloat(style.paddingRight);
        const r = drawn.getBoundingClientRect();
        if (r.right > right + 1 || r.left < left - 1)
            out.push(`${(c.getAttribute('aria-label') || c.innerText).slice(0, 80)}: ${Math.round(r.width)} px `
                     + `in ${Math.round(right - left)} px`);
    }
    const scroller = document.querySelector('[data-testid="stMain"]') || document.documentElement;
    const sideways = Math.max(scroller.scrollWidth - scroller.clientWidth,
                              document.documentElement.scrollWidth - document.documentElement.clientWidth);
    return {wide: out, sideways: sideways, height: main.getBoundingClientRect().height,
            charts: document.querySelectorAll('[data-testid="stVegaLiteChart"]').length};
}"""


def _wait_charts(page) -> None:
    charts = page.page.locator('[data-testid="stVegaLiteChart"]')
    for i in range(charts.count()):
        charts.nth(i).locator("canvas, svg").first.wait_for(timeout=60_000)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_its_column(full, browser, width):
    """Every page at `width` px: no exception, no chart wider than its column, nothing to scroll sideways; the
    Scoreboard at most 4,000 px tall at 1280 px (it was 11,777 px, with grids hiding most of their columns)."""
    page = Page(browser, full["tmp"])
    page.page.set_viewport_size({"width": width, "height": 900})
    failures, heights = [], {}
    try:
        for name, path in PAGES.items():
            page.open(full["url"] + path)
            page.assert_no_exception()
            _wait_charts(page)
            layout = page.page.evaluate(LAYOUT)
            heights[name] = layout["height"]
            if layout["wide"]:
                failures.append(f"{name}: {layout['wide']}")
            if layout["sideways"] > 1:
                failures.append(f"{name}: the page scrolls {layout['sideways']} px sideways")
            if width == WIDTHS[0]:
                page.screenshot(f"full_{name}")
    finally:
        page.close()
    assert not failures, failures
    if width == 1280:
        assert heights["scoreboard"] <= SCOREBOARD_MAX_PX, heights


def test_no_machine_path_in_the_marts_or_an_export(full, tmp_path):
    """The published snapshot names no folder of the machine that scored it (the GGUF inside the virtualenv, the
    tiny GPT-2's temporary folder, the run folders); neither does the dbt docs site beside it, nor any file
    `predictabase export` writes."""
    from .test_faults import cli

    assert machine_paths_in(full["paths"].marts) == []
    # the dbt docs site the Warehouse page links, as a build publishes it (the tests' builds skip it); the
    # warehouse was built in another folder, which its manifest keeps
    from predictabase.warehouse.docs import generate_docs

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(generate_docs(full["paths"]), docs)
    assert machine_paths_in_files(docs) == []
    out = tmp_path / "export"
    res = cli(
        "export", "--out", str(out), "--warehouse", str(full["paths"].warehouse), env=full["refreshed"].env, timeout=600
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(list(out.rglob("*.csv"))) > 10
    assert machine_paths_in_files(out) == []
