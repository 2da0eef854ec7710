"""The documentation site (mkdocs.yml): it builds with --strict (every internal link and anchor resolves), its
reference names every CLI command and every published mart, and the results pages' tables come from SQL on a
snapshot when one is given, with one line saying so when none is.

The site is built once into a temporary folder (a few seconds); the generators (scripts/docs_reference.py) and the
hooks (scripts/docs_hooks.py) are also checked on their own.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
MKDOCS = Path(sys.executable).with_name("mkdocs")


def _load(name: str):
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))  # docs_hooks imports docs_reference beside it, as MkDocs loads it
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs_reference = _load("docs_reference")


def _nav_files(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def _config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # mkdocs.yml's !ENV and the like
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built with --strict, without a warehouse (DOCS_WAREHOUSE empty)."""
    generated = set(docs_reference.pages()) | {"changelog.md"}
    missing = [f for f in _nav_files(_config()["nav"]) if f not in generated and not (ROOT / "docs" / f).exists()]
    assert not missing, f"pages the nav lists are missing from docs/: {missing}"
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "DOCS_WAREHOUSE": "", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(out)],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _page(site: Path, path: str) -> str:
    return html.unescape((site / path / "index.html").read_text(encoding="utf-8"))


def test_the_nav_has_every_section():
    nav = [next(iter(item)) if isinstance(item, dict) else item for item in _config()["nav"]]
    assert nav == [
        "Home",
        "Getting started",
        "Guides",
        "Reference",
        "Results",
        "Methods",
        "Architecture",
        "Changelog",
        "Page tour",
    ]
    files = _nav_files(_config()["nav"])
    for guide in ("own-corpus", "own-model", "shipped-corpus", "scheduling", "sql", "operations", "scale"):
        assert f"guides/{guide}.md" in files
    assert {
        "getting-started.md",
        "architecture.md",
        "pages/README.md",
        "changelog.md",
        "reference/cli.md",
        "reference/marts.md",
        "methods/index.md",
    } <= set(files)


def test_the_cli_reference_names_every_command_and_option():
    import typer

    from predictabase.cli import app

    text = docs_reference.cli_reference()
    root = typer.main.get_command(app)
    seen = 0

    def walk(command, path):
        nonlocal seen
        name = " ".join(path)
        assert f"## {name}\n" in text or f"### {name}\n" in text, f"{name} has no section"
        seen += 1
        for p in command.params:
            if not p.hidden and p.param_type_name == "option":
                assert f"`{p.opts[0]}`" in text, f"{name} {p.opts[0]}"
                if isinstance(p.envvar, str):
                    assert f"`{p.envvar}`" in text
        for sub_name, sub in (getattr(command, "commands", None) or {}).items():
            if not sub.hidden:
                walk(sub, (*path, sub_name))

    walk(root, ("predictabase",))
    assert seen == len(docs_reference.command_names()) > 10
    for code in (0, 1, 2, 75, 130):  # the epilog's exit codes
        assert f"| {code} |" in text


def test_the_marts_reference_has_every_mart_and_column():
    marts = docs_reference.marts()
    assert {m["name"] for m in marts} == docs_reference.mart_files()  # every model file is documented
    text = docs_reference.marts_reference()
    for m in marts:
        assert f"### {m['name']}\n" in text
        for c in m["columns"]:
            assert f"`{c['name']}`" in text
    assert "{{" not in text and "{%" not in text, "a dbt doc() or var() left unrendered"
    labelled = next(c for m in marts if m["name"] == "mart_sources" for c in m["columns"] if c["name"] == "total_bytes")
    assert labelled["label"] == "size (bytes)"


def test_the_environment_reference_lists_every_variable_the_cli_reads():
    env = docs_reference.environment_variables()
    assert {
        "PREDICTABASE_WAREHOUSE",
        "PREDICTABASE_MIRROR",
        "PREDICTABASE_MODELS",
        "PREDICTABASE_HOME",
        "PREDICTABASE_DEBUG",
        "PREDICTABASE_WAIT",
    } <= set(env)
    assert env["PREDICTABASE_DUCKDB"]["internal"] and not env["PREDICTABASE_WAREHOUSE"]["internal"]
    assert all(v["help"] for v in env.values() if not v["internal"]), "a variable without a description"


def test_references_bib_is_the_references_file():
    from predictabase.ingest.sources.references import load_references, parse_bib

    keys = [e.key for e in parse_bib(docs_reference.references_bib())]
    assert keys == [r.key for r in load_references()]


def test_the_site_names_every_command_and_mart(site):
    cli = _page(site, "reference/cli")
    for name in docs_reference.command_names():
        assert f">{name}<" in cli or f"{name}</h" in cli, f"the CLI page does not name {name!r}"
    marts = _page(site, "reference/marts")
    for name in docs_reference.mart_files():
        assert f'id="{name}"' in marts, f"the marts page has no section for {name}"
    assert (site / "references.bib").read_text(encoding="utf-8") == docs_reference.references_bib()
    assert "Changelog" in _page(site, "changelog")


def test_results_pages_without_a_warehouse_say_so_and_link_their_sql(site):
    pages = sorted((ROOT / "docs" / "results").glob("*.md"))
    assert len(pages) >= 6
    for md in pages:
        sql = re.findall(r"<!--\s*sql:\s*(\S+\.sql)\s*-->", md.read_text(encoding="utf-8"))
        if md.stem == "index":
            continue
        assert sql, f"{md.name} has no table"
        page = _page(site, f"results/{md.stem}")
        assert page.count("No warehouse was given") == 1, md.name
        for name in sql:
            assert (site / "results" / name).is_file() and name in page


def test_results_tables_come_from_the_snapshot(tmp_path, monkeypatch):
    """With a warehouse, a `<!-- sql: ... -->` line becomes the query's table on its snapshot, read-only."""
    import duckdb

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    with duckdb.connect(str(warehouse / "marts.duckdb")) as con:
        con.execute("create table mart_build_info as select timestamptz '2026-01-02 03:04:00+00' as built_at")
        con.execute("create table mart_x as select * from (values ('a|b', 1.23456, 1234), ('c', null, 5)) t(k, v, n)")
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    (docs / "results" / "x.sql").write_text('select k as "key", v, n from mart_x order by k')
    monkeypatch.setenv("DOCS_WAREHOUSE", str(warehouse))
    hooks = _load("docs_hooks")
    hooks.on_config({})
    page = SimpleNamespace(file=SimpleNamespace(src_uri="results/x.md"))
    out = hooks.on_page_markdown(
        "# X\n\n<!-- sql: x.sql -->\n\nAfter.\n", page=page, config={"docs_dir": str(docs)}, files=None
    )
    hooks.on_post_build({})
    assert "| key | v | n |" in out and "| a\\|b | 1.235 | 1,234 |" in out and "| c | — | 5 |" in out
    assert "built 2026-01-02 03:04 UTC; 2 rows" in out and "No warehouse" not in out
    assert out.rstrip().endswith("After.")

    monkeypatch.setenv("DOCS_WAREHOUSE", "")
    hooks.on_config({})
    out = hooks.on_page_markdown("# X\n\n<!-- sql: x.sql -->\n", page=page, config={"docs_dir": str(docs)}, files=None)
    assert out.count("No warehouse was given") == 1 and "[`x.sql`](x.sql)" in out

    monkeypatch.setenv("DOCS_WAREHOUSE", str(tmp_path / "nowhere"))
    with pytest.raises(Exception, match="no published snapshot"):
        hooks.on_config({})
