"""predictabase's ingest jobs: the sources (catalog, fetch, readers), the datasets that load and validate them
into raw tables, and scoring (token log-probabilities of causal LMs). Everything here writes raw tables or
token runs; the application around it (CLI, build, publish, refresh, serve) is the `predictabase` package."""

from predictabase.core import errors as _errors

_KNOWN: dict[int, frozenset[str]] = {}


def _catalog_paths() -> frozenset[str]:
    """The catalog's file paths, kept per catalog read (a test may point the catalog elsewhere)."""
    from predictabase.ingest.sources.catalog import load_catalog

    catalog = load_catalog()
    if id(catalog) not in _KNOWN:
        _KNOWN[id(catalog)] = frozenset(f.path for f in catalog)
    return _KNOWN[id(catalog)]


_errors.name_files_by(_catalog_paths)  # errors name a source file by its catalog path
