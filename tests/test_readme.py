"""The README's list of marts and columns is the published snapshot's (issue 8: docs match the code)."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from predictabase.warehouse import SNAPSHOT_META

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_columns() -> dict[str, list[str]]:
    """{mart: columns} from the README's "## The marts" section: a paragraph opening with **`name`**
    and a `Columns:` line (continued on the following lines) of backticked column names."""
    section = README.read_text().split("## The marts", 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[str]] = {}
    for block in re.split(r"\n\s*\n", section):
        m = re.match(r"\*\*`(\w+)`\*\*", block.strip())
        if m and "Columns:" in block:
            out[m.group(1)] = re.findall(r"`(\w+)`", block.split("Columns:", 1)[1])
    return out


def test_readme_lists_every_published_table_with_exactly_its_columns(real_warehouse):
    """Every published table, the metadata tables publish adds (SNAPSHOT_META) included, with exactly its
    columns in order."""
    listed = readme_columns()
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{real_warehouse.marts}' AS s (READ_ONLY)")
        published = {}
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_catalog = 's' AND table_schema = 'main'").fetchall():
            published[table] = [r[0] for r in con.execute(f'DESCRIBE s.main."{table}"').fetchall()]
    assert SNAPSHOT_META <= set(published)
    assert sorted(listed) == sorted(published), "README tables vs published tables"
    for table, columns in published.items():
        assert listed[table] == columns, f"{table}: README lists {listed[table]}, the snapshot has {columns}"
