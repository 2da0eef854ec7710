"""predictabase ingest: sources, corpora, scoring and the command line."""

__version__ = "0.1.0"
