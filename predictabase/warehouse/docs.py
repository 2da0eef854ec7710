"""dbt's documentation site, published beside the marts snapshot: `generate_docs` runs
`dbt docs generate --static` over the warehouse and puts the single-file site (models, sources, tests,
exposures = the dashboard's pages, lineage and the catalog's column types) at `<warehouse>/dbt_docs.html`,
which opens in a browser with no server (the dashboard's Warehouse page links it)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from predictabase.core.config import DBT_PROJECT_DIR, Paths
from predictabase.core.errors import BuildError
from predictabase.core.fsutil import atomic_path
from predictabase.warehouse.dbt import run_dbt

DOCS_FILE = "dbt_docs.html"


def docs_enabled() -> bool:
    """Whether a build publishes the docs site: yes unless $PREDICTABASE_DBT_DOCS is 0/false/no (the tests'
    fixture builds skip it; `predictabase build --no-docs` too)."""
    return os.environ.get("PREDICTABASE_DBT_DOCS", "1").strip().lower() not in {"0", "false", "no"}


def docs_path(paths: Paths) -> Path:
    """Where the published documentation site lies: `<warehouse>/dbt_docs.html`."""
    return paths.warehouse / DOCS_FILE


def docs_target(paths: Paths) -> Path:
    """dbt's target-path for the docs: not the build's `<warehouse>/dbt/target`, whose manifest.json and
    run_results.json must stay those of the last build (the refresh reads them: `_save_built`, `built_models`);
    `docs generate` would replace both. (A second `--target-path` after run_dbt's own wins.)"""
    return paths.warehouse / "dbt" / "docs_target"


def generate_docs(paths: Paths) -> Path:
    """`dbt docs generate --static` (target-path `docs_target`; with the last build's manifest and
    `--no-compile` when there is one), then copy its `static_index.html`
    atomically onto `<warehouse>/dbt_docs.html` (a reader never sees half a file; on a failure the previous
    site stays). Returns the published path. Raises BuildError when dbt fails or writes no static site."""
    target = docs_target(paths)
    target.mkdir(parents=True, exist_ok=True)
    build_target = paths.warehouse / "dbt" / "target"
    extra = ["--static", "--target-path", str(target)]
    if (build_target / "manifest.json").is_file():  # document the last build as it is: its compiled manifest and
        for name in ("manifest.json", "partial_parse.msgpack"):  # its parse, no second compile (1 s, not 13-25 s)
            if (build_target / name).is_file():
                shutil.copyfile(build_target / name, target / name)
        extra.append("--no-compile")
    run_dbt(paths, "docs generate", extra=extra)
    built = target / "static_index.html"
    if not built.is_file():
        raise BuildError(built, "dbt docs generate --static wrote no static_index.html")
    dest = docs_path(paths)
    with atomic_path(dest, suffix=".html") as tmp:
        Path(tmp).write_text(without_machine_paths(built.read_text(encoding="utf-8"), paths), encoding="utf-8")
    return dest


def without_machine_paths(site: str, paths: Paths) -> str:
    """The docs site with the folders of this machine named by their role: the sources' globs read
    `<warehouse>/parquet/...` and the project `<dbt project>` (a published site is read on other machines, and the
    folder it was built in says nothing there). Both spellings: as written, and JSON-escaped (Windows)."""
    for folder, name in (
        (paths.warehouse.resolve(), "<warehouse>"),
        (DBT_PROJECT_DIR.resolve(), "<dbt project>"),
        (paths.warehouse, "<warehouse>"),
    ):
        text = str(folder)
        site = site.replace(text, name).replace(text.replace("\\", "\\\\"), name)
    # a warehouse built in another folder and moved here: its manifest keeps the folder the build ran in, in the
    # token lake's globs (`/old/place/parquet/token_scores/...`)
    return LAKE_PATH.sub("<warehouse>/", site)


#: an absolute folder in front of a warehouse's token lake (`parquet/`), POSIX or Windows
LAKE_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/|\\\\)[^\"'\s<>]*?(?:/|\\\\)(?=parquet(?:/|\\\\))")
