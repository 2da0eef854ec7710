"""A shipped corpus is its declaration plus at most one adapter. In a copy of the checkout:

- MECO's twelfth language is declared in `ingest/corpora.toml` and nothing else changes: it has its ingest job, the
  commands' and the default model's corpus lists, the dbt project's declarations and the pages' name, and ingesting
  it loads its texts and reading times through the MECO adapter. (The twelfth language reads the English file under
  a new key: the mirror has no other language's file.)
- A corpus with an adapter of its own is its declaration plus that one module in `ingest/datasets/`: no registry
  list, dbt model or page changes, and its ingest job is found from the declaration. (Its adapter reads a file
  already in the catalog, Natural Stories' words, under a corpus of its own.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: what of the checkout the code reads (the code, the dbt project, the app, the default models.toml)
COPIED = ("ingest", "predictabase", "dbt_project", "dashboards", "models.toml")
DECLARATION = """
[meco_xx]
title = "MECO Twelfth"
language = "en"
texts = true
reading = ["eye_tracking"]
measures = ["first_fixation", "gaze_duration", "total_reading_time"]
cloze = false
game = false
collection = "meco"
adapter = "meco"
upstream = "en"

[meco_xx.exclusions.eye_tracking]
edges = "text"
"""
PROBE = """
import json
from predictabase.ingest import corpus_table
from predictabase.models_config import load_models_config
from predictabase.ingest.datasets import corpora, registry
from predictabase.ingest.scoring.steps import STEPS
from predictabase.warehouse.dbt import declarations
from predictabase.core import resources
decl = next(c for c in declarations()["corpora"] if c["key"] == "meco_xx")
print(json.dumps({
    "table": corpus_table.CORPORA["meco_xx"].title,
    "job": "meco_xx" in registry.NAMES and registry.JOBS["meco_xx"].writes == registry.JOBS["meco_en"].writes,
    "loader": corpora.adapter("meco_xx").__name__ == corpora.adapter("meco_en").__name__,
    "scored": "meco_xx" in corpus_table.SCORED,
    "default_model": "meco_xx" in load_models_config()[0].corpora,
    "score_step": "meco_xx" in STEPS["score"].corpora,
    "dbt": decl,
    "exclusions": [e for e in declarations()["exclusions"] if e["corpus"] == "meco_xx"],
    "project": str(resources.project_root()),
}))
"""


def _files(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _run(copy: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    env["PYTHONPATH"] = str(copy)  # this copy's predictabase, before the checkout's editable install
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _copy_checkout(tmp_path: Path) -> Path:
    """What of the checkout the code reads (COPIED), copied to tmp_path/checkout."""
    copy = tmp_path / "checkout"
    skip = shutil.ignore_patterns("__pycache__", "target", "logs", "dbt_packages", "sqlfluff_libs")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, copy / name, ignore=skip)
        else:
            shutil.copy2(src, copy / name)
    return copy


def test_meco_s_twelfth_language_is_one_declaration(tmp_path, mirror):
    copy = _copy_checkout(tmp_path)
    before = _files(copy)
    toml = copy / "ingest" / "corpora.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + DECLARATION, encoding="utf-8")
    after = _files(copy)
    assert [p for p in after if after[p] != before.get(p)] == [Path("ingest/corpora.toml")]  # the whole diff

    probe = _run(copy, "-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout)
    assert got["project"] == str(copy)  # the copy's code and dbt project, not the checkout's
    assert got["table"] == "MECO Twelfth"
    assert got["job"] and got["loader"] and got["scored"] and got["score_step"] and got["default_model"]
    assert got["dbt"]["title"] == "MECO Twelfth" and got["dbt"]["reading"] == ["eye_tracking"]
    assert got["dbt"]["measures"] == ["first_fixation", "gaze_duration", "total_reading_time"]
    assert [e["edges"] for e in got["exclusions"]] == ["text"]

    # ingested through the MECO adapter: the same texts, words and reading times as the file's own language
    wh = tmp_path / "warehouse"
    fetched = _run(copy, "-m", "predictabase", "fetch", "--dataset", "wilcox_xlang", "--mirror", str(mirror),
                   "--warehouse", str(wh))  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    ingested = _run(copy, "-m", "predictabase", "ingest", "meco_en", "meco_xx", "--warehouse", str(wh), "--json")
    assert ingested.returncode == 0, ingested.stderr
    jobs = json.loads(ingested.stdout)["jobs"]
    assert jobs["meco_xx"] == jobs["meco_en"] > 0
    counted = _run(
        copy,
        "-c",
        "import duckdb, json, sys; c = duckdb.connect(sys.argv[1], read_only=True); print(json.dumps(c.sql("
        "'select corpus, count(*) from raw.reading_times group by 1 order by 1').fetchall()))",
        str(wh / "predictabase.duckdb"),
    )
    assert counted.returncode == 0, counted.stderr
    rows = dict(json.loads(counted.stdout))
    assert rows["meco_xx"] == rows["meco_en"] > 6000  # three measures of ~2,100 words


ADAPTER = '''"""Toy Stories: Natural Stories' words under a corpus of its own (a new shipped corpus's adapter, in a test)."""

import polars as pl

from predictabase.ingest.datasets import natural_stories
from predictabase.ingest.datasets._common import TEXTS_WRITES, CorpusLoad, Job, paths_only, write_partitions

CORPUS = "toy_stories"


def load(paths):
    theirs = natural_stories.load(paths)
    tables = [(t, f.with_columns(corpus=pl.lit(CORPUS)), {"corpus": CORPUS}) for t, f, _ in theirs.tables]
    return CorpusLoad(CORPUS, tables, theirs.notes)


def jobs(_corpora):
    return [Job(CORPUS, paths_only(load), write_partitions, writes=TEXTS_WRITES)]
'''
NEW_CORPUS = """
[toy_stories]
title = "Toy Stories"
language = "en"
texts = true
reading = []
cloze = false
game = false
"""
NEW_PROBE = """
import json
from predictabase.ingest import corpus_table
from predictabase.models_config import load_models_config
from predictabase.ingest.datasets import corpora, registry
from predictabase.ingest.scoring.steps import STEPS
from predictabase.warehouse.dbt import declarations
print(json.dumps({
    "adapter": corpora.adapter("toy_stories").__name__,
    "writes": list(registry.JOBS["toy_stories"].writes),
    "corpus_job": "toy_stories" in registry.CORPUS_NAMES,
    "default_model": "toy_stories" in load_models_config()[0].corpora,
    "score_step": "toy_stories" in STEPS["score"].corpora,
    "dbt": [c["title"] for c in declarations()["corpora"] if c["key"] == "toy_stories"],
}))
"""


def test_a_corpus_with_an_adapter_of_its_own_is_its_declaration_and_that_module(tmp_path, mirror):
    copy = _copy_checkout(tmp_path)
    before = _files(copy)
    toml = copy / "ingest" / "corpora.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + NEW_CORPUS, encoding="utf-8")
    (copy / "ingest" / "datasets" / "toy_stories.py").write_text(ADAPTER, encoding="utf-8")
    after = _files(copy)
    changed = sorted(str(p) for p in after if after[p] != before.get(p))
    assert changed == ["ingest/corpora.toml", "ingest/datasets/toy_stories.py"]  # the whole diff

    probe = _run(copy, "-c", NEW_PROBE)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout)
    assert got == {
        "adapter": "predictabase.ingest.datasets.toy_stories",
        "writes": ["raw.documents", "raw.words"],
        "corpus_job": True,
        "default_model": True,
        "score_step": True,
        "dbt": ["Toy Stories"],
    }

    wh = tmp_path / "warehouse"
    fetched = _run(copy, "-m", "predictabase", "fetch", "--dataset", "natural_stories", "--mirror", str(mirror),
                   "--warehouse", str(wh))  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    ingested = _run(copy, "-m", "predictabase", "ingest", "natural_stories", "toy_stories", "--warehouse", str(wh),
                    "--json")  # fmt: skip
    assert ingested.returncode == 0, ingested.stderr
    jobs = json.loads(ingested.stdout)["jobs"]
    assert jobs["toy_stories"] == jobs["natural_stories"] == 10266  # 10 stories, 10,256 words
