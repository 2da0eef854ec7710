"""The dbt project's conventions, checked on its YAML and the dashboard's sources (no dbt run,
no database, no network; well under a second):

* every dashboard page (dashboards/app.py) has an exposure whose `depends_on` is exactly the marts the page
  reads, with those app.py reads under every page (`shell_marts`: the "How to cite" of dashboards/citations.py)
  (the SQL page: every mart);
* every SQL mart has an enforced contract with a data_type on every column (dbt then refuses a build whose
  SQL and YAML differ in a column's name or type);
* every staging model has a column test and every source table a test;
* the project's generic tests carry dbt_utils's names and arguments where dbt_utils has the same test, so
  that moving to the dbt_utils package is a rename of the namespace only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.core.resources import dashboard_app

MODELS = DBT_PROJECT_DIR / "models"
APP = dashboard_app()
PAGES_DIR = APP.parent

# the SQL page runs whatever query it is given over the snapshot, so it reads every mart
PAGES_READING_EVERY_MART = {"sql"}
# dbt_utils's generic tests the project has its own copy of, with dbt_utils's arguments (a project copy may
# take fewer, never others)
DBT_UTILS_TESTS = {
    "accepted_range": {"min_value", "max_value", "inclusive", "where"},
    "expression_is_true": {"expression", "column_name"},
    "unique_combination_of_columns": {"combination_of_columns", "quote_columns"},
    "not_null_proportion": {"at_least", "at_most", "group_by_columns"},
    "not_accepted_values": {"values", "quote"},
    "relationships_where": {"to", "field", "from_condition", "to_condition"},
    "equal_rowcount": {"compare_model", "group_by_columns"},
    "fewer_rows_than": {"compare_model", "group_by_columns"},
    "recency": {"datepart", "field", "interval", "ignore_time_component", "group_by_columns"},
    "at_least_one": {"group_by_columns"},
    "not_constant": {"group_by_columns"},
    "not_empty_string": {"trim_whitespace"},
    "cardinality_equality": {"field", "to"},
    "sequential_values": {"interval", "datepart", "group_by_columns"},
    "mutually_exclusive_ranges": {
        "lower_bound_column",
        "upper_bound_column",
        "partition_by",
        "gaps",
        "zero_length_range_allowed",
    },
    "equality": {"compare_model", "compare_columns", "exclude_columns", "precision"},
}
# names the project once used for a dbt_utils test: never again
RENAMED = {"unique_combination": "unique_combination_of_columns"}
# the project's generic tests dbt_utils has no equivalent of
# finite_or_null: every float column of a model, NaN and inf; declared_corpus: the corpora ingest/corpora.toml declares
NO_DBT_UTILS_EQUIVALENT = {"row_count_between", "finite_or_null", "declared_corpus"}
# dbt's own generic tests (the project may override them: tests/generic/builtin_overrides.sql)
BUILTIN_TESTS = {"not_null", "unique", "accepted_values", "relationships"}


def _yaml_files(under: Path) -> list[Path]:
    return sorted(p for p in under.rglob("*.yml"))


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text()) or {}


def _models() -> dict[str, dict]:
    """Every model entry of the YAML files under models/, by name."""
    out = {}
    for path in _yaml_files(MODELS):
        for entry in _load(path).get("models") or []:
            out[entry["name"]] = entry
    return out


def _mart_files() -> dict[str, Path]:
    return {p.stem: p for p in (MODELS / "marts").rglob("mart_*.*") if p.suffix in {".sql", ".py"}}


def _test_names(tests) -> list[str]:
    """The names of the generic tests in a `data_tests:` list (`not_null` or `{name: {...}}`)."""
    names = []
    for t in tests or []:
        names.append(t if isinstance(t, str) else next(iter(t)))
    return names


# ---------------------------------------------------------------------------------------------- exposures


def _pages() -> dict[str, Path]:
    """url_path -> page file, from the st.Page calls of dashboards/app.py."""
    pages = {}
    for node in ast.walk(ast.parse(APP.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            kw = {k.arg: k.value for k in node.keywords}
            assert node.args and isinstance(node.args[0], ast.Constant), ast.dump(node)
            assert "url_path" in kw and isinstance(kw["url_path"], ast.Constant), (
                f"{node.args[0].value}: give the page a url_path (its exposure is keyed by it)"
            )
            pages[kw["url_path"].value] = PAGES_DIR / node.args[0].value
    return pages


def _exposures() -> list[dict]:
    out = []
    for path in _yaml_files(MODELS):
        out += _load(path).get("exposures") or []
    return out


def marts_read(source: str, marts: set[str]) -> set[str]:
    """The marts a page reads: the mart names that reach a call of the dashboard's `data` module
    (`data.table("mart_x")`, `data.rows(NAME, ...)` with `NAME = "mart_x"` at module level, or a module-level
    loop over such names). A name the page builds at run time (an f-string, a concatenation) cannot be
    followed: then every mart name the page's source mentions counts as read."""
    tree = ast.parse(source)
    constants: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants.setdefault(target.id, set()).add(node.value.value)
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, (ast.Tuple, ast.List))
        ):
            constants.setdefault(node.target.id, set()).update(
                e.value for e in node.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    read, followed = set(), True
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "data"
        ):
            continue
        # the table's name is the first argument of every reader (table, rows, page_table, missing)
        for arg in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "name")]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                read.add(arg.value)
            elif isinstance(arg, ast.Name):
                if arg.id in constants:
                    read |= constants[arg.id]
                elif arg.id[:1].islower():  # a local variable: a name computed at run time
                    followed = False
            elif isinstance(arg, (ast.JoinedStr, ast.BinOp)):
                followed = False
    if not followed:
        return {m for m in re.findall(r"\bmart_[a-z0-9_]+", source) if m in marts}
    return read & marts


def shell_marts(app: Path, marts: set[str]) -> set[str]:
    """The marts the app shell reads under every page: those `app` itself passes to `data`, and those of the
    dashboard's own modules it imports (a module beside it: citations.py, each page's "How to cite")."""
    source = app.read_text()
    read = marts_read(source, marts)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            module = app.parent / f"{name}.py"
            if module.exists():
                read |= marts_read(module.read_text(), marts)
    return read


def test_every_page_has_an_exposure_listing_the_marts_it_reads():
    pages = _pages()
    assert {"home", "perplexity", "sql"} <= set(pages), pages
    marts = set(_mart_files())
    shell = shell_marts(APP, marts)
    by_path = {}
    for e in _exposures():
        assert e.get("type") == "dashboard", e["name"]
        assert e.get("owner", {}).get("name") or e.get("owner", {}).get("email"), f"{e['name']}: no owner"
        assert (e.get("description") or "").strip(), f"{e['name']}: no description"
        url_path = (e.get("meta") or {}).get("url_path")
        assert url_path not in by_path, f"two exposures for the page {url_path}"
        assert e.get("url") == f"/{url_path}", f"{e['name']}: url {e.get('url')!r}, the page's path is /{url_path}"
        by_path[url_path] = e
    assert set(by_path) == set(pages), (
        f"pages without an exposure: {sorted(set(pages) - set(by_path))}; "
        f"exposures of no page: {sorted(set(by_path) - set(pages))}"
    )
    for url_path, page in pages.items():
        e = by_path[url_path]
        assert e["meta"].get("page") == str(page.relative_to(PAGES_DIR.parent)), e["name"]
        refs = [re.fullmatch(r"ref\(\s*['\"](\w+)['\"]\s*\)", d) for d in e.get("depends_on") or []]
        assert all(refs), f"{e['name']}: depends_on takes ref('mart_...') entries: {e.get('depends_on')}"
        listed = [r.group(1) for r in refs]
        assert len(listed) == len(set(listed)), f"{e['name']}: a mart listed twice"
        expected = marts if url_path in PAGES_READING_EVERY_MART else marts_read(page.read_text(), marts) | shell
        assert set(listed) == expected, (
            f"{e['name']} ({page.name}): listed but not read {sorted(set(listed) - expected)}, "
            f"read but not listed {sorted(expected - set(listed))}"
        )


def test_marts_read_follows_constants_and_falls_back_on_built_names():
    marts = {"mart_a", "mart_b", "mart_c"}
    page = '"""Reads mart_c (a docstring)."""\nA = "mart_a"\nUNUSED = "mart_c"\ndf = data.table(A)\ndata.rows("mart_b", where={})\n'
    assert marts_read(page, marts) == {"mart_a", "mart_b"}
    built = 'kind = "a"\ndf = data.table(f"mart_{kind}")\nx = "mart_b"\n'
    assert marts_read(built, marts) == {"mart_b"}
    hint = 'A = "mart_a"\ndf = data.page_table(A, f"{A} is empty")\n'
    assert marts_read(hint, marts) == {"mart_a"}


def test_shell_marts_follow_the_dashboard_modules_app_imports(tmp_path):
    (tmp_path / "app.py").write_text(
        "import streamlit as st\nimport citations\n\npage = st.navigation([])\n"
        "page.run()\ncitations.show(page.url_path)\n"
    )
    (tmp_path / "citations.py").write_text('import data\n\nMART = "mart_a"\n\n\ndef show(p):\n    data.table(MART)\n')
    (tmp_path / "helpers.py").write_text('import data\n\ndata.table("mart_b")\n')  # not imported by app.py
    assert shell_marts(tmp_path / "app.py", {"mart_a", "mart_b", "mart_c"}) == {"mart_a"}


# ---------------------------------------------------------------------------------------------- contracts


def test_every_sql_mart_has_an_enforced_contract():
    models = _models()
    for name, path in sorted(_mart_files().items()):
        entry = models.get(name)
        assert entry is not None, f"{name}: not documented in a YAML file"
        contract = (entry.get("config") or {}).get("contract") or {}
        if path.suffix == ".py":  # dbt enforces no contract on a Python model
            assert not contract.get("enforced"), f"{name}: dbt does not support contracts on Python models"
            continue
        assert contract.get("enforced") is True, f"{name}: add `config: {{contract: {{enforced: true}}}}`"
        assert not re.search(r"config\([^)]*contract", path.read_text(), re.S), (
            f"{name}: the contract is configured in the YAML, not in the SQL's config()"
        )
        columns = entry.get("columns") or []
        assert columns, f"{name}: no columns"
        untyped = [c["name"] for c in columns if not c.get("data_type")]
        assert not untyped, f"{name}: columns without data_type: {untyped}"


def test_every_mart_checks_that_its_floats_are_finite_or_null():
    """not_null passes NaN, so a mart column gone NaN (ln of a negative) passed every test. Every mart
    carries the generic test finite_or_null (tests/generic/finite_or_null.sql); a column it lets through is
    named in `allow` with the reason, in words."""
    models = _models()
    missing, unexplained = [], []
    for name in sorted(_mart_files()):
        tests = (models.get(name) or {}).get("data_tests") or []
        found = [t for t in tests if (t if isinstance(t, str) else next(iter(t))) == "finite_or_null"]
        if not found:
            missing.append(name)
        for t in found:
            allow = (
                ((t.get("finite_or_null") or {}).get("arguments") or {}).get("allow", {}) if isinstance(t, dict) else {}
            )
            unexplained += [f"{name}.{c}" for c, why in allow.items() if len(str(why).split()) < 3]
    assert not missing, f"marts without the finite_or_null test: {missing}"
    assert not unexplained, f"finite_or_null allows these without a reason: {unexplained}"


# ---------------------------------------------------------------------------------------------- staging and sources


def test_every_staging_model_has_a_column_test():
    models = _models()
    for path in sorted((MODELS / "staging").rglob("stg_*.sql")):
        entry = models.get(path.stem)
        assert entry is not None, f"{path.stem}: not documented in a YAML file"
        column_tests = [t for c in entry.get("columns") or [] for t in _test_names(c.get("data_tests"))]
        assert column_tests, f"{path.stem}: no column test (not_null / unique / accepted_values / relationships)"


def test_every_source_table_has_a_test():
    tables = 0
    for path in sorted((MODELS / "staging").rglob("_*__sources.yml")):
        for source in _load(path).get("sources") or []:
            for table in source.get("tables") or []:
                tables += 1
                tests = _test_names(table.get("data_tests")) + [
                    t for c in table.get("columns") or [] for t in _test_names(c.get("data_tests"))
                ]
                assert tests, f"{path.name}: source {source['name']}.{table['name']} has no test"
    assert tables > 0


# ---------------------------------------------------------------------------------------------- generic tests


def _defined_tests() -> dict[str, tuple[Path, set[str]]]:
    """The project's generic tests: name -> (file, argument names other than model/column_name)."""
    out = {}
    for path in sorted([*(DBT_PROJECT_DIR / "tests").rglob("*.sql"), *(DBT_PROJECT_DIR / "macros").rglob("*.sql")]):
        for name, args in re.findall(r"\{%-?\s*test\s+(\w+)\s*\(([^)]*)\)", path.read_text()):
            names = {a.split("=")[0].strip() for a in args.split(",") if a.strip()}
            out[name] = (path, names - {"model", "column_name"})
    return out


def _used_tests() -> set[str]:
    used = set()
    for path in [*_yaml_files(MODELS), *_yaml_files(DBT_PROJECT_DIR / "seeds")]:
        doc = _load(path)
        for kind in ("models", "seeds"):
            for entry in doc.get(kind) or []:
                used.update(_test_names(entry.get("data_tests")))
                for c in entry.get("columns") or []:
                    used.update(_test_names(c.get("data_tests")))
        for source in doc.get("sources") or []:
            for table in source.get("tables") or []:
                used.update(_test_names(table.get("data_tests")))
                for c in table.get("columns") or []:
                    used.update(_test_names(c.get("data_tests")))
    return used


def test_generic_tests_carry_dbt_utils_names():
    defined = _defined_tests()
    for name, (path, args) in defined.items():
        assert name not in RENAMED, f"{path.name}: {name} is dbt_utils's {RENAMED[name]}"
        if name in BUILTIN_TESTS:
            continue
        assert name in DBT_UTILS_TESTS or name in NO_DBT_UTILS_EQUIVALENT, (
            f"{path.name}: generic test {name}: use dbt_utils's name where it has the same test, or list it in "
            "NO_DBT_UTILS_EQUIVALENT"
        )
        if name in DBT_UTILS_TESTS:
            assert args <= DBT_UTILS_TESTS[name], (
                f"{path.name}: {name} takes {sorted(args - DBT_UTILS_TESTS[name])}, which dbt_utils's {name} does not"
            )
    used = _used_tests()
    assert not used & set(RENAMED), f"tests used under their old names: {sorted(used & set(RENAMED))}"
    unknown = used - set(defined) - BUILTIN_TESTS
    assert not unknown, (
        f"generic tests used but defined nowhere (the dbt_utils package is not installed): {sorted(unknown)}"
    )


@pytest.mark.parametrize(
    "name", sorted(DBT_UTILS_TESTS.keys() & {"accepted_range", "expression_is_true", "unique_combination_of_columns"})
)
def test_the_dbt_utils_tests_the_project_uses_are_its_own(name):
    assert name in _defined_tests(), f"{name} is used but no longer defined in dbt_project/tests/generic"


def test_no_data_test_only_warns():
    """72 data tests (70 schema tests and two singular ones: token spans against their documents, a
    run's corpus version against the corpus's) had severity warn, and the warnings were thrown away, so wrong
    data failed nothing. A data test is an error: it stops the build and the published snapshot stays as it
    was. (The conftest fixtures also assert that their builds return no warning.)"""
    found = []
    for path in sorted(DBT_PROJECT_DIR.rglob("*")):
        if path.suffix in (".yml", ".yaml", ".sql") and "target" not in path.parts:
            text = path.read_text(encoding="utf-8")
            if re.search(r"severity\s*[:=]\s*['\"]?warn", text, re.IGNORECASE):
                found.append(str(path.relative_to(DBT_PROJECT_DIR)))
    assert found == []
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    assert project["data_tests"]["predictabase"]["+severity"] == "error"
