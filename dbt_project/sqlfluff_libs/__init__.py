"""What dbt puts in the Jinja context and sqlfluff's jinja templater (`apply_dbt_builtins`) lacks, for linting the
dbt project (.sqlfluff's `library_path`). The models render as `dbt parse` renders them: `execute` is false, so no
macro queries the warehouse (run_query) and the staging macros give their typed empty relation. The declarations
(PREDICTABASE_DECLARATIONS) are the project's own, so the SQL that loops over corpora and measures renders as in a
build; `var()` gives the defaults of dbt_project.yml."""

from __future__ import annotations

import datetime
import functools
import json
import os
import re
from pathlib import Path
from typing import Any

_PROJECT = Path(__file__).resolve().parent.parent

execute = False
dbt_version = "1.11.0"
invocation_id = "00000000-0000-0000-0000-000000000000"
run_started_at = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
graph: dict[str, dict] = {"nodes": {}, "sources": {}, "exposures": {}, "metrics": {}}
flags = {"WHICH": "parse"}
target = {"name": "lint", "type": "duckdb", "schema": "main", "database": "warehouse", "threads": 1}
modules = {"re": re, "datetime": datetime, "json": json}


@functools.cache
def _declarations() -> str:
    from predictabase.warehouse.dbt import declarations

    return json.dumps(declarations(), sort_keys=True)


def env_var(name: str, default: str | None = None) -> str:
    """dbt's env_var: the environment's value, else the default; the project's declarations when they are not set;
    a placeholder for any other variable that is unset (dbt would stop)."""
    if name in os.environ:
        return os.environ[name]
    if name == "PREDICTABASE_DECLARATIONS":
        return _declarations()
    return default if default is not None else f"/env/{name}"


@functools.cache
def _project_vars() -> dict[str, Any]:
    import yaml

    return yaml.safe_load((_PROJECT / "dbt_project.yml").read_text()).get("vars") or {}


def var(name: str, default: Any = None) -> Any:
    """dbt's var: dbt_project.yml's value, else the default."""
    return _project_vars().get(name, default)


def log(msg: Any, info: bool = False) -> str:
    return ""


def run_query(sql: str) -> None:
    return None


class _Exceptions:
    @staticmethod
    def raise_compiler_error(msg: str) -> None:
        raise RuntimeError(msg)

    @staticmethod
    def warn(msg: str) -> str:
        return ""


exceptions = _Exceptions()


class _Adapter:
    @staticmethod
    def quote(identifier: str) -> str:
        return '"' + str(identifier).replace('"', '""') + '"'

    @staticmethod
    def get_relation(database: Any = None, schema: Any = None, identifier: Any = None) -> None:
        return None

    @staticmethod
    def get_columns_in_relation(relation: Any) -> list:
        return []


adapter = _Adapter()
