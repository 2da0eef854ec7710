"""A careful user's bad day: a folder that is not the command's to replace or write, an option without a bound, a
huge input, a script on piped input, a killed output, a dry run on a read-only warehouse. Each case runs the real
CLI in subprocesses on a private copy of the real warehouse (tests/test_faults.py's `wh`) and records its outcome
in the fault list printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from predictabase.core.config import is_warehouse
from predictabase.core.fsutil import sha256_of
from tests.helpers import interruptible
from tests.test_faults import CLI, _record, base, cli, cli_env, user_error, wh  # noqa: F401 - the fixtures: a private copy of the real warehouse
from tests.test_faults_destroy import _in_namespace, kept


def tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` (links not followed) with its sha256: what must not change (but the runs log,
    where every command, a refused one too, adds its run)."""
    return {
        p.relative_to(folder).as_posix(): sha256_of(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "runs.jsonl"
    }


# --------------------------------------------------------------------------- 1. export replaces only its own files


def test_export_replaces_only_a_folder_holding_exactly_an_earlier_export(wh, tmp_path):
    """`export --out E` replaced E whole when it held a manifest.json: a warehouse moved into an old export folder
    was deleted, exit 0. Now E is replaced only when it holds exactly the files its manifest lists, each with its
    sha256; anything else (a warehouse above all, a file added or edited since) is refused in one line, exit 2,
    nothing removed. A killed export's temporary folder is removed by the next export."""
    out = tmp_path / "paper"
    res = cli("export", "--out", str(out), "--warehouse", str(wh.warehouse))
    assert res.returncode == 0, res.stderr
    exported = tree(out)
    assert "manifest.json" in exported and len(exported) > 20
    # the user's report: `predictabase export --out E; mv warehouse E/wh; predictabase export --out E --warehouse E/wh`
    moved = out / "wh"
    shutil.move(wh.warehouse, moved)
    warehouse_files = tree(moved)
    user_error(
        cli("export", "--out", str(out), "--warehouse", str(moved)),
        "--out: ",
        "holds a warehouse (wh)",
        "nothing was changed",
    )
    assert is_warehouse(moved) and tree(moved) == warehouse_files
    assert {k: v for k, v in tree(out).items() if not k.startswith("wh/")} == exported
    shutil.move(moved, wh.warehouse)
    w = ["--warehouse", str(wh.warehouse)]
    (out / "notes.txt").write_text("my own notes\n")
    user_error(
        cli("export", "--out", str(out), *w), "holds notes.txt, which the earlier export's manifest does not list"
    )
    assert (out / "notes.txt").read_text() == "my own notes\n"
    (out / "notes.txt").unlink()
    edited = next(p for p in sorted(out.rglob("*.csv")))
    edited.write_text(edited.read_text() + "my own row\n")
    user_error(
        cli("export", "--out", str(out), *w), f"{edited.relative_to(out).as_posix()} changed since it was exported"
    )
    assert edited.read_text().endswith("my own row\n")
    edited.write_bytes(b"")  # emptied: still not the export's
    user_error(cli("export", "--out", str(out), *w), "changed since it was exported")
    edited.unlink()
    (out / "manifest.json").unlink()
    user_error(cli("export", "--out", str(out), *w), "not empty and not a previous export (no manifest.json)")
    link = tmp_path / "paper-link"  # replacing by a rename would replace the link, not the folder it leads to
    link.symlink_to(out, target_is_directory=True)
    user_error(cli("export", "--out", str(link), *w), "a link; name the folder it leads to")
    assert link.is_symlink() and link.resolve() == out.resolve()
    # a clean earlier export is replaced; a killed export's temporary beside it is removed by the next one
    shutil.rmtree(out)
    assert cli("export", "--out", str(out), *w).returncode == 0
    clean = tree(out)
    res = cli("export", "--out", str(out), *w, env=cli_env(PREDICTABASE_FAILPOINT="export.page_done"))
    assert res.returncode == -9
    assert len(list(tmp_path.glob(".paper.export-*"))) == 1 and tree(out) == clean
    res = cli("export", "--out", str(out), *w)
    assert res.returncode == 0, res.stderr
    assert list(tmp_path.glob(".paper*")) == [] and (out / "manifest.json").is_file()
    _record(
        "export --out into a folder holding a warehouse, a file of the user's, an edited file, no manifest",
        "refused in one line, nothing removed; a clean earlier export replaced; a killed export's temporary "
        "removed by the next",
    )


# --------------------------------------------------------------------------- 2. options with upper bounds

BOUNDED_ARGS = [
    (["sql", "-c", "SELECT 1", "--threads", "100000"], "--threads: 100000 is not allowed; an integer from 1 to"),
    (["sql", "-c", "SELECT 1", "--threads", "0"], "--threads: 0 is not allowed"),
    (["sql", "-c", "SELECT 1", "--timeout", "inf"], "--timeout: inf is not allowed; seconds, more than 0 and at most"),
    (["sql", "-c", "SELECT 1", "--timeout", "nan"], "--timeout: nan is not allowed"),
    (["sql", "-c", "SELECT 1", "--timeout", "86401"], "--timeout: 86401.0 is not allowed"),
    (["sql", "-c", "SELECT 1", "--memory-limit", "100000TB"], "--memory-limit: '100000TB' is not allowed; a size > 0"),
    (["build", "--wait", "inf"], "--wait: inf is not allowed; seconds from 0 to 86,400"),
    (["ingest", "ucl", "--wait", "1e9"], "--wait: 1000000000.0 is not allowed"),
    (
        ["score", "-c", "ucl", "--batch-tokens", "1000000000"],
        "--batch-tokens: 1000000000 is not allowed; an integer from 1 to 1,048,576",
    ),
    (
        ["score", "-c", "ucl", "--part-tokens", "1000000000"],
        "--part-tokens: 1000000000 is not allowed; an integer from 1 to 4,194,304",
    ),
    (
        ["score", "-c", "ucl", "--engine", "ray", "--workers", "100000"],
        "--workers: 100000 is not allowed; an integer from 1 to 1024",
    ),
    (["score", "-c", "ucl", "--engine", "ray", "--worker-cpus", "100000"], "--worker-cpus: 100000 is not allowed"),
]


def test_numeric_options_have_upper_bounds(wh):
    """`sql --threads=100000` was accepted: DuckDB started ~31,000 threads before the --timeout watchdog and the
    machine ran out of threads. Every numeric option has a range with an upper bound where one matters: threads at
    most 4 per core, a memory limit at most the machine's memory, waits and timeouts finite (a day at most)."""
    before = kept(wh)
    for args, expected in BOUNDED_ARGS:
        user_error(cli(*args, "--warehouse", str(wh.warehouse)), expected)
    res = cli(
        "sql",
        "-c",
        "SELECT 41 + 1 AS answer",
        "-f",
        "csv",
        "--threads",
        str(4 * len(os.sched_getaffinity(0))),
        "--timeout",
        "86400",
        "--warehouse",
        str(wh.warehouse),
    )
    assert res.returncode == 0 and res.stdout == "answer\n42\n", res.stderr  # the bounds themselves are allowed
    assert kept(wh) == before
    _record(
        f"{len(BOUNDED_ARGS)} numeric options past their upper bound (sql --threads 100000, --timeout inf, ...)",
        "each refused in one line naming the option and its range; nothing started",
    )


# --------------------------------------------------------------------------- 3-4. only fetch and all make a warehouse


def test_a_missing_or_foreign_folder_is_refused_and_left_as_it_was(wh, tmp_path):
    """A mistyped --warehouse with `corpus add` created the whole path and a warehouse nobody reads, exit 0; a
    writer refused on a folder that is no warehouse (`build --warehouse W/raw`, `--warehouse ''`) left its lock
    and runs log there. Now every command but fetch and all (and corpus add / refresh with --create) refuses a
    missing folder or one that is not a warehouse before writing anything."""
    texts = tmp_path / "texts.csv"
    texts.write_text("text_id,text\n1,The cat sat on the mat.\n")
    typo = tmp_path / "warehuose" / "deeper"
    for args in (
        ["corpus", "add", "mine", "--texts", str(texts)],
        ["corpus", "list"],
        ["corpus", "show", "ucl"],
        ["refresh"],
        ["sql", "-c", "SELECT 1"],
        ["export", "--out", str(tmp_path / "paper")],
    ):
        user_error(cli(*args, "--warehouse", str(typo)), str(typo), "no such warehouse directory", "--create")
    assert not typo.parent.exists() and not (tmp_path / "paper").exists()
    (wh.raw / ".writer.lock").touch()  # the empty lock file a refused writer of an older release left there
    raw_before = tree(wh.raw)
    for args in (
        ["build"],
        ["ingest", "ucl"],
        ["corpus", "add", "mine", "--texts", str(texts)],
        ["corpus", "list"],
        ["score", "-c", "ucl"],
        ["refresh", "--dry-run"],
    ):
        user_error(cli(*args, "--warehouse", str(wh.raw)), "not a warehouse: it holds none of predictabase.duckdb")
    assert tree(wh.raw) == raw_before and [p.name for p in wh.raw.glob(".*")] == [".writer.lock"]
    assert (wh.raw / ".writer.lock").stat().st_size == 0 and not (wh.raw / "runs.jsonl").exists()
    # `--warehouse ''`: the current folder, here one holding a file of the user's
    here = tmp_path / "project"
    here.mkdir()
    (here / "analysis.R").write_text("library(lme4)\n")
    res = subprocess.run(
        [CLI, "build", "--warehouse", ""],
        cwd=here,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    user_error(res, "not a warehouse")
    # the commands that make a warehouse do not make one in a folder of other files either
    for args in (
        ["fetch", "--dataset", "ucl"],
        ["corpus", "add", "mine", "--texts", str(texts), "--create"],
        ["refresh", "--create"],
    ):
        user_error(cli(*args, "--warehouse", str(here)), "not a warehouse, and not an empty folder")
    assert sorted(p.name for p in here.iterdir()) == ["analysis.R"]
    # one that fails before writing anything leaves no folder behind
    user_error(cli("fetch", "--dataset", "no_such_dataset", "--warehouse", str(typo)), "--dataset")
    assert not typo.parent.exists()
    res = cli("corpus", "add", "mine", "--texts", str(texts), "--create", "--warehouse", str(typo))
    assert res.returncode == 0 and is_warehouse(typo), res.stderr
    _record(
        "corpus add / list / show, refresh, sql, export with a --warehouse typo; build, ingest, score, corpus, "
        "refresh --dry-run on a warehouse's raw/ or the current folder",
        "refused in one line, nothing created or left (no lock, no runs log); corpus add --create makes one",
    )


# --------------------------------------------------------------------------- 5. huge inputs, bounded memory


def _limit_memory(gb: float):
    def limit() -> None:
        interruptible()
        resource.setrlimit(resource.RLIMIT_AS, (int(gb * 1e9), int(gb * 1e9)))

    return limit


def test_a_huge_line_is_refused_and_running_out_of_memory_is_one_line(wh, tmp_path):
    """A 50 MB single-line text was taken at ~100x its size (4.9 GB); under a 3 GB limit the user saw `internal
    error: MemoryError (a bug...)`, exit 1. Now a line or text over 4 Mi characters is refused in one line naming the
    file and line, and running out of memory anywhere is one line, exit 2, with the warehouse as it was."""
    before = kept(wh)
    huge = tmp_path / "huge.csv"
    huge.write_text("text_id,text\nt1," + "the cat sat on the mat " * 2_200_000 + "\n")
    assert huge.stat().st_size > 50e6
    w = ["--warehouse", str(wh.warehouse)]

    def run(*args: str, gb: float) -> subprocess.CompletedProcess:
        return subprocess.run(
            [CLI, *args, *w],
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            preexec_fn=_limit_memory(gb),
        )

    user_error(
        run("corpus", "add", "huge", "--texts", str(huge), gb=3),
        str(huge),
        "line 2: 50,600,00",
        "more than a line may hold (4,194,304)",
    )
    # a valid file too big for the memory it is given: 3 million one-word rows under a 2 GB limit
    many = tmp_path / "many.csv"
    with many.open("w") as f:
        f.write("text_id,word\n")
        f.writelines(f"t{i // 1000},w{i % 997}\n" for i in range(3_000_000))
    user_error(
        run("corpus", "add", "many", "--texts", str(many), gb=2),
        "out of memory",
        "the warehouse and the published snapshot are as they were",
    )
    assert kept(wh) == before and not (wh.warehouse / "corpora.toml").exists() and not (wh.raw / "user").exists()
    _record(
        "corpus add of a 50 MB one-line text (3 GB limit); of 3 million rows (2 GB limit)",
        "the line refused in one line naming file and line; out of memory one line, exit 2; nothing written",
    )


# --------------------------------------------------------------------------- the smaller ones


def test_sql_ctrl_c_exits_130_and_a_failing_piped_statement_exits_2(wh):
    """Ctrl-C in `sql` exited 2 (--help says 130), and a failing statement read from a pipe exited 0 with the
    statements after it run."""
    w = ["--warehouse", str(wh.warehouse)]
    res = cli(
        "sql",
        "-c",
        "SELECT sum(i) FROM range(1000000000000) t(i)",
        *w,
        env=cli_env(PREDICTABASE_FAILPOINT="sql.query_started:int"),
        timeout=120,
    )
    user_error(res, "query cancelled (Ctrl-C)", code=130)
    script = "SELECT 1 AS a;\nSELECT no_such_column FROM mart_build_info;\nSELECT 2 AS b;\n"
    res = subprocess.run(
        [CLI, "sql", "-f", "csv", *w],
        input=script,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=interruptible,
    )
    user_error(res, "Binder Error", "line 2 of the input; the lines after it were not run")
    assert res.stdout == "a\n1\n"  # the first statement ran, the third did not
    res = subprocess.run(
        [CLI, "sql", "-f", "csv", *w],
        input="SELECT 1 AS a;\nSELECT 2 AS b;\n",
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and res.stdout == "a\n1\nb\n2\n", res.stderr
    _record(
        "sql: Ctrl-C during a query; a failing statement in a piped script",
        "exit 130, one line; exit 2 naming the line, the statements after it not run",
    )


def test_a_killed_sql_output_leaves_a_temporary_the_next_run_removes(wh, tmp_path):
    """SIGKILL of `sql -o` left `.NAME.XXXX.tmp` beside the target that nothing removed."""
    out = tmp_path / "result.csv"
    w = ["--warehouse", str(wh.warehouse)]
    res = cli(
        "sql",
        "-c",
        "SELECT 1 AS a",
        "-f",
        "csv",
        "-o",
        str(out),
        *w,
        env=cli_env(PREDICTABASE_FAILPOINT="sql.output_opened"),
    )
    assert res.returncode == -9 and not out.exists()
    [left] = tmp_path.glob(".result.csv-*.tmp")
    mine = tmp_path / ".result.csv-notes.tmp"  # not a temporary of ours (no pid): kept
    mine.write_text("x")
    res = cli("sql", "-c", "SELECT 1 AS a", "-f", "csv", "-o", str(out), *w)
    assert res.returncode == 0 and out.read_text() == "a\n1\n", res.stderr
    assert not left.exists() and mine.exists()
    _record("sql -o SIGKILLed while writing", "its temporary removed by the next sql -o of the same file")


def test_refresh_dry_run_reads_a_read_only_warehouse_and_knows_what_commands_scored(wh, tiny_gpt2_dir, tmp_path):
    """`refresh --dry-run` took the writer lock, so it was refused on a read-only warehouse; and right after `all`
    it listed as "would score" what the main job's commands had just scored (they did not tell the refresh's
    ledger). Now the dry run takes no lock where the warehouse cannot be written, and `score`, `top1` and `cloze`
    (the main job's model steps) record their runs for the refresh: a dry run after them has nothing to score."""
    models = tmp_path / "models.toml"
    models.write_text(f'[[model]]\nname = "{tiny_gpt2_dir}"\ncorpora = ["ucl"]\ntop_k = 3\ndevice = "cpu"\n')
    w = ["--warehouse", str(wh.warehouse)]
    res = cli("refresh", "--dry-run", "--models", str(models), *w)
    assert res.returncode == 0 and "would score 1 task(s)" in res.stdout, res.stdout + res.stderr
    res = cli("score", "-m", str(tiny_gpt2_dir), "-c", "ucl", "--top-k", "3", "--device", "cpu", *w)
    assert res.returncode == 0 and "already complete" in res.stderr, res.stderr  # as `all` finds it: scored before
    res = cli("refresh", "--dry-run", "--models", str(models), *w)
    assert res.returncode == 0 and "nothing to do: all 1 (model, corpus, settings) task(s) scored" in res.stdout, (
        res.stdout
    )
    before = tree(wh.warehouse)
    script = (
        f"mount --bind {wh.warehouse} {wh.warehouse}\nmount -o remount,bind,ro {wh.warehouse}\n"
        f"{CLI} refresh --dry-run --models {models} --warehouse {wh.warehouse}\n"
    )
    res = _in_namespace(script, env=cli_env())
    assert res.returncode == 0, res.stderr
    assert "score" in res.stdout and "dry run: nothing written" in res.stdout and "Read-only" not in res.stderr
    assert tree(wh.warehouse) == before
    _record(
        "refresh --dry-run on a read-only warehouse; after the main job's scoring commands",
        "it plans without the lock; the commands' runs count as scored",
    )


def test_corpus_remove_leaves_the_raw_tree_as_it_was(wh, tmp_path):
    """`corpus remove` of the last corpus left an empty raw/user/."""
    texts = tmp_path / "texts.csv"
    texts.write_text("text_id,text\n1,The cat sat on the mat.\n")
    w = ["--warehouse", str(wh.warehouse)]
    before = sorted(p.name for p in wh.raw.iterdir())
    assert cli("corpus", "add", "mine", "--texts", str(texts), *w).returncode == 0
    assert (wh.raw / "user" / "mine").is_dir()
    res = cli("corpus", "remove", "mine", "--json", *w)
    assert res.returncode == 0 and json.loads(res.stdout)["corpus"] == "mine", res.stderr
    assert sorted(p.name for p in wh.raw.iterdir()) == before
    res = cli("corpus", "list", "--json", *w)
    assert "mine" not in [r["corpus"] for r in json.loads(res.stdout)["corpora"]]
    _record("corpus remove of the last corpus", "raw/ as before the corpus was added (no empty raw/user/)")


@pytest.mark.parametrize("option", ["--threads", "--memory-limit", "--timeout", "--wait"])
def test_help_documents_each_bound(option):
    """The bounds are in --help, where a user looks for them."""
    command = "build" if option == "--wait" else "sql"
    res = subprocess.run(
        [CLI, command, "--help"], env={**cli_env(), "COLUMNS": "200"}, capture_output=True, text=True, timeout=60
    )
    line = " ".join(res.stdout.split())
    expected = {
        "--threads": "1 to 4 per core",
        "--memory-limit": "at most this machine's memory",
        "--timeout": "at most 86,400 (a day)",
        "--wait": "0 to 86,400",
    }[option]
    assert expected in line, line
