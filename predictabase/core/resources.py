"""The files the application ships beside its code: the dbt project, the dashboard app and the default
`models.toml`.

In an installed wheel they are package data under `predictabase/_project/` (pyproject.toml's
`force-include`), found with `importlib.resources`; in a checkout (an editable install, the tests) they are the
repository's own top-level folders, so an edit there is what runs.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CHECKOUT_ROOT = Path(__file__).resolve().parents[2]  # predictabase/core/resources.py -> the repository


def _packaged() -> Path | None:
    root = resources.files("predictabase") / "_project"
    return Path(str(root)) if root.is_dir() else None


def installed() -> bool:
    """True in an installed wheel, False when running from a checkout of the repository."""
    return _packaged() is not None


def project_root() -> Path:
    """The folder holding `dbt_project/`, `dashboards/` and `models.toml`."""
    return _packaged() or CHECKOUT_ROOT


def dbt_project_dir() -> Path:
    return project_root() / "dbt_project"


def dashboard_app() -> Path:
    return project_root() / "dashboards" / "app.py"


def default_models_file() -> Path:
    return project_root() / "models.toml"
