"""No command can destroy the warehouse: output paths, Ctrl-C, a full disk, a failed build, a live store
that cannot be written, odd inputs. Each case has its test here, driven through the real CLI
in subprocesses on a private copy of the real warehouse (tests/test_faults.py's `wh`), and each records its outcome
in the fault list printed at the end of the run.

The full disk is real: a small tmpfs mounted in a private mount namespace (`unshare -m`; a user namespace where the
tests do not run as root), the warehouse copied into it, then the command run there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from predictabase.core import live
from predictabase.core.fsutil import sha256_of
from tests.test_faults import CLI, _record, base, cli, cli_env, rows, user_error, wh  # noqa: F401 - the fixtures: a private copy of the real warehouse


def kept(p) -> dict[str, str]:
    """What must not change: the published snapshot and the working database, byte for byte."""
    return {"marts.duckdb": sha256_of(p.marts), "predictabase.duckdb": sha256_of(p.duckdb)}


def last_end(p, command: str) -> dict:
    """The runs log's last end line of `command`."""
    lines = [json.loads(x) for x in p.runs_log.read_text().splitlines()]
    return [r for r in lines if r["command"] == command and r["event"] == "end"][-1]


# --------------------------------------------------------------------------- 1. output paths inside the warehouse


def test_output_paths_inside_the_warehouse_are_refused(wh, tmp_path):
    """`sql -o`, `export words --out`, `export --out` and `score --output` naming a path inside the warehouse
    (directly, or through a link that leads there) are refused in one line; nothing in the warehouse changes. Unguarded,
    `sql -c ... -f csv -o <warehouse>/marts.duckdb` replaced the snapshot with 4 bytes, exit 0."""
    w = ["--warehouse", str(wh.warehouse)]
    measures = wh.raw / "ucl_devarda/all_measures.csv"
    before = {**kept(wh), "all_measures.csv": sha256_of(measures)}
    link = tmp_path / "looks-outside"
    link.symlink_to(wh.warehouse, target_is_directory=True)
    cases = [
        (["sql", "-c", "SELECT 1 AS a", "-f", "csv", "-o", str(wh.marts)], "--output"),
        (["sql", "-c", "SELECT 1 AS a", "-f", "csv", "-o", str(wh.duckdb)], "--output"),
        (["sql", "-c", "SELECT 1 AS a", "-f", "parquet", "-o", str(wh.warehouse / "new.parquet")], "--output"),
        (["sql", "-c", "SELECT 1 AS a", "-f", "csv", "-o", str(link / "marts.duckdb")], "--output"),
        (["export", "words", "--corpus", "ucl", "--out", str(measures)], "--out"),
        (["export", "words", "--corpus", "ucl", "--out", str(link / "raw/ucl_devarda/all_measures.csv")], "--out"),
        (["export", "--out", str(wh.warehouse / "paper")], "--out"),
        (["score", "-c", "ucl", "--engine", "ray", "--output", str(wh.raw)], "--output"),
    ]
    for args, option in cases:
        user_error(cli(*args, *w), f"{option}: ", "is inside the warehouse", str(wh.warehouse))
    assert {**kept(wh), "all_measures.csv": sha256_of(measures)} == before
    assert not (wh.warehouse / "new.parquet").exists() and not (wh.warehouse / "paper").exists()
    # outside the warehouse they write, through a temporary renamed into place (none left behind)
    out = tmp_path / "out"
    out.mkdir()
    assert cli("sql", "-c", "SELECT 1 AS a", "-f", "csv", "-o", str(out / "a.csv"), *w).returncode == 0
    assert (out / "a.csv").read_text() == "a\n1\n"
    res = cli("export", "words", "--corpus", "ucl", "--out", str(out / "words.csv"), *w)
    assert res.returncode == 0, res.stderr
    assert sorted(x.name for x in out.iterdir()) == ["a.csv", "words.csv"]
    _record(
        "sql -o / export words --out / export --out / score --output inside the warehouse (also through a link)",
        f"{len(cases)} refused in one line; snapshot, working database and source files unchanged",
    )


# --------------------------------------------------------------------------- 2. Ctrl-C in every writing command


def _interrupt_cases(tiny: Path, mirror: Path, tmp: Path) -> dict[str, tuple[list[str], str]]:
    texts = tmp / "texts.csv"
    texts.write_text("text_id,text\n1,The cat sat on the mat.\n")
    models = tmp / "models.toml"
    models.write_text(f'[[model]]\nname = "{tiny}"\ncorpora = ["ucl"]\ntop_k = 3\n')
    return {
        "build": (["build"], "build.dbt_node:int"),  # inside dbt, which catches Ctrl-C itself
        "ingest": (["ingest", "ucl"], "ingest.before_commit:int"),
        "fetch": (["fetch", "--mirror", str(mirror), "--dataset", "ucl"], "fetch.copied:int"),
        "score": (
            ["score", "-m", str(tiny), "-c", "natural_stories", "--top-k", "2", "--device", "cpu"],
            "score.part_written:int",
        ),
        "refresh": (["refresh", "--mirror", str(mirror), "--models", str(models)], "refresh.planned:int"),
        "corpus add": (["corpus", "add", "mine", "--texts", str(texts)], "corpus.copied:int"),
        "export": (["export", "--out", str(tmp / "paper")], "export.page_done:int"),
    }


@pytest.mark.parametrize("command", ["build", "ingest", "fetch", "score", "refresh", "corpus add", "export"])
def test_ctrl_c_in_every_writing_command(wh, tiny_gpt2_dir, mirror, tmp_path, command):
    """SIGINT (what Ctrl-C sends) at a point inside each command: exit 130, one line `error: interrupted...`, no
    traceback, the runs log says *interrupted*, the snapshot and the working database as they were, and no
    temporary left. Unguarded, a build said 'dbt build failed: KeyboardInterrupt' with 52 lines, exit 2."""
    args, point = _interrupt_cases(tiny_gpt2_dir, mirror, tmp_path)[command]
    if command in ("fetch", "refresh"):  # a file to fetch, so that the command reaches its point
        (wh.raw / "ucl_devarda/all_measures.csv").unlink()
    before = kept(wh)
    res = cli(*args, "--warehouse", str(wh.warehouse), env=cli_env(PREDICTABASE_FAILPOINT=point), timeout=600)
    line = user_error(res, "interrupted", code=130)
    assert "KeyboardInterrupt" not in res.stderr, line
    assert res.stdout == "" and res.stderr == line + "\n", (res.stdout, res.stderr)  # no blank line before it
    assert last_end(wh, command)["status"] == "interrupted"
    if command == "refresh":  # its fetch step had finished (and recorded the file in the working database)
        assert sha256_of(wh.marts) == before["marts.duckdb"] and (wh.raw / "ucl_devarda/all_measures.csv").exists()
    else:
        assert kept(wh) == before
    temporaries = [p for p in wh.warehouse.rglob(".*") if p.name != ".writer.lock"]
    assert temporaries == [], temporaries  # each removed its own on the way out
    if command == "fetch":
        assert not (wh.raw / "ucl_devarda/all_measures.csv").exists()
    if command == "corpus add":
        assert not (wh.raw / "user").exists() or list((wh.raw / "user").iterdir()) == []
        assert not (wh.warehouse / "corpora.toml").exists() or "mine" not in (wh.warehouse / "corpora.toml").read_text()
    if command == "export":
        assert not (tmp_path / "paper").exists() and not list(tmp_path.glob(".paper*"))
    kept_what = (
        "snapshot unchanged (its finished fetch step kept)"
        if command == "refresh"
        else "snapshot and working database unchanged"
    )
    _record(
        f"{command} interrupted (SIGINT at {point.split(':')[0]})",
        f"exit 130, one line 'interrupted', runs log 'interrupted'; {kept_what}; no temporary left",
    )


# --------------------------------------------------------------------------- 3. a full disk during build


def _unshare() -> list[str]:
    """A private mount namespace (as root: `unshare -m`; else a user namespace, `unshare -rm`)."""
    exe = shutil.which("unshare")
    flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    if exe is None or subprocess.run([exe, *flags, "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a private mount namespace (util-linux unshare) to mount a small file system")
    return [exe, *flags, "--propagation", "private"]


def _in_namespace(script: str, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_unshare(), "sh", "-ec", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def test_full_disk_during_build_is_one_line_and_keeps_everything(wh, tmp_path):
    """A build on a disk with room for the working copy and a little more: dbt fills the disk. One line saying the
    disk is full, exit 2; the snapshot and the working database unchanged, no copy left behind. Then on a disk with
    no room for the copy: refused before dbt, in one line. Then `corpus add` on the full disk leaves no temporary
    folder. With room again, the same build succeeds. Unguarded: about 216,000 lines (5,141 tracebacks)."""
    before = kept(wh)
    db_mb = wh.duckdb.stat().st_size / 1e6
    disk = tmp_path / "disk"
    disk.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    big = tmp_path / "big.csv"  # a corpus larger than the room left
    big.write_text("text_id,text\n" + "".join(f"{i},{'word ' * 2000}\n" for i in range(4000)))
    env = cli_env()
    cmd = f"{CLI} build --warehouse {disk}/wh"
    script = "\n".join(
        [
            # room for the warehouse, the copy of the working database a build keeps, and 20 MB more: dbt needs more
            f"mount -t tmpfs -o size={int(_size_mb(wh.warehouse) + db_mb + 20)}M tmpfs {disk}",
            f"cp -a {wh.warehouse} {disk}/wh",
            f"{cmd} > {out}/build.out 2> {out}/build.err || echo $? > {out}/build.rc",
            f"sha256sum {disk}/wh/marts.duckdb {disk}/wh/predictabase.duckdb > {out}/after.sha",
            f"ls -a {disk}/wh > {out}/after.ls",
            # a disk without room for the copy
            f"dd if=/dev/zero of={disk}/filler bs=1M count=$(( $(df -m --output=avail {disk} | tail -1) - 5 )) "
            "2>/dev/null || true",
            f"{cmd} > {out}/nocopy.out 2> {out}/nocopy.err || echo $? > {out}/nocopy.rc",
            f"{CLI} corpus add big --texts {big} --warehouse {disk}/wh > {out}/add.out 2> {out}/add.err "
            f"|| echo $? > {out}/add.rc",
            f"ls -a {disk}/wh/raw/user > {out}/add.ls 2>/dev/null || true",
            f"sha256sum {disk}/wh/marts.duckdb {disk}/wh/predictabase.duckdb > {out}/after2.sha",
            f"rm {disk}/filler",
            f"mount -o remount,size={int(_size_mb(wh.warehouse) + 3 * db_mb + 200)}M {disk}",
            f"{cmd} --select mart_build_info > {out}/again.out 2> {out}/again.err || echo $? > {out}/again.rc",
        ]
    )
    res = _in_namespace(script, env, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]

    def outcome(name: str) -> subprocess.CompletedProcess:
        rc = out / f"{name}.rc"
        return subprocess.CompletedProcess(
            [name],
            int(rc.read_text()) if rc.exists() else 0,
            (out / f"{name}.out").read_text(),
            (out / f"{name}.err").read_text(),
        )

    shas = lambda f: {Path(x.split()[1]).name: x.split()[0] for x in (out / f).read_text().splitlines()}  # noqa: E731
    line = user_error(
        outcome("build"), "dbt build failed: the disk is full", "No space left on device", "dbt's full log"
    )
    assert len(outcome("build").stderr.splitlines()) == 1, line
    assert shas("after.sha") == before
    assert [x for x in (out / "after.ls").read_text().split() if "before-build" in x] == []
    user_error(
        outcome("nocopy"),
        "cannot copy the working database before the build",
        "No space left on device",
        "nothing was changed",
    )
    user_error(outcome("add"), "No space left on device")
    assert (out / "add.ls").read_text().split() in ([], [".", ".."]), (out / "add.ls").read_text()
    assert shas("after2.sha") == before
    again = outcome("again")
    assert again.returncode == 0 and "built and published" in again.stderr, again.stderr[-2000:]
    _record(
        "build on a full disk (dbt fills it; no room for the working copy) and corpus add on it",
        "one line each ('the disk is full'); snapshot and working database unchanged; no temporary left; "
        "the build succeeds once there is room",
    )


# --------------------------------------------------------------------------- 4. a failed build writes nothing


def test_failed_build_leaves_the_working_database_as_it_was(wh):
    """A truncated token-score part file fails dbt part-way (after it has built other tables). The working
    database is byte-identical afterwards (the copy saved before dbt ran is put back when dbt fails), the error is
    one line naming the truncated file and dbt's log. Unguarded, dbt had rewritten 18 tables of it and the
    file's name came after 21 lines of dbt's log."""
    before = kept(wh)
    part = sorted(wh.token_scores.rglob("part-*.parquet"))[0]
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    # what reads the token scores, and models that do not (dbt builds those before and after the failure)
    select = "source:scores.token_scores+ stg_live_players stg_references mart_build_info"
    line = user_error(
        cli("build", "--select", select, "--warehouse", str(wh.warehouse)),
        "dbt build failed",
        part.name,
        "dbt's full log: ",
    )
    assert kept(wh) == before, line
    assert not list(wh.warehouse.glob("*before-build*"))
    part.write_bytes(data)
    res = cli("build", "--select", "mart_build_info", "--warehouse", str(wh.warehouse))
    assert res.returncode == 0, res.stderr
    assert sha256_of(wh.duckdb) != before["predictabase.duckdb"]  # a successful build does replace it
    _record(
        "build failing on a truncated token-score file",
        "one line naming the file and dbt's log; working database and snapshot byte-identical",
    )


def test_build_killed_inside_dbt_is_undone_by_the_next_writer(wh, tiny_gpt2_dir, tmp_path):
    """SIGKILL while dbt writes the working database: the next writer to take the lock puts back the database as
    it was before that build, and says so."""
    before = kept(wh)
    res = cli("build", "--warehouse", str(wh.warehouse), env=cli_env(PREDICTABASE_FAILPOINT="build.dbt_node"))
    assert res.returncode == -9, res.stderr
    assert (wh.warehouse / ".predictabase.duckdb.before-build").is_file()
    wal = wh.duckdb.with_name("predictabase.duckdb.wal")
    assert wal.stat().st_size > 0  # what dbt had written: opening the database would replay it
    models = tmp_path / "models.toml"
    models.write_text(f'[[model]]\nname = "{tiny_gpt2_dir}"\ncorpora = ["ucl"]\ntop_k = 3\n')
    res = cli("refresh", "--dry-run", "--models", str(models), "--warehouse", str(wh.warehouse))
    assert res.returncode == 0, res.stderr
    assert "a build was killed before it finished: the working database is back as it was" in res.stderr
    assert kept(wh) == before and not list(wh.warehouse.glob("*before-build*")) and not wal.exists()
    _record(
        "build SIGKILLed while dbt writes the working database",
        "the next writer puts the database back as it was before the build, and says so",
    )


# --------------------------------------------------------------------------- 5. the live store, read-only folder


def test_live_store_in_a_folder_that_cannot_be_written_is_read(wh):
    """The live games' store whose folder is mounted read-only (SQLite cannot create its -shm file there): the
    build's flush reads it anyway (immutable: nobody can be writing it) and its players reach the warehouse. With
    answers still in a -wal file it refuses, saying why. Unguarded, every build failed with 'unable to open
    database file'."""
    store = live.store_path(wh.warehouse)
    ada = live.new_player(store, "Ada Lovelace", consent=True)
    assert not store.with_name(store.name + "-wal").exists()  # the last connection closed: all in the file
    folder = store.parent
    script = (
        f"mount --bind {folder} {folder}\nmount -o remount,bind,ro {folder}\n"
        f"{CLI} build --select stg_live_players --warehouse {wh.warehouse}"
    )
    res = _in_namespace(script, cli_env())
    assert res.returncode == 0, res.stderr[-2000:]
    assert rows(wh, "SELECT player_id, display_name FROM raw.live_players") == [(ada, "Ada Lovelace")]
    # answers still in the write-ahead log (a writer died before its checkpoint): the cause, in one line
    wal = store.with_name(store.name + "-wal")
    wal.write_bytes(b"\0" * 4096)
    live.new_player(store, "Grace", consent=True)  # a change the recorded digest does not know yet
    wal.write_bytes(b"\0" * 4096)
    res = _in_namespace(script, cli_env())
    user_error(
        subprocess.CompletedProcess([], res.returncode, res.stdout, res.stderr),
        "live/answers.sqlite",
        "is not writable",
        "make the folder writable",
    )
    _record(
        "build with the live store's folder not writable",
        "the store is read (immutable) and flushed; with a pending -wal, one line naming the cause",
    )


# --------------------------------------------------------------------------- 6. odd inputs


def test_odd_inputs_are_refused(wh, tmp_path):
    """A reading time `NaN` (not "not read": that is empty or NA) and a NUL byte inside a text: `corpus add` refuses
    each in one line naming the file and line, nothing written. (`sql --memory-limit=-1GB`: tests/test_faults.py's
    BAD_ARGS; the parsers' cases: tests/test_user_corpus_input.py.)"""
    w = ["--warehouse", str(wh.warehouse)]
    words = tmp_path / "words.csv"
    words.write_text("text_id,word_id,word\n1,1,The\n1,2,cat\n1,3,sat.\n")
    rt = tmp_path / "rt.csv"
    rt.write_text("text_id,word_id,rt_ms\n1,1,310\n1,2,NaN\n1,3,280\n")
    texts = tmp_path / "texts.csv"
    texts.write_bytes(b"text_id,text\n1,The c\x00at sat.\n")
    before = kept(wh)
    user_error(
        cli("corpus", "add", "mine", "--texts", str(words), "--reading-times", str(rt), "--measure", "spr", *w),
        str(rt),
        "line 3, column rt_ms: 'NaN' is not a finite number",
    )
    user_error(cli("corpus", "add", "mine", "--texts", str(texts), *w), str(texts), "line 2: a NUL byte")
    assert kept(wh) == before and not (wh.raw / "user").exists() and not (wh.warehouse / "corpora.toml").exists()
    _record("corpus add with a NaN reading time / a NUL byte in a text", "refused in one line; nothing written")


# --------------------------------------------------------------------------- 7. the smaller ones


def test_a_changed_source_file_that_no_job_reads_stops_ingest(wh):
    """Every file under raw/ is verified at ingest, read or not: natural_stories/words.tsv is read by no job."""
    words = wh.raw / "natural_stories/words.tsv"
    words.write_bytes(words.read_bytes().replace(b"\t", b" ", 1))
    before = kept(wh)
    user_error(
        cli("ingest", "ucl", "--warehouse", str(wh.warehouse)),
        "natural_stories/words.tsv",
        "does not match the catalog's",
        "read or not",
    )
    assert kept(wh) == before
    _record("ingest with a changed source file that no job reads", "refused in one line naming the file")


def test_refresh_dry_run_says_it_is_a_dry_run(wh, mirror, tiny_gpt2_dir, tmp_path):
    """A dry run with work to do ends with what it is, not "nothing changed"; nothing is written."""
    (wh.raw / "ucl_devarda/all_measures.csv").unlink()
    models = tmp_path / "models.toml"
    models.write_text(f'[[model]]\nname = "{tiny_gpt2_dir}"\ncorpora = ["ucl"]\ntop_k = 3\n')
    before = kept(wh)
    res = cli(
        "refresh", "--dry-run", "--mirror", str(mirror), "--models", str(models), "--warehouse", str(wh.warehouse)
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert any("would fetch 1 file(s)" in x for x in lines), res.stdout
    assert lines[-1].split("s  ", 1)[1] == "dry run: nothing written; a refresh would do the steps above", lines
    assert kept(wh) == before and not (wh.raw / "ucl_devarda/all_measures.csv").exists()
    _record("refresh --dry-run with work to do", "ends with 'dry run: nothing written'; nothing written")


def test_query_errors_name_their_subject(wh):
    """DuckDB's binder and catalog errors come with a subject, like every other error."""
    user_error(
        cli("sql", "-c", "SELECT nope FROM mart_models", "--warehouse", str(wh.warehouse)), "error: query: Binder Error"
    )
    user_error(
        cli("sql", "-c", "SELECT * FROM no_such_mart", "--warehouse", str(wh.warehouse)), "error: query: Catalog Error"
    )
    _record("sql with a binder or catalog error", "one line with its subject (query)")
