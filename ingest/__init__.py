"""predictabase's ingest jobs: the sources (catalog, fetch, readers), the datasets that load and validate them
into raw tables, and scoring (token log-probabilities of causal LMs). Everything here writes raw tables or
token runs; the application around it (CLI, build, publish, refresh, serve) is the `predictabase` package."""
