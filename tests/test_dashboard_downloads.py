"""The dashboard's download buttons in a real browser: on the Perplexity page of the synthetic snapshot
(tests/dashboard_fixtures.py), the chart's SVG and PNG and the table's CSV and LaTeX, each checked for its size,
its values and the snapshot's provenance line; no request leaves this machine."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from PIL import Image

from predictabase import paper_files
from predictabase.ingest import corpus_table
from predictabase.ingest.scoring.model_table import display_name

from .dashboard_fixtures import PERPLEXITY, expected_token_perplexity

# the fixtures `app` (the synthetic snapshot served), `browser` and `page` (asserts no request left the machine)
from .test_dashboard_browser import PAGES, _charts, _grid_text, app, browser, page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _download(page, label: str, into: Path) -> Path:
    """Click the download button `label` (the visible one: Streamlit keeps a hidden copy of each); the file it
    saves."""
    button = page.page.locator('[data-testid="stDownloadButton"] button', has_text=label).filter(visible=True)
    assert button.count() == 1, f"{button.count()} visible buttons {label!r}"
    with page.page.expect_download() as info:
        button.click()
    path = into / info.value.suggested_filename
    info.value.save_as(path)
    return path


def test_perplexity_page_downloads(app, page, tmp_path):  # noqa: F811
    with duckdb.connect(str(app["paths"].marts), read_only=True) as con:
        snapshot_id = con.execute("SELECT snapshot_id FROM snapshot_info").fetchone()[0]
    line = paper_files.provenance_line(paper_files.provenance(app["paths"].marts))
    assert line.startswith(f"predictabase snapshot {snapshot_id[:12]}")
    page.open(app["url"] + PAGES["perplexity"] + "?metric=token_perplexity")
    _charts(page)
    _grid_text(page, 1)

    svg_path = _download(page, "SVG", tmp_path)
    assert svg_path.name == "token-perplexity-per-token-by-corpus-and-model.svg"
    svg = ET.fromstring(svg_path.read_text())
    width, height = float(svg.get("width")), float(svg.get("height"))
    assert width >= paper_files.CHART_WIDTH and height > 200
    footer = list(svg.iter("{http://www.w3.org/2000/svg}text"))[-1]
    assert " ".join(t.strip() for t in footer.itertext()) == line
    assert "Token perplexity (per token) by corpus and model" in svg_path.read_text()

    png = Image.open(_download(page, "PNG", tmp_path))
    assert png.size == (round(2 * width), round(2 * height))
    assert png.text[paper_files.PNG_KEY].count(snapshot_id) == 1

    csv_path = _download(page, "CSV", tmp_path)
    assert csv_path.name == "perplexity-table.csv"
    assert f"# {line}\n" in csv_path.read_text()
    table = pd.read_csv(csv_path, comment="#")
    assert len(table) == len(PERPLEXITY) == 5
    # the table as shown: models and corpora by their names
    keys = {(display_name(key), corpus_table.title(corpus)): (key, corpus) for key, corpus, *_ in PERPLEXITY}
    for row in table.itertuples():
        expected = expected_token_perplexity(*keys[(row.model_name, row.corpus_title)])
        assert math.isclose(row.token_perplexity, expected, rel_tol=1e-12)

    tex = _download(page, "LaTeX", tmp_path).read_text()
    lines = tex.splitlines()
    mid, bottom = lines.index(r"\midrule"), lines.index(r"\bottomrule")
    assert lines.index(r"\toprule") < mid < bottom and len(lines[mid + 1 : bottom]) == 5
    assert f"% {line}" in lines and paper_files.latex_escape(line) in tex
    want = {f"{expected_token_perplexity(key, corpus):.2f}" for key, corpus, *_ in PERPLEXITY}
    column = [h.strip() for h in lines[mid - 1].rstrip("\\ ").split(" & ")].index("token perplexity (per token)")
    assert {row.split(" & ")[column] for row in lines[mid + 1 : bottom]} == want  # the page's %.2f
    # the paper's columns (the 21 the page leads with), not the mart's 33; no machine path anywhere
    headers = [h.strip() for h in lines[mid - 1].rstrip("\\ ").split(" & ")]
    assert headers[:2] == ["model", "corpus"] and len(headers) == 21, headers
    assert "model id" not in headers and "run" not in " ".join(headers)
    for text in (tex, csv_path.read_text()):
        assert "/.venv/" not in text and "site-packages" not in text and "/tmp/" not in text

    page.assert_no_exception()  # the clicks did not rerun the page into an error
