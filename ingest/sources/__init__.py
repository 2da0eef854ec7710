"""Sources: the catalog of upstream files (`catalog`), fetching and verifying them (`fetch`), and the references
the numbers come from (`references`)."""

from predictabase.ingest.sources.fetch import fetch, fetch_and_record, verified_path

__all__ = ["fetch", "fetch_and_record", "verified_path"]
