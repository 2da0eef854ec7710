"""The Ray engine (`--engine ray`, ingest/scoring/distributed.py) against the local one: a local Ray instance
with 2 CPU workers scores Natural Stories (10 real stories, 12,372 GPT-2 tokens) with the tiny GPT-2 through
the real CLI; every column of every row must equal the local engine's, also after a worker is killed mid-run
and after the whole run is killed and started again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from predictabase.ingest.scoring import ScoreSettings, score_corpora, store
from tests.conftest import make_paths
from tests.scoring_helpers import natural_stories, write_documents

CLI = str(Path(sys.executable).with_name("predictabase"))
CORPUS = "natural_stories"
PART_TOKENS = 1024  # one part per story (each has more tokens): 10 units for 2 workers, a run to kill mid-way
# what a run record may differ in between two runs of the same job (when and by what it ran)
VOLATILE = {"started_at", "finished_at"}


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("PREDICTABASE_", "RAY_"))}
    out.update(HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", COLUMNS="100")
    return out


def ray_args(model: Path, wh: Path, *extra: str) -> list[str]:
    return [
        CLI,
        "score",
        "-m",
        str(model),
        "-c",
        CORPUS,
        "--engine",
        "ray",
        "--workers",
        "2",
        "--part-tokens",
        str(PART_TOKENS),
        "--top-k",
        "5",
        "--warehouse",
        str(wh),
        *extra,
    ]


def rows(directory: Path) -> list[dict]:
    table = store.read_parts(directory)
    return sorted(table.to_pylist(), key=lambda r: (int(r["doc_id"]), r["token_index"]))


def record(directory: Path) -> dict:
    rec = json.loads((directory / store.RUN_FILE).read_text())
    return {k: v for k, v in rec.items() if k not in VOLATILE}


@pytest.fixture(scope="module")
def documents(mirror, tmp_path_factory) -> Path:
    """A warehouse holding Natural Stories' documents only."""
    wh = tmp_path_factory.mktemp("ray") / "documents"
    write_documents(make_paths(wh), CORPUS, list(natural_stories(mirror).values()))
    return wh


def fresh(documents: Path, tmp_path: Path) -> Path:
    wh = tmp_path / "warehouse"
    shutil.copytree(documents, wh)
    return wh


@pytest.fixture(scope="module")
def local_run(documents, tiny_gpt2_dir, tmp_path_factory) -> tuple[Path, dict]:
    """The local engine's run (the reference): its directory and record."""
    p = make_paths(fresh(documents, tmp_path_factory.mktemp("local")))
    [run] = score_corpora(
        p, str(tiny_gpt2_dir), [CORPUS], ScoreSettings(top_k=5, part_tokens=PART_TOKENS), show_progress=False
    )
    d = store.run_dir(p.token_scores, run["model_key"], CORPUS, run["run_id"])
    assert run["n_tokens"] == 12372 and len(store.part_files(d)) == 10
    return d, run


def assert_same_run(got: Path, local: Path) -> None:
    assert (got / store.RUN_FILE).exists()
    assert sorted(p.name for p in store.part_files(got)) == sorted(p.name for p in store.part_files(local))
    a, b = rows(got), rows(local)
    assert len(a) == len(b) == 12372
    columns = store.SCHEMA.names
    assert list(a[0]) == columns
    for col in columns:  # every column of every row, exactly (floats bit for bit)
        assert [r[col] for r in a] == [r[col] for r in b], col
    assert record(got) == record(local)


def test_ray_engine_equals_local_engine(documents, tiny_gpt2_dir, local_run, tmp_path):
    local, run = local_run
    wh = fresh(documents, tmp_path)
    res = subprocess.run(ray_args(tiny_gpt2_dir, wh), env=env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"{run['n_tokens']} tokens in 10 documents (run {run['run_id']}, scored)" in " ".join(
        (res.stdout + res.stderr).split()
    )
    got = store.run_dir(make_paths(wh).token_scores, run["model_key"], CORPUS, run["run_id"])
    assert_same_run(got, local)


def ray_workers() -> list[int]:
    """The pids of the Ray actor processes holding a model replica (their title is `ray::Worker...`)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and cmd.startswith("ray::Worker"):
            out.append(int(proc.name))
    return out


def wait_for_parts(directory: Path, n: int, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while len(list(directory.glob("part-*.parquet"))) < n:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no part files written"
        time.sleep(0.05)


def test_killed_worker_is_restarted_and_the_run_completes_identical(documents, tiny_gpt2_dir, local_run, tmp_path):
    local, run = local_run
    wh = fresh(documents, tmp_path)
    got = store.run_dir(make_paths(wh).token_scores, run["model_key"], CORPUS, run["run_id"])
    proc = subprocess.Popen(
        ray_args(tiny_gpt2_dir, wh), env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_parts(got, 2, proc)
    victims = ray_workers()
    assert len(victims) == 2
    os.kill(victims[0], signal.SIGKILL)  # mid-run: parts written, the run not complete
    assert not (got / store.RUN_FILE).exists()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert_same_run(got, local)


def test_killed_run_resumes_from_its_written_parts_on_a_url_target(documents, tiny_gpt2_dir, local_run, tmp_path):
    """The workers write through fsspec to a URL (here file://; s3://, gs:// the same way); the driver is killed
    with everything it started, and the next run scores only the groups whose part files are missing."""
    local, run = local_run
    wh = fresh(documents, tmp_path)
    lake = tmp_path / "lake"
    got = store.run_dir(lake, run["model_key"], CORPUS, run["run_id"])
    args = ray_args(tiny_gpt2_dir, wh, "--output", lake.as_uri())
    proc = subprocess.Popen(
        args, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    wait_for_parts(got, 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and everything it started
    proc.communicate(timeout=60)
    kept = {p.name: p.stat().st_mtime_ns for p in store.part_files(got)}
    assert 3 <= len(kept) < 10 and not (got / store.RUN_FILE).exists()

    res = subprocess.run(args, env=env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"(run {run['run_id']}, resumed)" in " ".join((res.stdout + res.stderr).split())
    assert {n: t for n, t in ((p.name, p.stat().st_mtime_ns) for p in store.part_files(got)) if n in kept} == kept
    assert_same_run(got, local)
    assert not make_paths(wh).token_scores.exists()  # nothing in the warehouse's own root


def test_ray_engine_options(documents, tiny_gpt2_dir, tmp_path):
    wh = fresh(documents, tmp_path)
    for args, needle in (
        (["--workers", "2"], "--workers: 2 is not allowed; only with --engine ray"),
        (["--engine", "spark"], "--engine: 'spark' is not allowed; local or ray"),
        (["--engine", "ray", "--workers", "0"], "--workers: 0 is not allowed; an integer from 1 to 1024"),
        (
            ["--engine", "ray", "--output", "nosuch://lake"],
            "--output: 'nosuch://lake' is not allowed; Protocol not known: nosuch",
        ),
        (["--part-tokens", "0"], "--part-tokens: 0 is not allowed; an integer from 1 to 4,194,304"),
    ):
        res = subprocess.run(
            [CLI, "score", "-m", str(tiny_gpt2_dir), "-c", CORPUS, "--warehouse", str(wh), *args],
            env=env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 2 and needle in res.stderr and "Traceback" not in res.stderr, res.stderr
    res = subprocess.run(
        [CLI, "refresh", "--dry-run", "--worker-cpus", "2", "--warehouse", str(wh)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "--worker-cpus: 2 is not allowed; only with --engine ray" in res.stderr, res.stderr
    # a model path that does not exist is refused before a local cluster starts (it started one first, ~15 s): Ray
    # writes nothing under its temporary folder
    ray_tmp = Path(tempfile.mkdtemp(prefix="ray-"))  # short: Ray's socket paths under it must fit in 107 bytes
    res = subprocess.run(
        [
            CLI,
            "score",
            "-m",
            str(tmp_path / "no-model"),
            "-c",
            CORPUS,
            "--engine",
            "ray",
            "--workers",
            "1",
            "--warehouse",
            str(wh),
        ],
        env={**env(), "RAY_TMPDIR": str(ray_tmp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2 and res.stderr.strip().endswith("no-model: no such model directory"), res.stderr
    assert "Traceback" not in res.stderr and not make_paths(wh).token_scores.exists()
    assert list(ray_tmp.iterdir()) == []
    ray_tmp.rmdir()


@pytest.fixture(scope="module")
def game_and_cloze(fetched_raw, tmp_path_factory):
    """The LM game's documents, guesses and vocabulary, UCL and Provo and their cloze norms, ingested from the mirror, and
    a Llama with SmolLM2's real tokenizer (not the game's, so top-1 runs the word search)."""
    from predictabase.ingest.datasets.registry import run_ingest
    from tests.scoring_helpers import build_tiny_llama

    p = make_paths(tmp_path_factory.mktemp("game") / "warehouse")
    shutil.copytree(fetched_raw.raw, p.raw)
    run_ingest(
        p,
        [
            "lm_game",
            "lm_game_top1",
            "lm_game_vocabulary",
            "ucl",
            "provo",
            "provo_cloze",
            "ucl_cloze",
            "ucl_cloze_distributions",
        ],
        show_progress=False,
    )
    return p, build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_ray_top1_and_cloze_equal_local(game_and_cloze, tmp_path):
    """top-1 (4 LM-game documents, packs of 256 tokens) and cloze (2 documents of each cloze corpus): the packs of the word search spread over 2 Ray
    workers give the local engine's Parquet file, every column of every row in the same order, and its run
    record (but for the times). The local engine runs at the workers' thread count (1): on a CPU the word
    search's tree-masked attention changes in the last bits with the thread count (63 of 487 cloze rows by
    ~5e-8 nats between 1 and 2 threads; token scoring does not, see the tests above)."""
    from predictabase.ingest.scoring import cloze_responses, top1_words
    from predictabase.ingest.scoring.distributed import RayOptions, _ray

    base, llama = game_and_cloze
    import torch

    ray = _ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = {}
        for engine in ("local", "ray"):
            p = make_paths(tmp_path / engine)
            shutil.copytree(base.warehouse, p.warehouse)
            opts = RayOptions(workers=2) if engine == "ray" else None
            t = top1_words.run_top1(
                p,
                str(llama),
                top1_words.Top1Settings(pack_tokens=256),
                device="cpu",
                dtype="float32",
                limit=4,
                show_progress=False,
                engine=opts,
            )
            c = cloze_responses.run_cloze(
                p, str(llama), device="cpu", dtype="float32", limit=2, show_progress=False, engine=opts
            )
            runs[engine] = (
                top1_words.run_dir(p, t["model_key"], t["run_id"]) / top1_words.PREDICTIONS_FILE,
                cloze_responses.run_dir(p, c["model_key"], c["run_id"]) / cloze_responses.SCORES_FILE,
                t,
                c,
            )
    finally:
        torch.set_num_threads(threads)
        ray.shutdown()
    (t_local, c_local, t1, c1), (t_ray, c_ray, t2, c2) = runs["local"], runs["ray"]
    for a, b in ((t_local, t_ray), (c_local, c_ray)):
        ta, tb = pq.read_table(a), pq.read_table(b)
        assert ta.num_rows > 20 and ta.schema == tb.schema
        for col in ta.column_names:
            assert ta.column(col).to_pylist() == tb.column(col).to_pylist(), (a.name, col)
    times = {"started_at", "finished_at", "seconds"}
    for a, b in ((t1, t2), (c1, c2)):
        assert {k: v for k, v in a.items() if k not in times} == {k: v for k, v in b.items() if k not in times}
    assert t1["n_questions"] > 20 and c1["n_nodes"] > 0
