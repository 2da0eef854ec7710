"""The runs log (`predictabase.runs`): every command writes a row — command, options,
start, end, status, rows in/out, error text — to `<warehouse>/runs.jsonl`, killed commands included."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from predictabase import runs
from predictabase.cli import app
from predictabase.runs import read_runs, recorded

CLI = str(Path(sys.executable).with_name("predictabase"))


def warehouse_log(folder: Path) -> Path:
    """The runs log of a warehouse in `folder`: the log is written only in a folder that holds a warehouse
    (predictabase.core.config.is_warehouse), here one with an empty corpus declarations file."""
    (folder / "corpora.toml").touch()
    return folder / "runs.jsonl"


def test_a_block_is_one_run_with_its_status_rows_and_error(tmp_path):
    log = warehouse_log(tmp_path)
    with recorded(log, "ingest", {"names": ["ucl"]}) as run:
        run.rows_in, run.rows_out = 3, 7
        with recorded(log, "fetch") as inner:
            assert runs.current() is inner
        assert runs.current() is run
    with pytest.raises(ValueError), recorded(log, "build"):
        raise ValueError("no  such\nmart")
    with pytest.raises(KeyboardInterrupt), recorded(log, "score"):
        raise KeyboardInterrupt
    with pytest.raises(SystemExit), recorded(log, "cloze") as failing:
        failing.error = "--limit: 0 is not allowed"
        raise SystemExit(2)
    with pytest.raises(SystemExit), recorded(log, "serve"):
        raise SystemExit(0)
    assert runs.current() is None
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 12 and [x["event"] for x in lines].count("start") == 6
    got = {r["command"]: r for r in read_runs(log)}
    assert got["ingest"]["status"] == "ok" and (got["ingest"]["rows_in"], got["ingest"]["rows_out"]) == (3, 7)
    assert got["ingest"]["args"] == {"names": ["ucl"]} and got["ingest"]["parent_run_id"] is None
    assert got["fetch"]["parent_run_id"] == got["ingest"]["run_id"]
    assert got["build"]["status"] == "error" and got["build"]["error"] == "ValueError: no such mart"
    assert got["score"]["status"] == "interrupted"
    assert got["cloze"]["status"] == "error" and got["cloze"]["error"] == "--limit: 0 is not allowed"
    assert got["serve"]["status"] == "ok"
    for r in got.values():
        assert r["started_at"] <= r["ended_at"] and r["pid"] == os.getpid()
    # newest first
    starts = [r["started_at"] for r in read_runs(log)]
    assert starts == sorted(starts, reverse=True)
    assert len(read_runs(log, limit=2)) == 2


def test_a_start_without_an_end_is_running_while_its_process_lives_then_killed(tmp_path):
    log = warehouse_log(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid, run_id in ((os.getpid(), "a" * 32), (child.pid, "b" * 32)):
            runs.append(
                log,
                {
                    "run_id": run_id,
                    "command": "refresh",
                    "event": "start",
                    "pid": pid,
                    "started_at": "2026-01-01T00:00:00+00:00",
                    "status": "running",
                },
            )
        with log.open("a") as f:
            f.write('{"run_id": "torn", "comm')  # a writer killed mid-line
        assert {r["run_id"]: r["status"] for r in read_runs(log)} == {"a" * 32: "running", "b" * 32: "running"}
    finally:
        child.kill()
        child.wait()
    assert {r["run_id"]: r["status"] for r in read_runs(log)} == {"a" * 32: "running", "b" * 32: "killed"}
    assert read_runs(tmp_path / "missing.jsonl") == []


def _append_many(log: str, worker: int, n: int) -> None:
    for i in range(n):
        with recorded(Path(log), "sql", {"worker": worker, "i": i, "pad": "x" * 2000}):
            pass


def test_concurrent_writers_never_tear_a_line(tmp_path):
    log = warehouse_log(tmp_path)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(log), w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    lines = log.read_text().splitlines()
    assert len(lines) == 4 * 150 * 2
    assert all(json.loads(x)["args"]["pad"] == "x" * 2000 for x in lines)
    assert len(read_runs(log)) == 600 and {r["status"] for r in read_runs(log)} == {"ok"}


def test_the_log_cannot_be_written_and_the_command_still_runs(tmp_path):
    with recorded(tmp_path / "no-such-dir" / "runs.jsonl", "fetch") as run:
        run.rows_out = 1
    assert not (tmp_path / "no-such-dir").exists()


def test_every_command_writes_a_row_with_its_error_line(tmp_path, monkeypatch):
    """Each command through the real CLI (in-process): the row's status, options and error text are those the
    user saw. Options outside their range fail fast, so every command is exercised without heavy work."""
    wh = tmp_path / "wh"
    wh.mkdir()
    warehouse_log(wh)
    monkeypatch.delenv("PREDICTABASE_FAILPOINT", raising=False)
    runner = CliRunner()
    calls = {
        "fetch": ["fetch", "--dataset", "nope"],
        "ingest": ["ingest", "no_such_job"],
        "score": ["score", "--top-k", "-1"],
        "top1": ["top1", "--device", "tpu"],
        "cloze": ["cloze", "--limit", "0"],
        "build": ["build"],
        "sql": ["sql", "--timeout", "0"],
        "serve": ["serve", "--port", "0"],
        "all": ["all", "--port", "70000"],
    }
    printed = {}
    for command, argv in calls.items():
        res = runner.invoke(app, [*argv, "--warehouse", str(wh)])
        assert res.exit_code == 2, (command, res.output)
        printed[command] = " ".join(res.output.split()).removeprefix("error: ")
    got = {r["command"]: r for r in read_runs(wh / "runs.jsonl")}
    assert set(got) == set(calls)
    for command, row in got.items():
        assert row["status"] == "error", row
        assert row["error"] == printed[command], (row["error"], printed[command])
        assert row["args"]["warehouse"] == str(wh) and row["ended_at"] >= row["started_at"]
    assert got["score"]["args"]["top_k"] == -1 and got["ingest"]["args"]["names"] == ["no_such_job"]
    assert "--port" in got["all"]["error"] and "no_such_job" in got["ingest"]["error"]


def test_a_real_fetch_counts_its_files_and_a_killed_one_is_recorded_killed(tmp_path, mirror, fetched_raw):
    wh = tmp_path / "wh"
    shutil.copytree(fetched_raw.raw, wh / "raw")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    ok = subprocess.run(
        [CLI, "fetch", "--mirror", str(mirror), "--warehouse", str(wh)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    killed = subprocess.run(
        [CLI, "fetch", "--mirror", str(mirror), "--warehouse", str(wh)],
        env={**env, "PREDICTABASE_FAILPOINT": "lock.acquired"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9
    rows = read_runs(wh / "runs.jsonl")
    assert [r["status"] for r in rows] == ["killed", "ok"]
    from predictabase.ingest.sources.catalog import files_for

    assert rows[1]["rows_in"] == len(files_for(None)) and rows[1]["rows_out"] == 0  # all present already
    assert rows[0]["ended_at"] is None and rows[0]["error"] is None
