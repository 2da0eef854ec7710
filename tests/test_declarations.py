"""Issue 34: a shipped corpus's or a reading measure's name is written in its declaration, not in the code that
reads it. The declarations: `ingest/corpora.toml` (the corpora), `ingest/corpus_declarations.py` (the reading
measures, their names for people, the defaults), `ingest/sources/*.toml` (the catalog). The tests and the docs may
name them. The dbt project reads them through macros/declarations.sql (PREDICTABASE_DECLARATIONS), the pages and
the packages by importing them.

Every other place that still writes one as a quoted literal is listed in `ALLOWED`, with how many it writes
and why. A new literal anywhere (in a listed file too: its count changes) fails the test; so does a listed
file that no longer writes as many (shrink the list as the literals go)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("dbt_project/models", "dbt_project/macros", "dashboards", "predictabase", "ingest")
SUFFIXES = (".py", ".sql")

ADAPTER = "a shipped corpus's adapter: it reads that corpus's upstream files, whose format is its own"
REPLAY = "a published result replayed: the paper's own analysis of that corpus and measure, checked against its table"
NOT_YET = "not yet moved to the declarations (issue 34, left open): "

#: file -> (quoted shipped-corpus or measure names it writes, why)
ALLOWED: dict[str, tuple[int, str]] = {
    # the declarations themselves
    "ingest/corpus_declarations.py": (18, "the reading measures' declaration (MEASURES, EYE_MEASURES, their names "
                                          "for people, the defaults, the measures of each kind a shipped corpus "
                                          "declares) and the example declaration in its docstring"),
    # adapters: one per shipped corpus's upstream format, and the jobs that run them
    "ingest/datasets/corpora.py": (4, ADAPTER + " (the loader of each)"),
    "ingest/datasets/registry.py": (11, ADAPTER + " (the ingest jobs that run each adapter, and their order)"),
    "ingest/datasets/cloze.py": (6, ADAPTER + " (Provo's and UCL's cloze files)"),
    "ingest/datasets/self_paced_reading.py": (8, ADAPTER + " (Natural Stories' and UCL's self-paced reading)"),
    "ingest/datasets/gpt3_natural_stories.py": (1, ADAPTER + " (GPT-3's scores of Natural Stories)"),
    "ingest/datasets/lm_game.py": (1, ADAPTER),
    "ingest/datasets/natural_stories.py": (1, ADAPTER),
    "ingest/datasets/provo.py": (1, ADAPTER),
    "ingest/datasets/ucl.py": (2, ADAPTER),
    "ingest/datasets/top1.py": (1, ADAPTER + " (the LM game's top-1 answers)"),
    "ingest/datasets/pimentel_meister.py": (2, ADAPTER + " (Pimentel & Meister's files name the corpora)"),
    "ingest/datasets/word_frequencies.py": (2, ADAPTER + " (Google Books frequencies, for Natural Stories only)"),
    "ingest/sources/definitions.py": (1, "a usage example in the module's docstring"),
    "dbt_project/models/staging/reading/stg_natural_stories_spr_means.sql": (1, ADAPTER + " (the file holds "
                                                                              "Natural Stories only)"),
    "dbt_project/models/staging/top1/stg_top1_guesses.sql": (1, ADAPTER + " (the study's answers)"),
    # published results replayed on the corpus and measure the paper used
    "dbt_project/models/intermediate/reading/int_self_paced_reading_published_means.sql": (2, REPLAY),
    "dbt_project/models/intermediate/regression/int_devarda_reproduction.py": (1, REPLAY),
    "dbt_project/models/intermediate/regression/int_delta_loglik_lmer.py": (7, REPLAY + " (paper 001's LMER)"),
    "dbt_project/models/marts/regression/mart_reading_vs_published.sql": (4, REPLAY),
    "dbt_project/models/marts/reading/mart_reading_measures_agreement.sql": (4, REPLAY + " (UCL's published "
                                                                              "per-word measures)"),
    # rules of one corpus's data, written in the SQL that applies them
    "dbt_project/models/intermediate/regression/int_reading_observations.sql": (
        4, NOT_YET + "Natural Stories' comprehension filter and sentence-edge exclusion, UCL's text edges, the "
                     "self-paced reading measure's name"),
    "dbt_project/models/marts/reading/mart_self_paced_reading.sql": (1, NOT_YET + "Natural Stories' "
                                                                                  "comprehension filter"),
    "dbt_project/models/marts/reading/mart_self_paced_reading_agreement.sql": (2, NOT_YET + "Natural Stories' "
                                                                                           "comprehension filter"),
    "dbt_project/models/marts/cloze/mart_cloze.sql": (4, NOT_YET + "Provo's published probabilities and smoothing"),
    "dbt_project/models/marts/cloze/mart_cloze_calibration.sql": (2, NOT_YET + "the two cloze corpora"),
    "dbt_project/models/marts/cloze/mart_cloze_vs_model.sql": (3, NOT_YET + "Provo's published probabilities, "
                                                                            "UCL's empty responses"),
    # the scoreboard
    "dbt_project/models/marts/scoreboard/mart_scoreboard_long.sql": (1, NOT_YET + "UCL, the corpus whose cloze "
                                                                                  "norms keep every response"),
    # the pages
    "dashboards/app_pages/next_word.py": (3, NOT_YET + "the page shows UCL's cloze response distributions, the "
                                                       "one corpus whose responses are kept"),
    "dashboards/app_pages/perplexity.py": (1, NOT_YET + "the default corpus on a tie"),
    # the warehouse's own history
    "predictabase/warehouse/publish.py": (4, "the old table names an older warehouse's snapshot used, mapped to "
                                             "today's (a migration)"),
}


def declared_names() -> list[str]:
    from ingest.corpus_declarations import MEASURES
    corpora = list(tomllib.loads((ROOT / "ingest" / "corpora.toml").read_text(encoding="utf-8")))
    return corpora + list(MEASURES)


def quoted_literals(text: str, names: list[str]) -> list[str]:
    """Each name written as a whole quoted string ('ucl' or "ucl"), in order."""
    pattern = re.compile(r"""(['"])(%s)\1""" % "|".join(re.escape(n) for n in names))
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
