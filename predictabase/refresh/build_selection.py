"""The refresh's build stage: fingerprints of everything dbt reads, the dbt selection for what changed since the
last successful build (`state:modified+` against its manifest when the project changed), and the build state
that lets a killed refresh publish without building again."""

from __future__ import annotations

import hashlib
import json
import shutil
from importlib import metadata
from pathlib import Path

from predictabase.core.config import DBT_PROJECT_DIR, Paths
from predictabase.core.failpoints import failpoint
from predictabase.core.fsutil import atomic_path
from predictabase.ingest.scoring.steps import STEPS
from predictabase.refresh.state import STATE, STATE_DIR, connect_ro, digest, read_json, utc_now, write_json

#: marts that describe the build itself (row counts, invocation): rebuilt whenever dbt runs
INVENTORY_MARTS = ("mart_build_info", "mart_warehouse_tables")
#: the model steps' Parquet folders dbt reads as sources, found in a source's (rendered) external_location; the
#: first that occurs wins, so the last step's comes first (an older manifest reaches the cloze runs through
#: token_scores/..)
PARQUET_DIRS = tuple(reversed([s.output for s in STEPS.values()]))


def _project_hash(project_dir: Path = DBT_PROJECT_DIR) -> str:
    """sha256 of every file of the dbt project (not its logs/, target/, dbt_packages/)."""
    h = hashlib.sha256()
    for f in sorted(project_dir.rglob("*")):
        rel = f.relative_to(project_dir)
        if (
            not f.is_file()
            or rel.parts[0] in {"logs", "target", "dbt_packages"}
            or "__pycache__" in rel.parts
            or f.name.startswith(".")
        ):
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _dbt_versions() -> str:
    out = []
    for pkg in ("dbt-core", "dbt-duckdb", "duckdb"):
        try:
            out.append(f"{pkg}=={metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            out.append(f"{pkg}==?")
    return " ".join(out)


def _runs_stamp(root: Path, pattern: str) -> str:
    """The complete runs under a Parquet folder: their `_run.json` files' paths (the run id is a hash of
    everything the run is made of) and sizes; not mtimes, so a copied warehouse is the same warehouse."""
    if not root.exists():
        return digest([])
    return digest([[str(f.relative_to(root)), f.stat().st_size] for f in sorted(root.glob(pattern))])


def fingerprints(paths: Paths) -> dict:
    """What the dbt models are built from, cheaply: per raw table the ingests that wrote it (raw.ingest_log),
    raw.source_files, the complete runs of each Parquet source, the dbt project's files, the dbt version."""
    from predictabase.ingest.datasets.registry import read_ingest_log

    tables: dict[str, list] = {}
    for job, row in sorted(read_ingest_log(paths).items()):
        for t in row["tables"]:
            if t.startswith("raw."):
                tables.setdefault(t, []).append([job, row["ingest_id"]])
    source_files = None
    if paths.duckdb.exists():
        import duckdb

        with connect_ro(paths.duckdb) as con:
            try:
                source_files = digest(
                    con.execute(
                        "SELECT path, sha256, origin, fetched_at FROM raw.source_files ORDER BY path"
                    ).fetchall()
                )
            except duckdb.Error:
                source_files = None
    parquet = {s.output: _runs_stamp(getattr(paths, s.output), s.run_glob) for s in STEPS.values()}
    return {
        "raw": {t: digest(v) for t, v in sorted(tables.items())},
        "source_files": source_files,
        "parquet": parquet,
        "project": _project_hash(),
        "dbt": _dbt_versions(),
    }


def _state_path(paths: Paths) -> Path:
    return paths.warehouse / STATE_DIR / STATE


def _manifest_dir(paths: Paths, name: str) -> Path:
    return paths.warehouse / "dbt" / "state" / name


def load_state(paths: Paths) -> dict:
    """The build state: {"built": {...}, "published": {...}} (either may be absent)."""
    return read_json(_state_path(paths))


def _manifest_sources(manifest: dict) -> dict[str, list[dict]]:
    """table key -> the sources that read it: "raw.<table>" for DuckDB sources, the Parquet folder name for
    external ones ("?" for an external source this module does not know)."""
    out: dict[str, list[dict]] = {}
    for src in (manifest.get("sources") or {}).values():
        location = str(
            (src.get("meta") or {}).get("external_location")
            or (src.get("config") or {}).get("meta", {}).get("external_location")
            or ""
        )
        if location:
            key = next((d for d in PARQUET_DIRS if f"/{d}/" in location), "?")
        else:
            key = f"{src.get('schema')}.{src.get('identifier') or src.get('name')}"
        out.setdefault(key, []).append(src)
    return out


def dbt_selection(paths: Paths, built: dict | None, now: dict) -> tuple[str | None, list[str], list[str]] | None:
    """(select, extra dbt args, reasons) for what changed since `built`; (None, [], [why]) for a full build;
    None when nothing dbt reads changed."""
    if not built or not built.get("fingerprints"):
        return None, [], ["no earlier build"]
    old = built["fingerprints"]
    mdir = _manifest_dir(paths, str(built.get("manifest")))
    manifest = read_json(mdir / "manifest.json")
    if not manifest:
        return None, [], ["the manifest of the last build is missing"]
    if old.get("dbt") != now["dbt"]:
        return None, [], [f"dbt changed ({old.get('dbt')} -> {now['dbt']})"]
    sources = _manifest_sources(manifest)
    changed_tables = sorted(
        t for t in set(old.get("raw", {})) | set(now["raw"]) if old.get("raw", {}).get(t) != now["raw"].get(t)
    )
    if old.get("source_files") != now["source_files"]:
        changed_tables.append("raw.source_files")
    changed_dirs = sorted(d for d in now["parquet"] if old.get("parquet", {}).get(d) != now["parquet"][d])
    project = old.get("project") != now["project"]
    selectors: list[str] = []
    reasons: list[str] = []
    for key in changed_tables + changed_dirs + (["?"] if changed_dirs else []):
        for src in sources.get(key, []):
            sel = f"source:{src['source_name']}.{src['name']}+"
            if sel not in selectors:
                selectors.append(sel)
    if changed_tables:
        reasons.append(
            f"{len(changed_tables)} raw table(s) changed: {', '.join(changed_tables[:4])}"
            + (" ..." if len(changed_tables) > 4 else "")
        )
    if changed_dirs:
        reasons.append(f"new complete runs in {', '.join(changed_dirs)}")
    extra: list[str] = []
    if project:
        selectors.append("state:modified+")
        extra = ["--state", str(mdir)]
        reasons.append("the dbt project changed")
    if not selectors:
        return ("", [], reasons) if reasons else None  # changed, but nothing dbt reads
    nodes = {n.get("name") for n in (manifest.get("nodes") or {}).values()}
    selectors += [m for m in INVENTORY_MARTS if m in nodes]
    return " ".join(selectors), extra, reasons


def _warehouse_invocation(paths: Paths) -> str | None:
    import duckdb

    try:
        with connect_ro(paths.duckdb) as con:
            row = con.execute("SELECT invocation_id FROM marts.mart_build_info LIMIT 1").fetchone()
    except duckdb.Error:
        return None
    return str(row[0]) if row else None


def _snapshot_info(paths: Paths) -> tuple[str | None, str | None]:
    """(snapshot_id, dbt_invocation_id) of the published snapshot; (None, None) when it cannot be read."""
    if not paths.marts.exists():
        return None, None
    import duckdb

    try:
        with duckdb.connect(":memory:") as con:
            con.execute(f"ATTACH '{str(paths.marts).replace(chr(39), chr(39) * 2)}' AS snap (READ_ONLY)")
            row = con.execute("SELECT snapshot_id, dbt_invocation_id FROM snap.main.snapshot_info").fetchone()
    except duckdb.Error:
        return None, None
    return (str(row[0]), None if row[1] is None else str(row[1])) if row else (None, None)


def _save_built(paths: Paths, now: dict, select: str | None) -> dict:
    """After a successful dbt build: keep its manifest (for the next `state:modified`) and record what it
    was built from. The manifest goes into a folder named by its hash first; the state file, replaced
    atomically, is what names it, so a kill in between leaves the previous build's state whole."""
    target = paths.warehouse / "dbt" / "target" / "manifest.json"
    data = target.read_bytes()
    name = hashlib.sha256(data).hexdigest()[:12]
    mdir = _manifest_dir(paths, name)
    if not (mdir / "manifest.json").exists():
        with atomic_path(mdir / "manifest.json") as tmp:
            tmp.write_bytes(data)
    built = {
        "fingerprints": now,
        "manifest": name,
        "invocation_id": _warehouse_invocation(paths),
        "select": select,
        "at": utc_now(),
    }
    state = load_state(paths)
    state["built"] = built
    write_json(_state_path(paths), state)
    for old in (paths.warehouse / "dbt" / "state").iterdir():  # earlier builds' manifests
        if old.is_dir() and old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return built


def _save_published(paths: Paths, now: dict) -> None:
    state = load_state(paths)
    state["published"] = {"fingerprints": now, "snapshot_id": _snapshot_info(paths)[0], "at": utc_now()}
    write_json(_state_path(paths), state)
    failpoint("refresh.state_saved")


PENDING = "(pending)"


def _with_pending(now: dict, pending: dict | None) -> dict:
    """The fingerprints a dry run expects after the steps it did not run: the raw tables of the jobs it would
    ingest, raw.source_files when it would fetch, the Parquet folders of the tasks it would score."""
    if not pending:
        return now
    out = json.loads(json.dumps(now))
    for t in pending.get("raw", ()):
        out["raw"][t] = PENDING
    if pending.get("source_files"):
        out["source_files"] = PENDING
    for d in pending.get("parquet", ()):
        out["parquet"][d] = PENDING
    return out


def build_step(paths: Paths, dry_run: bool = False, pending: dict | None = None) -> tuple[str, str, str | None, bool]:
    """Bring the warehouse's dbt models and the published snapshot up to date with the inputs;
    returns (action, detail, dbt selection run or None when dbt did not run ("" = everything), published).
    `pending` (dry runs): what the skipped steps would change (`_with_pending`)."""
    now = _with_pending(fingerprints(paths), pending if dry_run else None)
    state = load_state(paths)
    built, published = state.get("built"), state.get("published")
    snapshot_id, snapshot_invocation = _snapshot_info(paths)
    if published and published.get("fingerprints") == now and snapshot_id is not None:
        return "nothing to do", "the published snapshot was built from the current inputs", None, False
    invocation = _warehouse_invocation(paths) if paths.duckdb.exists() else None
    plan = dbt_selection(paths, built, now)
    # the warehouse's dbt models are current when nothing dbt reads changed since the last successful
    # build (a dbt run since over the same inputs and project, e.g. `predictabase build`, builds the same)
    current = bool(built and invocation and (plan is None or plan[0] == ""))
    if current:
        why = "no input dbt reads changed" if built.get("fingerprints") != now else "dbt already built them"
        if snapshot_invocation == invocation:  # e.g. killed after publishing, before recording it
            if not dry_run:
                _save_built_same(paths, built, now, invocation)
                _save_published(paths, now)
            return "recorded", f"{why}; the snapshot of that build is published", None, False
        if dry_run:
            return "would publish", why, None, False
        from predictabase.warehouse.publish import publish

        _save_built_same(paths, built, now, invocation)
        publish(paths)
        _save_published(paths, now)
        return "published", f"{why} (an earlier refresh stopped before publishing)", None, True
    select, extra, reasons = (
        plan if plan is not None and plan[0] != "" else (None, [], ["the warehouse holds no dbt build"])
    )
    what = "(everything)" if select is None else select
    if dry_run:
        return "would build and publish", f"{'; '.join(reasons)}; dbt build --select {what}", select or "", False
    from predictabase.warehouse.build import build_and_publish

    # the build state is saved between dbt and publish, so a refresh killed after dbt publishes without
    # building again
    build_and_publish(paths, select=select, extra_dbt_args=extra, after_dbt=lambda: _save_built(paths, now, select))
    _save_published(paths, now)
    return "built and published", f"{'; '.join(reasons)}; dbt build --select {what}", select or "", True


def built_models(paths: Paths) -> list[str]:
    """The dbt models and seeds the last dbt invocation over this warehouse built (its run_results.json)."""
    results = read_json(paths.warehouse / "dbt" / "target" / "run_results.json").get("results") or []
    return sorted(
        r["unique_id"].split(".")[-1]
        for r in results
        if str(r.get("unique_id", "")).startswith(("model.", "seed.")) and r.get("status") == "success"
    )


def record_full_build(paths: Paths, now: dict) -> None:
    """`predictabase build` without --select just built and published everything from the inputs `now`
    (fingerprinted before dbt ran): the next refresh starts from that build instead of a full one."""
    _save_built(paths, now, None)
    _save_published(paths, now)


def _save_built_same(paths: Paths, built: dict, now: dict, invocation: str | None) -> None:
    """The last build stands for the current inputs (they moved only where dbt does not read)."""
    state = load_state(paths)
    state["built"] = {**built, "fingerprints": now, "invocation_id": invocation}
    write_json(_state_path(paths), state)
