"""`predictabase refresh`, through the real CLI in subprocesses.

One session-scoped warehouse (`refreshed`, tests/conftest.py: shared with tests/test_user_corpus.py) is refreshed
once from nothing (fetched from the mirror, every ingest job, UCL and the user corpus Brown scored by the tiny
GPT-2 of the models file and Brown by SmolLM2, a full dbt build, published); every other test works on its own
copy. Models files list tiny local models on UCL only, so scoring takes seconds. To keep CI time down, dbt
runs twice in the whole file: the first refresh's full build, and the chained kill test's one selective build.

- a second refresh changes nothing: no write to the warehouse, no dbt invocation, the same snapshot;
- why a job is re-ingested (inputs, code, tables, dependencies), in-process;
- with a model added to the models file, a dry run plans that model alone and the token-score downstream;
- two refreshes at once take turns (refused without --wait; with it, the second finds nothing to do);
- one refresh's work (a fetched file altered, a changed source, an added model) SIGKILLed at every stage in
  turn: the published snapshot intact after each kill, each next refresh further, then nothing to do; and
  all told only that file was fetched, that job re-ingested, that model scored, their downstream rebuilt.
"""

from __future__ import annotations

import json
import shutil
import signal
import threading
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.fsutil import sha256_of
from tests.helpers import q
from tests.test_faults import cli, cli_env, killed, start, user_error, wait_stopped

STEPS = ("fetch", "ingest", "score", "build")
PERFS_JOB = "lm_game_model_perfs"  # a small job with a small downstream (raw.top1_reference_accuracies)


def models_file(path: Path, *model_dirs: Path) -> Path:
    """A models file: the first model on the refreshed warehouse's corpora (UCL, MECO Korean), the others on UCL."""
    corpora = ['["ucl", "meco_ko"]'] + ['["ucl"]'] * (len(model_dirs) - 1)
    path.write_text(
        "".join(f'[[model]]\nname = "{d}"\ncorpora = {c}\ntop_k = 3\n\n' for d, c in zip(model_dirs, corpora))
    )
    return path


def steps(res) -> dict[str, str]:
    """step -> its line of the report table ("<step>  <seconds> s  <action>: <detail>")."""
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split(None, 1)
        if parts and parts[0] in STEPS:
            out[parts[0]] = parts[1]
    assert set(out) == set(STEPS), res.stdout + res.stderr
    return out


def refresh(wh, models: Path, *extra: str, env=None, mirror: Path | None = None):
    args = ["refresh", "--warehouse", str(wh.warehouse), "--models", str(models), *extra]
    if mirror is not None:
        args += ["--mirror", str(mirror)]
    return cli(*args, env=env, timeout=600)


def ok(res) -> dict[str, str]:
    assert res.returncode == 0, (res.returncode, res.stdout[-3000:], res.stderr[-3000:])
    assert "Traceback" not in res.stderr
    return steps(res)


def snap(wh, sql: str):
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{wh.marts}' AS s (READ_ONLY)")
        con.execute("USE s")
        return con.execute(sql).fetchall()


def snapshot_id(wh) -> str:
    return snap(wh, "SELECT snapshot_id FROM snapshot_info")[0][0]


def perplexity_models(wh) -> set[str]:
    return {r[0] for r in snap(wh, "SELECT model_key FROM mart_model_perplexity WHERE corpus = 'ucl'")}


def mtimes(root: Path) -> dict[str, int]:
    return {str(f.relative_to(root)): f.stat().st_mtime_ns for f in sorted(root.rglob("*")) if f.is_file()}


def executed_nodes(wh) -> set[str]:
    data = json.loads((wh.warehouse / "dbt" / "target" / "run_results.json").read_text())
    return {r["unique_id"] for r in data["results"]}


def downstream(wh, roots: list[str]) -> set[str]:
    """Every node downstream of `roots` in the warehouse's dbt manifest (the roots included)."""
    children = json.loads((wh.warehouse / "dbt" / "target" / "manifest.json").read_text())["child_map"]
    seen, todo = set(), list(roots)
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += children.get(n, [])
    return seen


def read_until(proc, needle: str, timeout: float = 120) -> list[str]:
    """Read `proc`'s stderr until a line holds `needle` (the rest stays for communicate()); the lines read."""
    lines: list[str] = []
    found = threading.Event()

    def pump() -> None:
        for line in proc.stderr:
            lines.append(line)
            if needle in line:
                found.set()
                return

    threading.Thread(target=pump, daemon=True).start()
    assert found.wait(timeout), (needle, lines)
    return lines


def alter_job_input(wh, job: str) -> str:
    """Make raw.ingest_log say `job` read an older version of its first input (as after a catalog update)."""
    with duckdb.connect(str(wh.duckdb)) as con:
        inputs, at = con.execute(
            "SELECT inputs, ingested_at FROM raw.ingest_log WHERE job = ? ORDER BY ingested_at DESC LIMIT 1", [job]
        ).fetchone()
        inputs = json.loads(inputs)
        path = sorted(inputs)[0]
        inputs[path] = "0" * 64
        con.execute(
            "UPDATE raw.ingest_log SET inputs = ? WHERE job = ? AND ingested_at = ?", [json.dumps(inputs), job, at]
        )
    return path


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory) -> Path:
    from tests.scoring_helpers import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama") / "tiny-llama")


@pytest.fixture
def wh(refreshed, tmp_path):
    """A private copy of the refreshed warehouse (mtimes kept)."""
    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(refreshed.paths.warehouse, p.warehouse)
    return p


def tp_corpora() -> tuple[str, ...]:
    from predictabase.ingest.scoring.temperature import CORPORA

    return CORPORA


def test_first_refresh_fetches_ingests_scores_builds_and_publishes(refreshed, tiny_gpt2_dir):
    from predictabase.ingest.datasets.registry import NAMES
    from predictabase.ingest.sources.catalog import load_catalog

    wh, res = refreshed.paths, refreshed.result
    s = ok(res)
    assert s["fetch"].split(None, 2)[2].startswith(f"fetched {len(load_catalog())} file(s)")
    assert f"ingested {len(NAMES)} job(s)" in s["ingest"] and "never ingested" in s["ingest"]
    # the tiny GPT-2 scores every shipped corpus and both user corpora, SmolLM2 the user corpora (every model scores
    # them), and the tiny GPT-2 runs the temperature step (one task over the corpora with reading times); the step
    # lists the first four tasks
    from predictabase.ingest import corpus_table

    shipped = list(corpus_table.CORPORA)
    first = ", ".join(f"{tiny_gpt2_dir} / score {c}: scored" for c in shipped[:4])
    n = len(shipped) + 4 + 1
    assert s["score"].split(None, 2)[2] == (f"ran {n} task(s): {first} and {n - 4} more")
    temperature_runs = q(
        wh.duckdb, "SELECT count(DISTINCT corpus), min(n_temperatures) FROM staging.stg_temperature_runs"
    )
    assert temperature_runs == [(len(tp_corpora()), 2)]
    assert "built and published: no earlier build" in s["build"] and "(everything)" in s["build"]
    assert {r[0] for r in q(wh.duckdb, "SELECT DISTINCT job FROM raw.ingest_log")} == set(NAMES)
    assert q(wh.duckdb, "SELECT count(*) FROM raw.source_files") == [(len(load_catalog()),)]
    assert perplexity_models(wh) == {tiny_gpt2_dir.name}
    n_tokens = q(
        wh.duckdb,
        "SELECT corpus, n_tokens FROM marts.mart_model_perplexity WHERE model_key = ? ORDER BY 1",
        tiny_gpt2_dir.name,
    )
    assert [c for c, _ in n_tokens] == sorted([*shipped, "brown", "meco_german"])
    assert (
        snap(
            wh,
            f"SELECT corpus, n_tokens FROM mart_model_perplexity WHERE model_key = '{tiny_gpt2_dir.name}' ORDER BY 1",
        )
        == n_tokens
    )
    state = json.loads((wh.warehouse / "refresh" / "state.json").read_text())
    assert state["built"]["select"] is None and state["published"]["snapshot_id"] == snapshot_id(wh)
    # the runs log: the refresh and its four steps, each a child of it
    from predictabase.runs import read_runs

    runs = read_runs(wh.runs_log)
    [top] = [r for r in runs if r["command"] == "refresh"]
    assert top["status"] == "ok"
    children = sorted(r["command"] for r in runs if r["parent_run_id"] == top["run_id"])
    assert children == sorted(STEPS) and all(r["status"] == "ok" for r in runs)


def test_second_refresh_changes_nothing(wh, refreshed):
    dbt_files = mtimes(wh.warehouse / "dbt")
    before = {
        p: sha256_of(p)
        for p in (
            wh.marts,
            wh.duckdb,
            wh.warehouse / "refresh" / "state.json",
            wh.warehouse / "refresh" / "scored.json",
        )
    }
    sid = snapshot_id(wh)
    raw = mtimes(wh.raw) | mtimes(wh.parquet)
    s = ok(refresh(wh, refreshed.models))
    assert all(line.split(None, 2)[2].startswith("nothing to do") for line in s.values()), s
    assert {p: sha256_of(p) for p in before} == before  # not one byte of the warehouse or the snapshot written
    assert snapshot_id(wh) == sid
    assert mtimes(wh.warehouse / "dbt") == dbt_files  # dbt was not invoked (its logs and run_results untouched)
    assert mtimes(wh.raw) | mtimes(wh.parquet) == raw


def test_ingest_plan_follows_inputs_code_tables_and_dependencies(wh):
    """In-process: what `plan_ingest` decides, for each reason a job is re-ingested."""
    from predictabase.refresh import plan_ingest

    assert plan_ingest(wh) == {}
    with duckdb.connect(str(wh.duckdb)) as con:
        con.execute("DELETE FROM raw.ingest_log WHERE job = 'natural_stories'")
        con.execute("UPDATE raw.ingest_log SET code_version = 'old' WHERE job = 'wild'")
        con.execute("DROP TABLE raw.pairwise_skipped_files")
    path = alter_job_input(wh, PERFS_JOB)
    plan = plan_ingest(wh)
    assert plan == {
        "natural_stories": "never ingested",
        "gpt3_natural_stories": "it reads natural_stories, re-ingested",
        "pairwise": "raw.pairwise_skipped_files is missing",
        "wild": "its loader code changed",
        PERFS_JOB: f"{path} changed",
        "natural_stories_spr": "it reads natural_stories, re-ingested",
        "word_frequencies": "it reads natural_stories, re-ingested",
        "pimentel_meister_surprisal": "it reads natural_stories, re-ingested",
    }


def test_dry_run_after_adding_a_model_plans_that_model_and_its_downstream_only(
    wh, tiny_gpt2_dir, tiny_llama_dir, tmp_path
):
    models = models_file(tmp_path / "models.toml", tiny_gpt2_dir, tiny_llama_dir)
    files = {
        p: sha256_of(p)
        for p in (
            wh.marts,
            wh.duckdb,
            wh.warehouse / "refresh" / "state.json",
            wh.warehouse / "refresh" / "scored.json",
        )
    }
    s = ok(refresh(wh, models, "--dry-run"))
    assert [line.split(None, 2)[2] for line in s.values()] == [
        "nothing to do: every catalog file present with its sha256",
        "nothing to do: every job's inputs, code and tables are as ingested",
        f"would score 3 task(s): {tiny_llama_dir} / score ucl, {tiny_llama_dir} / score brown, "
        f"{tiny_llama_dir} / score meco_german",
        "would build and publish: new complete runs in token_scores; dbt build --select "
        "source:scores.token_scores+ source:scores.run_registry+ mart_build_info mart_warehouse_tables",
    ]
    assert {p: sha256_of(p) for p in files} == files
    assert not (wh.token_scores / f"model={tiny_llama_dir.name}").exists()


def test_dry_run_after_corpus_add_plans_its_ingest_and_every_model_on_it(wh, tiny_gpt2_dir, tiny_llama_dir, tmp_path):
    """A corpus declared with `corpus add` and not ingested yet: the dry run says the declared corpora's job
    would be ingested and every model of the models file would score the new corpus, and writes nothing."""
    models = models_file(tmp_path / "models.toml", tiny_gpt2_dir, tiny_llama_dir)
    texts = tmp_path / "lab.csv"
    texts.write_text("text_id,text\n1,The cat sat on the mat.\n2,A dog ran.\n", encoding="utf-8")
    added = cli("corpus", "add", "lab", "--texts", str(texts), "--warehouse", str(wh.warehouse))
    assert added.returncode == 0, added.stderr
    files = {p: sha256_of(p) for p in (wh.marts, wh.duckdb, wh.warehouse / "refresh" / "scored.json")}
    s = ok(refresh(wh, models, "--dry-run"))
    ingest = s["ingest"].split(None, 2)[2]
    assert ingest.startswith("would ingest") and "declared_corpora" in ingest, ingest
    assert s["score"].split(None, 2)[2] == (
        f"would score 5 task(s): {tiny_gpt2_dir} / score lab, {tiny_llama_dir} / score ucl, "
        f"{tiny_llama_dir} / score brown, {tiny_llama_dir} / score meco_german and 1 more"
    )
    assert {p: sha256_of(p) for p in files} == files
    assert not list(wh.token_scores.rglob("corpus=lab"))


def test_two_refreshes_at_once_take_turns(wh, refreshed):
    """The second refresh refuses at once without --wait; with --wait it waits for the first, then finds
    nothing to do. (The one that does work is in the chained kill test below.)"""
    w = ["--warehouse", str(wh.warehouse), "--models", str(refreshed.models)]
    sid = snapshot_id(wh)
    first = start("refresh", *w, env=cli_env(PREDICTABASE_FAILPOINT="lock.acquired:stop"))
    second = None
    try:
        wait_stopped(first)
        user_error(cli("refresh", *w), "in use by `predictabase refresh`", f"pid {first.pid}", "--wait", code=75)
        second = start("refresh", *w, "--wait", "600")
        seen = read_until(second, "waiting up to 600 s for `predictabase refresh`")
        first.send_signal(signal.SIGCONT)
        out, err = first.communicate(timeout=600)
        out2, err2 = second.communicate(timeout=600)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    for res in (
        SimpleNamespace(returncode=first.returncode, stdout=out, stderr=err),
        SimpleNamespace(returncode=second.returncode, stdout=out2, stderr="".join(seen) + err2),
    ):
        s = ok(res)
        assert all(line.split(None, 2)[2].startswith("nothing to do") for line in s.values()), s
    assert snapshot_id(wh) == sid


CHAIN = [
    "lock.acquired",
    "fetch.copied",
    "refresh.planned",
    "ingest.before_commit",
    "score.part_written",
    "refresh.scored",
    "build.dbt_node",
    "build.dbt_done",
    "publish.copied",
    "publish.replaced",
    "refresh.state_saved",
]


def test_refresh_killed_at_every_stage_keeps_the_snapshot_and_the_next_refresh_completes_only_what_changed(
    wh, refreshed, mirror, tiny_gpt2_dir, tiny_llama_dir, tmp_path
):
    """One refresh's work: a fetched file altered (fetch restores it), a job whose source changed (its
    raw.ingest_log row says it read an older file), a model added to the models file. The refresh is
    SIGKILLed at each failpoint in turn: every kill leaves the published snapshot as it was (until it is
    replaced), each next refresh gets further, and one more has nothing to do. Then: only that file was
    fetched, only that job re-ingested, only the new model scored, and dbt ran once, on their downstream."""
    from predictabase.core.failpoints import POINTS
    from predictabase.ingest.sources.catalog import files_for

    # not on a refresh's way: a GGUF conversion, `corpus add`, `export`, `sql`
    assert set(CHAIN) <= set(POINTS) and set(POINTS) - set(CHAIN) == {
        "models.converted",
        "corpus.copied",
        "export.page_done",
        "sql.query_started",
        "sql.output_opened",
    }
    models = models_file(tmp_path / "models.toml", tiny_gpt2_dir, tiny_llama_dir)
    path = alter_job_input(wh, PERFS_JOB)
    (wh.raw / path).write_bytes((wh.raw / path).read_bytes() + b"\n")
    source_files = q(wh.duckdb, "SELECT path, origin, fetched_at FROM raw.source_files ORDER BY path")
    log_before = q(wh.duckdb, "SELECT job, ingest_id FROM raw.ingest_log ORDER BY job")
    first_runs = mtimes(wh.token_scores / f"model={tiny_gpt2_dir.name}")
    before, sid = sha256_of(wh.marts), snapshot_id(wh)
    dbt_done: dict = {}
    for point in CHAIN:
        res = refresh(wh, models, env=cli_env(PREDICTABASE_FAILPOINT=point), mirror=mirror)
        assert killed(res), (point, res.returncode, res.stdout[-2000:], res.stderr[-2000:])
        assert "Traceback" not in res.stderr
        if CHAIN.index(point) < CHAIN.index("publish.replaced"):
            assert sha256_of(wh.marts) == before and snapshot_id(wh) == sid, point  # intact and readable
            assert perplexity_models(wh) == {tiny_gpt2_dir.name}
        else:
            assert snapshot_id(wh) != sid and perplexity_models(wh) == {tiny_gpt2_dir.name, tiny_llama_dir.name}
        if point == "ingest.before_commit":  # nothing of the transaction committed
            latest = q(
                wh.duckdb,
                "SELECT inputs FROM raw.ingest_log WHERE job = ? ORDER BY ingested_at DESC LIMIT 1",
                PERFS_JOB,
            )[0][0]
            assert json.loads(latest)[path] == "0" * 64
        if point == "score.part_written":
            [run] = (wh.token_scores / f"model={tiny_llama_dir.name}" / "corpus=ucl").iterdir()
            assert len(list(run.glob("part-*.parquet"))) == 1 and not (run / "_run.json").exists()
        if point == "build.dbt_node":  # killed inside dbt: the working database's copy waits for the next writer
            assert (wh.warehouse / ".predictabase.duckdb.before-build").is_file()
        if point == "build.dbt_done":
            assert "a build was killed before it finished: the working database is back" in res.stderr
            assert not (wh.warehouse / ".predictabase.duckdb.before-build").exists()
            dbt_done = mtimes(wh.warehouse / "dbt" / "target")
        elif dbt_done:  # later refreshes publish, or only record the publish: dbt never runs again
            assert mtimes(wh.warehouse / "dbt" / "target") == dbt_done, point
    state = json.loads((wh.warehouse / "refresh" / "state.json").read_text())
    assert state["published"]["snapshot_id"] == snapshot_id(wh)
    final_sid = snapshot_id(wh)
    s = ok(refresh(wh, models, mirror=mirror))
    assert all(line.split(None, 2)[2].startswith("nothing to do") for line in s.values()), s
    assert snapshot_id(wh) == final_sid and mtimes(wh.warehouse / "dbt" / "target") == dbt_done
    assert not list(wh.warehouse.glob(".marts-*")) and not list(wh.raw.rglob(".tmp-*"))

    # what the interrupted refreshes did, all told: fetched that file; only that row of raw.source_files
    assert sha256_of(wh.raw / path) == [f.sha256 for f in files_for() if f.path == path][0]
    after = q(wh.duckdb, "SELECT path, origin, fetched_at FROM raw.source_files ORDER BY path")
    assert [r for r in after if r not in source_files] == [r for r in after if r[0] == path]
    # re-ingested that job alone
    latest = dict(
        q(
            wh.duckdb,
            "SELECT job, ingest_id FROM raw.ingest_log QUALIFY row_number() OVER "
            "(PARTITION BY job ORDER BY ingested_at DESC) = 1",
        )
    )
    assert {j for j, i in latest.items() if (j, i) not in log_before} == {PERFS_JOB}
    # scored the new model alone
    assert mtimes(wh.token_scores / f"model={tiny_gpt2_dir.name}") == first_runs
    assert sorted(p.name for p in wh.token_scores.iterdir()) == sorted(
        [f"model={tiny_gpt2_dir.name}", f"model={tiny_llama_dir.name}", "model=gpt3-davinci", "model=smollm2-135m"]
    )
    # built their downstream only
    sel = state["built"]["select"].split()
    assert sorted(sel) == [
        "mart_build_info",
        "mart_warehouse_tables",
        "source:raw.source_files+",
        "source:scores.run_registry+",
        "source:scores.token_scores+",
        "source:top1.top1_reference_accuracies+",
    ]
    allowed = downstream(
        wh,
        [f"source.predictabase.{x[len('source:') : -1]}" for x in sel if x.startswith("source:")]
        + [f"model.predictabase.{m}" for m in sel if m.startswith("mart_")],
    )
    ran = {n for n in executed_nodes(wh) if n.startswith(("model.", "seed.", "snapshot."))}  # tests, hooks aside
    assert (
        ran <= allowed
        and {
            "model.predictabase.mart_model_perplexity",
            "model.predictabase.mart_top1_summary",
            "model.predictabase.mart_sources",
        }
        <= ran
    )
    assert not any("wild" in n or "pairwise" in n or "eye_tracking" in n for n in ran)
    assert perplexity_models(wh) == {tiny_gpt2_dir.name, tiny_llama_dir.name}
