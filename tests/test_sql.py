"""`predictabase sql` and predictabase.sql against the session's real published snapshot (conftest.real_warehouse,
read-only use: the CLI runs on a scratch warehouse directory whose marts.duckdb is a symlink to it, so the
runs log it appends goes there). Every refusal comes from DuckDB's configuration and carries its reason;
the snapshot file is byte-identical afterwards; results through the real CLI equal a direct DuckDB read."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from predictabase import sql
from predictabase.cli import app
from predictabase.sql import SqlError, collect, execute, readonly_connection

CLI = str(Path(sys.executable).with_name("predictabase"))
PERPLEXITY = (
    "SELECT model_key, corpus, n_tokens, token_perplexity, bits_per_byte FROM mart_model_perplexity "
    "ORDER BY model_key, corpus"
)
LONG = (
    "SELECT sum(a.range * b.range) AS s FROM range(1000) a CROSS JOIN range(1000000000000) b"  # ~forever, tiny memory
)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def wh(real_warehouse, tmp_path) -> Path:
    """A warehouse directory for the CLI whose snapshot is the shared real one (a symlink, never a copy)."""
    d = tmp_path / "wh"
    d.mkdir()
    (d / "marts.duckdb").symlink_to(real_warehouse.marts)
    return d


def cli(wh: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    return subprocess.run(
        [CLI, "sql", "--warehouse", str(wh), *args], input=stdin, env=env, capture_output=True, text=True, timeout=120
    )


def direct(real_warehouse, query: str) -> pa.Table:
    with duckdb.connect(str(real_warehouse.marts), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")  # as predictabase.sql's connection
        return con.sql(query).to_arrow_table()


def run(con, query: str, cap: int | None = None, **kw):
    return execute(con, query, timeout_s=kw.pop("timeout_s", 60), consume=lambda r: collect(r, cap), **kw)


def test_every_way_out_is_refused_with_its_reason(real_warehouse, tmp_path):
    """Writes, ATTACH, COPY TO, EXPORT, reading local files, INSTALL/LOAD and settings: each refused by DuckDB's
    configuration with the reason in front; no file appears, no secret leaks, the snapshot is byte-identical."""
    snapshot = real_warehouse.marts
    before, listing = sha256(snapshot), sorted(p.name for p in snapshot.parent.iterdir())
    secret_csv = tmp_path / "secret.csv"
    secret_csv.write_text("name,value\nSECRET-CSV-7f3a,1\n")
    secret_parquet = tmp_path / "secret.parquet"
    pq.write_table(pa.table({"v": ["SECRET-PARQUET-9b1c"]}), secret_parquet)
    fake_extension = tmp_path / "evil.duckdb_extension"
    fake_extension.write_bytes(b"\x7fELF not really")
    written = [tmp_path / "copy.csv", tmp_path / "export", tmp_path / "new.duckdb", tmp_path / "copy.parquet"]
    q = lambda p: "'" + str(p) + "'"  # noqa: E731
    cases = [
        ("INSERT INTO mart_models SELECT * FROM mart_models", sql.READ_ONLY),
        ("UPDATE mart_model_perplexity SET token_perplexity = 0", sql.READ_ONLY),
        ("DELETE FROM mart_model_perplexity", sql.READ_ONLY),
        ("CREATE TABLE pwned AS SELECT 1 AS x", sql.READ_ONLY),
        ("DROP TABLE mart_model_perplexity", sql.READ_ONLY),
        ("ALTER TABLE mart_models RENAME TO gone", sql.READ_ONLY),
        ("CREATE MACRO twice(x) AS 2 * x", sql.READ_ONLY),
        (f"ATTACH {q(written[2])} AS fresh", sql.FILES),
        (f"ATTACH {q(snapshot)} AS rw (READ_WRITE)", sql.FILES),
        (f"COPY (SELECT 1) TO {q(written[0])}", sql.FILES),
        (f"COPY mart_models TO {q(written[3])} (FORMAT parquet)", sql.FILES),
        (f"EXPORT DATABASE {q(written[1])}", sql.FILES),
        (f"SELECT * FROM read_csv({q(secret_csv)})", sql.FILES),
        (f"SELECT * FROM read_text({q(secret_csv)})", sql.FILES),
        (f"SELECT * FROM read_blob({q(secret_csv)})", sql.FILES),
        (f"SELECT * FROM {q(secret_csv)}", sql.FILES),
        (f"SELECT * FROM read_parquet({q(secret_parquet)})", sql.FILES),
        (f"SELECT * FROM sniff_csv({q(secret_csv)})", sql.FILES),
        (f"SELECT * FROM glob({q(tmp_path / '*')})", sql.FILES),
        ("INSTALL httpfs", sql.EXTENSIONS),
        ("LOAD httpfs", sql.EXTENSIONS),
        (f"LOAD {q(fake_extension)}", sql.EXTENSIONS),
        ("LOAD json", sql.EXTENSIONS),  # built into DuckDB: DuckDB itself would allow it
        ("LOAD parquet", sql.EXTENSIONS),
        ("SELECT 1; LOAD json", sql.EXTENSIONS),
        ("SET enable_external_access = true", sql.SETTINGS),
        ("SET disabled_filesystems = ''", sql.SETTINGS),
        ("SET memory_limit = '100GB'", sql.SETTINGS),
        ("RESET memory_limit", sql.SETTINGS),
        ("PRAGMA threads = 64", sql.SETTINGS),
        ("SET lock_configuration = false", sql.SETTINGS),
        ("SET temp_directory = '/tmp'", sql.SETTINGS),
        ("PRAGMA enable_profiling", sql.SETTINGS),
    ]
    con = readonly_connection(snapshot, memory_limit="500MB", threads=1)
    try:
        assert con.execute(
            "SELECT current_setting('enable_external_access'), current_setting('lock_configuration'), "
            "current_setting('autoload_known_extensions'), current_setting('autoinstall_known_extensions'), "
            "current_setting('allow_community_extensions'), current_setting('threads')"
        ).fetchone() == (False, True, False, False, False, 1)
        wrong = []
        for statement, reason in cases:
            with pytest.raises(SqlError) as refused:
                run(con, statement)
            message = str(refused.value)
            if not message.startswith(reason + ": ") or "\n" in message or "SECRET" in message:
                wrong.append((statement, message))
        assert wrong == [], wrong
        # what stays allowed lives in this session's memory only, and the marts still read
        run(con, "CREATE TEMP TABLE mine AS SELECT 41 AS x; CREATE TEMP MACRO plus1(x) AS x + 1")
        assert run(con, "SELECT plus1(x) AS y FROM mine").table.to_pylist() == [{"y": 42}]
        run(con, "CHECKPOINT")
        n = direct(real_warehouse, "SELECT count(*) AS n FROM mart_model_perplexity").column("n")[0].as_py()
        assert run(con, "SELECT count(*) AS n FROM mart_model_perplexity").table.column("n")[0].as_py() == n > 0
        # leaving the snapshot and attaching its file again, read-write: the file system is gone
        run(con, "USE memory; DETACH snap")
        with pytest.raises(SqlError, match=f"^{sql.FILES}: Permission Error"):
            run(con, f"ATTACH {q(snapshot)} AS again (READ_WRITE)")
    finally:
        con.close()
    assert [p for p in written if p.exists()] == []
    assert sha256(snapshot) == before
    assert sorted(p.name for p in snapshot.parent.iterdir()) == listing  # no WAL, no temp files
    con = readonly_connection(snapshot)  # the temp table died with its connection
    try:
        with pytest.raises(SqlError, match="Table with name mine does not exist"):
            run(con, "SELECT * FROM mine")
    finally:
        con.close()


def test_timeout_and_memory_limit(real_warehouse, wh):
    con = readonly_connection(real_warehouse.marts, memory_limit="64MB", threads=1)
    try:
        with pytest.raises(SqlError) as cancelled:
            run(con, LONG, timeout_s=0.5)
        assert str(cancelled.value) == "query cancelled after 0.5 s (--timeout)"
        with pytest.raises(SqlError) as oom:
            run(con, "SELECT list(range) AS l FROM range(50000000)", memory_limit="64MB")
        assert str(oom.value).startswith(f"{sql.MEMORY} of 64MB (--memory-limit): Out of Memory Error")
        assert run(con, "SELECT 1 AS one").table.to_pylist() == [{"one": 1}]  # the connection is still usable
    finally:
        con.close()
    res = cli(wh, "-c", LONG, "--timeout", "1")
    assert (res.returncode, res.stderr.strip()) == (2, "error: query cancelled after 1 s (--timeout)")


def test_cli_results_equal_a_direct_read(real_warehouse, wh, tmp_path):
    """-c through the real CLI: csv, markdown and parquet hold exactly what DuckDB reads from the snapshot;
    the runs log of those commands is the `runs` table of the next."""
    expected = direct(real_warehouse, PERPLEXITY)
    assert expected.num_rows >= 2 and {"gpt3-davinci"} <= set(expected.column("model_key").to_pylist())

    res = cli(wh, "-c", PERPLEXITY, "--format", "csv")
    assert res.returncode == 0, res.stderr
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows[0] == expected.schema.names
    want = [
        ["" if v is None else repr(v) if isinstance(v, float) else str(v) for v in row.values()]
        for row in expected.to_pylist()
    ]
    assert rows[1:] == want
    assert [float(r[3]) for r in rows[1:]] == expected.column("token_perplexity").to_pylist()  # exact floats

    res = cli(wh, "-c", PERPLEXITY, "--format", "markdown")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "| model_key | corpus | n_tokens | token_perplexity | bits_per_byte |"
    assert lines[1] == "|---|---|---:|---:|---:|"
    assert len(lines) == 2 + expected.num_rows and all(line.count(" | ") == 4 for line in lines[2:])
    assert lines[2].startswith(f"| {want[0][0]} | {want[0][1]} | {want[0][2]} |")

    out = tmp_path / "result.parquet"
    out.write_bytes(b"an older file")
    res = cli(
        wh,
        "-c",
        "SELECT * FROM mart_model_perplexity ORDER BY model_key, corpus",
        "--format",
        "parquet",
        "--output",
        str(out),
    )
    assert res.returncode == 0, res.stderr
    assert pq.read_table(out).equals(
        direct(real_warehouse, "SELECT * FROM mart_model_perplexity ORDER BY model_key, corpus")
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.parquet", "wh"]  # replaced, no temp left

    res = cli(wh, "-c", "SELECT command, status, rows_out FROM runs ORDER BY started_at", "--format", "csv")
    assert res.returncode == 0, res.stderr
    assert list(csv.reader(io.StringIO(res.stdout)))[1:] == [
        ["sql", "ok", str(expected.num_rows)],
        ["sql", "ok", str(expected.num_rows)],
        ["sql", "ok", str(expected.num_rows)],
        ["sql", "running", ""],
    ]


def test_options_out_of_range_and_no_snapshot(wh, tmp_path):
    runner = CliRunner()
    empty = tmp_path / "empty"  # a warehouse with nothing built yet: a corpus declared, no snapshot
    empty.mkdir()
    (empty / "corpora.toml").touch()
    cases = {
        ("--format", "xml"): "error: --format: 'xml' is not allowed; one of table, csv, json, parquet, markdown",
        ("--timeout", "0"): "error: --timeout: 0.0 is not allowed; seconds, more than 0 and at most 86,400",
        ("--format", "parquet"): "error: --output: --format parquet writes a file: give --output FILE",
        ("--memory-limit", "lots"): "error: --memory-limit: 'lots' is not allowed; a size > 0 with its unit",
        ("--memory-limit=-1GB",): "error: --memory-limit: '-1GB' is not allowed; a size > 0 with its unit",
        (
            "--output",
            str(tmp_path / "no" / "x.csv"),
            "--format",
            "csv",
        ): f"error: --output: {tmp_path / 'no'} does not exist",
    }
    for args, message in cases.items():
        res = runner.invoke(app, ["sql", "--warehouse", str(wh), "-c", "SELECT 1", *args])
        text = " ".join(res.output.split())
        assert res.exit_code == 2 and text.startswith(message), (args, res.output)
        assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    out = tmp_path / "interval.parquet"  # a type Parquet has no place for: one line, no file, no temp file
    res = runner.invoke(
        app,
        [
            "sql",
            "--warehouse",
            str(wh),
            "-c",
            "SELECT INTERVAL 1 DAY AS i",
            "--format",
            "parquet",
            "--output",
            str(out),
        ],
    )
    assert res.exit_code == 2 and " ".join(res.output.split()).startswith(f"error: {sql.PARQUET}: "), res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "wh"]
    res = cli(empty, "-c", "SELECT 1")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert " ".join(res.stderr.split()) == (
        f"error: {empty / 'marts.duckdb'}: no published snapshot yet; "
        "run `predictabase build` (or `predictabase all`) first"
    )


def at_a_terminal(wh: Path, script: str, *args: str, home: Path) -> tuple[str, str, int]:
    """`sql` with its standard input a terminal (a pseudo-terminal fed `script`, then Ctrl-D): stdout with the
    prompts and the banner taken out, stderr and the exit code."""
    import pty

    env = {k: v for k, v in os.environ.items() if not k.startswith("PREDICTABASE_")}
    env["PREDICTABASE_SQL_HISTORY"] = str(home / "history")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [CLI, "sql", "--warehouse", str(wh), *args],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    os.close(slave)
    try:
        os.write(master, script.encode() + b"\x04")  # Ctrl-D at the start of a line: end of input
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(master)
    lines = out.replace("predictabase> ", "").replace("          ...> ", "").splitlines()
    assert lines[0].startswith("predictabase SQL on "), lines[:2]  # the banner a terminal gets
    return "\n".join(lines[1:]).strip() + "\n", err, proc.returncode


def test_interactive_shell(real_warehouse, wh, tmp_path):
    """At a terminal: statements over several lines, a bad one (one error line, the shell goes on), .tables,
    .schema, Ctrl-D."""
    n_models = direct(real_warehouse, "SELECT count(*) AS n FROM mart_models").column("n")[0].as_py()
    stdout, stderr, code = at_a_terminal(
        wh,
        (
            "SELECT count(*) AS n_models\n  FROM mart_models;\n"
            "SELECT * FROM no_such_mart;\n"
            "DROP TABLE mart_models;\n"
            ".tables\n"
            ".schema mart_model_perplexity\n"
            "SELECT 'still here' AS s;\n"
        ),
        "--format",
        "csv",
        home=tmp_path,
    )
    assert code == 0, stderr
    out = stdout.splitlines()
    assert out[:2] == ["n_models", str(n_models)]
    assert ["s", "still here"] == out[-2:]
    assert {"mart_models", "mart_model_perplexity", "runs", "snapshot_info"} <= set(out)  # .tables
    assert any("token_perplexity" in line and "DOUBLE" in line for line in out)  # .schema
    res = SimpleNamespace(stderr=stderr)
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2
    assert errors[0].startswith("error: query: Catalog Error: Table with name no_such_mart does not exist")
    assert errors[1].startswith(f"error: {sql.READ_ONLY}: Invalid Input Error")
