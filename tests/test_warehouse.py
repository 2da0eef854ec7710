"""predictabase.warehouse.publish: an atomic, read-only-friendly snapshot of the marts (no dbt needed)."""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.core.errors import BuildError
from predictabase.core.fsutil import sha256_of
from predictabase.ingest import corpus_table
from predictabase.warehouse import dbt_args, dbt_env, publish
from predictabase.warehouse.publish import SNAPSHOT_META


def write_marts(paths, value: int) -> None:
    paths.warehouse.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(paths.duckdb)) as con:
        con.execute("CREATE SCHEMA IF NOT EXISTS marts")
        con.execute("CREATE SCHEMA IF NOT EXISTS staging")
        con.execute("CREATE OR REPLACE TABLE marts.mart_build_info AS SELECT ? AS value", [value])
        con.execute("CREATE OR REPLACE TABLE marts.mart_models AS SELECT range AS i FROM range(?)", [value])
        con.execute("CREATE OR REPLACE TABLE staging.not_a_mart AS SELECT 1 AS x")


def test_publish_copies_marts_into_main(tmp_paths):
    write_marts(tmp_paths, 3)
    assert publish(tmp_paths) == tmp_paths.marts
    with duckdb.connect(str(tmp_paths.marts), read_only=True) as con:
        tables = {
            r[0]
            for r in con.execute("SELECT table_schema || '.' || table_name FROM information_schema.tables").fetchall()
        }
        assert tables == {"main.mart_build_info", "main.mart_models"} | {f"main.{t}" for t in SNAPSHOT_META}
        assert con.execute("SELECT count(*) FROM mart_models").fetchone() == (3,)
        assert con.execute("SELECT n_marts, allowed_shrink FROM snapshot_info").fetchone() == (2, False)
    assert not list(tmp_paths.warehouse.glob(".marts-*"))


def test_republish_is_atomic_for_open_readers(tmp_paths):
    write_marts(tmp_paths, 1)
    publish(tmp_paths)
    reader = duckdb.connect(str(tmp_paths.marts), read_only=True)
    try:
        write_marts(tmp_paths, 2)  # the working warehouse is writable while a reader holds the snapshot
        publish(tmp_paths)
        assert reader.execute("SELECT value FROM mart_build_info").fetchone() == (1,)  # old snapshot, intact
    finally:
        reader.close()
    with duckdb.connect(str(tmp_paths.marts), read_only=True) as con:
        assert con.execute("SELECT value FROM mart_build_info").fetchone() == (2,)


def test_publish_without_warehouse_or_marts_raises(tmp_paths):
    with pytest.raises(BuildError, match="no warehouse"):
        publish(tmp_paths)
    tmp_paths.warehouse.mkdir(parents=True)
    duckdb.connect(str(tmp_paths.duckdb)).close()
    with pytest.raises(BuildError, match="no tables in schema marts"):
        publish(tmp_paths)
    assert not tmp_paths.marts.exists()


def test_dbt_invocation_points_at_the_warehouse(tmp_paths):
    env = dbt_env(tmp_paths)
    assert env == {
        "PREDICTABASE_DUCKDB": str(tmp_paths.duckdb),
        "PREDICTABASE_TOKEN_SCORES": str(tmp_paths.token_scores),
        "PREDICTABASE_TOP1_PREDICTIONS": str(tmp_paths.top1_predictions),
        "PREDICTABASE_CLOZE_SCORES": str(tmp_paths.cloze_model_scores),
        "PREDICTABASE_WORD_ENTROPY": str(tmp_paths.word_entropy),
        "PREDICTABASE_TEMPERATURE_SCORES": str(tmp_paths.temperature_scores),
        # the shipped corpora and the reading measures (macros/declarations.sql)
        "PREDICTABASE_DECLARATIONS": env["PREDICTABASE_DECLARATIONS"],
    }
    decl = json.loads(env["PREDICTABASE_DECLARATIONS"])
    from predictabase.ingest.datasets import meco

    assert len(meco.corpora()) == 11
    assert [c["key"] for c in decl["corpora"]] == list(corpus_table.CORPORA)
    assert {c["key"]: c["measures"] for c in decl["corpora"]} == {
        "lm_game": [],
        "natural_stories": ["spr"],
        "provo": ["first_fixation", "gaze_duration", "go_past", "total_reading_time"],
        "ucl": ["spr", "first_fixation", "gaze_duration", "go_past", "total_reading_time"],
        # MECO's 11 languages: their declared measures (no go-past time)
        **{k: ["first_fixation", "gaze_duration", "total_reading_time"] for k in meco.corpora()},
    }
    assert [c["key"] for c in decl["corpora"] if c["game"]] == [corpus_table.GAME]
    assert "module_paths" not in (DBT_PROJECT_DIR / "profiles.yml").read_text()  # they import predictabase.stats
    args = dbt_args(tmp_paths, "build", "mart_models")
    assert args[0] == "build" and args[-2:] == ["--select", "mart_models"]
    assert str(tmp_paths.warehouse / "dbt" / "target") in args


def _snapshot_id(paths) -> str:
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{paths.marts}' AS s (READ_ONLY)")
        return con.execute("SELECT snapshot_id FROM s.snapshot_info").fetchone()[0]


def write_perplexity(paths, corpora: list[str], models: list[str]) -> None:
    with duckdb.connect(str(paths.duckdb)) as con:
        con.execute(
            "CREATE OR REPLACE TABLE marts.mart_model_perplexity AS "
            "SELECT m AS model_key, c AS corpus, 1.0 AS ppl FROM unnest(?) t(m), unnest(?) u(c)",
            [models, corpora],
        )


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda con: con.execute("DROP TABLE marts.mart_models"), "mart_models missing"),
        (lambda con: con.execute("DELETE FROM marts.mart_models"), "mart_models emptied (3 -> 0 rows)"),
        (
            lambda con: con.execute("DELETE FROM marts.mart_model_perplexity WHERE corpus = 'ucl'"),
            "mart_model_perplexity lost corpus ucl",
        ),
        (
            lambda con: con.execute("DELETE FROM marts.mart_model_perplexity WHERE model_key = 'gpt2'"),
            "mart_model_perplexity lost model_key gpt2",
        ),
    ],
    ids=["lost-mart", "emptied-mart", "lost-corpus", "lost-model"],
)
def test_publish_refuses_to_shrink_the_snapshot(tmp_paths, damage, expected):
    write_marts(tmp_paths, 3)
    write_perplexity(tmp_paths, ["provo", "ucl"], ["gpt2", "smollm2-135m"])
    publish(tmp_paths)
    before = sha256_of(tmp_paths.marts)
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        damage(con)
    with pytest.raises(BuildError, match="refusing to publish") as err:
        publish(tmp_paths)
    assert expected in str(err.value) and "--allow-shrink" in str(err.value)
    assert sha256_of(tmp_paths.marts) == before  # the published snapshot is untouched
    assert not list(tmp_paths.warehouse.glob(".marts-*"))
    publish(tmp_paths, allow_shrink=True)  # said explicitly: published
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{tmp_paths.marts}' AS s (READ_ONLY)")
        assert con.execute("SELECT allowed_shrink FROM s.snapshot_info").fetchone() == (True,)


def test_publish_compares_the_scoreboard_by_rows_only(tmp_paths):
    """The scoreboard restates other marts: a predictor gone from it (a model scored on a removed user corpus alone)
    is not a shrink of its own; the mart emptied still is."""
    write_marts(tmp_paths, 3)
    write_perplexity(tmp_paths, ["provo", "ucl"], ["gpt2", "smollm2-135m"])
    scoreboard = (
        "CREATE OR REPLACE TABLE marts.mart_scoreboard_long AS SELECT p AS predictor, c AS corpus "
        "FROM unnest(?) t(p), unnest(['provo', 'ucl']) u(c)"
    )
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute(scoreboard, [["humans", "gpt2", "smollm2-135m"]])
    publish(tmp_paths)
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute(scoreboard, [["humans", "gpt2"]])
    publish(tmp_paths)  # no refusal
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute("DELETE FROM marts.mart_scoreboard_long")
    with pytest.raises(BuildError, match="mart_scoreboard_long emptied"):
        publish(tmp_paths)


def test_publish_allows_growth_and_gives_each_snapshot_its_own_id(tmp_paths):
    write_marts(tmp_paths, 1)
    write_perplexity(tmp_paths, ["ucl"], ["gpt2"])
    publish(tmp_paths)
    first = _snapshot_id(tmp_paths)
    write_marts(tmp_paths, 5)
    write_perplexity(tmp_paths, ["provo", "ucl"], ["gpt2", "pythia"])
    publish(tmp_paths)
    assert _snapshot_id(tmp_paths) != first and len(first) == 32


def test_publish_accepts_the_deliberate_dataset_renames(tmp_paths):
    write_marts(tmp_paths, 2)
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute(
            "CREATE OR REPLACE TABLE marts.mart_sources AS SELECT unnest(['corpus_ucl', 'in_the_wild']) AS dataset"
        )
    publish(tmp_paths)
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute("CREATE OR REPLACE TABLE marts.mart_sources AS SELECT unnest(['ucl', 'wild']) AS dataset")
    publish(tmp_paths)  # renamed, not lost
    with duckdb.connect(str(tmp_paths.duckdb)) as con:
        con.execute("CREATE OR REPLACE TABLE marts.mart_sources AS SELECT unnest(['ucl']) AS dataset")
    with pytest.raises(BuildError, match="mart_sources lost dataset wild"):
        publish(tmp_paths)


def test_a_new_or_copied_warehouse_reuses_the_machines_parse_of_the_project(tmp_path, monkeypatch):
    """dbt runs in the warehouse's folder with the database named relative to it, and a warehouse without a parse of
    its own starts from the machine's last one (PREDICTABASE_CACHE): a second, new warehouse and a copy of the first
    each skip the project's full parse (11 s of CPU; before, every new or copied warehouse parsed it whole: "saved
    manifest not found", "profile has changed"). A stale cached parse is only a full parse again."""
    import shutil

    from predictabase.core.config import paths as make_paths
    from predictabase.warehouse.dbt import PARSE_FILE, _parse_cache, run_dbt

    monkeypatch.setenv("PREDICTABASE_CACHE", str(tmp_path / "cache"))

    def parse_lines(p) -> list[str]:
        text = (p.warehouse / "dbt" / "logs" / "dbt.log").read_text()
        return [
            ln.split("]: ", 1)[1]
            for ln in text.splitlines()
            if "Unable to do partial parsing" in ln or "Partial parsing enabled:" in ln
        ]

    first = make_paths(tmp_path / "first")
    run_dbt(first, "parse")
    assert parse_lines(first) == ["Unable to do partial parsing because saved manifest not found. Starting full parse."]
    assert _parse_cache(DBT_PROJECT_DIR).is_file()
    second = make_paths(tmp_path / "second")
    run_dbt(second, "parse")
    shutil.copytree(first.warehouse, tmp_path / "copy")
    (tmp_path / "copy" / "dbt" / "logs" / "dbt.log").unlink()
    copy = make_paths(tmp_path / "copy")
    run_dbt(copy, "parse")
    for p in (second, copy):  # only the few files that read the warehouse's own Parquet roots are parsed again
        [line] = parse_lines(p)
        changed = re.fullmatch(r"Partial parsing enabled: 0 files deleted, 0 files added, (\d+) files changed\.", line)
        assert changed and int(changed.group(1)) <= 16, (p, line)
    # a cached parse that is not one: dbt parses the project again and the run succeeds
    _parse_cache(DBT_PROJECT_DIR).write_bytes(b"not a parse")
    third = make_paths(tmp_path / "third")
    run_dbt(third, "parse")
    assert (third.warehouse / "dbt" / "target" / PARSE_FILE).stat().st_size > 1_000_000
    log = (third.warehouse / "dbt" / "logs" / "dbt.log").read_text()
    assert "Failed to load parsed file from disk" in log and parse_lines(third) == []  # then parsed whole
    assert _parse_cache(DBT_PROJECT_DIR).stat().st_size > 1_000_000  # and the good parse is kept again
