"""The corpora, declared once as data (`ingest/corpora.toml`): each corpus's name for people and what it has
(texts, reading measures, cloze norms, the LM-game's games). Light on purpose (no polars, no torch): the CLI,
models.toml's validation and the dashboard read it too."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

TABLE_FILE = Path(__file__).with_name("corpora.toml")
READING_MEASURES = ("eye_tracking", "self_paced_reading")


@dataclass(frozen=True)
class Corpus:
    key: str
    title: str
    texts: bool
    reading: tuple[str, ...]
    cloze: bool
    game: bool
    language: str = "en"  # ISO 639-1


def _load() -> dict[str, Corpus]:
    data = tomllib.loads(TABLE_FILE.read_text(encoding="utf-8"))
    out = {key: Corpus(key=key, title=v["title"], texts=v["texts"], reading=tuple(v["reading"]), cloze=v["cloze"],
                       game=v["game"], language=v.get("language", "en")) for key, v in data.items()}
    for c in out.values():
        unknown = set(c.reading) - set(READING_MEASURES)
        if unknown:  # pragma: no cover - a typo in corpora.toml
            raise ValueError(f"{TABLE_FILE}: {c.key}: unknown reading measure(s) {sorted(unknown)}")
    return out


CORPORA: dict[str, Corpus] = _load()
#: the corpora with texts: what `predictabase score` scores and models.toml's `corpora` draws from
SCORED: tuple[str, ...] = tuple(k for k, c in CORPORA.items() if c.texts)
#: the corpora with cloze norms (`predictabase cloze`)
CLOZE: tuple[str, ...] = tuple(k for k, c in CORPORA.items() if c.cloze)
#: the corpus of the LM-game study's games (`predictabase top1`)
GAME: str = next(k for k, c in CORPORA.items() if c.game)


def title(key: str) -> str:
    """The corpus's name for people (the key itself for one not declared)."""
    c = CORPORA.get(key)
    return c.title if c else key


def with_reading(measure: str) -> tuple[str, ...]:
    return tuple(k for k, c in CORPORA.items() if measure in c.reading)
