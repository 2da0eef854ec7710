"""ingest/raw.py's partition writer on a warehouse ingested before a column existed (an upgrade): the column is
added, the re-ingested partition carries it, the others keep their rows with NULL in it."""

from __future__ import annotations

import duckdb
import polars as pl

from predictabase.ingest.raw import replace_partition


def test_a_partition_with_a_new_column_adds_it_to_an_older_table():
    con = duckdb.connect(":memory:")
    con.execute("CREATE SCHEMA raw")
    old = pl.DataFrame({"corpus": ["a", "a", "b"], "title": ["A", "A2", "B"]})
    for c in ("a", "b"):
        replace_partition(con, "raw.corpora", old.filter(pl.col("corpus") == c), {"corpus": c})
    new = pl.DataFrame({"corpus": ["a"], "title": ["A"], "language": ["de"]})
    assert replace_partition(con, "raw.corpora", new, {"corpus": "a"}) == 1
    assert con.execute("SELECT corpus, title, language FROM raw.corpora ORDER BY ALL").fetchall() == [
        ("a", "A", "de"),
        ("b", "B", None),
    ]
    assert con.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'corpora' AND column_name = 'language'"
    ).fetchall() == [("VARCHAR",)]
    # idempotent: the same frame again changes nothing; a whole-table replace (no partition) too
    replace_partition(con, "raw.corpora", new, {"corpus": "a"})
    assert con.execute("SELECT count(*) FROM raw.corpora").fetchone() == (2,)
    replace_partition(
        con, "raw.corpora", pl.DataFrame({"corpus": ["a"], "title": ["A"], "language": ["nl"], "n_texts": [3]}), {}
    )
    assert con.execute("SELECT * FROM raw.corpora").fetchall() == [("a", "A", "nl", 3)]
