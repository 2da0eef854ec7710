"""The refresh's plans for the first two stages: which catalog files a fetch would copy or download, and which
ingest jobs must run again and why."""

from __future__ import annotations

from predictabase.core.config import Paths
from predictabase.refresh.state import connect_ro


def fetch_plan(paths: Paths) -> list[str]:
    """Catalog paths a fetch would copy or download (missing, or not the catalog's sha256)."""
    from predictabase.core.fsutil import sha256_of
    from predictabase.ingest.sources.catalog import load_catalog

    out = []
    for sf in load_catalog():
        dest = paths.raw / sf.path
        if not dest.exists() or sha256_of(dest) != sf.sha256:
            out.append(sf.path)
    return out


def _raw_tables(paths: Paths) -> set[str]:
    if not paths.duckdb.exists():
        return set()
    with connect_ro(paths.duckdb) as con:
        return {
            f"raw.{r[0]}"
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'"
            ).fetchall()
        }


def plan_ingest(paths: Paths) -> dict[str, str]:
    """job -> why it must be (re-)ingested, in registry order; {} when every job is current."""
    from predictabase.ingest.corpus_declarations import INPUT_KEY, declarations_sha256
    from predictabase.ingest.datasets.registry import JOBS, NAMES, catalog_versions, code_version, read_ingest_log
    from predictabase.ingest.sources.catalog import load_catalog
    from predictabase.ingest.sources.references import INPUT_KEY as REFERENCES_KEY
    from predictabase.ingest.sources.references import references_sha256

    log = read_ingest_log(paths)
    catalog = {sf.path: sf.sha256 for sf in load_catalog()}
    catalog[INPUT_KEY] = declarations_sha256(paths)  # the user's corpora (`predictabase corpus add`)
    catalog[REFERENCES_KEY] = references_sha256()  # the references beside the catalog (ingest/sources/references.toml)
    from predictabase.core.live import digest, store_path
    from predictabase.ingest.datasets.live import INPUT_KEY as LIVE_KEY

    catalog[LIVE_KEY] = digest(store_path(paths.warehouse))  # the live games' answers (the dashboard appends them)
    tables = _raw_tables(paths)
    todo: dict[str, str] = {}
    for name in NAMES:
        row = log.get(name)
        if row is None:
            todo[name] = "never ingested"
            continue
        if row["code_version"] != code_version(name):
            todo[name] = "its loader code changed"
            continue
        changed = sorted(p for p, sha in row["inputs"].items() if catalog.get(p) != sha)
        if INPUT_KEY in changed:
            todo[name] = "the user's corpora changed (corpus add / remove)"
            continue
        if LIVE_KEY in changed:
            todo[name] = "players answered in the live games"
            continue
        if changed:
            todo[name] = f"{changed[0]} changed" + (f" (+{len(changed) - 1} more)" if len(changed) > 1 else "")
            continue
        now = catalog_versions(row["datasets"])
        moved = sorted(d for d, v in (row.get("datasets") or {}).items() if now.get(d) != v)
        if moved:
            todo[name] = f"the catalog of {', '.join(moved)} changed"
            continue
        missing = sorted(t for t in row["tables"] if t.startswith("raw.") and t not in tables)
        if missing:
            todo[name] = f"{missing[0]} is missing"
    for name in NAMES:  # registry order: a dependency comes first
        if name not in todo:
            deps = [d for d in JOBS[name].after if d in todo]
            if deps:
                todo[name] = f"it reads {deps[0]}, re-ingested"
    return {n: todo[n] for n in NAMES if n in todo}
