"""The Dagster definitions (predictabase/orchestrate, the `orchestrate` extra that `make test` installs): they load,
their asset graph holds every dbt model with the sources mapped onto the assets that write them, the
partitions are models.toml's models x the corpora, the schedule and the sensor trigger the refresh job, and
a small asset selection materializes into a scratch warehouse with the same rows as the CLI's steps."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from predictabase.warehouse.dbt import environ

ROOT = Path(__file__).resolve().parent.parent
MARTS_DIR = ROOT / "dbt_project" / "models" / "marts"


@pytest.fixture(scope="module")
def orch(tmp_path_factory, tiny_gpt2_dir):
    """The definitions module, loaded with a models file of the default model (all corpora) and the tiny
    GPT-2 (UCL only), its dbt manifest parsed into a fresh cache directory."""
    cache = tmp_path_factory.mktemp("dagster-cache")
    models = cache / "models.toml"
    models.write_text(
        (ROOT / "models.toml").read_text() + f'\n[[model]]\nname = "{tiny_gpt2_dir}"\n'
        'corpora = ["ucl"]\ntop_k = 3\ndevice = "cpu"\ndtype = "float32"\n'
    )
    with environ({"PREDICTABASE_DAGSTER_CACHE": str(cache), "PREDICTABASE_MODELS": str(models)}):
        import predictabase.orchestrate.definitions as definitions
        from predictabase.orchestrate.assets import MODELS

        assert list(MODELS) == ["smollm2-135m", str(tiny_gpt2_dir)]
        yield definitions


def _manifest(orch) -> dict:
    return json.loads(Path(orch.PROJECT.manifest_path).read_text())


def test_definitions_hold_every_asset_partition_schedule_and_sensor(orch):
    import dagster as dg

    from predictabase.ingest.datasets.registry import JOBS
    from predictabase.models_config import CORPORA, load_models_config
    from predictabase.orchestrate.dbt import INGEST_WRITERS, source_writers

    graph = orch.defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    manifest = _manifest(orch)
    dbt_models = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] in ("model", "seed")}
    marts_on_disk = {p.stem for p in MARTS_DIR.rglob("mart_*") if p.suffix in (".sql", ".py")}
    assert len(marts_on_disk) >= 29 and marts_on_disk <= dbt_models  # every mart file is a dbt model ...
    assert dbt_models <= keys  # ... and every dbt model and seed an asset
    from predictabase.ingest.scoring.steps import STEPS

    steps = {"token_scores", "top1_predictions", "cloze_model_scores", "word_entropy", "temperature_scores"}
    assert {s.asset for s in STEPS.values()} == steps and {"fetch", *steps, "marts_snapshot"} <= keys
    assert {f"ingest/{job}" for job in JOBS} <= keys
    assert len(keys) == len(dbt_models) + len(JOBS) + len(steps) + 2  # nothing else: no dangling source assets

    # lineage: every dbt source is replaced by the assets that write it
    for src in manifest["sources"].values():
        assert source_writers(src["schema"], src["name"]), f"dbt source {src['unique_id']} has no writer asset"
    assert set(INGEST_WRITERS.values()) and {j for js in INGEST_WRITERS.values() for j in js} <= set(JOBS)

    def parents(k):
        return {p.to_user_string() for p in graph.get(dg.AssetKey.from_user_string(k)).parent_keys}

    # the shipped corpora's jobs and the user's corpora (`corpus add`: job declared_corpora)
    from predictabase.ingest.datasets import meco

    assert parents("stg_documents") == {
        "ingest/lm_game",
        "ingest/natural_stories",
        "ingest/provo",
        "ingest/ucl",
        "ingest/declared_corpora",
        *(f"ingest/{k}" for k in meco.corpora()),
    }
    assert parents("stg_source_files") == {"fetch"}
    assert parents("stg_token_scores") == {"token_scores", "ingest/gpt3_natural_stories"}
    assert parents("stg_top1_word_predictions") == {"top1_predictions"}
    assert parents("ingest/word_frequencies") == {"fetch", *(f"ingest/{j}" for j in JOBS["word_frequencies"].after)}
    assert parents("token_scores") == {f"ingest/{c}" for c in CORPORA} | {"ingest/declared_corpora"}
    assert parents("marts_snapshot") == marts_on_disk

    # partitions: one per model x corpus of models.toml; top-1 and cloze one per model that asks for them
    models = load_models_config()
    token = orch.defs.get_assets_def("token_scores").partitions_def
    assert {(k.keys_by_dimension["model"], k.keys_by_dimension["corpus"]) for k in token.get_partition_keys()} == {
        (m.name, c) for m in models for c in CORPORA
    }
    assert orch.defs.get_assets_def("top1_predictions").partitions_def.get_partition_keys() == [
        m.name for m in models if m.top1
    ]
    assert orch.defs.get_assets_def("cloze_model_scores").partitions_def.get_partition_keys() == [
        m.name for m in models if m.cloze
    ]
    assert orch.defs.get_assets_def("word_entropy").partitions_def.get_partition_keys() == [
        m.name for m in models if m.entropy
    ]
    assert parents("stg_word_entropy") == {"word_entropy", "stg_word_entropy_runs"}
    assert orch.defs.get_assets_def("temperature_scores").partitions_def.get_partition_keys() == [
        m.name for m in models if m.temperature
    ]
    assert parents("stg_temperature_token_scores") == {"temperature_scores", "stg_temperature_runs"}

    schedule = orch.defs.get_schedule_def("daily_refresh")
    assert schedule.cron_schedule == "17 3 * * *" and schedule.job_name == "refresh_job"
    sensor = orch.defs.get_sensor_def("source_catalog_sensor")
    assert sensor.job_name == "refresh_job"
    assert [n.name for n in orch.defs.get_job_def("refresh_job").nodes_in_topological_order] == ["refresh"]


def test_sensor_starts_a_refresh_when_the_catalog_changes(orch, tmp_path):
    import dagster as dg

    from predictabase.ingest.sources.catalog import CATALOG_FILE
    from predictabase.orchestrate.resources import PredictabaseResource

    catalog, models = tmp_path / "catalog.toml", tmp_path / "models.toml"
    shutil.copyfile(CATALOG_FILE, catalog)
    shutil.copyfile(ROOT / "models.toml", models)
    resource = PredictabaseResource(warehouse=str(tmp_path / "wh"), watched_files=[str(catalog), str(models)])
    sensor = orch.defs.get_sensor_def("source_catalog_sensor")

    def evaluate(cursor):
        ctx = dg.build_sensor_context(cursor=cursor, resources={"predictabase": resource}, definitions=orch.defs)
        return sensor.evaluate_tick(ctx)

    first = evaluate(None)  # never evaluated: one refresh, keyed by the files' hash
    digest = orch.watched_digest([catalog, models])
    assert [r.run_key for r in first.run_requests] == [digest] and first.cursor == digest
    assert first.run_requests[0].job_name in (None, "refresh_job")

    same = evaluate(digest)  # nothing changed: no run
    assert same.run_requests == [] and same.skip_message and "unchanged" in same.skip_message
    assert same.cursor == digest

    catalog.write_text(catalog.read_text() + "\n# a new source would go here\n")
    changed = evaluate(digest)
    new = orch.watched_digest([catalog, models])
    assert new != digest
    assert [r.run_key for r in changed.run_requests] == [new] and changed.cursor == new

    models.write_text(models.read_text() + '\n[[model]]\nname = "gpt2"\ncorpora = ["ucl"]\n')
    added = evaluate(new)  # a model added to models.toml triggers the refresh too
    assert len(added.run_requests) == 1 and added.run_requests[0].run_key not in (digest, new)


def test_dagster_definitions_validate(orch, tmp_path):
    """The CLI loads the code location of pyproject.toml's [tool.dagster] from the repository root."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "PREDICTABASE_DAGSTER_CACHE": os.environ["PREDICTABASE_DAGSTER_CACHE"],
    }
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.run(
        [str(dagster), "definitions", "validate"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Validation successful for code location predictabase" in out


def test_materialize_fetch_ingest_score_and_dbt_into_a_scratch_warehouse(
    orch, mirror, fetched_raw, tiny_gpt2_dir, tmp_path
):
    """fetch (files already there: recorded), the lm_game and ucl ingest assets, the core staging views and the
    sources mart downstream, as one Dagster run into a scratch warehouse; then one token_scores partition
    (the tiny GPT-2 on UCL) and the refresh job (dry run)."""
    import dagster as dg
    from dagster_dbt import DbtCliResource

    from predictabase.core.config import paths as make_paths
    from predictabase.ingest.datasets.registry import read_ingest_log
    from predictabase.ingest.sources.catalog import files_for
    from predictabase.orchestrate.dbt import DBT_EXECUTABLE, INGEST_WRITERS
    from predictabase.orchestrate.resources import PredictabaseResource
    from predictabase.refresh import plan_scoring
    from predictabase.runs import read_runs
    from predictabase.warehouse.lock import LOCK_NAME

    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    resources = {
        "predictabase": PredictabaseResource(warehouse=str(p.warehouse), mirror=str(mirror), lock_wait_s=60),
        "dbt": DbtCliResource(project_dir=orch.PROJECT, dbt_executable=DBT_EXECUTABLE),
    }
    selection = [
        "fetch",
        "ingest/lm_game",
        "ingest/ucl",
        "stg_source_files",
        "stg_documents",
        "stg_words",
        "stg_game_doc_tokens",
        "mart_sources",
    ]
    result = dg.materialize(
        [orch.fetch, orch.ingest, orch.dbt_project_assets], selection=selection, resources=resources
    )
    assert result.success
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert materialized == set(selection)
    checks = result.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks)

    con = duckdb.connect(str(p.duckdb), read_only=True)
    try:

        def n(sql):
            return con.execute(sql).fetchone()[0]

        raw = {
            t
            for (t,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'"
            ).fetchall()
        }
        # what the two jobs write (their raw.ingest_log rows) is what the sources map says they write
        log = read_ingest_log(p)
        for job in ("lm_game", "ucl"):
            assert set(log[job]["tables"]) == {f"raw.{t}" for t, jobs in INGEST_WRITERS.items() if job in jobs}
        assert raw - {"source_files", "ingest_log"} == {
            t for t, jobs in INGEST_WRITERS.items() if {"lm_game", "ucl"} & set(jobs)
        }
        # the rows are the catalog's and the raw tables', as the CLI's fetch / ingest / build give them
        assert (
            n("SELECT count(*) FROM raw.source_files")
            == len(files_for())
            == n("SELECT sum(n_files) FROM marts.mart_sources")
            == n("SELECT sum(n_verified) FROM marts.mart_sources")
        )
        assert n("SELECT count(*) FROM marts.mart_sources") == len({f.dataset for f in files_for()})
        docs = [f for f in files_for("lm_game") if f.path.rsplit("/", 1)[-1].startswith("doc")]
        assert n("SELECT count(*) FROM raw.documents WHERE corpus = 'lm_game'") == len(docs)
        assert n("SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'") == 205
        assert n("SELECT count(*) FROM staging.stg_documents") == n("SELECT count(*) FROM raw.documents")
        assert n("SELECT count(*) FROM staging.stg_words") == n("SELECT count(*) FROM raw.words") > 1000
        assert n("SELECT count(*) FROM staging.stg_game_doc_tokens") == n("SELECT count(*) FROM raw.game_doc_tokens")
        ingest_md = {
            e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()
        }
        assert ingest_md["ingest/lm_game"]["rows"].value == n("SELECT count(*) FROM raw.game_doc_tokens") + n(
            "SELECT count(*) FROM raw.documents WHERE corpus = 'lm_game'"
        ) + n("SELECT count(*) FROM raw.words WHERE corpus = 'lm_game'")
        ucl_docs = n("SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'")
    finally:
        con.close()

    # one scoring partition: the tiny GPT-2 on UCL, through the refresh's task runner (ledger included)
    tiny = str(tiny_gpt2_dir)
    scored = dg.materialize(
        [orch.defs.get_assets_def("token_scores")],
        partition_key=dg.MultiPartitionKey({"model": tiny, "corpus": "ucl"}),
        resources=resources,
    )
    assert scored.success
    runs_dirs = list(p.token_scores.rglob("_run.json"))
    assert len(runs_dirs) == 1
    record = json.loads(runs_dirs[0].read_text())
    assert record["corpus"] == "ucl" and record["n_docs"] == ucl_docs and record["n_tokens"] > 1000
    tokens = duckdb.sql(f"SELECT count(*) FROM read_parquet('{runs_dirs[0].parent}/part-*.parquet')").fetchall()[0][0]
    assert tokens == record["n_tokens"]
    tasks = {(t.model, t.step, t.corpus): t.done for t in plan_scoring(p)}
    assert tasks[(tiny, "score", "ucl")] is True  # a later refresh will not score this partition again
    assert tasks[("smollm2-135m", "score", "ucl")] is False
    # a (model, corpus) that models.toml does not list for the model is refused, naming the file
    refused = dg.materialize(
        [orch.defs.get_assets_def("token_scores")],
        partition_key=dg.MultiPartitionKey({"model": tiny, "corpus": "provo"}),
        resources=resources,
        raise_on_error=False,
    )
    assert not refused.success
    failure = next(e for e in refused.all_events if e.event_type_value == "STEP_FAILURE")
    assert "models.toml" in str(failure.event_specific_data.error.message) and "provo" in str(
        failure.event_specific_data.error.message
    )

    # each step ran like its CLI command: recorded in the runs log, the writer lock released
    runs = read_runs(p.runs_log)
    assert sorted(r["command"] for r in runs) == ["build", "fetch", "ingest", "score"]  # the refusal wrote nothing
    assert all(r["status"] == "ok" and r["args"]["via"] == "dagster" for r in runs)
    assert (p.warehouse / LOCK_NAME).read_text() == ""

    # the scheduled job: the refresh op runs predictabase.refresh.refresh on the resource's warehouse (a dry run
    # here: it plans the jobs not ingested yet and the models.toml tasks not scored, and writes nothing)
    before = p.duckdb.stat().st_mtime_ns
    job = orch.defs.get_job_def("refresh_job")
    res = job.execute_in_process(
        run_config={"ops": {"refresh": {"config": {"dry_run": True}}}},
        resources={"predictabase": PredictabaseResource(warehouse=str(p.warehouse), mirror=str(mirror))},
    )
    assert res.success
    report = res.output_for_node("refresh")
    steps = {s["name"]: s for s in report["steps"]}
    assert list(steps) == ["fetch", "ingest", "score", "build"] and report["changed"] is False
    assert steps["fetch"]["action"] == "nothing to do"
    assert steps["ingest"]["action"].startswith("would ingest") and "provo" in steps["ingest"]["detail"]
    assert steps["score"]["action"].startswith("would score")
    assert p.duckdb.stat().st_mtime_ns == before
    refresh_run = next(r for r in read_runs(p.runs_log) if r["command"] == "refresh")
    assert refresh_run["status"] == "ok" and refresh_run["args"]["dry_run"] is True
    assert {
        r["parent_run_id"]
        for r in read_runs(p.runs_log)
        if r["command"] in ("fetch", "ingest", "score") and r["args"].get("dry_run")
    } == {refresh_run["run_id"]}


def test_the_scheduled_refresh_records_what_it_materialized(orch, tmp_path, monkeypatch, tiny_gpt2_dir):
    """The refresh op logs an asset materialization for every asset the refresh rebuilt, so Dagster's asset view
    is current after a scheduled run: here a refresh that fetched two files, re-ingested two jobs, scored one
    partition, built two dbt models and published (its report stands in for the refresh itself, which
    tests/test_refresh.py runs)."""
    import dagster as dg

    import predictabase.refresh as refresh_module
    from predictabase.orchestrate.resources import PredictabaseResource
    from predictabase.refresh import RefreshReport, StepReport

    report = RefreshReport(
        steps=[StepReport("build", "built and published", "", 1.0)],
        changed=True,
        dbt_select="source:raw.words+",
        published=True,
        fetched=["ucl_devarda/all_measures.csv", "provo/Provo_Corpus.csv"],
        ingested=["ucl", "word_frequencies"],
        scored=[("score", str(tiny_gpt2_dir), "ucl")],
        dbt_models=["stg_words", "mart_word_surprisal"],
    )
    monkeypatch.setattr(refresh_module, "refresh", lambda *a, **kw: report)
    (tmp_path / "w").mkdir()
    instance = dg.DagsterInstance.ephemeral()
    res = orch.defs.get_job_def("refresh_job").execute_in_process(
        instance=instance, resources={"predictabase": PredictabaseResource(warehouse=str(tmp_path / "w"))}
    )
    assert res.success
    got = {(e.asset_key.to_user_string(), e.partition) for e in res.get_asset_materialization_events()}
    partition = dg.MultiPartitionKey({"model": str(tiny_gpt2_dir), "corpus": "ucl"})
    assert got == {
        ("fetch", None),
        ("ingest/ucl", None),
        ("ingest/word_frequencies", None),
        ("token_scores", partition),
        ("stg_words", None),
        ("mart_word_surprisal", None),
        ("marts_snapshot", None),
    }
    # the keys are the definitions' own assets, and the instance's asset view now has them
    keys = {k.to_user_string() for k in orch.defs.resolve_asset_graph().get_all_asset_keys()}
    assert {k for k, _ in got} <= keys
    latest = instance.get_latest_materialization_event(dg.AssetKey("mart_word_surprisal"))
    assert latest is not None and latest.run_id == res.run_id
    # nothing rebuilt: nothing recorded
    monkeypatch.setattr(refresh_module, "refresh", lambda *a, **kw: RefreshReport(steps=report.steps[:0]))
    quiet = orch.defs.get_job_def("refresh_job").execute_in_process(
        instance=instance, resources={"predictabase": PredictabaseResource(warehouse=str(tmp_path / "w"))}
    )
    assert quiet.success and not quiet.get_asset_materialization_events()
