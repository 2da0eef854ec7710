"""The references (ingest/sources/references.toml): the BibTeX of every work the warehouse's numbers come from.

    refs = load_references()    # validated: unique keys, known kinds and catalog datasets, one entry each
    refs[0].title, refs[0].authors, refs[0].year, refs[0].venue   # plain text, read from the entry's fields

`parse_bib` reads BibTeX text (one entry or a whole .bib file). A bad references file is one IngestError naming
the file and the reference.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from predictabase.core.errors import IngestError
from predictabase.core.fsutil import sha256_of
from predictabase.ingest.sources.catalog import datasets as catalog_datasets

REFERENCES_FILE = Path(__file__).with_name("references.toml")
INPUT_KEY = "catalog:references.toml"  # how raw.ingest_log records the file among the job's inputs
KINDS = ("paper", "dataset", "model")
KEYS = ("key", "kind", "datasets", "bibtex")
#: the fields a reference's venue is read from, first present wins (an arXiv eprint comes before the free-text ones)
VENUE_FIELDS = ("journal", "booktitle", "institution", "eprint", "howpublished", "publisher", "note")

_HEAD = re.compile(r"@(\w+)\s*(\{)\s*([^\s,{}]+)\s*,")
_FIELD = re.compile(r"([A-Za-z][\w-]*)\s*=\s*")
_BARE = re.compile(r"[\w.:/-]+")


@dataclass(frozen=True)
class Entry:
    type: str  # lower case: article, inproceedings, ...
    key: str
    fields: dict[str, str]  # lower-case field name -> value as written (braces kept)


def _closing(text: str, i: int) -> int:
    """The index of the brace that closes the one at `text[i]` (backslash-escaped braces skipped)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return i
        i += 1
    raise ValueError("unbalanced braces")


def _check_balanced(text: str) -> None:
    depth, i = 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        depth += (text[i] == "{") - (text[i] == "}")
        if depth < 0:
            raise ValueError("unbalanced braces (a '}' closes nothing)")
        i += 1
    if depth:
        raise ValueError(f"unbalanced braces ({depth} '{{' never closed)")


def _value(body: str, i: int) -> tuple[str, int]:
    """The field value starting at `body[i]` ({...}, "..." or a bare word/number) and the index after it."""
    if body.startswith("{", i):
        end = _closing(body, i)
        return body[i + 1 : end], end + 1
    if body.startswith('"', i):
        depth, j = 0, i + 1
        while j < len(body) and not (body[j] == '"' and depth == 0):
            depth += (body[j] == "{") - (body[j] == "}")
            j += 1
        if j == len(body):
            raise ValueError('a "quoted" value is never closed')
        return body[i + 1 : j], j + 1
    m = _BARE.match(body, i)
    if not m:
        raise ValueError(f"no value at {body[i : i + 20]!r}")
    return m.group(0), m.end()


def _skip_space(text: str, i: int) -> int:
    """The index of the first non-space character of `text` from `i` (len(text) when none)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while True:
        i = _skip_space(body, i)
        if i == len(body):
            return out
        m = _FIELD.match(body, i)
        if not m:
            raise ValueError(f"expected 'name = value' at {body[i : i + 20]!r}")
        name = m.group(1).lower()
        if name in out:
            raise ValueError(f"field {name} given twice")
        out[name], i = _value(body, m.end())
        i = _skip_space(body, i)
        if i < len(body):
            if body[i] != ",":
                raise ValueError(f"expected ',' after field {name}")
            i += 1


def parse_bib(text: str) -> list[Entry]:
    """The entries of BibTeX text: `@type{key, name = value, ...}`, separated by whitespace only. ValueError
    saying what is wrong (unbalanced braces, no `@type{key,` header, a malformed field)."""
    _check_balanced(text)
    entries: list[Entry] = []
    i = 0
    while True:
        i = _skip_space(text, i)
        if i == len(text):
            return entries
        m = _HEAD.match(text, i)
        if not m:
            raise ValueError(f"expected an entry '@type{{key,' at {text[i : i + 20]!r}")
        end = _closing(text, m.start(2))
        entries.append(Entry(m.group(1).lower(), m.group(3), _fields(text[m.end() : end])))
        i = end + 1


def plain(value: str) -> str:
    """A field value in plain words: braces and \\url dropped, `--` an en dash, whitespace collapsed."""
    text = re.sub(r"\\url\{([^}]*)\}", r"\1", value)
    text = text.replace("\\&", "&").replace("\\%", "%").replace("\\_", "_").replace("--", "–").replace("~", " ")
    return " ".join(re.sub(r"(?<!\\)[{}]", "", text).split())


def _masked(text: str) -> str:
    """`text` with the inside of every braced group blanked out (same length): separators at brace depth 0."""
    out, depth = [], 0
    for c in text:
        depth -= c == "}"
        out.append(c if depth == 0 else "_")
        depth += c == "{"
    return "".join(out)


def names(author: str) -> list[tuple[str, str]]:
    """(first, last) of each name of a BibTeX name list: "Last, First", "First Last", or "{Corporate Name}"
    (first empty)."""
    if not author.strip():
        return []
    out, start = [], 0
    for m in [*re.finditer(r"\s+and\s+", _masked(author)), None]:
        name = author[start : m.start() if m else len(author)].strip()
        start = m.end() if m else start
        comma = _masked(name).find(",")
        if name.startswith("{") and _closing(name, 0) == len(name) - 1:
            out.append(("", plain(name)))
        elif comma >= 0:
            out.append((plain(name[comma + 1 :]), plain(name[:comma])))
        else:
            first, _, last = plain(name).rpartition(" ")
            out.append((first, last))
    return out


@dataclass(frozen=True)
class Reference:
    key: str
    kind: str
    datasets: tuple[str, ...]
    bibtex: str
    entry: Entry

    @property
    def title(self) -> str:
        return plain(self.entry.fields["title"])

    @property
    def authors(self) -> str | None:
        """Every author, first name first ("A, B and C"); None when the entry names none."""
        people = [f"{first} {last}".strip() for first, last in names(self.entry.fields.get("author", ""))]
        return None if not people else people[0] if len(people) == 1 else ", ".join(people[:-1]) + " and " + people[-1]

    @property
    def author_short(self) -> str | None:
        """The surnames as a citation gives them: "A", "A & B" or "A et al."; None when the entry names no author."""
        last = [surname for _, surname in names(self.entry.fields.get("author", ""))]
        return None if not last else " & ".join(last) if len(last) <= 2 else f"{last[0]} et al."

    @property
    def year(self) -> int | None:
        return int(self.entry.fields["year"].strip("{}")) if "year" in self.entry.fields else None

    @property
    def venue(self) -> str | None:
        """Where it appeared: the journal, proceedings, institution, arXiv id, or how it is published."""
        fields = self.entry.fields
        for name in VENUE_FIELDS:
            if name in fields:
                return f"arXiv:{plain(fields[name])}" if name == "eprint" else plain(fields[name])
        return None


def _reference(n: int, item: object, known: set[str]) -> Reference:
    """One [[reference]] table, checked; ValueError with what is wrong."""
    if not isinstance(item, dict) or set(item) != set(KEYS):
        got = sorted(item) if isinstance(item, dict) else type(item).__name__
        raise ValueError(f"reference #{n} must have exactly the keys {list(KEYS)}, it has {got}")
    key, kind, datasets, bibtex = (item[k] for k in KEYS)
    where = f"reference {key!r}"
    if not (isinstance(key, str) and isinstance(bibtex, str) and isinstance(datasets, list)):
        raise ValueError(f"reference #{n}: key and bibtex are strings, datasets a list of catalog datasets")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {list(KINDS)}")
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(f"{where}: dataset(s) {unknown} not in the source catalog (catalog.toml)")
    try:
        entries = parse_bib(bibtex)
    except ValueError as exc:
        raise ValueError(f"{where}: its bibtex does not parse: {exc}") from None
    if len(entries) != 1:
        raise ValueError(f"{where}: its bibtex must hold one entry, it holds {len(entries)}")
    if entries[0].key != key:
        raise ValueError(f"{where}: its bibtex entry's key is {entries[0].key!r}, not {key!r}")
    if "title" not in entries[0].fields:
        raise ValueError(f"{where}: its bibtex entry has no title")
    if not re.fullmatch(r"\{?\d{4}\}?", entries[0].fields.get("year", "0000")):
        raise ValueError(f"{where}: year {entries[0].fields['year']!r} is not a year")
    return Reference(key, kind, tuple(datasets), bibtex.strip(), entries[0])


def load_references(path: Path | None = None) -> tuple[Reference, ...]:
    """Every reference of the file (default: REFERENCES_FILE), in file order, validated: one IngestError naming the
    file on the first problem."""
    path = path or REFERENCES_FILE
    try:
        items = tomllib.loads(path.read_text(encoding="utf-8")).get("reference", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise IngestError(path, f"cannot be read as TOML ({' '.join(str(exc).split())})") from None
    known = set(catalog_datasets())
    out: list[Reference] = []
    try:
        for n, item in enumerate(items if isinstance(items, list) else [items], start=1):
            ref = _reference(n, item, known)
            if any(r.key == ref.key for r in out):
                raise ValueError(f"reference {ref.key!r} is given twice (keys must be unique)")
            out.append(ref)
    except ValueError as exc:
        raise IngestError(path, str(exc)) from None
    if not out:
        raise IngestError(path, "holds no [[reference]]")
    return tuple(out)


def references_sha256(path: Path | None = None) -> str:
    """The file's sha256 (refresh compares it with the one the last ingest recorded)."""
    return sha256_of(path or REFERENCES_FILE)
