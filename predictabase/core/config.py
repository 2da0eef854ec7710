"""Where things live. Every path can be overridden by an environment variable.

PREDICTABASE_HOME       folder holding warehouse/ (default: this checkout; for an installed wheel, the current directory)
PREDICTABASE_WAREHOUSE  warehouse directory (default: $PREDICTABASE_HOME/warehouse)
PREDICTABASE_MIRROR     local mirror of the upstream sources; when unset, files are downloaded
PREDICTABASE_MODEL_CACHE  converted-model cache (default: $PREDICTABASE_WAREHOUSE/models)
PREDICTABASE_MODELS     the models `predictabase refresh` keeps scored (default: the models.toml shipped with the package)
PREDICTABASE_CACHE      this machine's cache shared by every warehouse: the dbt project's last parse (default:
                        $XDG_CACHE_HOME/predictabase, else ~/.cache/predictabase)

The dbt project, the dashboard app and the default models.toml are found by `predictabase.core.resources`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from predictabase.core import resources

PROJECT_ROOT = resources.project_root()


@dataclass(frozen=True)
class Paths:
    warehouse: Path

    @property
    def raw(self) -> Path:  # fetched, checksum-verified source files
        return self.warehouse / "raw"

    @property
    def duckdb(self) -> Path:  # the warehouse written by ingest and dbt
        return self.warehouse / "predictabase.duckdb"

    @property
    def marts(self) -> Path:  # read-only snapshot published for the dashboard
        return self.warehouse / "marts.duckdb"

    @property
    def parquet(self) -> Path:
        return self.warehouse / "parquet"

    @property
    def token_scores(self) -> Path:
        return self.parquet / "token_scores"

    @property
    def top1_predictions(self) -> Path:  # word-level top-1 game predictions (predictabase.ingest.scoring.top1_words)
        return self.parquet / "top1_predictions"

    @property
    def cloze_model_scores(
        self,
    ) -> Path:  # the model side of the cloze comparison (predictabase.ingest.scoring.cloze_responses)
        return self.parquet / "cloze_model_scores"

    @property
    def word_entropy(self) -> Path:  # Monte-Carlo word entropies (predictabase.ingest.scoring.anticipation)
        return self.parquet / "word_entropy"

    @property
    def temperature_scores(
        self,
    ) -> Path:  # token scores under softmax(logits / T) (predictabase.ingest.scoring.temperature)
        return self.parquet / "temperature_scores"

    @property
    def runs_log(self) -> Path:  # one JSON line per command start and end (predictabase.runs)
        return self.warehouse / "runs.jsonl"

    @property
    def models(self) -> Path:
        return Path(os.environ.get("PREDICTABASE_MODEL_CACHE", self.warehouse / "models"))


#: the files only a warehouse holds: a folder with one of them is a warehouse (the working database after `fetch`,
#: the published snapshot, the corpora a user declared); any other folder is not, and no command but the ones that
#: create a warehouse writes into it
WAREHOUSE_MARKERS = ("predictabase.duckdb", "marts.duckdb", "corpora.toml")
#: what a folder may hold and still receive a new warehouse: the checkout's `warehouse/` ships its README, and a
#: first fetch killed before it recorded anything leaves its files under raw/, its lock and (older releases) a log
NEW_WAREHOUSE_MAY_HOLD = frozenset({"README.md", "raw", ".writer.lock", "runs.jsonl"})


#: the writer lock's file (predictabase.warehouse.lock): it names its holder while held and is emptied on release,
#: so one that names a holder marks a warehouse its first writer is making (an empty one marks nothing: releases
#: of refused writers left those in folders that were no warehouse)
WRITER_LOCK = ".writer.lock"


def is_warehouse(folder: str | Path) -> bool:
    """Whether `folder` holds a warehouse (one of WAREHOUSE_MARKERS)."""
    folder = Path(folder)
    return any((folder / name).exists() for name in WAREHOUSE_MARKERS)


def is_warehouse_or_being_made(folder: str | Path) -> bool:
    """A warehouse, or a folder whose first writer holds its lock (a first `fetch` before it records anything)."""
    lock = Path(folder) / WRITER_LOCK
    return is_warehouse(folder) or (lock.is_file() and lock.stat().st_size > 0)


def can_hold_new_warehouse(folder: str | Path) -> bool:
    """Whether a new warehouse may be made in `folder`: it does not exist, or holds nothing but
    NEW_WAREHOUSE_MAY_HOLD (a folder of other files, say a checkout or a warehouse's raw/, is refused)."""
    folder = Path(folder)
    if not folder.exists():
        return True
    return folder.is_dir() and all(entry.name in NEW_WAREHOUSE_MAY_HOLD for entry in folder.iterdir())


def paths(warehouse: str | Path | None = None) -> Paths:
    if warehouse is None:
        default_home = Path.cwd() if resources.installed() else resources.CHECKOUT_ROOT
        home = Path(os.environ.get("PREDICTABASE_HOME", default_home))
        warehouse = os.environ.get("PREDICTABASE_WAREHOUSE", home / "warehouse")
    return Paths(Path(warehouse).resolve())


def mirror_dir(explicit: str | Path | None = None) -> Path | None:
    value = explicit or os.environ.get("PREDICTABASE_MIRROR")
    return Path(value).resolve() if value else None


DBT_PROJECT_DIR = resources.dbt_project_dir()


def models_config_path(explicit: str | Path | None = None) -> Path:
    """The models-to-keep-scored file (`--models`, else $PREDICTABASE_MODELS, else the shipped models.toml)."""
    value = explicit or os.environ.get("PREDICTABASE_MODELS")
    return Path(value).resolve() if value else resources.default_models_file()


def cache_dir() -> Path:
    """This machine's cache, shared by every warehouse (PREDICTABASE_CACHE)."""
    explicit = os.environ.get("PREDICTABASE_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "predictabase"
