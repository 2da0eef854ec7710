"""Named points where the fault tests stop a real `predictabase` process.

`PREDICTABASE_FAILPOINT=<point>` makes the process SIGKILL itself when it reaches `<point>`;
`<point>:stop` makes it SIGSTOP itself instead (it keeps what it holds, the writer lock
included, until the test kills or continues it); `<point>:int` sends it SIGINT once, as one Ctrl-C in its
terminal would (the signal is handled in the main thread, wherever the point is reached; a point reached again,
say by another of dbt's threads while the first interrupt unwinds, sends nothing more). Unset, a failpoint costs
one dict lookup.
The points are listed in `POINTS` (and in docs/guides/operations.md); an unknown name is an error, so
a test cannot silently aim at a point that no longer exists.
"""

from __future__ import annotations

import os
import signal
import threading

_interrupted = threading.Lock()  # held once `<point>:int` has sent its one SIGINT

POINTS = {
    "lock.acquired": "a writer command holds the warehouse lock, before any work",
    "fetch.copied": "a fetched file is complete under its temporary name, before the rename",
    "ingest.before_commit": "every ingest table is written inside the transaction, before COMMIT",
    "score.part_written": "a part file of a scoring run was renamed into place",
    "models.converted": "a GGUF conversion is saved under its temporary folder, before the rename",
    "build.dbt_node": "dbt finished building one model, seed or test (dbt's event callback, in its worker thread)",
    "build.dbt_done": "dbt build finished, before publish",
    "publish.copied": "the new snapshot is complete under its temporary name, before the rename",
    "publish.replaced": "the new snapshot replaced the old one",
    "corpus.copied": "`corpus add` copied a corpus's files into their temporary folder, before the rename",
    "export.page_done": "`export --out` wrote one dashboard page's files into its temporary folder",
    "sql.query_started": "`sql` handed a statement to DuckDB (in its worker thread), before its result",
    "sql.output_opened": "`sql -o` opened its output's temporary file beside the output, before writing it",
    "refresh.planned": "a refresh fetched and planned its ingest jobs, before ingesting",
    "refresh.scored": "a refresh recorded a finished scoring task in its ledger (refresh/scored.json)",
    "refresh.state_saved": "a refresh recorded the published snapshot's inputs (refresh/state.json), its last write",
}


def failpoint(point: str) -> None:
    wanted = os.environ.get("PREDICTABASE_FAILPOINT")
    if not wanted:
        return
    name, _, action = wanted.partition(":")
    if name not in POINTS:
        raise ValueError(f"PREDICTABASE_FAILPOINT={wanted!r}: unknown point; choose from {sorted(POINTS)}")
    if name != point:
        return
    if action == "int":
        if _interrupted.acquire(blocking=False):
            os.kill(os.getpid(), signal.SIGINT)
        return
    os.kill(os.getpid(), signal.SIGSTOP if action == "stop" else signal.SIGKILL)
