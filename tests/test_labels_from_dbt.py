"""The pages' column headers, number formats and hover help come from one place, dbt's YAML: each mart column the
pages show carries its reader's label and format as column meta (`config: {meta: {label, format}}`), publish copies
them with the descriptions into the snapshot's `snapshot_columns`, and dashboards/labels.py reads them from there.

* the YAML: one label per column name in every mart that has the column (no dbt run; well under a second);
* the session's real warehouse (conftest.real_warehouse): its manifest carries the YAML's meta, its snapshot the
  labels, and `labels.column_config` on each mart's own frame shows the YAML's label and format, with the mart's
  description as help; its dbt build logged no deprecation;
* every page that shows a table, run with AppTest on that snapshot: no column's help is a column name, no header
  a variable name;
* a snapshot from before the labels (or the descriptions) still shows every column, its name in words.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.dashboard_fixtures import dbt_column_meta

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "dashboards" / "app_pages"
# the pages that draw tables (the games draw none; the SQL page's result grid shows the query's own columns)
TABLE_PAGES = (
    "home",
    "perplexity",
    "human_perplexity",
    "languages",
    "next_word",
    "reading_times",
    "scoreboard",
    "top1",
    "wild",
    "word_surprisal",
)
NUMERIC = re.compile(r"^(bigint|double|integer|int|float|real|decimal|hugeint|smallint|tinyint|ubigint)", re.IGNORECASE)


@pytest.fixture
def labels_module(monkeypatch):
    """dashboards/labels.py, fresh (its caches empty), reading the snapshot PREDICTABASE_WAREHOUSE names."""
    import streamlit as st

    st.cache_data.clear()
    monkeypatch.syspath_prepend(str(ROOT / "dashboards"))
    for name in ("data", "labels"):
        sys.modules.pop(name, None)
    import labels

    return labels


def _yaml_columns() -> dict[str, dict[str, dict]]:
    """column name -> {mart: its meta and description} over every mart of dbt's YAML."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for (mart, col), meta in dbt_column_meta().items():
        if mart.startswith("mart_"):
            out[col][mart] = meta
    return out


def test_a_column_name_has_one_label_in_every_mart():
    import yaml

    columns = _yaml_columns()
    labelled = {col: marts for col, marts in columns.items() if any(m["label"] for m in marts.values())}
    for col, marts in sorted(labelled.items()):
        assert {mart: m["label"] for mart, m in marts.items()} == {
            mart: marts[min(marts)]["label"] for mart in marts
        }, col  # every mart that has the column labels it, and alike
        formats = {m["format"] for m in marts.values() if m["format"]}
        assert len(formats) <= 1, (col, formats)
    # what the pages show: the perplexity, sources, models, scoreboard, word and cloze columns among them
    assert len(labelled) >= 130 and sum(map(len, labelled.values())) >= 330
    assert columns["bits_per_byte"]["mart_model_perplexity"]["label"] == "bits per byte (bits/byte)"
    assert columns["bits_per_byte"]["mart_model_perplexity"]["format"] == "%.3f"
    assert {m["label"] for m in columns["corpus"].values()} == {"corpus"} and len(columns["corpus"]) >= 30
    # dbt 1.10+ reads a column's meta under `config` (a top-level `meta:` is the deprecated place)
    for path in sorted((ROOT / "dbt_project" / "models").rglob("*.yml")):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models") or []:
            assert not [c["name"] for c in model.get("columns") or [] if "meta" in c], (path.name, model["name"])


def _manifest_meta(paths) -> dict[tuple[str, str], dict]:
    nodes = json.loads((paths.warehouse / "dbt" / "target" / "manifest.json").read_text())["nodes"]
    return {
        (n["name"], c): (v.get("config") or {}).get("meta") or {}
        for n in nodes.values()
        if n["resource_type"] == "model" and n["schema"] == "marts"
        for c, v in n["columns"].items()
    }


def test_the_build_carries_the_labels_to_the_snapshot(real_warehouse):
    yaml_meta = {k: v for k, v in dbt_column_meta().items() if v["label"]}
    manifest = {k: v for k, v in _manifest_meta(real_warehouse).items() if v.get("label")}
    assert {k: (v["label"], v["format"]) for k, v in yaml_meta.items()} == {
        k: (v["label"], v.get("format")) for k, v in manifest.items()
    }
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        rows = con.execute(
            "SELECT mart, column_name, label, format FROM snapshot_columns WHERE label IS NOT NULL"
        ).fetchall()
    # every labelled column of every published mart (a mart the build publishes is in the manifest)
    assert {(m, c): (lab, fmt) for m, c, lab, fmt in rows} == {
        k: (v["label"], v.get("format")) for k, v in manifest.items()
    }
    assert len(rows) >= 330
    # dbt's deprecation warnings go to its log (its console is silenced): the YAML has none to give
    log = (real_warehouse.warehouse / "dbt" / "logs" / "dbt.log").read_text(errors="replace")
    assert "Running with dbt=" in log and not re.search(r"[Dd]eprecat", log)


def test_a_page_shows_the_yaml_label_format_and_description(real_warehouse, labels_module, monkeypatch):
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(real_warehouse.marts))
    labels = labels_module
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        described = con.execute(
            "SELECT mart, column_name, data_type, description, label, format "
            "FROM snapshot_columns WHERE label IS NOT NULL ORDER BY mart, ordinal"
        ).fetchall()
        marts = sorted({r[0] for r in described})
        frames = {m: con.execute(f'SELECT * FROM "{m}" LIMIT 1').fetchdf() for m in marts}
        elsewhere = defaultdict(set)  # column -> the descriptions marts give it
        for col, description in con.execute(
            "SELECT column_name, description FROM snapshot_columns WHERE description IS NOT NULL"
        ).fetchall():
            elsewhere[col].add(description)
    checked = 0
    for mart in marts:
        config = labels.column_config(frames[mart], mart)
        for m, col, dtype, description, label, fmt in described:
            if m != mart:
                continue
            cfg = config[col]
            assert cfg["label"] == label, (mart, col)
            # that mart's description of it, in dbt's words; where it gives none, another mart's
            assert cfg.get("help") == description if description else cfg.get("help") in elsewhere[col] | {None}, (
                mart,
                col,
            )
            if fmt and NUMERIC.match(dtype) and not pd.api.types.is_bool_dtype(frames[mart][col]):
                assert cfg["type_config"]["format"] == fmt, (mart, col)
            assert labels.header(col) == label and labels.COLUMNS[col] == (label, fmt or labels.number_format(col))
            checked += 1
    assert checked == len(described) >= 330
    # the perplexity page's axis titles are the headers
    assert labels.metric_title("bits_per_byte") == "Bits per byte (bits/byte)"
    # the runs log is no mart: its own headers and help, though a mart names a column alike
    run = labels.column("run_id", labels.RUNS_LOG)
    assert run.label == "run" and run.help == labels.OTHER_COLUMNS["run_id"].help
    assert labels.column("run_id", "mart_models").help != run.help


def _column_configs(at) -> list[tuple[str, str, dict]]:
    """(grid key or index, column, its configuration) of every dataframe the page drew."""
    out = []
    for i, df in enumerate(at.dataframe):
        config = json.loads(df.proto.columns or "{}")
        for col, cfg in config.items():
            out.append((str(i), col, cfg))
    return out


def test_no_page_shows_a_variable_name_as_help_or_header(real_warehouse, labels_module, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(real_warehouse.marts))
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        names = {r[0] for r in con.execute("SELECT DISTINCT column_name FROM snapshot_columns").fetchall()}
    seen, helped = 0, 0
    for page in TABLE_PAGES:
        at = AppTest.from_file(str(PAGES / f"{page}.py"), default_timeout=180).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        for grid, col, cfg in _column_configs(at):
            seen += 1
            help_ = cfg.get("help")
            if help_:
                helped += 1
                assert help_.strip("` ") != col and help_.strip("` ") not in names, (page, grid, col, help_)
            label = cfg.get("label")
            if label:
                assert label not in names or " " in label or "_" not in label, (page, grid, col, label)
                assert not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", label), (page, grid, col, label)
    assert seen >= 50 and helped >= 30, (seen, helped)


def _snapshot(path: Path, with_columns: str | None) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE mart_model_perplexity (bits_per_byte DOUBLE, model_key VARCHAR)")
        con.execute("INSERT INTO mart_model_perplexity VALUES (1.25, 'gpt2')")
        con.execute("CREATE TABLE snapshot_info AS SELECT 'old' AS snapshot_id")
        if with_columns == "descriptions":  # a snapshot from before the labels
            con.execute(
                "CREATE TABLE snapshot_columns AS SELECT * FROM (VALUES "
                "('mart_model_perplexity', 'bits_per_byte', 'DOUBLE', 'bits per UTF-8 byte of the text', 1), "
                "('mart_model_perplexity', 'model_key', 'VARCHAR', NULL, 2)) "
                "t(mart, column_name, data_type, description, ordinal)"
            )
    return path


@pytest.mark.parametrize("with_columns", [None, "descriptions"])
def test_an_old_snapshot_shows_column_names_in_words(tmp_path, labels_module, monkeypatch, with_columns):
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(_snapshot(tmp_path / "marts.duckdb", with_columns)))
    labels = labels_module
    frame = pd.DataFrame({"bits_per_byte": [1.25], "model_key": ["gpt2"]})
    config = labels.column_config(frame, "mart_model_perplexity")
    assert config["bits_per_byte"]["label"] == "bits per byte" and config["model_key"]["label"] == "model key"
    assert config["bits_per_byte"].get("help") == ("bits per UTF-8 byte of the text" if with_columns else None)
    assert config["model_key"].get("help") is None
    assert "bits_per_byte" not in labels.COLUMNS and labels.COLUMNS["bits_per_byte"] == ("bits per byte", None)
    # the columns no mart has keep their headers in code
    assert labels.column("command", labels.RUNS_LOG).label == "command"
    assert labels.header("max_loaded_at", labels.FRESHNESS) == "last loaded at (UTC)"
