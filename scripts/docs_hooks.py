"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`): what the site generates when it builds.

- The reference pages (scripts/docs_reference.py: the CLI, the marts, the configuration files, the environment
  variables), the references page and references.bib, and the changelog (CHANGELOG.md), added as pages that exist
  only in the build: nothing is written into docs/.
- The results pages' tables: a line `<!-- sql: NAME.sql -->` in a page under docs/results/ becomes the table that
  docs/results/NAME.sql gives on a published snapshot, opened read-only. The snapshot is `$DOCS_WAREHOUSE/marts.duckdb`
  (empty DOCS_WAREHOUSE: none), else `$PREDICTABASE_WAREHOUSE/marts.duckdb` when it exists. Without one, each results
  page says so in one line and links its SQL; with one, its dbt docs site (dbt_docs.html) is added to the reference.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
from decimal import Decimal
from pathlib import Path

import docs_reference  # scripts/docs_reference.py: MkDocs puts the hook's folder on sys.path while it loads it
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.predictabase")

ROOT = docs_reference.ROOT
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5" / "tex-svg.js"  # SVG output: one file, no fonts to serve
RESULTS = "results/"
MARKER = re.compile(r"^<!--[ \t]*sql:[ \t]*([\w.-]+\.sql)[ \t]*-->[ \t]*$", re.MULTILINE)
#: a table longer than this is folded (readers open it)
FOLD_ROWS = 30
DBT_DOCS = "reference/dbt_docs.html"

_state: dict = {}


def warehouse() -> Path | None:
    """The warehouse whose snapshot fills the results tables, or None. DOCS_WAREHOUSE wins (an empty value: none);
    else PREDICTABASE_WAREHOUSE when it holds a snapshot. A DOCS_WAREHOUSE without marts.duckdb fails the build."""
    explicit = os.environ.get("DOCS_WAREHOUSE")
    if explicit is not None:
        if not explicit.strip():
            return None
        path = Path(explicit).expanduser()
        if not (path / "marts.duckdb").is_file():
            raise PluginError(
                f"DOCS_WAREHOUSE={explicit}: no published snapshot there (marts.duckdb); "
                "build one with `predictabase build`, or leave DOCS_WAREHOUSE empty"
            )
        return path
    fallback = os.environ.get("PREDICTABASE_WAREHOUSE")
    if fallback and (Path(fallback) / "marts.duckdb").is_file():
        return Path(fallback)
    return None


def _connection():
    if "con" not in _state:
        import duckdb

        _state["con"] = duckdb.connect(str(_state["warehouse"] / "marts.duckdb"), read_only=True)
        try:
            built = _state["con"].execute("select max(built_at) from mart_build_info").fetchone()[0]
        except duckdb.Error:
            built = None
        _state["built_at"] = built.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if built else None
    return _state["con"]


def on_config(config):
    _state.clear()
    _state["warehouse"] = warehouse()
    if _state["warehouse"]:
        log.info("results tables from %s", _state["warehouse"] / "marts.duckdb")
    return config


def _add(files, config, src_uri: str, *, content: str | None = None, path: Path | None = None) -> None:
    old = files.get_file_from_path(src_uri)
    if old is not None:
        files.remove(old)
    if path is not None:
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    else:
        files.append(File.generated(config, src_uri, content=content))


def on_files(files, config):
    wh = _state.get("warehouse")
    dbt_docs = wh / "dbt_docs.html" if wh else None
    has_docs = bool(dbt_docs and dbt_docs.is_file())
    for src_uri, text in docs_reference.pages(dbt_docs_link="dbt_docs.html" if has_docs else None).items():
        _add(files, config, src_uri, content=text)
    _add(files, config, "changelog.md", content=(ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    # MathJax from npm (make setup installs it), served by the site itself: a reader offline, or a machine that
    # reaches only PyPI, Debian and npm, still sees the equations; without it they stay as TeX source
    if MATHJAX.is_file():
        _add(files, config, "javascripts/tex-svg.js", path=MATHJAX)
    if has_docs:
        _add(files, config, DBT_DOCS, path=dbt_docs)
    return files


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (float, Decimal)):
        return f"{value:.4g}"
    return " ".join(str(value).split()).replace("|", "\\|")


def sql_table(sql: str) -> tuple[list[str], list[tuple]]:
    """Column names and rows of `sql` on the snapshot."""
    cursor = _connection().execute(sql)
    rows = cursor.fetchall()
    return [d[0] for d in cursor.description], rows


def markdown_table(columns: list[str], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _filled(name: str, page_dir: Path) -> str:
    path = page_dir / name
    if not path.is_file():
        raise PluginError(f"{path}: no such SQL file (a `<!-- sql: {name} -->` line names it)")
    run = f'`predictabase sql -c "$(cat docs/results/{name})" --format markdown`'
    if _state.get("warehouse") is None:
        return f"*Table: [`{name}`]({name}) on a published snapshot ({run}).*"
    try:
        columns, rows = sql_table(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - any DuckDB error: say which file and fail the strict build
        log.warning("%s on %s: %s", name, _state["warehouse"], " ".join(str(exc).split()))
        return f"*[`{name}`]({name}) failed on this snapshot: {' '.join(str(exc).split())[:200]}*"
    built = f" built {_state['built_at']}" if _state.get("built_at") else ""
    caption = f"*[`{name}`]({name}) on the snapshot{built}; {len(rows):,} rows.*"
    if not rows:
        return f"*[`{name}`]({name}) gives no rows on the snapshot{built}.*"
    table = markdown_table(columns, rows)
    if len(rows) > FOLD_ROWS:
        body = "\n".join("    " + line for line in table.splitlines())
        return f'??? abstract "The whole table: {len(rows):,} rows"\n\n{body}\n\n{caption}'
    return f"{table}\n\n{caption}"


NO_WAREHOUSE = (
    "*No warehouse was given when this site was built, so its tables are not filled in: build it with "
    "`DOCS_WAREHOUSE=<a warehouse with marts.duckdb> make docs`.*"
)


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri
    if not src.startswith(RESULTS) or not MARKER.search(markdown):
        return markdown
    page_dir = Path(config["docs_dir"]) / Path(src).parent
    markdown = MARKER.sub(lambda m: _filled(m.group(1), page_dir), markdown)
    if _state.get("warehouse") is None:  # the one line, under the page's title
        head, sep, rest = markdown.partition("\n")
        markdown = f"{head}{sep}\n{NO_WAREHOUSE}\n{rest}" if head.startswith("# ") else f"{NO_WAREHOUSE}\n\n{markdown}"
    return markdown


def on_post_build(config):
    con = _state.pop("con", None)
    if con is not None:
        con.close()
