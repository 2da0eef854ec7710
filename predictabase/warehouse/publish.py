"""Publish the marts snapshot the dashboard reads: `publish` copies the finished marts, as they are,
into a fresh DuckDB file and atomically swaps it onto `paths.marts`, unless they would lose what
the published snapshot has (the publish guard)."""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb

from predictabase.core.config import Paths
from predictabase.core.errors import BuildError
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import file_mode, temp_prefix
from predictabase.warehouse import freshness

MARTS_SCHEMA = "marts"  # schema of the marts in predictabase.duckdb (see macros/generate_schema_name.sql)


def mart_names(paths: Paths) -> list[str]:
    """The mart tables in the working warehouse."""
    with duckdb.connect(str(paths.duckdb), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name",
            [MARTS_SCHEMA]).fetchall()
    return [r[0] for r in rows]


#: the table `publish` adds to every snapshot: its own id (what the dashboard keys its cache on)
SNAPSHOT_INFO = "snapshot_info"
#: the snapshot's marts with dbt's description and domain; their columns with type and description, and the
#: reader's header and number format of those the pages show (the column's `meta` in dbt's YAML)
SNAPSHOT_MARTS = "snapshot_marts"
SNAPSHOT_COLUMNS = "snapshot_columns"
#: `dbt source freshness` as checked by the build behind the snapshot (predictabase.warehouse.freshness)
SOURCE_FRESHNESS = "source_freshness"
#: the metadata tables publish writes into every snapshot besides the marts; never marts themselves
#: (not listed by `published_tables`, not compared by the publish guard)
SNAPSHOT_META = frozenset({SNAPSHOT_INFO, SNAPSHOT_MARTS, SNAPSHOT_COLUMNS, SOURCE_FRESHNESS})
#: columns whose values name what a mart covers; a value present in the published snapshot and
#: missing from the new marts is a lost corpus, model or dataset
IDENTITY_COLUMNS = ("corpus", "model_key", "dataset", "predictor")
#: identity values renamed on purpose: present under the new name is not lost (catalog dataset names
#: became the ingest names when the dataset definitions were introduced)
RENAMED = {"corpus_lm_game": "lm_game", "corpus_natural_stories": "natural_stories", "corpus_provo": "provo",
           "corpus_ucl": "ucl", "lm_game_pairwise": "pairwise", "in_the_wild": "wild",
           "logprobs_gpt3_natural_stories": "gpt3_natural_stories"}


@dataclass(frozen=True)
class MartProfile:
    rows: int
    identities: dict[str, frozenset]  # column -> distinct values


def _profile(con: duckdb.DuckDBPyConnection, qualified: str, without: tuple[str, ...] = ()) -> MartProfile:
    """Rows and identity values of a mart; `without`: corpora whose rows do not count (removed on purpose)."""
    cols = [r[0] for r in con.execute(f"DESCRIBE {qualified}").fetchall()]
    keep = "TRUE"
    if without and "corpus" in cols:
        keep = "corpus IS NULL OR corpus NOT IN (" + ", ".join("'" + c.replace("'", "''") + "'" for c in without) + ")"
    rows = con.execute(f"SELECT count(*) FROM {qualified} WHERE {keep}").fetchall()[0][0]
    ids = {}
    for c in IDENTITY_COLUMNS:
        if c in cols:
            ids[c] = frozenset(str(r[0]) for r in con.execute(f'SELECT DISTINCT "{c}" FROM {qualified} '
                                                               f'WHERE "{c}" IS NOT NULL AND ({keep})').fetchall())
    return MartProfile(int(rows), ids)


#: marts that restate other marts' values (the scoreboard): a corpus, model or predictor they lose is lost in the
#: mart it comes from, where the guard sees it; compared by rows only, so that a model scored on a removed user
#: corpus alone (a predictor of every comparison, its other cells empty) does not read as a loss
RESTATING_MARTS = frozenset({"mart_scoreboard", "mart_scoreboard_long", "mart_scoreboard_gaps"})


def _profiles(con: duckdb.DuckDBPyConnection, catalog: str, schema: str, names: list[str],
              without: tuple[str, ...] = ()) -> dict[str, MartProfile]:
    out = {n: _profile(con, f'{catalog}.{schema}."{n}"', without) for n in names}
    return {n: MartProfile(p.rows, {}) if n in RESTATING_MARTS else p for n, p in out.items()}


def removed_corpora(con: duckdb.DuckDBPyConnection, paths: Paths, old_names: list[str]) -> tuple[str, ...]:
    """The user corpora of the published snapshot (`old`) no longer declared: removed with `corpus remove`, so
    losing them is what the user asked for, not a shrink (nor losing a model scored on them alone)."""
    if "mart_corpora" not in old_names:
        return ()
    from predictabase.ingest.corpus_declarations import user_corpora
    had = {r[0] for r in con.execute("SELECT corpus FROM old.main.mart_corpora WHERE origin = 'user'").fetchall()}
    return tuple(sorted(had - set(user_corpora(paths))))


def shrinkage(old: dict[str, MartProfile], new: dict[str, MartProfile]) -> list[str]:
    """What publishing `new` over `old` would lose: marts, all rows of a mart, or a corpus/model/dataset."""
    lost = []
    for name, before in sorted(old.items()):
        after = new.get(name)
        if after is None:
            lost.append(f"{name} missing")
            continue
        if before.rows > 0 and after.rows == 0:
            lost.append(f"{name} emptied ({before.rows} -> 0 rows)")
            continue
        for col, values in before.identities.items():
            present = after.identities.get(col, frozenset())
            gone = sorted(v for v in values if v not in present and RENAMED.get(v) not in present)
            if gone:
                shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
                lost.append(f"{name} lost {col} {shown}")
    return lost


def published_tables(marts: Path) -> list[str] | None:
    """The marts of the published snapshot (None when there is none or it cannot be read)."""
    if not marts.exists():
        return None
    try:
        with duckdb.connect(":memory:") as con:
            con.execute(f"ATTACH '{_quote(marts)}' AS snap (READ_ONLY)")
            rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'snap' "
                               "AND table_schema = 'main' ORDER BY 1").fetchall()
    except duckdb.Error:
        return None
    return [r[0] for r in rows if r[0] not in SNAPSHOT_META]


def manifest_path(paths: Paths) -> Path:
    """dbt's manifest of the last dbt command over this warehouse (dbt writes it to its target path)."""
    return freshness.target_dir(paths) / "manifest.json"


def manifest_marts(paths: Paths) -> dict[str, dict]:
    """The mart models of dbt's manifest (every model in schema marts), by table name: each with its
    `description`, `domain` (its folder under models/marts, the domain tag) and `columns`
    ({name: {"description", "label", "format"}}: the label and number format from the column's meta, None
    where it has none). {} when there is no readable manifest."""
    try:
        nodes = json.loads(manifest_path(paths).read_text()).get("nodes", {})
    except (OSError, ValueError):
        return {}
    out = {}
    for node in nodes.values():
        if node.get("resource_type") != "model" or node.get("schema") != MARTS_SCHEMA:
            continue
        fqn = node.get("fqn") or []
        domain = fqn[2] if len(fqn) > 3 and fqn[1] == "marts" else next(iter(node.get("tags") or []), None)
        out[node.get("alias") or node["name"]] = {
            "description": (node.get("description") or "").strip() or None, "domain": domain,
            "columns": {c: _column_doc(v) for c, v in (node.get("columns") or {}).items()}}
    return out


def _column_doc(column: dict) -> dict[str, str | None]:
    """A manifest column's description, and the label and format of its meta (dbt 1.10+ writes the YAML's
    `config: {meta: ...}` into both the column's `config.meta` and its `meta`)."""
    meta = {**(column.get("meta") or {}), **((column.get("config") or {}).get("meta") or {})}

    def text(value) -> str | None:
        return (str(value).strip() or None) if value is not None else None
    return {"description": text(column.get("description")), "label": text(meta.get("label")),
            "format": text(meta.get("format"))}


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def publish(paths: Paths, allow_shrink: bool = False) -> Path:
    """Copy every mart into a new DuckDB file and atomically replace `paths.marts` with it.

    The snapshot holds the marts as tables of its `main` schema, named as in dbt
    (`mart_model_perplexity`, ...), plus the metadata tables `SNAPSHOT_META`: `snapshot_info` (its id,
    when and from which build), `snapshot_marts` / `snapshot_columns` (every mart and column, with the
    descriptions of dbt's manifest and the labels and formats of its columns' meta) and `source_freshness` (the
    build's `dbt source freshness`).
    Readers holding the old file keep reading it; the next open sees the new one. The working
    warehouse is opened read-only and only for the copy.

    Guard: unless `allow_shrink`, a snapshot that would lose a mart, empty a mart that has rows,
    or drop a corpus, model, dataset or predictor the published one covers is refused
    (BuildError) and the published snapshot stays as it was. A user corpus removed with `corpus remove` (in
    the snapshot, no longer declared) is not counted: its rows may go, with the models scored on it alone. A build over a missing or partly
    ingested warehouse produces exactly such marts.
    """
    if not paths.duckdb.exists():
        raise BuildError(paths.duckdb, "no warehouse to publish; run `predictabase build` first")
    names = mart_names(paths)
    if not names:
        raise BuildError(paths.duckdb, f"no tables in schema {MARTS_SCHEMA}; run dbt build first")
    tmp = paths.warehouse / f"{temp_prefix('marts')}new.duckdb"
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(tmp)) as con:
            con.execute(f"ATTACH '{_quote(paths.duckdb)}' AS wh (READ_ONLY)")
            old_names = published_tables(paths.marts)
            if old_names is not None and not allow_shrink:
                con.execute(f"ATTACH '{_quote(paths.marts)}' AS old (READ_ONLY)")
                removed = removed_corpora(con, paths, old_names)
                lost = shrinkage(_profiles(con, "old", "main", old_names, removed),
                                 _profiles(con, "wh", MARTS_SCHEMA, names))
                con.execute("DETACH old")
                if lost:
                    shown = "; ".join(lost[:6]) + (f"; and {len(lost) - 6} more" if len(lost) > 6 else "")
                    raise BuildError(paths.marts, f"refusing to publish marts that lose what the published "
                                                   f"snapshot has ({shown}); is the warehouse missing or partly "
                                                   "ingested? Pass --allow-shrink to publish them anyway")
            build = _build_info(con)
            con.execute("BEGIN TRANSACTION")
            for name in names:
                con.execute(f'CREATE TABLE main."{name}" AS SELECT * FROM wh.{MARTS_SCHEMA}."{name}"')
            _write_metadata(con, paths, names)
            con.execute(f"CREATE TABLE main.{SNAPSHOT_INFO} AS SELECT ? AS snapshot_id, "
                        "now()::TIMESTAMPTZ AS published_at, ? AS dbt_invocation_id, ? AS n_marts, "
                        "? AS allowed_shrink", [uuid.uuid4().hex, build, len(names), allow_shrink])
            con.execute("COMMIT")
            con.execute("DETACH wh")
            con.execute("CHECKPOINT")
        os.chmod(tmp, file_mode())
        failpoint("publish.copied")
        os.replace(tmp, paths.marts)
        failpoint("publish.replaced")
    except Exception as exc:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        if isinstance(exc, BuildError):
            raise
        raise BuildError(paths.marts, f"publishing the marts failed: {exc}") from exc
    return paths.marts


def _write_metadata(con: duckdb.DuckDBPyConnection, paths: Paths, names: list[str]) -> None:
    """`snapshot_marts` and `snapshot_columns` (every published mart and column, described, labelled and
    formatted from dbt's manifest, typed from the published table) and `source_freshness` (the build's
    freshness check)."""
    described = manifest_marts(paths)
    marts, columns = [], []
    for name in names:
        doc = described.get(name, {})
        cols = con.execute(f'DESCRIBE main."{name}"').fetchall()
        marts.append((name, doc.get("description"), doc.get("domain"), len(cols)))
        docs = doc.get("columns", {})
        for i, (column, dtype, *_) in enumerate(cols, 1):
            d = docs.get(column, {})
            columns.append((name, column, dtype, d.get("description"), i, d.get("label"), d.get("format")))
    con.execute(f"CREATE TABLE main.{SNAPSHOT_MARTS} (mart VARCHAR, description VARCHAR, domain VARCHAR, "
                "n_columns INTEGER)")
    con.executemany(f"INSERT INTO main.{SNAPSHOT_MARTS} VALUES (?, ?, ?, ?)", marts)
    con.execute(f"CREATE TABLE main.{SNAPSHOT_COLUMNS} (mart VARCHAR, column_name VARCHAR, data_type VARCHAR, "
                "description VARCHAR, ordinal INTEGER, label VARCHAR, format VARCHAR)")
    if columns:
        con.executemany(f"INSERT INTO main.{SNAPSHOT_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?)", columns)
    con.execute(f"CREATE TABLE main.{SOURCE_FRESHNESS} ("
                + ", ".join(f"{c} {t}" for c, t in freshness.COLUMNS) + ")")
    rows = freshness.read_record(paths)
    if rows:
        con.executemany(f"INSERT INTO main.{SOURCE_FRESHNESS} VALUES ({', '.join('?' * len(freshness.COLUMNS))})",
                        [[r.get(c) for c, _ in freshness.COLUMNS] for r in rows])


def _build_info(con: duckdb.DuckDBPyConnection) -> str | None:
    try:
        row = con.execute(f"SELECT invocation_id FROM wh.{MARTS_SCHEMA}.mart_build_info LIMIT 1").fetchone()
    except duckdb.Error:
        return None
    return str(row[0]) if row else None
