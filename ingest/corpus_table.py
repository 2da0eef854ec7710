"""The corpora, declared once as data (`ingest/corpora.toml`): each corpus's name for people and what it has
(texts, reading measures, cloze norms, the LM-game's games). Light on purpose (no polars, no torch): the CLI,
models.toml's validation and the dashboard read it too."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

TABLE_FILE = Path(__file__).with_name("corpora.toml")
READING_MEASURES = ("eye_tracking", "self_paced_reading")
#: what an exclusion rule may say (corpora.toml's [<corpus>.exclusions.<kind>]), and what each holds
EXCLUSION_KEYS = {
    "rt_ms": list,
    "edges": str,
    "min_correct_answers": int,
    "regression_min_correct_answers": int,
    "comprehension_questions": int,
}
EDGES = ("sentence", "text")
CLOZE_NORMS = ("responses", "published_probabilities")


@dataclass(frozen=True)
class Exclusions:
    """Which reading times of one kind a corpus keeps (corpora.toml's header says how each rule is read)."""

    kind: str
    rt_min_ms: float | None = None
    rt_max_ms: float | None = None
    edges: str | None = None
    min_correct_answers: int | None = None
    regression_min_correct_answers: int | None = None
    comprehension_questions: int | None = None


@dataclass(frozen=True)
class Corpus:
    key: str
    title: str
    texts: bool
    reading: tuple[str, ...]
    cloze: bool
    game: bool
    language: str = "en"  # ISO 639-1
    exclusions: tuple[Exclusions, ...] = ()  # one per reading kind that declares any
    cloze_norms: str | None = None  # a cloze corpus's: "responses" or "published_probabilities"
    featured: bool = False
    measures: tuple[str, ...] = ()  # the reading measures it has, when not every measure of its reading kinds
    collection: str | None = None  # the corpora made the same way in several languages (MECO), one per language
    adapter: str | None = None  # the loader that reads its upstream files, when it shares one (ingest/datasets)
    upstream: str | None = None  # the upstream's name for it (the adapter's file: MECO's "du" is meco_nl)


def _exclusions(key: str, data: dict) -> tuple[Exclusions, ...]:
    out = []
    for kind, rule in data.items():
        where = f"{TABLE_FILE}: [{key}.exclusions.{kind}]"
        bad = [k for k, v in rule.items() if not isinstance(v, EXCLUSION_KEYS.get(k, type(None)))]
        rt = rule.get("rt_ms")
        if (
            kind not in READING_MEASURES
            or bad
            or rule.get("edges", EDGES[0]) not in EDGES
            or (rt is not None and not (len(rt) == 2 and 0 <= rt[0] < rt[1]))
        ):
            raise ValueError(f"{where}: not a valid exclusion rule ({bad or rule})")
        out.append(
            Exclusions(
                kind=kind,
                rt_min_ms=rt[0] if rt else None,
                rt_max_ms=rt[1] if rt else None,
                edges=rule.get("edges"),
                min_correct_answers=rule.get("min_correct_answers"),
                regression_min_correct_answers=rule.get("regression_min_correct_answers"),
                comprehension_questions=rule.get("comprehension_questions"),
            )
        )
    return tuple(out)


def _load() -> dict[str, Corpus]:
    data = tomllib.loads(TABLE_FILE.read_text(encoding="utf-8"))
    out = {
        key: Corpus(
            key=key,
            title=v["title"],
            texts=v["texts"],
            reading=tuple(v["reading"]),
            cloze=v["cloze"],
            game=v["game"],
            language=v.get("language", "en"),
            exclusions=_exclusions(key, v.get("exclusions", {})),
            cloze_norms=v.get("cloze_norms"),
            featured=v.get("featured", False),
            measures=tuple(v.get("measures", ())),
            collection=v.get("collection"),
            adapter=v.get("adapter"),
            upstream=v.get("upstream"),
        )
        for key, v in data.items()
    }
    for c in out.values():
        unknown = set(c.reading) - set(READING_MEASURES)
        if unknown:  # pragma: no cover - a typo in corpora.toml
            raise ValueError(f"{TABLE_FILE}: {c.key}: unknown reading measure(s) {sorted(unknown)}")
        if (c.cloze_norms in CLOZE_NORMS) != c.cloze:  # pragma: no cover - a typo in corpora.toml
            raise ValueError(f"{TABLE_FILE}: {c.key}: a cloze corpus declares cloze_norms, one of {CLOZE_NORMS}")
    return out


CORPORA: dict[str, Corpus] = _load()
#: the corpora with texts: what `predictabase score` scores and models.toml's `corpora` draws from
SCORED: tuple[str, ...] = tuple(k for k, c in CORPORA.items() if c.texts)
#: the corpora with cloze norms (`predictabase cloze`)
CLOZE: tuple[str, ...] = tuple(k for k, c in CORPORA.items() if c.cloze)
#: the corpus of the LM-game study's games (`predictabase top1`)
GAME: str = next(k for k, c in CORPORA.items() if c.game)
#: the cloze corpora whose norms keep every response (full response distributions)
CLOZE_RESPONSES: tuple[str, ...] = tuple(k for k, c in CORPORA.items() if c.cloze_norms == "responses")
#: the corpus a page shows first where others tie
FEATURED: str = next(k for k, c in CORPORA.items() if c.featured)


def adapted(adapter: str) -> dict[str, Corpus]:
    """The corpora one adapter loads (corpora.toml's `adapter`), in declared order."""
    return {k: c for k, c in CORPORA.items() if c.adapter == adapter}


def title(key: str) -> str:
    """The corpus's name for people (the key itself for one not declared)."""
    c = CORPORA.get(key)
    return c.title if c else key


def with_reading(measure: str) -> tuple[str, ...]:
    return tuple(k for k, c in CORPORA.items() if measure in c.reading)
