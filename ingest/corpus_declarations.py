"""The user's corpora: declared in `<warehouse>/corpora.toml` by `predictabase corpus add`, one table per corpus.

A declaration names the corpus's files (copied under `<warehouse>/raw/user/NAME/`, each with its sha256, the
user's catalog: ingest reads a file only when its sha256 still matches) and how to read them:

    [brown]
    title = "Brown"
    language = "en"                          # ISO 639-1 (default en): wordfreq's list for it gives frequencies
    added_at = "2026-11-25T10:00:00+00:00"
    encoding = "utf-8"                       # of every file of the corpus
    published = "pimentel_meister:brown"     # optional: the catalog's published results on this corpus

    [brown.texts]                            # one row per text (text_id, text) or per word (text_id, word, ...)
    path = "user/brown/texts.csv"            # under <warehouse>/raw/
    sha256 = "..."
    original = "/home/me/brown_words.csv"    # where it was added from (information only)

    [[brown.reading_times]]                  # optional, one per file
    path = "user/brown/reading_times_1.csv"
    sha256 = "..."
    original = "..."
    measures = ["spr"]                       # the measures the file holds (one column each, or `rt`)
    units = "ms"                             # ms or s

    [brown.cloze]                            # optional: per-word cloze probability or response counts
    [brown.frequencies]                      # optional: per-word zipf_frequency (else wordfreq)

The shipped corpora stay declared in `ingest/corpora.toml` (their loaders handle what is special about each);
`all_corpora` merges both. Light on purpose (no polars): the CLI's checks read it.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError
from predictabase.ingest import corpus_table

FILE_NAME = "corpora.toml"
USER_DIR = "user"  # under raw/: raw/user/NAME/...
NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,39}")
LANGUAGE_RE = re.compile(r"[a-z]{2,3}")  # an ISO 639 code (wordfreq's are 639-1, `fil` 639-2)
#: the reading measures a user file can hold; the names are int_reading_observations' measures
MEASURES = {
    "spr": "self-paced reading time per word",
    "first_fixation": "first fixation duration",
    "gaze_duration": "gaze duration (first-pass reading time)",
    "go_past": "go-past time (regression-path duration)",
    "total_reading_time": "total reading time",
}
EYE_MEASURES = ("first_fixation", "gaze_duration", "go_past", "total_reading_time")
#: each measure's name for people: in full (sentences, axes, the scoreboard's rows) and short (its grids' titles)
MEASURE_LABELS = {
    "spr": ("self-paced reading time", "self-paced reading"),
    "first_fixation": ("first fixation duration", "first fixation"),
    "gaze_duration": ("gaze duration", "gaze duration"),
    "go_past": ("go-past time", "go-past time"),
    "total_reading_time": ("total reading time", "total reading time"),
}
#: the measures the pages show first, in this preference: gaze duration where a corpus has eye tracking, else its
#: self-paced reading times
DEFAULT_MEASURES = ("gaze_duration", "spr")
#: the measures of each reading kind a shipped corpus declares (ingest/corpora.toml's `reading`)
SHIPPED_MEASURES = {"eye_tracking": list(EYE_MEASURES), "self_paced_reading": ["spr"]}


def shipped_measures(c: corpus_table.Corpus) -> list[str]:
    """The measures of a shipped corpus (ingest/corpora.toml): its declared `measures`, else every measure of its
    reading kinds (`reading`), kind by kind."""
    return list(c.measures) if c.measures else [m for kind in c.reading for m in SHIPPED_MEASURES[kind]]


UNITS = {"ms": 1.0, "s": 1000.0}
#: the published results a user corpus can be linked to: (dataset, their corpus name)
PUBLISHED = {
    "pimentel_meister:brown": "Pimentel & Meister 2024's 11 models on the Brown self-paced reading corpus "
    "(word surprisals and their delta log-likelihoods)"
}
INPUT_KEY = f"warehouse:{FILE_NAME}"  # how raw.ingest_log records the declarations file among a job's inputs


@dataclass(frozen=True)
class DeclaredFile:
    path: str  # under <warehouse>/raw/
    sha256: str
    original: str = ""
    measures: tuple[str, ...] = ()  # reading times only
    units: str = "ms"  # reading times only


@dataclass(frozen=True)
class Declaration:
    name: str
    title: str
    texts: DeclaredFile
    encoding: str = "utf-8"
    added_at: str = ""
    reading_times: tuple[DeclaredFile, ...] = ()
    cloze: DeclaredFile | None = None
    frequencies: DeclaredFile | None = None
    published: str | None = None
    language: str = "en"  # ISO 639-1: the language of the texts (wordfreq's list for it)
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for f in self.reading_times for m in f.measures))

    def files(self) -> list[tuple[str, DeclaredFile]]:
        out = [("texts", self.texts)] + [(f"reading_times #{i}", f) for i, f in enumerate(self.reading_times, 1)]
        out += [(k, f) for k, f in (("cloze", self.cloze), ("frequencies", self.frequencies)) if f is not None]
        return out

    def digest(self) -> str:
        """sha256 of the declaration (its files' sha256s and reading options; not where they came from)."""
        body = {
            "title": self.title,
            "encoding": self.encoding,
            "published": self.published,
            "files": [[k, f.path, f.sha256, list(f.measures), f.units] for k, f in self.files()],
        }
        if self.language != "en":  # an English corpus's digest as before languages were declared
            body["language"] = self.language
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def declarations_file(paths: Paths) -> Path:
    return paths.warehouse / FILE_NAME


def _file(data: dict, where: str) -> DeclaredFile:
    if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not isinstance(data.get("sha256"), str):
        raise OptionError(where, "needs `path` and `sha256`")
    return DeclaredFile(
        path=data["path"],
        sha256=data["sha256"],
        original=str(data.get("original", "")),
        measures=tuple(data.get("measures", ())),
        units=str(data.get("units", "ms")),
    )


def load_declarations(paths: Paths) -> dict[str, Declaration]:
    """NAME -> its declaration, in file order ({} when the warehouse has no corpora.toml)."""
    f = declarations_file(paths)
    if not f.exists():
        return {}
    try:
        data = tomllib.loads(f.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise OptionError(str(f), f"not valid TOML: {exc}") from None
    out = {}
    for name, d in data.items():
        where = f"{f} [{name}]"
        if not NAME_RE.fullmatch(name) or name in corpus_table.CORPORA:
            raise OptionError(where, "not a valid user corpus name")
        language = str(d.get("language", "en"))
        if not LANGUAGE_RE.fullmatch(language):
            raise OptionError(where, f"language {language!r} is not an ISO 639-1 code such as en, de, nl")
        rts = tuple(_file(r, f"{where} reading_times") for r in d.get("reading_times", []))
        for r in rts:
            bad = [m for m in r.measures if m not in MEASURES] + ([r.units] if r.units not in UNITS else [])
            if bad or not r.measures:
                raise OptionError(where, f"reading_times {r.path}: unknown measure or unit {bad}")
        out[name] = Declaration(
            name=name,
            title=str(d.get("title") or name),
            texts=_file(d.get("texts"), f"{where}.texts"),
            encoding=str(d.get("encoding", "utf-8")),
            added_at=str(d.get("added_at", "")),
            reading_times=rts,
            cloze=_file(d["cloze"], f"{where}.cloze") if "cloze" in d else None,
            frequencies=_file(d["frequencies"], f"{where}.frequencies") if "frequencies" in d else None,
            published=d.get("published"),
            language=language,
        )
    return out


def _toml_value(v) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def render(decls: dict[str, Declaration]) -> str:
    lines = [
        "# The user's corpora of this warehouse, written by `predictabase corpus add` (see",
        "# ingest/corpus_declarations.py for the format). Files live under raw/user/NAME/ with their sha256.",
        "",
    ]
    for d in decls.values():
        lines.append(f"[{d.name}]")
        for k in ("title", "language", "added_at", "encoding", "published"):
            if getattr(d, k) is not None:
                lines.append(f"{k} = {_toml_value(getattr(d, k))}")
        lines.append("")

        def block(header: str, f: DeclaredFile, reading: bool = False) -> None:
            lines.append(header)
            lines.extend(
                f"{k} = {_toml_value(v)}" for k, v in (("path", f.path), ("sha256", f.sha256), ("original", f.original))
            )
            if reading:
                lines.extend([f"measures = {_toml_value(list(f.measures))}", f"units = {_toml_value(f.units)}"])
            lines.append("")

        block(f"[{d.name}.texts]", d.texts)
        for r in d.reading_times:
            block(f"[[{d.name}.reading_times]]", r, reading=True)
        if d.cloze is not None:
            block(f"[{d.name}.cloze]", d.cloze)
        if d.frequencies is not None:
            block(f"[{d.name}.frequencies]", d.frequencies)
    return "\n".join(lines)


def save_declarations(paths: Paths, decls: dict[str, Declaration]) -> None:
    """Write corpora.toml atomically (a temporary file renamed over it). With no corpus left it keeps its header
    alone: a warehouse made by `corpus add --create` stays a warehouse (`config.is_warehouse`) when its last
    corpus is removed."""
    f = declarations_file(paths)
    tmp = f.with_name(f".{FILE_NAME}.tmp")
    tmp.write_text(render(decls), encoding="utf-8")
    tmp.replace(f)


def declarations_sha256(paths: Paths) -> str:
    """What raw.ingest_log records for the declarations file: the sha256 of its declarations' digests (so
    editing a comment or `original` re-ingests nothing; an empty warehouse's is the digest of nothing)."""
    decls = load_declarations(paths)
    return hashlib.sha256("\n".join(f"{n} {d.digest()}" for n, d in decls.items()).encode()).hexdigest()


def user_corpora(paths: Paths) -> tuple[str, ...]:
    return tuple(load_declarations(paths))


def languages(paths: Paths) -> dict[str, str]:
    """corpus -> the language of its texts (ISO 639-1): the shipped corpora's (ingest/corpora.toml), then the
    user's (their declarations)."""
    return {
        **{k: c.language for k, c in corpus_table.CORPORA.items() if c.texts},
        **{n: d.language for n, d in load_declarations(paths).items()},
    }


def scored_corpora(paths: Paths) -> tuple[str, ...]:
    """Every corpus `predictabase score` can score in this warehouse: the shipped ones, then the user's."""
    return (*corpus_table.SCORED, *user_corpora(paths))
