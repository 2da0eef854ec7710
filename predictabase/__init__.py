"""predictabase: the application around the ingest jobs (the `predictabase` command line, dbt build and
publish, ad-hoc SQL, the dashboard server, refresh, the Dagster definitions, the runs log).

The one installed namespace. Its layers import only downwards: `predictabase.core` (the foundation: paths,
errors, the database's transaction, failpoints), `predictabase.ingest` (the ingest jobs: sources, datasets,
scoring; stands on the foundation), the application (imports both). The dbt project, the dashboard app and the
default models.toml ship as package data (`predictabase.core.resources`).

`predictabase.ingest` is the repository's top-level `ingest/` folder: an installed wheel holds it inside this
package (hatch_build.py), where Python finds it as any subpackage; a checkout (an editable install, the tests)
maps the name to the folder here, so an edit there is what runs.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib import metadata
from pathlib import Path

try:
    __version__ = metadata.version("predictabase")  # pyproject.toml's version, the one place it is written
except metadata.PackageNotFoundError:  # pragma: no cover - a checkout that was never installed
    __version__ = "0+unknown"


class _CheckoutIngest:
    """The import system's finder of `predictabase.ingest` in a checkout: the top-level ingest/ folder, found
    when first imported, as an installed wheel's subpackage is (no module of it runs before that)."""

    name = f"{__name__}.ingest"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)]
        )


def _find_checkout_ingest() -> None:
    here = Path(__file__).resolve().parent
    folder = here.parent / "ingest"
    if (here / "ingest").is_dir() or not (folder / "__init__.py").is_file():
        return  # an installed wheel (or no checkout): Python's own finders
    if not any(isinstance(f, _CheckoutIngest) for f in sys.meta_path):
        sys.meta_path.append(_CheckoutIngest(folder))


_find_checkout_ingest()
