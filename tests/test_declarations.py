"""A shipped corpus's or a reading measure's name is written in its declaration, not in the code that
reads it. The declarations: `ingest/corpora.toml` (the corpora), `ingest/corpus_declarations.py` (the reading
measures, their names for people, the defaults), `ingest/sources/*.toml` (the catalog). The tests and the docs may
name them. The dbt project reads them through macros/declarations.sql (PREDICTABASE_DECLARATIONS), the pages and
the packages by importing them.

Every other place that still writes one as a quoted literal is listed in tests/literal_exceptions.toml, with
how many it writes and why. A new literal anywhere (in a listed file too: its count changes) fails the test; so does a listed
file that no longer writes as many (shrink the list as the literals go)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("dbt_project/models", "dbt_project/macros", "dashboards", "predictabase", "ingest")
SUFFIXES = (".py", ".sql")

#: file -> (how many quoted shipped-corpus or measure names it writes, why): tests/literal_exceptions.toml
ALLOWED: dict[str, tuple[int, str]] = {
    f: (e["count"], e["why"])
    for f, e in tomllib.loads((ROOT / "tests" / "literal_exceptions.toml").read_text(encoding="utf-8")).items()
}


def declared_names() -> list[str]:
    from predictabase.ingest.corpus_declarations import MEASURES

    corpora = list(tomllib.loads((ROOT / "ingest" / "corpora.toml").read_text(encoding="utf-8")))
    return corpora + list(MEASURES)


def quoted_literals(text: str, names: list[str]) -> list[str]:
    """Each name written as a whole quoted string ('ucl' or "ucl"), in order."""
    pattern = re.compile(r"""(['"])({})\1""".format("|".join(re.escape(n) for n in names)))
    return [m.group(2) for m in pattern.finditer(text)]


def literal_counts(names: list[str]) -> dict[str, int]:
    out = {}
    for folder in SCANNED:
        for f in sorted((ROOT / folder).rglob("*")):
            if f.suffix in SUFFIXES and "__pycache__" not in f.parts:
                n = len(quoted_literals(f.read_text(encoding="utf-8"), names))
                if n:
                    out[f.relative_to(ROOT).as_posix()] = n
    return out


def test_quoted_literals_are_found():
    names = ["ucl", "natural_stories", "spr"]
    text = """where corpus = 'ucl' and x = "natural_stories" and m in ('spr', 'spr_means') and y = 'ucl_x' -- ucl"""
    assert quoted_literals(text, names) == ["ucl", "natural_stories", "spr"]


def test_no_shipped_corpus_or_measure_name_outside_the_declarations():
    names = declared_names()
    assert {"lm_game", "natural_stories", "provo", "ucl", "spr", "gaze_duration"} <= set(names)
    found = literal_counts(names)
    new = {f: n for f, n in found.items() if f not in ALLOWED}
    assert not new, f"corpus or measure names written as literals outside the declarations: {new}"
    changed = {f: (found.get(f, 0), n) for f, (n, _why) in ALLOWED.items() if found.get(f, 0) != n}
    assert not changed, f"(found, allowed) literals changed in a listed file: {changed}"
    assert all(why.strip() for _n, why in ALLOWED.values())


def test_reading_exclusions_are_declared_and_checked():
    """Each corpus's reading-time exclusions live in ingest/corpora.toml: the regressions and the
    corpus's own cleaning read them there (macros/declarations.sql), and a rule that cannot be read is refused when
    the table loads, naming the corpus and the kind."""
    import pytest

    from predictabase.ingest import corpus_table
    from predictabase.warehouse.dbt import declarations

    rules = {(r["corpus"], r["kind"]): r for r in declarations()["exclusions"]}
    # Natural Stories: process_RTs.R (more than 4 of 6 correct) and Oh & Schuler's (2024) appendix B (fewer than 4 out)
    ns = rules[("natural_stories", "self_paced_reading")]
    assert (
        ns["rt_min_ms"],
        ns["rt_max_ms"],
        ns["edges"],
        ns["min_correct_answers"],
        ns["regression_min_correct_answers"],
        ns["comprehension_questions"],
    ) == (100, 3000, "sentence", 5, 4, 6)
    assert {k for k, c in corpus_table.CORPORA.items() for e in c.exclusions} == set(
        corpus_table.with_reading("eye_tracking")
    ) | set(corpus_table.with_reading("self_paced_reading"))
    for bad in ({"rt_ms": [3000, 100]}, {"edges": "line"}, {"min_correct_answers": "four"}, {"rt_max": 3000}):
        with pytest.raises(ValueError, match=r"\[mine\.exclusions\.self_paced_reading\]"):
            corpus_table._exclusions("mine", {"self_paced_reading": bad})
    with pytest.raises(ValueError, match="not a valid exclusion rule"):
        corpus_table._exclusions("mine", {"skimming": {"edges": "text"}})


def test_the_wide_scoreboard_contract_is_written_from_the_declarations(monkeypatch):
    """mart_scoreboard's columns (its contract in _scoreboard__models.yml) are the lines
    predictabase.warehouse.scoreboard_contract makes from the declarations, and dbt's comparisons are the same list:
    a corpus declared without the contract rewritten fails here, naming the command that rewrites it."""
    import dataclasses

    from predictabase.ingest import corpus_table
    from predictabase.warehouse import scoreboard_contract as sc
    from predictabase.warehouse.dbt import declarations

    text = sc.YAML_FILE.read_text(encoding="utf-8")
    assert sc.written_lines(text) == sc.contract_lines()
    assert sc.main([]) == 0
    names = [n for n, _ in sc.wide_comparisons()]
    assert declarations()["scoreboard_wide"] == names and len(names) == len(set(names))
    assert len(sc.written_lines(text)) == 5 * len(names)
    # one more corpus with texts and eye tracking, declared: 1 + 4 measures x 2 definitions more comparisons
    extra = dataclasses.replace(
        corpus_table.CORPORA["provo"], key="extra_de", title="Extra German", cloze=False, cloze_norms=None
    )
    monkeypatch.setattr(corpus_table, "CORPORA", {**corpus_table.CORPORA, "extra_de": extra})
    grown = [n for n, _ in sc.wide_comparisons()]
    assert len(grown) == len(names) + 9 and "delta_loglik_extra_de_gaze_duration_wt_nats_per_word" in grown
    assert sc.main([]) == 1  # the YAML no longer matches: rewrite it
    assert sc.written_lines(sc.rewrite(text)) == sc.contract_lines()
