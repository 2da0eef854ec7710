"""Paper-ready files of the dashboard's charts and tables: SVG and PNG (rendered offline by vl-convert), CSV and
LaTeX (booktabs), each carrying the provenance of the published snapshot it shows (snapshot id, build, the scoring
runs and model revisions, the upstream commits). Formatting only: every value is the caller's, none is computed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import textwrap
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

import altair as alt
import duckdb
import pandas as pd
import vl_convert as vlc
from PIL import Image
from PIL.PngImagePlugin import PngInfo

#: (provenance key, snapshot table, its columns kept); a snapshot without the table is skipped
PROVENANCE_TABLES = (
    ("snapshot", "snapshot_info", ("snapshot_id", "published_at")),
    ("build", "mart_build_info", ("built_at", "dbt_version", "invocation_id")),
    ("models", "mart_models", ("model_key", "model_id", "model_revision", "run_id", "corpus", "dtype")),
    ("sources", "mart_sources", ("dataset", "repo", "commit")),
)
PNG_KEY = "predictabase.provenance"  # the PNG tEXt chunk holding the provenance JSON
CHART_WIDTH = 720  # px, for a chart the dashboard sizes to its container
CHART_HEIGHT = 360
FOOTER_CHARS = 120  # the footer's line length in characters (wrapped at spaces)


def _rows(con: duckdb.DuckDBPyConnection, table: str) -> list[dict]:
    try:
        cur = con.execute(f'SELECT * FROM main."{table}"')
    except duckdb.CatalogException:
        return []
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _text(value) -> str | None:
    if value is None:
        return None
    return value.isoformat() if isinstance(value, datetime) else str(value)


def provenance(marts_path: str | Path) -> dict:
    """What a published snapshot was built from: `snapshot` (id, published_at), `build` (built_at, dbt_version,
    invocation_id), `models` (the runs used in the marts) and `sources` (dataset, repo, commit)."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"ATTACH '{str(marts_path).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
        con.execute("USE snap")
        prov: dict = {}
        for key, table, columns in PROVENANCE_TABLES:
            rows = _rows(con, table)
            if key == "models":
                rows = [r for r in rows if r.get("used_in_marts", True)]
            kept = [{c: _text(r.get(c)) for c in columns} for r in rows]
            if key in ("snapshot", "build"):
                prov[key] = kept[0] if kept else {}
            else:
                prov[key] = sorted(kept, key=lambda r: tuple(str(v) for v in r.values()))
        return prov
    finally:
        con.close()


def _short(value: str | None, n: int = 7) -> str:
    """A git sha (or hex id) cut to `n` characters; anything else as it is."""
    value = value or "?"
    return value[:n] if re.fullmatch(r"[0-9a-f]{8,}", value) else value


def _minute(stamp: str | None) -> str | None:
    if not stamp:
        return None
    ts = datetime.fromisoformat(stamp)
    ts = ts.astimezone(UTC) if ts.tzinfo else ts
    return ts.strftime("%Y-%m-%d %H:%M UTC")


def _repo_commits(sources: list[dict]) -> dict[tuple[str, str], list[str]]:
    """(upstream repository, commit) -> its datasets (a dataset of several lists them `; `-separated)."""
    out: dict[tuple[str, str], list[str]] = {}
    for s in sources:
        repos, commits = (s.get("repo") or "").split("; "), (s.get("commit") or "").split("; ")
        for repo, commit in zip(repos, commits + [""] * len(repos)):
            if repo:
                out.setdefault((repo, commit or "?"), []).append(s.get("dataset") or "?")
    return dict(sorted(out.items()))


def provenance_line(prov: dict) -> str:
    """The provenance as one line: `predictabase snapshot <id12>, built <UTC minute>; models: ...; data: ...`."""
    snap, build = prov.get("snapshot") or {}, prov.get("build") or {}
    line = f"predictabase snapshot {(snap.get('snapshot_id') or 'unknown')[:12]}"
    built = _minute(build.get("built_at") or snap.get("published_at"))
    if built:
        line += f", built {built}"
    models: dict[str, list[str]] = {}
    for m in prov.get("models") or []:
        models.setdefault(f"{m['model_key']}@{_short(m.get('model_revision'))}", []).append(_short(m["run_id"], 8))
    if models:
        line += "; models: " + ", ".join(
            f"{k} (run{'s' if len(r) > 1 else ''} {', '.join(sorted(set(r)))})" for k, r in sorted(models.items())
        )
    data = _repo_commits(prov.get("sources") or [])
    if data:
        line += "; data: " + ", ".join(f"{repo}@{_short(commit)}" for repo, commit in data)
    return line


def slug(title: str, limit: int = 60) -> str:
    """A file name of `title`: lowercase ASCII letters, digits and `-`."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:limit].rstrip("-") or "untitled"


# --------------------------------------------------------------------------- charts


def _sized(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """A single or layered chart the dashboard sizes to its container, at a fixed size instead."""
    if not isinstance(chart, (alt.Chart, alt.LayerChart)):
        return chart  # a facet or concatenation sizes each of its views
    encoding = getattr(chart, "encoding", alt.Undefined)
    if any(getattr(encoding, k, alt.Undefined) is not alt.Undefined for k in ("facet", "row", "column")):
        return chart  # a facet encoding sizes each panel
    if chart.width is alt.Undefined or chart.width == "container":
        chart = chart.properties(width=CHART_WIDTH)
    if chart.height == "container":
        chart = chart.properties(height=CHART_HEIGHT)
    return chart


def chart_spec(chart: alt.TopLevelMixin, prov: dict) -> dict:
    """The Vega-Lite spec of `chart` at a fixed width, with the provenance line as a footer under it."""
    inner = _sized(chart.copy())
    top = {}
    inner.autosize = alt.Undefined  # the dashboard's fit to its container; a file has its own fixed width
    for attr in ("config", "background", "padding", "usermeta"):  # top-level only in Vega-Lite
        if getattr(inner, attr, alt.Undefined) is not alt.Undefined:
            top[attr] = getattr(inner, attr)
            setattr(inner, attr, alt.Undefined)
    footer = alt.Title(
        textwrap.wrap(provenance_line(prov), FOOTER_CHARS, break_long_words=False, break_on_hyphens=False),
        orient="bottom",
        anchor="start",
        fontSize=9,
        fontWeight="normal",
        color="#555555",
        offset=14,
    )
    with alt.data_transformers.disable_max_rows():  # a chart of every word of a corpus has >5,000 rows
        return alt.vconcat(inner, title=footer, **top).to_dict()


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes (`6.4`), when vl-convert has it (else its latest)."""
    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return version if version in vlc.get_vegalite_versions() else None


def _provenance_json(prov: dict) -> str:
    return json.dumps(prov, sort_keys=True, ensure_ascii=True, default=str)


def chart_svg(chart: alt.TopLevelMixin, prov: dict) -> str:
    """The chart as a standalone SVG: the provenance line under it, the provenance JSON in its <metadata>."""
    svg = vlc.vegalite_to_svg(chart_spec(chart, prov), vl_version=_vl_version(), allowed_base_urls=[])
    meta = f'<metadata id="predictabase-provenance">{xml_escape(_provenance_json(prov))}</metadata>'
    return re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + meta, svg, count=1)


def chart_png(chart: alt.TopLevelMixin, prov: dict, scale: float = 2) -> bytes:
    """The chart as a PNG at `scale` times its CSS pixels (96 * scale dpi), the provenance JSON in its tEXt
    chunk `predictabase.provenance`."""
    png = vlc.vegalite_to_png(chart_spec(chart, prov), vl_version=_vl_version(), scale=scale, allowed_base_urls=[])
    info = PngInfo()
    info.add_text(PNG_KEY, _provenance_json(prov))
    info.add_text("Description", provenance_line(prov))
    out = io.BytesIO()
    with Image.open(io.BytesIO(png)) as img:
        img.save(out, format="PNG", pnginfo=info, dpi=(96 * scale, 96 * scale))
    return out.getvalue()


# --------------------------------------------------------------------------- tables


def comment_block(lines: list[str], mark: str = "# ") -> str:
    """`lines` as comment lines (`# ` for CSV, `% ` for LaTeX), each kept on one line."""
    return "".join(f"{mark}{' '.join(str(line).split())}\n" for line in lines)


def header_lines(prov: dict, title: str, columns: list[str], headers: dict[str, str] | None = None) -> list[str]:
    """A table file's header: its title, the provenance line, the snapshot, the runs, the sources, its columns."""
    snap, build = prov.get("snapshot") or {}, prov.get("build") or {}
    lines = [
        title,
        provenance_line(prov),
        "snapshot: " + ", ".join(f"{k}={v}" for k, v in {**snap, **build}.items() if v is not None),
    ]
    lines += ["run: " + ", ".join(f"{k}={v}" for k, v in m.items() if v is not None) for m in prov.get("models", [])]
    lines += [
        f"source: {repo}@{commit} ({', '.join(sorted(set(datasets)))})"
        for (repo, commit), datasets in _repo_commits(prov.get("sources") or []).items()
    ]
    lines += [f"column: {c} = {(headers or {}).get(c, c)}" for c in columns]
    return lines


_MACHINE_PATH = re.compile(r"^(?:/|~/|[A-Za-z]:[\\/]|file://)")
#: a path inside a longer text (a command's arguments as JSON: `{"warehouse": "/tmp/w"}`): absolute with at least two
#: components, `~/…`, `C:\\…` or `file://…`, not preceded by what makes a slash part of a word, a hub id or a URL
_EMBEDDED_PATH = re.compile(r"(?<![\w.:/\\-])(?:file://|~/|[A-Za-z]:[\\/]|/[^\s/\\\"'<>|,;()]+/)[^\s\"'<>|,;()]*")


def _last_component(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1]


def _scrubbed(value: str) -> str:
    if _MACHINE_PATH.match(value):
        return _last_component(value)
    return _EMBEDDED_PATH.sub(lambda m: _last_component(m.group(0)), value)


def without_machine_paths(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every path on this machine in a text cell (`/home/…/.venv/…/model.gguf`, `C:\\…`, `file://…`, the
    whole cell or inside it, as in a command's arguments) replaced by its last component (`model.gguf`): no machine
    path belongs in a paper file. The marts name no such path (a model by its portable id,
    ingest/scoring/model_identity.py); the dashboard's other tables (the runs log's arguments) may."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: _scrubbed(v) if isinstance(v, str) else v)
    return out


def table_csv(df: pd.DataFrame, prov: dict, title: str, headers: dict[str, str] | None = None) -> str:
    """The table as CSV under `# ` header lines (pandas `read_csv(f, comment="#")`, R `read.csv(f, comment.char =
    "#")`); text cells are quoted, so a `#` in one is not read as a comment. No machine path."""
    df = without_machine_paths(df)
    body = df.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return comment_block(header_lines(prov, title, [str(c) for c in df.columns], headers)) + body


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # characters pdflatex has no glyph for without extra packages
    "−": "$-$",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "×": r"$\times$",
    "±": r"$\pm$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "‖": r"$\|$",
    "ρ": r"$\rho$",
    "Δ": r"$\Delta$",
    "⁻": "$^{-}$",
    "²": "$^{2}$",
    "’": "'",
    "‘": "`",
    "“": "``",
    "”": "''",
}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def format_value(value, fmt: str | None) -> str:
    """A cell as the dashboard shows it: a number with its printf format (or `scientific`), a bool as yes/no, a
    timestamp to the second, a missing value empty."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return ""
    if pd.api.types.is_bool(value):
        return "yes" if value else "no"
    if isinstance(value, (pd.Timestamp, datetime)):
        return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S")
    if fmt and pd.api.types.is_number(value):
        with contextlib.suppress(TypeError, ValueError):
            if fmt == "scientific":
                return f"{value:.3e}"
            return fmt % (round(value) if fmt.endswith("d") else value)
    return str(value)


def table_latex(
    df: pd.DataFrame, prov: dict, title: str, formats: dict[str, str | None], headers: dict[str, str] | None = None
) -> str:
    """The table as a booktabs `table` (needs `\\usepackage{booktabs}`): headers in words with units, numbers in
    the dashboard's formats, one line per row, the title as its caption and the provenance line under it (and,
    whole, as `%` comments at the top). No machine path."""
    df = without_machine_paths(df)
    columns = [str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    lines = [
        comment_block(header_lines(prov, title, columns, headers), "% ").rstrip("\n"),
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{latex_escape(title)}}}",
        r"\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}",
        r"\toprule",
        " & ".join(latex_escape((headers or {}).get(c, c)) for c in columns) + r" \\",
        r"\midrule",
    ]
    for row in df.itertuples(index=False, name=None):
        lines.append(
            " & ".join(latex_escape(format_value(v, (formats or {}).get(c))) for c, v in zip(columns, row)) + r" \\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        "",
        r"\par\smallskip{\footnotesize " + latex_escape(provenance_line(prov)) + "}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"
