"""Hatchling build hook: the wheel carries the ingest jobs as `predictabase.ingest` (the top-level ingest/ folder:
the wheel installs one namespace, `predictabase`, and no generic top-level name), and the dbt project, the
dashboard app and the default models.toml as package data under predictabase/_project/ (read by
predictabase.core.resources). Only the standard wheel: an editable install reads them from the checkout
(`predictabase/__init__.py` maps `predictabase.ingest` to the folder there), so no stale copy lands in
site-packages."""

from __future__ import annotations

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

CODE = {"ingest": "predictabase/ingest"}
PROJECT_DATA = {
    "dbt_project/dbt_project.yml": "dbt_project/dbt_project.yml",
    "dbt_project/profiles.yml": "dbt_project/profiles.yml",
    "dbt_project/models": "dbt_project/models",
    "dbt_project/macros": "dbt_project/macros",
    "dbt_project/seeds": "dbt_project/seeds",
    "dbt_project/tests": "dbt_project/tests",
    "dashboards": "dashboards",
    ".streamlit/config.toml": ".streamlit/config.toml",
    "models.toml": "models.toml",
}


class ProjectDataHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "standard":
            for source, target in CODE.items():
                build_data["force_include"][source] = target
            for source, target in PROJECT_DATA.items():
                build_data["force_include"][source] = f"predictabase/_project/{target}"
