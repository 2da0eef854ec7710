"""Faults a user meets, driven through the real `predictabase` CLI in subprocesses.

Every case runs on its own copy of one real warehouse (fetched from the mirror, UCL + Natural
Stories + the GPT-3 import + the pairwise game ingested, UCL scored by a tiny GPT-2, dbt built and
published). Processes are stopped or killed at named failpoints (`predictabase/core/failpoints.py`), never
after a sleep. Every case checks:

- a user error exits 2 with exactly one line on stderr, `error: ...`, and no traceback;
- the published snapshot is byte-identical afterwards unless the case ran a successful build.

Each case records its outcome; the list is printed at the end of the run (conftest.py).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.dataset as ds
import pytest

from predictabase.core.config import paths as make_paths
from predictabase.core.fsutil import sha256_of
from predictabase.ingest.sources.catalog import files_for
from predictabase.warehouse.lock import LOCK_NAME
from tests.conftest import record_fault_case
from tests.helpers import interruptible

CLI = str(Path(sys.executable).with_name("predictabase"))
UCL_RUN_DOCS = 205


def _record(case: str, outcome: str) -> None:
    """One fault case and its outcome, for the list conftest.pytest_terminal_summary prints at the end (a line
    of the run's file, so that cases held in pytest-xdist's workers reach the summary too)."""
    record_fault_case(case, outcome)


@pytest.fixture(scope="module")
def base(real_warehouse):
    """The real warehouse every case copies (conftest.real_warehouse)."""
    return real_warehouse


@pytest.fixture
def wh(base, tmp_path):
    """A private copy of the base warehouse."""
    p = make_paths(tmp_path / "warehouse")
    shutil.copytree(base.warehouse, p.warehouse)
    return p


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    # builds skip dbt's documentation site (15-20 s each; tests/test_package.py's wheel run builds and checks it)
    env.update(HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", COLUMNS="100", PREDICTABASE_DBT_DOCS="0")
    env.update(extra)
    return env


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CLI, *args],
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=interruptible,
    )


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [CLI, *args],
        env=env or cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=interruptible,
    )


#: notes a build prints before its outcome (predictabase.warehouse.freshness: a stale or unreadable source is
#: reported, never an error by itself)
NOTES = ("dbt source freshness: ",)


def user_error(res: subprocess.CompletedProcess, *needles: str, code: int = 2) -> str:
    """Exit `code` (2: a usage or input error; 75: the writer lock is busy), one line on stderr starting with
    `error:` (besides the build's freshness notes), no traceback; return that line."""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith(NOTES)]
    assert res.returncode == code, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr + res.stdout
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def killed(res: subprocess.CompletedProcess | subprocess.Popen) -> bool:
    return res.returncode == -signal.SIGKILL


def wait_stopped(proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until `proc` has stopped itself at a failpoint (state T in /proc), not for a fixed time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        time.sleep(0.05)
    raise AssertionError("the process never reached its failpoint")


def lock_holder_pid(p) -> int | None:
    import json

    text = (p.warehouse / LOCK_NAME).read_text() if (p.warehouse / LOCK_NAME).exists() else ""
    return json.loads(text)["pid"] if text.strip() else None


def rows(p, sql: str):
    with duckdb.connect(str(p.duckdb), read_only=True) as con:
        return con.execute(sql).fetchall()


def snapshot_rows(p, sql: str):
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{p.marts}' AS s (READ_ONLY)")
        con.execute("USE s")
        return con.execute(sql).fetchall()


# --------------------------------------------------------------------------- 1. silent empty publishes


def test_build_without_the_warehouse_file_refuses(wh):
    before = sha256_of(wh.marts)
    wh.duckdb.unlink()
    user_error(cli("build", "--warehouse", str(wh.warehouse)), "nothing ingested", "predictabase.duckdb")
    assert not wh.duckdb.exists() and sha256_of(wh.marts) == before
    _record("build with predictabase.duckdb missing", "refused in one line; snapshot unchanged")


def test_build_over_an_empty_warehouse_does_not_publish_empty_marts(wh):
    before = sha256_of(wh.marts)
    assert snapshot_rows(wh, "SELECT count(*) FROM mart_pairwise_perplexity")[0][0] > 0
    wh.duckdb.unlink()
    duckdb.connect(str(wh.duckdb)).close()  # a warehouse file with nothing in it
    line = user_error(cli("build", "--warehouse", str(wh.warehouse)), "refusing to publish", "--allow-shrink")
    # the first six losses by mart name (among them marts that had rows, e.g. mart_cloze), then how many more
    shown = re.findall(r"(mart_\w+) emptied \(\d+ -> 0 rows\)", line)
    assert len(shown) == 6 and shown == sorted(shown) and re.search(r"; and \d+ more", line), line
    assert sha256_of(wh.marts) == before
    _record("build over an empty warehouse (dbt builds empty marts)", "publish refused; snapshot unchanged")


@pytest.mark.parametrize("command", ["ingest", "score", "build", "serve"])
def test_commands_refuse_a_warehouse_directory_that_does_not_exist(wh, tmp_path, command):
    before = sha256_of(wh.marts)
    typo = tmp_path / "warehuose"
    user_error(cli(command, "--warehouse", str(typo)), str(typo), "no such warehouse directory")
    user_error(cli(command, env=cli_env(PREDICTABASE_WAREHOUSE=str(typo))), "no such warehouse directory")
    assert not typo.exists() and sha256_of(wh.marts) == before
    _record(f"{command} --warehouse / PREDICTABASE_WAREHOUSE typo", "refused in one line; nothing created")


# --------------------------------------------------------------------------- 3. one writer at a time


def test_second_writer_refused_or_waits_and_a_killed_holder_is_taken_over(wh):
    before = sha256_of(wh.marts)
    w = ["--warehouse", str(wh.warehouse)]
    holder = start("ingest", "ucl", *w, env=cli_env(PREDICTABASE_FAILPOINT="lock.acquired:stop"))
    try:
        wait_stopped(holder)
        for args in (["build"], ["ingest", "ucl"], ["score", "-c", "ucl"], ["fetch"]):
            user_error(cli(*args, *w), "in use by `predictabase ingest`", f"pid {holder.pid}", "--wait", code=75)
        res = cli("build", *w, "--wait", "0.5")
        assert "waiting up to 0.5 s" in res.stderr
        assert res.stderr.strip().splitlines()[-1].startswith("error: ") and "gave up after waiting" in res.stderr
        assert res.returncode == 75 and "Traceback" not in res.stderr
    finally:
        holder.kill()
        holder.wait()
    assert killed(holder) and lock_holder_pid(wh) == holder.pid  # the dead holder's record is left behind
    res = cli("ingest", "ucl", *w)
    assert res.returncode == 0, res.stderr
    assert f"took over the writer lock of `predictabase ingest` (pid {holder.pid}" in res.stderr
    assert lock_holder_pid(wh) is None  # released cleanly
    assert sha256_of(wh.marts) == before
    _record(
        "build/ingest/score/fetch while another writer holds the lock",
        "refused in one line naming the holder; --wait waits, then gives up",
    )
    _record("writer SIGKILLed while holding the lock", "next writer takes the lock over and says so")


def test_two_builds_at_once_one_runs_the_other_refuses(wh):
    w = ["--warehouse", str(wh.warehouse)]
    first = start("build", "--select", "mart_build_info", *w)  # one model: the lock, not dbt, is under test
    deadline = time.monotonic() + 60
    while lock_holder_pid(wh) != first.pid and time.monotonic() < deadline:
        assert first.poll() is None
        time.sleep(0.02)
    second = cli("build", *w)
    user_error(second, "in use by `predictabase build`", f"pid {first.pid}", code=75)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert "Traceback" not in err
    _record("two builds at once", "the first builds and publishes, the second refuses in one line")


# --------------------------------------------------------------------------- 4. SIGKILL and leftovers


def test_build_killed_during_publish_keeps_the_snapshot_and_the_next_writer_cleans_up(wh):
    before = sha256_of(wh.marts)
    w = ["--warehouse", str(wh.warehouse)]
    res = cli("build", "--select", "mart_build_info", *w, env=cli_env(PREDICTABASE_FAILPOINT="publish.copied"))
    assert killed(res)
    left = list(wh.warehouse.glob(".marts-*"))
    assert left and sha256_of(wh.marts) == before
    res = cli("ingest", "ucl", *w)
    assert res.returncode == 0 and "removed 1 leftover(s) of killed runs" in res.stderr, res.stderr
    assert not list(wh.warehouse.glob(".marts-*")) and sha256_of(wh.marts) == before
    _record(
        "build SIGKILLed after writing the new snapshot, before the rename",
        "snapshot unchanged; the temporary snapshot removed by the next writer",
    )


def test_build_killed_after_dbt_keeps_the_snapshot(wh):
    before = sha256_of(wh.marts)
    res = cli(
        "build",
        "--select",
        "mart_build_info",
        "--warehouse",
        str(wh.warehouse),
        env=cli_env(PREDICTABASE_FAILPOINT="build.dbt_done"),
    )
    assert killed(res) and sha256_of(wh.marts) == before
    _record("build SIGKILLed after dbt, before publish", "snapshot unchanged")


def test_fetch_killed_mid_file_leaves_no_partial_file_and_resumes(wh, mirror):
    sf = files_for("ucl")[0]
    dest = wh.raw / sf.path
    dest.unlink()
    w = ["--warehouse", str(wh.warehouse), "--mirror", str(mirror)]
    res = cli("fetch", *w, env=cli_env(PREDICTABASE_FAILPOINT="fetch.copied"))
    assert killed(res) and not dest.exists()
    assert list(dest.parent.glob(".tmp-*"))
    old = os.umask(0o022)
    try:
        res = cli("fetch", *w)
    finally:
        os.umask(old)
    assert res.returncode == 0 and "removed 1 leftover(s)" in res.stderr, res.stderr
    assert sha256_of(dest) == sf.sha256 and not list(dest.parent.glob(".tmp-*"))
    assert dest.stat().st_mode & 0o777 == 0o644  # the user's umask, not mkstemp's 0600
    _record("fetch SIGKILLed with a file under its temporary name", "no partial file; leftover removed; refetched")


def test_model_conversion_killed_leaves_nothing_after_the_next_writer(wh, tmp_path):
    cache = tmp_path / "model-cache"
    env = cli_env(PREDICTABASE_MODEL_CACHE=str(cache))
    w = ["--warehouse", str(wh.warehouse)]
    res = cli(
        "score",
        "-m",
        "smollm2-135m",
        "-c",
        "ucl",
        "--limit",
        "1",
        *w,
        env={**env, "PREDICTABASE_FAILPOINT": "models.converted"},
        timeout=600,
    )
    assert killed(res), res.stderr
    left = [p for p in cache.iterdir() if p.name.startswith(".")]
    assert len(left) == 1 and (left[0] / "config.json").exists()
    size_mb = sum(f.stat().st_size for f in left[0].rglob("*") if f.is_file()) / 1e6
    assert size_mb > 100
    res = cli("ingest", "ucl", *w, env=env)
    assert res.returncode == 0 and "removed 1 leftover(s)" in res.stderr, res.stderr
    assert not any(p.name.startswith(".") for p in cache.iterdir())
    _record("model conversion SIGKILLed before its rename", f"{size_mb:.0f} MB leftover removed by the next writer")


# --------------------------------------------------------------------------- 6. ingest all or nothing


def _drop_ucl_documents(p) -> int:
    with duckdb.connect(str(p.duckdb)) as con:
        n = con.execute("SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'").fetchone()[0]
        con.execute("DELETE FROM raw.documents WHERE corpus = 'ucl'")
    return n


def test_ingest_with_one_bad_file_writes_nothing(wh):
    n_ucl = _drop_ucl_documents(wh)  # were anything committed, the UCL documents would come back
    from predictabase.ingest.datasets.wild import WITH_PATH

    whole = (wh.raw / WITH_PATH).read_bytes()
    (wh.raw / WITH_PATH).write_bytes(whole[:100])  # truncated
    line = user_error(cli("ingest", "ucl", "wild", "--warehouse", str(wh.warehouse)), WITH_PATH)
    assert str(wh.raw) not in line  # named by its catalog path
    assert rows(wh, "SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'") == [(0,)]
    assert "wild_texts" not in {r[0] for r in rows(wh, "SELECT table_name FROM information_schema.tables")}
    # every file under raw/ is verified at every ingest: `ingest ucl` alone refuses it too
    user_error(cli("ingest", "ucl", "--warehouse", str(wh.warehouse)), WITH_PATH, "does not match the catalog")
    (wh.raw / WITH_PATH).write_bytes(whole)
    res = cli("ingest", "ucl", "--warehouse", str(wh.warehouse))
    assert res.returncode == 0, res.stderr
    assert rows(wh, "SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'") == [(n_ucl,)]
    _record("ingest ucl wild with a truncated wild file", "one-line error naming the file; nothing committed")


def test_ingest_killed_before_commit_writes_nothing(wh):
    n_ucl = _drop_ucl_documents(wh)
    w = ["--warehouse", str(wh.warehouse)]
    res = cli("ingest", "ucl", "natural_stories", *w, env=cli_env(PREDICTABASE_FAILPOINT="ingest.before_commit"))
    assert killed(res)
    assert rows(wh, "SELECT count(*) FROM raw.documents WHERE corpus = 'ucl'") == [(0,)]
    res = cli("ingest", "ucl", "natural_stories", *w)
    assert res.returncode == 0, res.stderr
    assert rows(wh, "SELECT corpus, count(*) FROM raw.documents GROUP BY 1 ORDER BY 1") == [
        ("natural_stories", 10),
        ("ucl", n_ucl),
    ]
    _record("ingest SIGKILLed inside its transaction", "nothing committed; the rerun completes")


# --------------------------------------------------------------------------- 7. resume granularity


def _run_tokens(p, model_key: str) -> list[tuple]:
    d = p.token_scores / f"model={model_key}" / "corpus=natural_stories"
    t = ds.dataset(d, format="parquet").to_table(columns=["doc_id", "token_index", "logprob_nats"])
    return sorted(zip(*(t.column(c).to_pylist() for c in ("doc_id", "token_index", "logprob_nats"))))


def test_scoring_killed_after_a_part_resumes_from_it(wh, base, tiny_gpt2_dir, tmp_path):
    key = tiny_gpt2_dir.name
    args = ["score", "-m", str(tiny_gpt2_dir), "-c", "natural_stories", "--top-k", "3", "--device", "cpu"]
    res = cli(*args, "--warehouse", str(wh.warehouse), env=cli_env(PREDICTABASE_FAILPOINT="score.part_written"))
    assert killed(res)
    [run_dir] = (wh.token_scores / f"model={key}" / "corpus=natural_stories").iterdir()
    parts = sorted(run_dir.glob("part-*.parquet"))
    assert len(parts) == 1 and not (run_dir / "_run.json").exists()
    n_first = ds.dataset(parts[0]).count_rows()
    assert 2048 <= n_first < 4000  # the first part: ~2k tokens, whole documents
    old = os.umask(0o022)
    try:
        res = cli(*args, "--warehouse", str(wh.warehouse))
    finally:
        os.umask(old)
    assert res.returncode == 0 and "resumed" in res.stderr, res.stderr
    assert (run_dir / "_run.json").exists() and len(list(run_dir.glob("part-*.parquet"))) >= 2
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in run_dir.iterdir())
    clean = make_paths(tmp_path / "clean")
    shutil.copytree(base.warehouse, clean.warehouse)
    res = cli(*args, "--warehouse", str(clean.warehouse))
    assert res.returncode == 0, res.stderr
    # resuming changes nothing but float32 last bits: the same tokens; a resumed run packs its documents into
    # other batches, and the batch changes only last bits (seen: 1.9e-6 nats with transformers 5.24)
    resumed, uninterrupted = _run_tokens(wh, key), _run_tokens(clean, key)
    assert [r[:2] for r in resumed] == [r[:2] for r in uninterrupted]
    np.testing.assert_allclose([r[2] for r in resumed], [r[2] for r in uninterrupted], rtol=1e-6, atol=1e-5)
    _record(
        "score SIGKILLed after its first part file",
        f"rerun resumes after {n_first} tokens (not from zero); tokens equal to an uninterrupted run's",
    )


# --------------------------------------------------------------------------- 5. arguments outside their domain

BAD_ARGS = [
    (["score", "--limit", "-1"], "--limit: -1 is not allowed"),
    (["score", "--limit", "0"], "--limit: 0 is not allowed"),
    (["score", "--stride", "0"], "--stride: 0 is not allowed"),
    (["score", "--context-length", "0"], "--context-length: 0 is not allowed"),
    (["score", "--context-length", "1"], "--context-length: 1 is not allowed"),
    (["score", "--batch-tokens", "0"], "--batch-tokens: 0 is not allowed"),
    (["score", "--top-k", "-1"], "--top-k: -1 is not allowed"),
    (["score", "-c", "no_such_corpus"], "--corpus: 'no_such_corpus' is not allowed; choose from lm_game"),
    (["score", "--dtype", "float8"], "--dtype: 'float8' is not allowed"),
    (["score", "--device", "tpu"], "--device: 'tpu' is not allowed"),
    (["score", "-m", "no_such_model", "-c", "ucl"], "no_such_model: not in the local Hugging Face cache"),
    (["score", "-m", "not a model!", "-c", "ucl"], "not a model!: not a known model"),
    (["score", "-m", "./no/such/dir", "-c", "ucl"], "no such model directory"),
    (
        ["score", "-m", "{tiny}", "-c", "ucl", "--top-k", "100000"],
        "--top-k: 100000 is not allowed; an integer from 0 to 50257",
    ),
    (
        ["score", "-m", "{tiny}", "-c", "ucl", "--context-length", "4096"],
        "--context-length: 4096 is not allowed; an integer from 2 to 128",
    ),
    (["score", "-m", "{tiny}", "-c", "ucl", "--context-length", "64", "--stride", "64"], "--stride: 64 is not allowed"),
    (["top1", "--max-expansions", "0"], "--max-expansions: 0 is not allowed; an integer from 1 to 100000"),
    (["top1", "--candidates", "101"], "--candidates: 101 is not allowed; an integer from 1 to 100"),
    (["top1", "--limit", "0"], "--limit: 0 is not allowed"),
    (["entropy", "--samples", "1"], "--samples: 1 is not allowed; an integer from 2 to 4096"),
    (["temperature", "--temperatures", "2,3"], "--temperatures: the grid must hold 1"),
    (["temperature", "-c", "lm_game"], "--corpus: lm_game: not a corpus with reading times"),
    (["entropy", "-c", "lm_game"], "--corpus: lm_game: not a corpus with reading times"),
    (["build", "--select", "no_such_model"], "--select: 'no_such_model' matches no dbt model"),
    (["fetch", "--dataset", "no_such_dataset"], "--dataset: 'no_such_dataset' is not allowed; choose from"),
    (["ingest", "no_such_source"], "unknown name(s) no_such_source; choose from lm_game"),
    (["serve", "--port", "0"], "--port: 0 is not allowed"),
    (["build", "--wait", "-1"], "--wait: -1.0 is not allowed"),
    # DuckDB reads a negative limit as "no limit"
    (["sql", "-c", "SELECT 1", "--memory-limit=-1GB"], "--memory-limit: '-1GB' is not allowed; a size > 0"),
    (["sql", "-c", "SELECT 1", "--memory-limit", "0GB"], "--memory-limit: '0GB' is not allowed"),
    (["sql", "-c", "SELECT 1", "--memory-limit", "lots"], "--memory-limit: 'lots' is not allowed"),
]


def test_options_outside_their_domain_are_refused_in_one_line(wh, tiny_gpt2_dir):
    before = sha256_of(wh.marts)
    runs_before = sorted(p.relative_to(wh.token_scores) for p in wh.token_scores.rglob("*"))
    for args, expected in BAD_ARGS:
        args = [a.replace("{tiny}", str(tiny_gpt2_dir)) for a in args]
        user_error(cli(*args, "--warehouse", str(wh.warehouse)), expected)
    assert sorted(p.relative_to(wh.token_scores) for p in wh.token_scores.rglob("*")) == runs_before
    assert sha256_of(wh.marts) == before
    _record(
        f"{len(BAD_ARGS)} option values outside their domain",
        "each refused in one line naming the option and its range; no run recorded",
    )
