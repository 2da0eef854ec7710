"""The `predictabase` resource: which warehouse and mirror the assets write, read when a run starts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from predictabase.core.config import Paths, mirror_dir, models_config_path
from predictabase.core.config import paths as default_paths
from predictabase.core.errors import WarehouseError
from predictabase.ingest.sources.catalog import CATALOG_FILE
from predictabase.ingest.sources.references import REFERENCES_FILE

# Dagster runs steps in parallel processes; every writing step takes the warehouse's writer lock and
# waits this long for the others (a full scoring run of a big model takes hours on a CPU).
DEFAULT_LOCK_WAIT_S = 12 * 3600.0


class PredictabaseResource(dg.ConfigurableResource):
    """The warehouse the assets write (default: $PREDICTABASE_WAREHOUSE, else ./warehouse, as for the
    CLI), the mirror fetch copies from (default: $PREDICTABASE_MIRROR, else download), how long a step
    waits for another writer, and the files whose change makes the sensor start a refresh (default: the
    source catalog, its references and the models file, $PREDICTABASE_MODELS or models.toml)."""

    warehouse: str | None = None
    mirror: str | None = None
    lock_wait_s: float = DEFAULT_LOCK_WAIT_S
    watched_files: list[str] | None = None

    def paths(self) -> Paths:
        return default_paths(self.warehouse)

    def mirror_dir(self) -> Path | None:
        return mirror_dir(self.mirror)

    def watched(self) -> list[Path]:
        if self.watched_files:
            return [Path(f) for f in self.watched_files]
        return [CATALOG_FILE, REFERENCES_FILE, models_config_path()]

    def existing_paths(self) -> Paths:
        """The warehouse of a step that needs one already there (every step but fetch), as the CLI does."""
        p = self.paths()
        if not p.warehouse.is_dir():
            raise WarehouseError(
                p.warehouse,
                "no such warehouse directory (check the `predictabase` resource's "
                "`warehouse` / PREDICTABASE_WAREHOUSE; the fetch asset creates one)",
            )
        return p

    @contextlib.contextmanager
    def writing(
        self,
        context: dg.OpExecutionContext | dg.AssetExecutionContext,
        command: str,
        args: dict | None = None,
        create: bool = False,
    ) -> Iterator[Paths]:
        """The warehouse with its writer lock held (waiting up to `lock_wait_s` for another writer: Dagster's
        parallel steps take turns) and the step recorded in the runs log like a CLI command."""
        from predictabase import runs
        from predictabase.warehouse.lock import writer_lock

        if create:
            p = self.paths()
            p.warehouse.mkdir(parents=True, exist_ok=True)
        else:
            p = self.existing_paths()
        run_args = {"via": "dagster", "dagster_run_id": context.run_id, **(args or {})}
        with runs.recorded(p.runs_log, command, run_args), writer_lock(p, f"{command} (dagster)", self.lock_wait_s):
            yield p
