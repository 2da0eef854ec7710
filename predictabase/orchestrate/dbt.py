"""The dbt project as Dagster assets (dagster-dbt), with its sources mapped onto the upstream assets.

The manifest that defines the asset graph is parsed (`dbt parse`) into a cache directory when it is
missing or older than a file of the dbt project; under `dagster dev` dagster-dbt re-parses it at every
load (`DbtProject.prepare_if_dev`). Runs build into the warehouse of the `predictabase` resource, with
dbt's target and logs inside that warehouse (`<warehouse>/dbt/dagster/`), like `dbt_args` does for the CLI.
"""

import hashlib
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from predictabase.core.config import DBT_PROJECT_DIR
from predictabase.core.config import paths as default_paths
from predictabase.ingest.datasets.registry import writers
from predictabase.ingest.scoring.steps import STEPS
from predictabase.orchestrate.resources import PredictabaseResource
from predictabase.warehouse.dbt import _env, dbt_env

# Which assets write each dbt source table: raw.* tables <- the ingest jobs that declare them (`Job.writes`; several
# jobs write one table when each replaces its corpus's rows), the Parquet sources <- the model step whose runs they
# are (`ModelStep.dbt_schema`). A source without a writer fails tests/test_dagster.py.
WRITERS = writers()
INGEST_WRITERS: dict[str, tuple[str, ...]] = {
    table.removeprefix("raw."): jobs for table, jobs in WRITERS.items() if table.startswith("raw.")
}
FETCH_KEY = dg.AssetKey("fetch")


def step_key(step: str) -> dg.AssetKey:
    """The asset of a model step's runs (the step declares it: `predictabase.ingest.scoring.steps`)."""
    return dg.AssetKey(STEPS[step].asset)


def ingest_key(job: str) -> dg.AssetKey:
    return dg.AssetKey(["ingest", job])


def source_writers(schema: str, table: str) -> tuple[dg.AssetKey, ...]:
    """The assets that write the dbt source `schema.table` (empty when unknown)."""
    if schema == "raw":
        if table == "source_files":
            return (FETCH_KEY,)
        return tuple(ingest_key(j) for j in INGEST_WRITERS.get(table, ()))
    for step in STEPS.values():  # a model step's runs (token scores also the GPT-3 import's Parquet run)
        if schema == step.dbt_schema:
            imports = WRITERS.get(f"parquet:{step.output}", ())
            return (step_key(step.name), *(ingest_key(j) for j in imports))
    return ()


def _source_key(props: Mapping[str, Any]) -> dg.AssetKey:
    return dg.AssetKey(["dbt_source", props["schema"], props["name"]])


class PredictabaseTranslator(DagsterDbtTranslator):
    """dbt models keyed by their name (group = layer, tags = domain); each dbt source is replaced, in the
    deps of the models reading it, by the assets that write it, so the lineage runs fetch -> ingest/<job>
    -> stg_* and token_scores -> stg_token_scores."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            return _source_key(dbt_resource_props)
        return dg.AssetKey(dbt_resource_props["name"])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        fqn = dbt_resource_props.get("fqn") or []
        if dbt_resource_props["resource_type"] == "seed":
            return "dbt_seeds"
        return f"dbt_{fqn[1]}" if len(fqn) > 2 else "dbt"

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str, project: DbtProject | None) -> dg.AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        if unique_id.startswith("source."):
            return spec
        sources = {_source_key(s): s for s in manifest["sources"].values()}
        deps: list[dg.AssetDep] = []
        seen: set[dg.AssetKey] = set()
        for dep in spec.deps:
            keys = [dep.asset_key]
            if dep.asset_key in sources:
                src = sources[dep.asset_key]
                keys = list(source_writers(src["schema"], src["name"])) or keys
            for k in keys:
                if k not in seen:
                    seen.add(k)
                    deps.append(dg.AssetDep(k))
        return spec.replace_attributes(deps=deps)


def _cache_dir() -> Path:
    """Where the parsed manifest lives: $PREDICTABASE_DAGSTER_CACHE, else ~/.cache/predictabase/dagster-dbt/
    <hash of this checkout's dbt project path> (never inside dbt_project/ nor a warehouse)."""
    explicit = os.environ.get("PREDICTABASE_DAGSTER_CACHE")
    if explicit:
        return Path(explicit).resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    tag = hashlib.sha256(str(DBT_PROJECT_DIR).encode()).hexdigest()[:12]
    return base / "predictabase" / "dagster-dbt" / tag


def _project_files(project_dir: Path) -> list[Path]:
    files = [project_dir / "dbt_project.yml", project_dir / "profiles.yml"]
    for sub in ("models", "macros", "seeds", "tests"):
        d = project_dir / sub
        if d.is_dir():
            files += [p for p in d.rglob("*") if p.is_file()]
    return files


def manifest_stale(project: DbtProject) -> bool:
    """True when the manifest is missing or older than a file of the dbt project."""
    try:
        built = project.manifest_path.stat().st_mtime
    except FileNotFoundError:
        return True
    return any(p.stat().st_mtime > built for p in _project_files(Path(project.project_dir)) if p.exists())


# dbt of this interpreter's environment (dagster-dbt runs dbt as a subprocess and looks for `dbt` on PATH,
# which lacks .venv/bin when the virtualenv is not activated)
DBT_EXECUTABLE = (
    str(Path(sys.executable).with_name("dbt"))
    if Path(sys.executable).with_name("dbt").exists()
    else (shutil.which("dbt") or "dbt")
)


def dbt_project() -> DbtProject:
    target = _cache_dir() / "target"
    target.mkdir(parents=True, exist_ok=True)
    project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR, target_path=target)
    # `dbt parse` runs with the environment the profile and the sources read (the default warehouse's paths:
    # parsing renders them but opens nothing; every run re-parses with its own warehouse's paths)
    path = os.pathsep.join([str(Path(DBT_EXECUTABLE).parent), os.environ.get("PATH", "")])
    with _env({**dbt_env(default_paths()), "PATH": path}):
        project.prepare_if_dev()  # `dagster dev`: re-parse at every load, as dagster-dbt recommends
        if manifest_stale(project):  # elsewhere (tests, `dagster job execute`, a deployment): when needed
            project.preparer.prepare(project)
    return project


PROJECT = dbt_project()
TRANSLATOR = PredictabaseTranslator()


@dbt_assets(manifest=PROJECT.manifest_path, project=PROJECT, dagster_dbt_translator=TRANSLATOR, name="dbt_project")
def dbt_project_assets(context: dg.AssetExecutionContext, dbt: DbtCliResource, predictabase: PredictabaseResource):
    """`dbt build` of the selected models (their seeds and schema tests too) over the warehouse."""
    with predictabase.writing(context, "build", {"select": "dagster selection"}) as paths:
        paths.token_scores.mkdir(parents=True, exist_ok=True)  # the token-score source globs it (as run_dbt does)
        # cautious: a test runs when every model it reads is selected (a subset run of a few staging views
        # would otherwise run the singular tests that read unbuilt intermediate models; the whole project: all)
        indirect = os.environ.get("DBT_INDIRECT_SELECTION", "cautious")
        with _env({**dbt_env(paths), "DBT_INDIRECT_SELECTION": indirect}):
            yield from dbt.cli(["build"], context=context, target_path=paths.warehouse / "dbt" / "dagster").stream()


def mart_keys(manifest_path: Path | None = None) -> list[dg.AssetKey]:
    """Every model under models/marts/: what the published snapshot copies."""
    import json

    manifest = json.loads(Path(manifest_path or PROJECT.manifest_path).read_text())
    return sorted(
        dg.AssetKey(n["name"])
        for n in manifest["nodes"].values()
        if n["resource_type"] == "model" and (n.get("fqn") or [None, None])[1] == "marts"
    )
