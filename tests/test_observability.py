"""Observability: every list of marts comes from dbt, the snapshot describes its marts
and columns from dbt's manifest, source freshness is checked by dbt and recorded without ever blocking a
publish, and the home page shows the latest runs, the freshness and every mart.

The list and manifest checks read the session's `real_warehouse` (built by `dbt build` + publish); the
freshness checks change a copy of it."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
import yaml

from predictabase.core.config import paths as make_paths
from predictabase.warehouse import SNAPSHOT_META, publish
from predictabase.warehouse.build import build_and_publish
from predictabase.warehouse.freshness import source_freshness
from predictabase.warehouse.publish import published_tables

ROOT = Path(__file__).resolve().parent.parent
DASHBOARDS = ROOT / "dashboards"


def snapshot_rows(marts: Path, sql: str) -> list[tuple]:
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{marts}' AS s (READ_ONLY)")
        con.execute("USE s")
        return con.execute(sql).fetchall()


def manifest_marts(warehouse: Path) -> dict[str, dict]:
    """The mart models of dbt's manifest, read here without the code under test."""
    manifest = json.loads((warehouse / "dbt" / "target" / "manifest.json").read_text())
    return {
        n["alias"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model" and n["schema"] == "marts"
    }


def _text(value: str | None) -> str | None:
    return (value or "").strip() or None


def test_mart_lists_are_dbt_graph(real_warehouse):
    """mart_warehouse_tables' marts == the snapshot's marts (snapshot_marts, the published tables) ==
    the manifest's models in schema marts; every mart's row count is its table's."""
    manifest = set(manifest_marts(real_warehouse.warehouse))
    assert len(manifest) >= 25 and "mart_warehouse_tables" in manifest
    inventory = dict(
        snapshot_rows(real_warehouse.marts, "SELECT table_name, n_rows FROM mart_warehouse_tables WHERE layer = 'mart'")
    )
    listed = {r[0] for r in snapshot_rows(real_warehouse.marts, "SELECT mart FROM snapshot_marts")}
    published = set(published_tables(real_warehouse.marts))
    assert set(inventory) == listed == published == manifest
    assert not published & SNAPSHOT_META
    for mart in sorted(manifest - {"mart_warehouse_tables"}):  # counted after the run built them (on-run-end)
        [(n,)] = snapshot_rows(real_warehouse.marts, f'SELECT count(*) FROM "{mart}"')
        assert inventory[mart] == n, mart
    [(own,)] = snapshot_rows(real_warehouse.marts, "SELECT count(*) FROM mart_warehouse_tables")
    assert inventory["mart_warehouse_tables"] == own
    # the raw layer: every source declared in schema raw, present or not
    manifest_json = json.loads((real_warehouse.warehouse / "dbt" / "target" / "manifest.json").read_text())
    declared = {f"raw.{s['identifier']}" for s in manifest_json["sources"].values() if s["schema"] == "raw"}
    raw = {
        r[0]
        for r in snapshot_rows(real_warehouse.marts, "SELECT table_name FROM mart_warehouse_tables WHERE layer = 'raw'")
    }
    assert declared <= raw and "raw.source_files" in declared and "raw.wild_scores" in declared


def test_snapshot_describes_marts_and_columns_from_the_manifest(real_warehouse):
    manifest = manifest_marts(real_warehouse.warehouse)
    marts = {
        r[0]: r[1:]
        for r in snapshot_rows(real_warehouse.marts, "SELECT mart, description, domain, n_columns FROM snapshot_marts")
    }
    columns: dict[str, list[tuple]] = {}
    for mart, name, dtype, desc, ordinal in snapshot_rows(
        real_warehouse.marts,
        "SELECT mart, column_name, data_type, description, ordinal FROM snapshot_columns ORDER BY mart, ordinal",
    ):
        columns.setdefault(mart, []).append((name, dtype, desc, ordinal))
    assert set(marts) == set(manifest) == set(columns)
    for mart, node in manifest.items():
        described = snapshot_rows(real_warehouse.marts, f'DESCRIBE "{mart}"')
        assert marts[mart] == (_text(node["description"]), node["fqn"][2], len(described)), mart
        docs = {c: _text(v.get("description")) for c, v in node["columns"].items()}
        assert columns[mart] == [(d[0], d[1], docs.get(d[0]), i) for i, d in enumerate(described, 1)], mart
    # most columns are documented: their descriptions reach the snapshot
    assert sum(c[2] is not None for cols in columns.values() for c in cols) > 0.9 * sum(map(len, columns.values()))


def test_a_yaml_description_reaches_the_snapshot(real_warehouse):
    """mart_sources as its YAML describes it (read with PyYAML, not through dbt)."""
    doc = yaml.safe_load((ROOT / "dbt_project/models/marts/core/_core__models.yml").read_text())
    [model] = [m for m in doc["models"] if m["name"] == "mart_sources"]
    assert model["description"].startswith("One row per dataset of the source catalog")
    [(desc, domain)] = snapshot_rows(
        real_warehouse.marts, "SELECT description, domain FROM snapshot_marts WHERE mart = 'mart_sources'"
    )
    assert (desc, domain) == (model["description"], "core")
    col = {c["name"]: c["description"] for c in model["columns"]}
    got = dict(
        snapshot_rows(
            real_warehouse.marts, "SELECT column_name, description FROM snapshot_columns WHERE mart = 'mart_sources'"
        )
    )
    assert got["dataset"] == col["dataset"] == "catalog dataset"
    assert got == {k: col[k] for k in got}


@pytest.fixture(scope="module")
def scratch(real_warehouse, tmp_path_factory):
    """A copy of the real warehouse this module may change."""
    p = make_paths(tmp_path_factory.mktemp("observability") / "warehouse")
    shutil.copytree(real_warehouse.warehouse, p.warehouse)
    return p


def _freshness(p) -> list[tuple]:
    return snapshot_rows(
        p.marts,
        "SELECT source_name, table_name, loaded_at_field, max_loaded_at, status, "
        "warn_after, error_after, age_s, snapshotted_at, error FROM source_freshness",
    )


def _snapshot_id(p) -> str:
    return snapshot_rows(p.marts, "SELECT snapshot_id FROM snapshot_info")[0][0]


def test_source_freshness_checked_by_dbt_and_published(scratch):
    rows = source_freshness(scratch)
    assert [(r["source_name"], r["table_name"], r["status"]) for r in rows] == [("raw", "source_files", "pass")]
    publish(scratch)
    [(source, table, field, max_loaded, status, warn, error, age, checked, err)] = _freshness(scratch)
    with duckdb.connect(str(scratch.duckdb), read_only=True) as con:
        [(fetched,)] = con.execute("SELECT max(fetched_at) FROM raw.source_files").fetchall()
    assert (source, table, field, status, warn, error, err) == (
        "raw",
        "source_files",
        "fetched_at",
        "pass",
        "90 days",
        "365 days",
        None,
    )
    assert max_loaded == fetched
    assert abs(age - (checked - fetched).total_seconds()) < 1


def test_a_stale_source_warns_errs_and_still_publishes(scratch):
    """fetched_at set back: 100 days is `warn`, 400 days `error` (dbt's thresholds, as declared); neither
    stops `build_and_publish` from publishing a new snapshot that records it."""
    with duckdb.connect(str(scratch.duckdb)) as con:
        con.execute("UPDATE raw.source_files SET fetched_at = now() - INTERVAL 100 DAY")
    assert [r["status"] for r in source_freshness(scratch)] == ["warn"]
    with duckdb.connect(str(scratch.duckdb)) as con:
        con.execute("UPDATE raw.source_files SET fetched_at = now() - INTERVAL 400 DAY")
        [(fetched,)] = con.execute("SELECT max(fetched_at) FROM raw.source_files").fetchall()
    before = _snapshot_id(scratch)
    build_and_publish(scratch, select="mart_sources")
    assert _snapshot_id(scratch) != before  # published despite the error status
    [row] = _freshness(scratch)
    assert row[4] == "error" and row[3] == fetched and row[7] > 399 * 86400
    [(last,)] = snapshot_rows(scratch.marts, "SELECT max(last_fetched_at) FROM mart_sources")
    assert last == fetched


def test_a_failed_freshness_check_is_recorded_not_raised(scratch):
    """The source table gone: dbt cannot query it; the check records a runtime error and returns."""
    with duckdb.connect(str(scratch.duckdb)) as con:
        con.execute("ALTER TABLE raw.source_files RENAME TO source_files_away")
    try:
        [row] = source_freshness(scratch)
    finally:
        with duckdb.connect(str(scratch.duckdb)) as con:
            con.execute("ALTER TABLE raw.source_files_away RENAME TO source_files")
    assert (row["source_name"], row["table_name"], row["status"]) == ("raw", "source_files", "runtime error")
    assert "source_files" in row["error"]


def _write_marts(p, n: int) -> None:
    p.warehouse.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(p.duckdb)) as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS marts")
        con.execute("CREATE OR REPLACE TABLE marts.mart_models AS SELECT range AS i FROM range(?)", [n])


def test_publish_guard_ignores_the_metadata_tables(tmp_paths):
    """A snapshot whose source_freshness had a row may be followed by one without: metadata tables are
    not marts (not listed, not guarded); without a manifest the marts are still described, without text."""
    _write_marts(tmp_paths, 2)
    record = tmp_paths.warehouse / "dbt" / "source_freshness.json"
    record.parent.mkdir(parents=True)
    now = datetime.now(UTC)
    record.write_text(
        json.dumps(
            {
                "rows": [
                    {
                        "source_name": "raw",
                        "table_name": "source_files",
                        "loaded_at_field": "fetched_at",
                        "max_loaded_at": (now - timedelta(hours=1)).isoformat(),
                        "snapshotted_at": now.isoformat(),
                        "age_s": 3600.0,
                        "status": "pass",
                        "warn_after": "90 days",
                        "error_after": "365 days",
                        "error": None,
                    }
                ]
            }
        )
    )
    publish(tmp_paths)
    assert snapshot_rows(tmp_paths.marts, "SELECT status, age_s FROM source_freshness") == [("pass", 3600.0)]
    assert snapshot_rows(tmp_paths.marts, "SELECT * FROM snapshot_marts") == [("mart_models", None, None, 1)]
    assert snapshot_rows(tmp_paths.marts, "SELECT mart, column_name, data_type, ordinal FROM snapshot_columns") == [
        ("mart_models", "i", "BIGINT", 1)
    ]
    assert published_tables(tmp_paths.marts) == ["mart_models"]
    record.unlink()
    publish(tmp_paths)  # source_freshness emptied: not a mart, not refused
    assert snapshot_rows(tmp_paths.marts, "SELECT count(*) FROM source_freshness") == [(0,)]
    tables = {
        r[0]
        for r in snapshot_rows(
            tmp_paths.marts, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        )
    }
    assert tables == {"mart_models"} | SNAPSHOT_META


def test_dashboard_marts_come_from_the_snapshot(tmp_paths, monkeypatch):
    """dashboards/data.py lists no mart by hand: it reads snapshot_marts, or an old snapshot's tables."""
    _write_marts(tmp_paths, 1)
    publish(tmp_paths)
    monkeypatch.setenv("PREDICTABASE_WAREHOUSE", str(tmp_paths.warehouse))
    monkeypatch.syspath_prepend(str(DASHBOARDS))
    sys.modules.pop("data", None)
    import data

    assert not hasattr(data, "MARTS")
    assert data.marts() == ["mart_models"]
    assert len(data.table("mart_models")) == 1 and data.table("mart_nonexistent") is None
    assert len(data.table("snapshot_marts")) == 1
    with duckdb.connect(str(tmp_paths.marts)) as con:  # a snapshot from before snapshot_marts
        con.execute("DROP TABLE snapshot_marts")
        con.execute("UPDATE snapshot_info SET snapshot_id = 'older'")
    assert data.marts() == ["mart_models"]
    sys.modules.pop("data", None)
