"""dbt source freshness over the fetched files, recorded for the snapshot.

`source_freshness(paths)` runs `dbt source freshness` (the thresholds are declared on the sources in
dbt_project/models/staging/*/_*__sources.yml: today `raw.source_files`, loaded at `fetched_at`), reads
dbt's `target/sources.json` and writes one row per source table to `<warehouse>/dbt/source_freshness.json`,
which `publish` copies into the snapshot's `source_freshness` table (the home page shows it).

A stale source is a finding, not a failed build: a `warn` or `error` status is recorded and printed,
and the build goes on to publish. So does a failure of the freshness step itself (dbt cannot query a
source, or dbt fails outright): it is recorded as status `runtime error` with dbt's message.
"""
from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.fsutil import atomic_path

#: the columns of the snapshot's `source_freshness` table, in order (publish creates it from these)
COLUMNS = (("source_name", "VARCHAR"), ("table_name", "VARCHAR"), ("loaded_at_field", "VARCHAR"),
           ("max_loaded_at", "TIMESTAMPTZ"), ("snapshotted_at", "TIMESTAMPTZ"), ("age_s", "DOUBLE"),
           ("status", "VARCHAR"), ("warn_after", "VARCHAR"), ("error_after", "VARCHAR"), ("error", "VARCHAR"))


def target_dir(paths: Paths) -> Path:
    return paths.warehouse / "dbt" / "target"


def record_path(paths: Paths) -> Path:
    """Where the last freshness check's rows are kept for publish."""
    return paths.warehouse / "dbt" / "source_freshness.json"


def _threshold(criteria: dict | None, key: str) -> str | None:
    """`{"count": 90, "period": "day"}` -> "90 days"."""
    t = (criteria or {}).get(key) or {}
    count, period = t.get("count"), t.get("period")
    if not count or not period:
        return None
    return f"{count} {period}{'' if count == 1 else 's'}"


def _manifest_sources(paths: Paths) -> dict[str, dict]:
    try:
        return json.loads((target_dir(paths) / "manifest.json").read_text()).get("sources", {})
    except (OSError, ValueError):
        return {}


def _loaded_at_field(source: dict) -> str | None:
    return source.get("loaded_at_field") or (source.get("config") or {}).get("loaded_at_field")


def _criteria(source: dict) -> dict:
    return (source.get("config") or {}).get("freshness") or source.get("freshness") or {}


def _has_freshness(source: dict) -> bool:
    return any((_criteria(source).get(k) or {}).get("count") for k in ("warn_after", "error_after"))


def rows_from_sources_json(results: dict, sources: dict[str, dict]) -> list[dict]:
    """One row per source table of dbt's sources.json (`results`), named and described by the manifest's
    `sources`."""
    rows = []
    for r in results.get("results", []):
        uid = r.get("unique_id", "")
        src = sources.get(uid, {})
        parts = uid.split(".")
        criteria = r.get("criteria") or _criteria(src)
        rows.append({
            "source_name": src.get("source_name") or (parts[2] if len(parts) > 3 else None),
            "table_name": src.get("name") or (parts[-1] if parts else None),
            "loaded_at_field": _loaded_at_field(src),
            "max_loaded_at": r.get("max_loaded_at"),
            "snapshotted_at": r.get("snapshotted_at"),
            "age_s": r.get("max_loaded_at_time_ago_in_s"),
            "status": r.get("status"),
            "warn_after": _threshold(criteria, "warn_after"),
            "error_after": _threshold(criteria, "error_after"),
            "error": r.get("error") or (r.get("message") if r.get("status") == "runtime error" else None),
        })
    return sorted(rows, key=lambda x: (x["source_name"] or "", x["table_name"] or ""))


def _failed_rows(sources: dict[str, dict], message: str, checked: set[str]) -> list[dict]:
    """A `runtime error` row for every source declaring freshness that has no result (dbt leaves a source
    it could not query out of sources.json); `message`: dbt's failure, cut to the source's part when it
    names it. One row without a source when dbt failed before knowing any."""
    now = datetime.now(timezone.utc).isoformat()
    missing = {uid: s for uid, s in sources.items() if _has_freshness(s) and uid not in checked}
    blank = {"loaded_at_field": None, "max_loaded_at": None, "snapshotted_at": now, "age_s": None,
             "status": "runtime error", "warn_after": None, "error_after": None, "error": message}
    if not missing:
        return [] if checked else [{"source_name": None, "table_name": None, **blank}]
    out = []
    for uid, s in missing.items():
        part = next((m[m.index(uid):] for m in message.split("; ") if uid in m), message)
        part = " ".join(part.split())  # one line
        crit = _criteria(s)
        out.append({**blank, "source_name": s.get("source_name"), "table_name": s.get("name"),
                    "loaded_at_field": _loaded_at_field(s), "warn_after": _threshold(crit, "warn_after"),
                    "error_after": _threshold(crit, "error_after"), "error": part})
    return out


def read_record(paths: Paths) -> list[dict]:
    """The rows of the last freshness check of this warehouse ([] when none was recorded)."""
    try:
        return json.loads(record_path(paths).read_text())["rows"]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _write_record(paths: Paths, record: dict) -> None:
    with atomic_path(record_path(paths)) as tmp:
        tmp.write_text(json.dumps(record, indent=1, default=str))


def source_freshness(paths: Paths) -> list[dict]:
    """Run `dbt source freshness`, record its rows for publish, print the stale ones; return the rows.
    Never raises for a stale source or a failed check (both are recorded)."""
    from predictabase.warehouse.dbt import run_dbt

    started = time.monotonic()
    sources_json = target_dir(paths) / "sources.json"
    sources_json.unlink(missing_ok=True)  # never read an earlier check's results as this one's
    failure = None
    try:
        run_dbt(paths, "source freshness")
    except Exception as exc:  # a stale source (status error) fails dbt's command; so does a broken check
        failure = str(exc)
    sources = _manifest_sources(paths)
    try:
        results = json.loads(sources_json.read_text())
    except (OSError, ValueError):
        results = {}
    rows = rows_from_sources_json(results, sources)
    if failure is not None:  # sources dbt could not check (or dbt itself failed): recorded, not raised
        checked = {r.get("unique_id") for r in results.get("results", [])}
        rows = sorted(rows + _failed_rows(sources, failure, checked),
                      key=lambda x: (x["source_name"] or "", x["table_name"] or ""))
    seconds = time.monotonic() - started
    _write_record(paths, {"checked_at": datetime.now(timezone.utc).isoformat(), "seconds": round(seconds, 3),
                          "rows": rows})
    for r in rows:
        if r["status"] != "pass":
            what = f"{r['source_name']}.{r['table_name']}" if r["source_name"] else "sources"
            detail = r["error"] or (f"last loaded {r['max_loaded_at']}, warn after {r['warn_after']}, "
                                    f"error after {r['error_after']}")
            print(f"dbt source freshness: {what}: {r['status']} ({detail})", file=sys.stderr)
    return rows
