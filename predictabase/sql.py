"""Ad-hoc SQL on the published snapshot: `predictabase sql` (shell, `-c`) and the dashboard's SQL page.

Read-only is enforced by DuckDB's own configuration, never by looking at the SQL. A connection
(`readonly_connection`) is an in-memory DuckDB database that

1. starts with `memory_limit`, `threads`, no temporary directory (nothing spills to disk, so the
   memory limit is a hard limit), extension auto-install and auto-load off, community and unsigned
   extensions refused, Python replacement scans off (a query cannot read a variable of this process),
   and persistent secrets off;
2. ATTACHes the snapshot `READ_ONLY` as `snap` and `USE`s it (an in-memory database, not
   `duckdb.connect(path)`: DuckDB's per-path instance cache could hand back a replaced snapshot file,
   see dashboards/data.py). Every write to it (INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, a macro
   in it) is refused by DuckDB;
3. copies the runs log (`<warehouse>/runs.jsonl`, read here in Python) into a temporary table `runs`;
4. sets `enable_external_access = false` (no COPY TO/FROM, EXPORT DATABASE, read_csv/read_text/
   read_parquet/glob of files, ATTACH of files, INSTALL/LOAD), then
   `disabled_filesystems = 'LocalFileSystem'`. The second is needed: switching external access off
   adds the files of the databases attached at that moment to `allowed_paths`, so without it a user
   could `USE memory; DETACH snap` and ATTACH the snapshot file again read-write. With the local
   file system disabled no file can be opened at all; the snapshot stays readable through the file
   handle DuckDB already holds;
5. sets `lock_configuration = true`: no SET/RESET/PRAGMA can change any of this back.

What remains allowed, on purpose: temporary tables, views and macros (`CREATE TEMP ...`, or
anything in the `memory` catalog) live in the session's own memory, count against the memory limit
and vanish with the connection; `DETACH snap` only takes the snapshot away from this session.

DuckDB has no statement timeout: the query runs in a worker thread while the calling thread watches the
clock and Ctrl-C, and either interrupts the connection (`con.interrupt()`).
Errors become one line (`SqlError`) with the reason first and DuckDB's own message after it.
"""

from __future__ import annotations

import contextlib
import csv
import decimal
import io
import json
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from predictabase.core.errors import EXIT_INTERRUPTED, OptionError, PredictabaseError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import remove_dead_temporaries, temp_prefix
from predictabase.runs import COLUMNS as RUNS_COLUMNS
from predictabase.runs import read_runs

SNAPSHOT_ALIAS = "snap"
TABLE_ROWS = 1000  # rows the `table` format prints (csv, markdown and parquet give every row)

# The reasons in front of DuckDB's message (the tests and docs/guides/sql.md quote them).
READ_ONLY = "the snapshot is read-only"
FILES = "reading or writing files is disabled in this shell"
EXTENSIONS = "installing or loading extensions is disabled"
SETTINGS = "settings are locked in this shell"
MEMORY = "the query needs more memory than the limit"  # + " of 2GB (--memory-limit)" where known
PARQUET = "this result cannot be written as Parquet (cast the column, e.g. to VARCHAR)"
QUERY = "query"  # the subject of an error in the query itself (Binder Error, Catalog Error, Parser Error)
NO_SNAPSHOT = "no published snapshot yet; run `predictabase build` (or `predictabase all`) first"


class SqlError(PredictabaseError):
    """A query that DuckDB refused or that failed; the message is one line, reason first."""

    def __init__(self, problem: str, file: str | Path | None = None):
        super().__init__(file, problem)


class SqlInterrupted(SqlError):
    """A query (or the connecting) cancelled with Ctrl-C: exit code 130, as for every command."""

    exit_code = EXIT_INTERRUPTED


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= 500 else text[:497] + "..."


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --------------------------------------------------------------------------------------------
# the connection


def readonly_connection(
    snapshot: Path, memory_limit: str = "2GB", threads: int = 2, runs_log: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A locked, read-only DuckDB connection on the published snapshot (see the module docstring).

    `runs_log`: the warehouse's runs log, offered as the temporary table `runs` (default: the
    `runs.jsonl` beside the snapshot). Raises SqlError when the snapshot does not exist and
    OptionError for a memory limit DuckDB does not understand. Close the connection after use.
    """
    snapshot = Path(snapshot)
    if not snapshot.is_file():
        raise SqlError(NO_SNAPSHOT, snapshot)
    try:
        con = duckdb.connect(
            ":memory:",
            config={
                "memory_limit": memory_limit,
                "threads": int(threads),
                "temp_directory": "",  # no spilling to disk: memory_limit is the limit
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "allow_community_extensions": False,
                "allow_unsigned_extensions": False,
                "python_enable_replacements": False,
                "allow_persistent_secrets": False,
            },
        )
    except duckdb.Error as exc:
        if "memory" in str(exc).lower():
            raise OptionError(
                "--memory-limit",
                f"{memory_limit!r} is not a memory size DuckDB understands, e.g. 2GB or 500MB ({_one_line(exc)})",
            ) from None
        raise OptionError("--threads", f"{threads!r} refused by DuckDB: {_one_line(exc)}") from None
    try:
        con.execute("SET TimeZone = 'UTC'")  # timestamps with time zone print in UTC (as in the dashboard)
        con.execute(f"ATTACH {_quote(str(snapshot))} AS {SNAPSHOT_ALIAS} (READ_ONLY)")
        con.execute(f"USE {SNAPSHOT_ALIAS}")
        _create_runs_table(con, runs_log if runs_log is not None else snapshot.parent / "runs.jsonl")
        con.execute("SET allow_extension_repositories = 'forbidden'")
        con.execute("SET enable_external_access = false")
        con.execute("SET disabled_filesystems = 'LocalFileSystem'")
        con.execute("SET lock_configuration = true")
    except duckdb.IOException as exc:  # replaced or removed between the check and the ATTACH
        con.close()
        raise SqlError(f"cannot open the snapshot: {_one_line(exc)}", snapshot) from None
    except BaseException:
        con.close()
        raise
    return con


def _runs_rows(runs_log: Path) -> list[dict]:
    try:
        return read_runs(runs_log)
    except Exception:  # noqa: BLE001 - a damaged log never stops a query on the marts
        return []


def _create_runs_table(con: duckdb.DuckDBPyConnection, runs_log: Path) -> None:
    """temp.main.runs: the runs log as it is now (read in Python, before file access is switched off)."""
    import json

    rows = _runs_rows(runs_log)

    def text(v):
        return None if v is None else (json.dumps(v, default=str) if isinstance(v, dict | list) else str(v))

    def integer(v):
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    ints = {"pid", "rows_in", "rows_out"}
    table = pa.table(
        {
            c: pa.array(
                [(integer if c in ints else text)(r.get(c)) for r in rows], pa.int64() if c in ints else pa.string()
            )
            for c in RUNS_COLUMNS
        }
    )
    con.register("_runs_log", table)
    try:
        con.execute("""
            CREATE TEMP TABLE runs AS
            SELECT run_id, parent_run_id, command, args::JSON AS args, pid,
                   TRY_CAST(started_at AS TIMESTAMPTZ) AS started_at, TRY_CAST(ended_at AS TIMESTAMPTZ) AS ended_at,
                   status, rows_in, rows_out, error
            FROM _runs_log""")
    finally:
        con.unregister("_runs_log")


# --------------------------------------------------------------------------------------------
# running a query


def explain_error(exc: duckdb.Error, statement_type: str | None = None, memory_limit: str | None = None) -> str:
    """One line: why DuckDB refused or failed the statement, then DuckDB's own message (its first line
    for refusals, whose further lines only suggest settings that are locked here)."""
    first = _one_line(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    lower = str(exc).lower()
    if "configuration has been locked" in lower or "modifying the" in lower:
        return f"{SETTINGS}: {first}"
    if isinstance(exc, duckdb.PermissionException):
        if statement_type == "LOAD" or "extension" in lower:
            return f"{EXTENSIONS}: {first}"
        return f"{FILES}: {first}"
    if "read-only mode" in lower or "read-only database" in lower:
        return f"{READ_ONLY}: {first}"
    if isinstance(exc, duckdb.OutOfMemoryException):
        limit = f" of {memory_limit} (--memory-limit)" if memory_limit else ""
        return f"{MEMORY}{limit}: {first}"
    return f"{QUERY}: {_one_line(exc)}"  # a binder, catalog or parser error: the query is the subject


@dataclass
class Result:
    """A query's result: its columns and (up to the row cap) its rows as an Arrow table."""

    table: pa.Table
    truncated: bool  # more rows than the cap; `table` holds the first `cap`

    @property
    def num_rows(self) -> int:
        return self.table.num_rows


def _seconds(s: float) -> str:
    return f"{s:g}"


def _watched(con: duckdb.DuckDBPyConnection, work: Callable[[], object], timeout_s: float | None):
    """Run `work` (which uses `con`) in a worker thread while this thread watches the clock and Ctrl-C:
    either interrupts the connection (`con.interrupt()`). DuckDB has no statement timeout, and a SIGINT
    reaches Python only in Python code, not while this thread would sit inside DuckDB.
    Returns (value, error, why): why is None, "timeout" or "ctrl-c"."""
    worker = _Worker(work)
    deadline = time.monotonic() + timeout_s if timeout_s else None
    why = None
    try:  # a Ctrl-C can land while the thread starts (it may reach DuckDB before start() returns)
        worker.start("predictabase-sql")
    except KeyboardInterrupt:
        why = "ctrl-c"
    while not worker.done.is_set():
        try:
            if worker.done.wait(0.05):
                break
            if why is None and deadline is not None and time.monotonic() >= deadline:
                why = "timeout"
            if why is not None:  # again every 50 ms: an interrupt that lands before a query starts is lost
                with contextlib.suppress(duckdb.Error):  # busy (building a relation refuses a second caller)
                    con.interrupt()
        except KeyboardInterrupt:
            why = why or "ctrl-c"
    return worker.value, worker.error, why


class _Worker:
    """`fn` in a daemon thread: its value or exception, and an event set when it ends (not Thread.join: a Ctrl-C
    inside join() can leave is_alive() False too early)."""

    def __init__(self, fn: Callable[[], object]) -> None:
        self.fn, self.value, self.error, self.done = fn, None, None, threading.Event()

    def _run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self.error = exc
        finally:
            self.done.set()

    def start(self, name: str) -> None:
        threading.Thread(target=self._run, name=name, daemon=True).start()


def within_deadline(connect: Callable[[], duckdb.DuckDBPyConnection], timeout_s: float) -> duckdb.DuckDBPyConnection:
    """`connect()` (opening the snapshot: a slow disk, a network file system) under the same watchdog as a query:
    SqlError after `timeout_s` seconds, SqlInterrupted on Ctrl-C (the process ends then, the connection with it)."""
    worker = _Worker(connect)
    deadline = time.monotonic() + timeout_s
    try:
        worker.start("predictabase-sql-connect")
        while not worker.done.wait(0.05):
            if time.monotonic() >= deadline:
                raise SqlError(f"opening the snapshot took longer than {_seconds(timeout_s)} s (--timeout)")
    except KeyboardInterrupt:
        raise SqlInterrupted("opening the snapshot cancelled (Ctrl-C)") from None
    if worker.error is not None:
        raise worker.error
    return worker.value


def execute(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    timeout_s: float | None,
    consume: Callable[[pa.RecordBatchReader], object],
    limit_name: str = "--timeout",
    memory_limit: str | None = None,
):
    """Run every statement of `sql` (split by DuckDB's own parser) under one deadline; `consume` gets
    the last statement's result as a stream of Arrow record batches and its return value is returned.
    Raises SqlError (one line) for anything DuckDB refuses, fails or cancels (timeout, Ctrl-C)."""
    stype: list[str | None] = [None]

    def work():
        con.abort()  # a result the caller left unfetched would block this query
        statements = con.extract_statements(sql)
        if not statements:
            raise SqlError("no SQL statement in the query")
        for statement in statements:  # LOAD of a built-in extension (json, parquet) would succeed: refuse them all
            if statement.type.name == "LOAD":
                raise SqlError(f"{EXTENSIONS}: {_one_line(statement.query)[:80]}")
        for statement in statements[:-1]:  # run to the end, results dropped
            stype[0] = statement.type.name
            con.execute(statement)
            con.complete()
        stype[0] = statements[-1].type.name
        failpoint("sql.query_started")
        relation = con.sql(statements[-1].query)  # the last one's result streams
        reader = (
            relation.to_arrow_reader(10_000)
            if relation is not None
            else pa.RecordBatchReader.from_batches(pa.schema([]), [])
        )
        try:
            return consume(reader)
        finally:
            reader.close()  # a stream left open (a capped result) would block the next query

    value, error, why = _watched(con, work, timeout_s)
    if error is None:
        return value
    if why == "timeout":
        raise SqlError(f"query cancelled after {_seconds(timeout_s)} s ({limit_name})")
    if why == "ctrl-c":
        raise SqlInterrupted("query cancelled (Ctrl-C)")
    if isinstance(error, duckdb.InterruptException):
        raise SqlError("query cancelled")
    if isinstance(error, duckdb.Error):
        raise SqlError(explain_error(error, stype[0], memory_limit))
    raise error


def collect(reader: pa.RecordBatchReader, cap: int | None) -> Result:
    """The first `cap` rows of a stream (all when cap is None), and whether there were more."""
    batches, n = [], 0
    for batch in reader:
        if cap is not None and n + batch.num_rows > cap:
            batches.append(batch.slice(0, cap - n))
            return Result(pa.Table.from_batches(batches, schema=reader.schema), truncated=True)
        batches.append(batch)
        n += batch.num_rows
    return Result(pa.Table.from_batches(batches, schema=reader.schema), truncated=False)


def query(
    snapshot: Path,
    sql: str,
    *,
    timeout_s: float = 60.0,
    memory_limit: str = "2GB",
    threads: int = 2,
    cap: int | None = None,
    runs_log: Path | None = None,
    limit_name: str = "--timeout",
) -> Result:
    """Open a read-only connection, run `sql`, keep at most `cap` rows, close (the dashboard's way)."""
    con = readonly_connection(snapshot, memory_limit=memory_limit, threads=threads, runs_log=runs_log)
    try:
        return execute(
            con,
            sql,
            timeout_s=timeout_s,
            consume=lambda r: collect(r, cap),
            limit_name=limit_name,
            memory_limit=memory_limit,
        )
    finally:
        con.close()


# --------------------------------------------------------------------------------------------
# output formats


def _interval(v) -> str:
    """An Arrow month-day-nano interval as DuckDB prints it: `1 month 2 days 00:00:01.317`."""
    parts = [f"{n} {unit}{'s' if abs(n) != 1 else ''}" for n, unit in ((v.months, "month"), (v.days, "day")) if n]
    if v.nanoseconds or not parts:
        sign, ns = ("-" if v.nanoseconds < 0 else ""), abs(v.nanoseconds)
        seconds, frac = divmod(ns, 1_000_000_000)
        clock = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        parts.append(clock + (f".{frac:09d}".rstrip("0") if frac else ""))
    return " ".join(parts)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, pa.MonthDayNano):
        return _interval(value)
    return str(value)


def write_csv(reader: pa.RecordBatchReader, out: io.TextIOBase) -> int:
    """CSV with a header; NULL as an empty field; floats in their shortest exact form."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(reader.schema.names)
    n = 0
    for batch in reader:
        for row in zip(*(col.to_pylist() for col in batch.columns)):
            w.writerow([_cell(v) for v in row])
            n += 1
    return n


def _json_value(value):
    """A cell as JSON: numbers and booleans as themselves (NaN and infinities as null, decimals as numbers),
    lists and structs as arrays and objects, everything else (dates, intervals, ...) as DuckDB prints it."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return _cell(value)


def write_json(reader: pa.RecordBatchReader, out: io.TextIOBase) -> int:
    """A JSON array of objects, one row per line (column -> value); NULL, NaN and infinities as null."""
    names = reader.schema.names
    n = 0
    out.write("[")
    for batch in reader:
        for row in zip(*(col.to_pylist() for col in batch.columns)):
            out.write(
                ("\n" if n == 0 else ",\n")
                + json.dumps(dict(zip(names, map(_json_value, row))), ensure_ascii=False, allow_nan=False)
            )
            n += 1
    out.write("\n]\n" if n else "]\n")
    return n


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def write_markdown(reader: pa.RecordBatchReader, out: io.TextIOBase) -> int:
    """A GitHub-flavoured Markdown table; numeric columns right-aligned."""
    schema = reader.schema
    numeric = [
        pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type) for f in schema
    ]
    out.write("| " + " | ".join(_md(n) for n in schema.names) + " |\n")
    out.write("|" + "|".join("---:" if num else "---" for num in numeric) + "|\n")
    n = 0
    for batch in reader:
        for row in zip(*(col.to_pylist() for col in batch.columns)):
            out.write("| " + " | ".join(_md(_cell(v)) for v in row) + " |\n")
            n += 1
    return n


def write_parquet(reader: pa.RecordBatchReader, path: Path) -> int:
    """Stream the result into a Parquet file (written beside `path`, then renamed over it)."""
    import pyarrow.parquet as pq

    n = 0
    try:
        with _atomic(path, binary=True) as tmp:
            with pq.ParquetWriter(tmp, reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
                    n += batch.num_rows
    except pa.ArrowException as exc:  # a type Parquet has no place for (INTERVAL, UNION, ...)
        raise SqlError(f"{PARQUET}: {_one_line(exc)}") from None
    return n


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as a Parquet file in memory (the dashboard's download); SqlError for a type Parquet lacks."""
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    try:
        pq.write_table(table, buf)
    except pa.ArrowException as exc:
        raise SqlError(f"{PARQUET}: {_one_line(exc)}") from None
    return buf.getvalue()


@contextlib.contextmanager
def _atomic(path: Path, binary: bool = False) -> Iterator[str]:
    """A temporary file beside `path` (`.<name>-<pid>-*.tmp`), renamed over it only when the block succeeds. The
    temporaries of killed runs writing the same file (their pid gone) are removed first."""
    remove_dead_temporaries(path.parent, path.name, ".tmp")
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp", dir=path.parent)
    os.close(fd)
    failpoint("sql.output_opened")
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 -> what a plain open() would have given
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def print_table(result: Result, console=None) -> None:
    """A rich table on stdout (the first TABLE_ROWS rows), and how many rows there were on stderr."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(soft_wrap=False)
    t = Table(show_header=True, header_style="bold", show_lines=False)
    for f in result.table.schema:
        numeric = pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
        t.add_column(f.name, justify="right" if numeric else "left", overflow="fold")
    for row in zip(*(c.to_pylist() for c in result.table.columns)):
        t.add_row(*["NULL" if v is None else _cell(v) for v in row])
    console.print(t)
    note = (
        f"first {result.num_rows:,} rows shown (more exist; use --format csv, json, markdown or parquet for every row)"
        if result.truncated
        else f"{result.num_rows:,} row{'s' if result.num_rows != 1 else ''}"
    )
    print(note, file=sys.stderr)


# --------------------------------------------------------------------------------------------
# the command


def _check_output(fmt: str, output: Path | None, interactive: bool) -> None:
    if interactive and output is not None:
        raise OptionError("--output", "writes the result of -c; give a query with -c")
    if interactive and fmt == "parquet":
        raise OptionError("--format", "parquet writes a file: use it with -c and --output FILE")
    if fmt == "parquet" and output is None:
        raise OptionError("--output", "--format parquet writes a file: give --output FILE")
    if output is not None:
        if fmt == "table":
            raise OptionError(
                "--output", "writes csv, json, markdown or parquet; add --format csv|json|markdown|parquet"
            )
        if output.is_dir():
            raise OptionError("--output", f"{output} is a directory; give a file name")
        if not output.parent.is_dir():
            raise OptionError("--output", f"{output.parent} does not exist")


def _emit(fmt: str, reader: pa.RecordBatchReader, output: Path | None) -> int:
    if fmt == "table":
        result = collect(reader, TABLE_ROWS)
        print_table(result)
        return result.num_rows
    if fmt == "parquet":
        assert output is not None
        return write_parquet(reader, output)
    writer = {"csv": write_csv, "markdown": write_markdown, "json": write_json}[fmt]
    if output is None:
        n = writer(reader, sys.stdout)
        sys.stdout.flush()
        return n
    with _atomic(output) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            n = writer(reader, f)
    return n


def cli_sql(
    paths,
    *,
    query: str | None,
    fmt: str = "table",
    output: Path | None = None,
    timeout_s: float = 60.0,
    memory_limit: str = "2GB",
    threads: int = 2,
) -> int | None:
    """`predictabase sql`: with `query` run it and print or write the result (the number of result rows
    is returned); without, an interactive shell (None). One-line errors (SqlError, OptionError)."""
    output = Path(output) if output is not None else None
    _check_output(fmt, output, interactive=query is None)
    con = within_deadline(
        lambda: readonly_connection(paths.marts, memory_limit=memory_limit, threads=threads, runs_log=paths.runs_log),
        timeout_s,
    )
    try:
        if query is not None:
            try:
                return execute(
                    con, query, timeout_s=timeout_s, consume=lambda r: _emit(fmt, r, output), memory_limit=memory_limit
                )
            except BrokenPipeError:  # `... | head`: the reader has what it wanted
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return None
        Shell(con, fmt=fmt, timeout_s=timeout_s, snapshot=paths.marts, memory_limit=memory_limit).loop()
        return None
    finally:
        with contextlib.suppress(duckdb.Error):  # busy: a query still unwinding; the process is ending anyway
            con.close()


# --------------------------------------------------------------------------------------------
# the interactive shell

HELP = """\
Statements end with ';' and may span lines. The snapshot's marts are tables here (see .tables);
`runs` is the warehouse's runs log as it was when the shell opened. Read-only: writes, files,
ATTACH, extensions and settings are refused.
  .tables          the snapshot's tables (and runs)
  .schema NAME     a table's columns (with their descriptions when the snapshot has them)
  .help            this text
  .quit            leave (or Ctrl-D)"""


class Shell:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        fmt: str,
        timeout_s: float,
        snapshot: Path,
        memory_limit: str | None = None,
        stdin=None,
    ):
        self.con, self.fmt, self.timeout_s, self.snapshot = con, fmt, timeout_s, snapshot
        self.memory_limit = memory_limit
        self.stdin = stdin or sys.stdin
        self.tty = self.stdin.isatty()
        self.line_no = 0  # lines read so far (an error on piped input names the line)

    def error(self, message: str) -> None:
        self.fail(SqlError(message))

    def fail(self, exc: SqlError) -> None:
        """At a terminal, print the error and go on; on piped input, stop with it (see `run`)."""
        if self.tty:
            print(f"error: {_one_line(str(exc))}", file=sys.stderr, flush=True)
            return
        raise type(exc)(f"{exc} (line {self.line_no} of the input; the lines after it were not run)") from None

    def _readline(self, prompt: str) -> str:
        self.line_no += 1
        if self.tty:
            return input(prompt)
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def _history(self) -> None:
        if not self.tty:
            return
        try:
            import atexit
            import readline
        except ImportError:
            return
        hist = Path(os.environ.get("PREDICTABASE_SQL_HISTORY", Path.home() / ".predictabase_sql_history"))
        with contextlib.suppress(OSError):
            readline.read_history_file(hist)
        readline.set_history_length(1000)

        def save() -> None:
            with contextlib.suppress(OSError):
                readline.write_history_file(hist)

        atexit.register(save)

    def loop(self) -> None:
        self._history()
        if self.tty:
            print(f"predictabase SQL on {self.snapshot} (read-only; .help for help, .quit to leave)")
        buffer: list[str] = []
        while True:
            try:
                line = self._readline("predictabase> " if not buffer else "          ...> ")
            except EOFError:
                if buffer:
                    self.run("\n".join(buffer))
                if self.tty:
                    print()
                return
            except KeyboardInterrupt:
                if not self.tty:  # a script on piped input: stop (exit 130)
                    raise
                buffer = []
                print()
                continue
            if not buffer and line.strip().startswith("."):
                if self.dot(line.strip()) is False:
                    return
                continue
            if not buffer and not line.strip():
                continue
            buffer.append(line)
            if line.rstrip().endswith(";"):
                self.run("\n".join(buffer))
                buffer = []

    def run(self, sql: str) -> None:
        """Run one statement. At a terminal an error is printed and the shell goes on; on piped input (a script)
        the first failing statement or dot command ends the run (exit 2, or 130 for Ctrl-C), naming its line, as
        psql's ON_ERROR_STOP and DuckDB's own shell do: the statements after it would run on a state it did not
        make."""
        try:
            execute(
                self.con,
                sql,
                timeout_s=self.timeout_s,
                consume=lambda r: _emit(self.fmt, r, None),
                memory_limit=self.memory_limit,
            )
        except SqlError as exc:
            self.fail(exc)

    def dot(self, line: str) -> bool | None:
        word, _, arg = line.partition(" ")
        arg = arg.strip().rstrip(";").strip()
        if word in (".quit", ".exit", ".q"):
            return False
        if word == ".help":
            print(HELP)
        elif word == ".tables":
            rows = self.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE (table_catalog = ? AND table_schema = 'main') "
                "OR table_catalog = 'temp' ORDER BY table_name",
                [SNAPSHOT_ALIAS],
            ).fetchall()
            print("\n".join(r[0] for r in rows))
        elif word == ".schema":
            if not arg:
                self.error(".schema needs a table name, e.g. .schema mart_model_perplexity")
            else:
                self.schema(arg)
        else:
            self.error(f"unknown command {word}; .help lists the commands")
        return None

    def schema(self, name: str) -> None:
        cols = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
            "AND (table_catalog = ? OR table_catalog = 'temp') ORDER BY table_catalog = 'temp', ordinal_position",
            [name, SNAPSHOT_ALIAS],
        ).fetchall()
        if not cols:
            self.error(f"no table {name} in the snapshot; .tables lists them")
            return
        descriptions: dict[str, str] = {}
        with contextlib.suppress(duckdb.Error):
            descriptions = dict(
                self.con.execute(
                    "SELECT column_name, description FROM snapshot_columns WHERE mart = ?", [name]
                ).fetchall()
            )
        from rich.console import Console
        from rich.table import Table

        t = Table("column", "type", "description", title=name, title_justify="left")
        for col, dtype in cols:
            t.add_row(col, dtype, descriptions.get(col) or "")
        Console(soft_wrap=False).print(t)
