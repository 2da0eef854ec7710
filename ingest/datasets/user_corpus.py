"""A user's corpus: its files read and validated into the raw tables (ingest job `declared_corpora`).

Only loads and validates; every metric is dbt's. The same parsing serves `predictabase corpus add` (on the
user's files, before anything is copied or declared) and the ingest job (on the declared copies under
`<warehouse>/raw/user/NAME/`, re-verified against their sha256). Every problem is an `IngestError` naming the
file and the line, raised before anything is written.

Files (CSV, TSV, JSON Lines, or for texts a folder of .txt files), in the declared encoding:
- texts: one row per text, columns `text_id`, `text` (words = the whitespace-delimited runs of the text,
  numbered 0, 1, ... in their text: that number is their `word_id`); or one row per word, columns `text_id`,
  `word`, optionally `word_id` (the lab's own id, unique within the text; default: 0, 1, ... in file order) and
  `after` (the characters between this word and the next, default one space); a text's words are its rows in
  file order. A folder of .txt files: one text per file, the file name (without .txt) its id.
- reading times: `text_id`, `word_id` (as in the texts), optionally `reader_id` (then one row per reader and
  word; else per-word means, optionally with `n_readers`), and one column per declared measure named as the
  measure (`spr`, `first_fixation`, `gaze_duration`, `go_past`, `total_reading_time`), or `rt_ms`/`rt`/`time`
  when the file holds one measure. An empty or NA cell is a word not read (skipped): no row, never 0 ms; a 0 in
  an eye-tracking measure is read the same way (eye trackers write 0 for a word not fixated); a self-paced
  reading time must be > 0.
- cloze: `text_id`, `word_id`, and `cloze_probability` (0..1) or `response_count` and `n_responses`.
- frequencies: `text_id`, `word_id`, `zipf_frequency` (log10 frequency per billion words, any finite number).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.core.fsutil import sha256_of
from predictabase.ingest import corpus_table
from predictabase.ingest.corpus_declarations import (
    EYE_MEASURES,
    INPUT_KEY,
    UNITS,
    Declaration,
    DeclaredFile,
    declarations_sha256,
    load_declarations,
    shipped_measures,
)
from predictabase.ingest.datasets._common import CLOZE_NORMS_SCHEMA as NORMS_SCHEMA
from predictabase.ingest.datasets._common import (
    DOC_SCHEMA,
    READING_TIMES_SCHEMA,
    WORD_FREQUENCIES_SCHEMA,
    WORD_SCHEMA,
    CorpusLoad,
    doc_row,
    frame,
)
from predictabase.ingest.sources.fetch import checked_copy, record_input
from predictabase.ingest.text import whitespace_words

JOB = "declared_corpora"
TABLES = ("raw.documents", "raw.words", "raw.reading_times", "raw.cloze_norms", "raw.word_frequencies")
#: tables this job wrote once and no longer does, dropped when it writes (a user corpus's reading times,
#: cloze norms and own frequencies are rows of raw.reading_times, raw.cloze_norms and raw.word_frequencies, the
#: tables of the shipped corpora's)
RETIRED = ("raw.user_reading_times", "raw.user_cloze_norms", "raw.user_word_frequencies")
USER_FREQUENCIES = {"frequency_source": "user"}  # the partition of raw.word_frequencies a user's file fills
RT_SCHEMA = READING_TIMES_SCHEMA  # raw.reading_times, every corpus's (ingest/datasets/_common.py)
CLOZE_SCHEMA = NORMS_SCHEMA  # raw.cloze_norms, every corpus's norms (ingest/datasets/_common.py)
FREQ_SCHEMA = WORD_FREQUENCIES_SCHEMA  # raw.word_frequencies, every corpus's frequencies (frequency_source "user")
CORPORA_SCHEMA = {
    "corpus": pl.String,
    "title": pl.String,
    "language": pl.String,
    "origin": pl.String,
    "has_texts": pl.Boolean,
    "reading_measures": pl.List(pl.String),
    "has_cloze": pl.Boolean,
    "is_game": pl.Boolean,
    "published": pl.String,
    "declared_at": pl.Datetime("us", "UTC"),
    "declaration_sha256": pl.String,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: a cell that says "no value" (a word not read, no frequency). `NaN` is not one: it is what a failed computation
#: writes, so it is refused as not a number (docs/guides/own-corpus.md), like `null` and `none`.
MISSING = {"", "na"}
RT_COLUMNS = ("rt_ms", "rt", "time")
EXTENSIONS = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".jsonl": None, ".ndjson": None}
#: the longest line of any file, and the longest text, in characters (4 Mi: a whole novel in one row is about a
#: quarter of it). Reading holds ~100 bytes per character of a text (its words as rows), so a 50 MB line would
#: take about 5 GB; a longer one is refused in one line naming the file and line, before it is parsed.
MAX_LINE_CHARS = 1 << 22
MAX_TEXT_CHARS = MAX_LINE_CHARS


# --------------------------------------------------------------------------- reading a file


@dataclass(frozen=True)
class Table:
    """A user file read as strings: `rows` in file order, each with its 1-based line number."""

    name: str  # how errors name the file
    columns: list[str]
    rows: list[dict[str, str]]
    lines: list[int]


def sha256_path(p: Path) -> str:
    """A file's sha256; for a folder of .txt files, the sha256 of its files' names and sha256s."""
    if p.is_dir():
        lines = [f"{f.name} {hashlib.sha256(f.read_bytes()).hexdigest()}" for f in sorted(p.glob("*.txt"))]
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return sha256_of(p)


def decode(data: bytes, name: str, encoding: str) -> str:
    try:
        text = data.decode(encoding, errors="strict")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestError(
            name,
            f"line {line}: not valid {encoding} text: byte {data[exc.start : exc.start + 1]!r} at "
            f"offset {exc.start} ({exc.reason}); declare the file's encoding with --encoding",
        ) from None
    nul = text.find("\x00")
    if nul >= 0:  # text never holds one: a binary file, a UTF-16 file read as UTF-8, or a damaged copy
        raise IngestError(
            name,
            f"line {text.count(chr(10), 0, nul) + 1}: a NUL byte (\\x00) at character {nul}; "
            "a text file holds none (is it UTF-16? then --encoding utf-16)",
        )
    check_line_lengths(text, name)
    return text


def check_line_lengths(text: str, name: str) -> None:
    """IngestError naming the first line longer than MAX_LINE_CHARS (a file that is one huge line, a corrupted or
    binary file), before anything is parsed."""
    if len(text) <= MAX_LINE_CHARS:
        return
    for k, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE_CHARS:
            raise IngestError(
                name,
                f"line {k}: {len(line):,} characters, more than a line may hold "
                f"({MAX_LINE_CHARS:,}); split the text into several texts or lines",
            )


def read_table(p: Path, encoding: str, name: str | None = None, texts: bool = False) -> Table:
    """Every row of a CSV/TSV/JSONL file (or, for texts, a folder of .txt files) as strings."""
    name = name or str(p)
    if not p.exists():
        raise IngestError(name, "no such file or folder")
    if p.is_dir():
        if not texts:
            raise IngestError(name, "a folder; reading times, cloze and frequencies are one CSV/TSV/JSONL file")
        files = sorted(p.glob("*.txt"))
        if not files:
            raise IngestError(name, "a folder without .txt files")
        rows = [{"text_id": f.stem, "text": decode(f.read_bytes(), f"{name}/{f.name}", encoding)} for f in files]
        return Table(name, ["text_id", "text"], rows, list(range(1, len(rows) + 1)))
    suffix = p.suffix.lower()
    if suffix not in EXTENSIONS:
        raise IngestError(
            name,
            f"unknown file type {suffix or '(none)'}: one of {', '.join(EXTENSIONS)}"
            + (" or a folder of .txt files" if texts else ""),
        )
    text = decode(p.read_bytes(), name, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is not part of the first column's name
    if not text.strip():
        raise IngestError(name, "empty file")
    if EXTENSIONS[suffix] is None:
        return _jsonl(text, name)
    try:
        df = pl.read_csv(
            io.StringIO(text), separator=EXTENSIONS[suffix], infer_schema=False, quote_char='"', raise_if_empty=True
        )
    except (pl.exceptions.PolarsError, ValueError) as exc:
        raise IngestError(name, f"not a readable {suffix[1:].upper()} file: {_csv_problem(exc, text)}") from None
    columns = [c.strip() for c in df.columns]
    if len(set(columns)) != len(columns):
        raise IngestError(name, f"a column name appears twice: {columns}")
    # rows through Arrow, whose conversion raises MemoryError when Python objects cannot be allocated (polars'
    # iter_rows panics in Rust instead, printing a backtrace before the one-line error)
    rows = df.rename(dict(zip(df.columns, columns))).to_arrow().to_pylist()
    for r in rows:
        for c, v in r.items():
            if v is None:
                r[c] = ""
    return Table(name, columns, rows, list(range(2, len(rows) + 2)))


def _csv_problem(exc: Exception, text: str) -> str:
    """What polars found wrong, in one clause: its first line, without the advice paragraph that follows it
    (options of polars' own reader, which a user of this command cannot set); an unterminated quote by its line."""
    message = str(exc)
    m = re.search(r"Field `(.*?)` is not properly escaped", message, re.S)
    if m:
        start = text.find(m.group(1))
        line = f"line {text.count(chr(10), 0, start) + 1}: " if start >= 0 else ""
        return f'{line}a quoted field is never closed (a " without its closing "), starting {m.group(1)[:30]!r}'
    first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    return " ".join(first.split())[:200]


def _jsonl(text: str, name: str) -> Table:
    rows, lines, columns = [], [], {}
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(name, f"line {k}: not a JSON object ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise IngestError(name, f"line {k}: not a JSON object")
        rows.append({c: "" if v is None else str(v) for c, v in obj.items()})
        lines.append(k)
        columns.update(dict.fromkeys(obj))
    return Table(name, list(columns), rows, lines)


def _require(t: Table, *cols: str) -> None:
    missing = [c for c in cols if c not in t.columns]
    if missing:
        raise IngestError(t.name, f"missing column(s) {', '.join(missing)}; the file has {', '.join(t.columns)}")


def _number(t: Table, k: int, col: str, value: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise IngestError(t.name, f"line {t.lines[k]}, column {col}: {value!r} is not a number") from None
    if not math.isfinite(v):
        raise IngestError(t.name, f"line {t.lines[k]}, column {col}: {value!r} is not a finite number")
    return v


def _integer(t: Table, k: int, col: str, value: str, low: int) -> int:
    v = _number(t, k, col, value)
    if v != int(v) or v < low:
        raise IngestError(t.name, f"line {t.lines[k]}, column {col}: {value!r} is not an integer >= {low}")
    return int(v)


# --------------------------------------------------------------------------- texts


@dataclass
class Texts:
    docs: pl.DataFrame
    words: pl.DataFrame
    #: (text_id, word_id) -> (doc_id, word_index): what the other files join on
    index: dict[tuple[str, str], tuple[str, int]]
    layout: str  # "texts" | "words"


def _check_text_length(t: Table, line: int, tid: str, n_chars: int) -> None:
    if n_chars > MAX_TEXT_CHARS:
        raise IngestError(
            t.name,
            f"line {line}: text {tid!r} has more than {MAX_TEXT_CHARS:,} characters, more "
            "than a text may hold; split it into several texts",
        )


def parse_texts(t: Table, corpus: str, source_path: str, sha256: str) -> Texts:
    """The documents and words of a texts file (see the module docstring), every problem one line."""
    if "text" in t.columns:
        _require(t, "text_id", "text")
        layout = "texts"
    elif "word" in t.columns:
        _require(t, "text_id", "word")
        layout = "words"
    else:
        raise IngestError(
            t.name,
            f"needs columns text_id and text (one row per text) or text_id and word (one row "
            f"per word); the file has {', '.join(t.columns)}",
        )
    if not t.rows:
        raise IngestError(t.name, "no rows")
    texts: dict[str, list[tuple[str, str, int]]] = {}  # text_id -> [(text or word, after, row number)]
    chars: dict[str, int] = {}  # text_id -> its length so far (words layout)
    first_line: dict[str, int] = {}
    last_text = None
    for k, r in enumerate(t.rows):
        line = t.lines[k]
        tid = r["text_id"].strip()
        if not tid:
            raise IngestError(t.name, f"line {line}: empty text_id")
        if layout == "texts":
            if tid in first_line:
                raise IngestError(
                    t.name, f"line {line}: text_id {tid!r} appears twice (first on line {first_line[tid]})"
                )
            if not r["text"].strip():
                raise IngestError(t.name, f"line {line}: text {tid!r} is empty")
            _check_text_length(t, line, tid, len(r["text"]))
            texts[tid] = [(r["text"], "", k)]
        else:
            if tid in first_line and tid != last_text:
                raise IngestError(
                    t.name,
                    f"line {line}: text {tid!r} continues after another text (its words "
                    f"must be consecutive rows; it started on line {first_line[tid]})",
                )
            word = r["word"]
            if not word or any(ch.isspace() for ch in word):
                raise IngestError(t.name, f"line {line}: word {word!r} of text {tid!r} is empty or holds whitespace")
            texts.setdefault(tid, []).append((word, r.get("after", " "), k))
            chars[tid] = chars.get(tid, 0) + len(word) + len(r.get("after", " "))
            _check_text_length(t, first_line.get(tid, line), tid, chars[tid])
        first_line.setdefault(tid, line)
        last_text = tid
    doc_rows, word_rows, index = [], [], {}
    version = hashlib.sha256(sha256.encode()).hexdigest()  # the corpus version scoring runs record
    src = type("Src", (), {"path": source_path, "sha256": sha256})()  # doc_row's provenance
    for d, (tid, items) in enumerate(texts.items()):
        if layout == "texts":
            text = items[0][0]
            spans = whitespace_words(text)
            ids = [str(i) for i in range(len(spans))]
        else:
            pieces, spans, pos = [], [], 0
            for i, (w, after, _k) in enumerate(items):
                spans.append((w, pos, pos + len(w)))
                pieces.append(w)
                pos += len(w)
                if i < len(items) - 1:
                    pieces.append(after)
                    pos += len(after)
            text = "".join(pieces)
            ids = _word_ids(t, tid, items)
        doc_rows.append(doc_row(corpus, tid, d, text, src, version))
        for i, ((w, a, b), wid) in enumerate(zip(spans, ids)):
            word_rows.append(
                dict(
                    corpus=corpus,
                    doc_id=tid,
                    word_index=i,
                    word=w,
                    char_start=a,
                    char_end=b,
                    native_id=wid,
                    source_path=source_path,
                    source_sha256=sha256,
                )
            )
            index[(tid, wid)] = (tid, i)
    return Texts(frame(doc_rows, DOC_SCHEMA), frame(word_rows, WORD_SCHEMA), index, layout)


def _word_ids(t: Table, tid: str, items: list[tuple[str, str, int]]) -> list[str]:
    if "word_id" not in t.columns:
        return [str(i) for i in range(len(items))]
    ids, seen = [], {}
    for _w, _a, k in items:
        line = t.lines[k]
        wid = t.rows[k]["word_id"].strip()
        if not wid:
            raise IngestError(t.name, f"line {line}: empty word_id")
        if wid in seen:
            raise IngestError(
                t.name, f"line {line}: text {tid!r} word_id {wid!r} appears twice (first on line {seen[wid]})"
            )
        seen[wid] = line
        ids.append(wid)
    return ids


def _joined(t: Table, k: int, texts: Texts, texts_name: str) -> tuple[str, int]:
    r = t.rows[k]
    key = (r["text_id"].strip(), r["word_id"].strip())
    hit = texts.index.get(key)
    if hit is None:
        raise IngestError(
            t.name, f"line {t.lines[k]}: text {key[0]!r} word {key[1]!r} is not a word of the texts ({texts_name})"
        )
    return hit


# --------------------------------------------------------------------------- reading times, cloze, frequencies


def measure_columns(t: Table, measures: tuple[str, ...]) -> dict[str, str]:
    """measure -> the file's column holding it."""
    out = {m: m for m in measures if m in t.columns}
    rest = [m for m in measures if m not in out]
    if len(measures) == 1 and rest:
        col = next((c for c in RT_COLUMNS if c in t.columns), None)
        if col is not None:
            return {measures[0]: col}
    if rest:
        raise IngestError(
            t.name,
            f"no column for measure(s) {', '.join(rest)} (a column named as the measure"
            + (", or rt_ms/rt/time" if len(measures) == 1 else "")
            + f"); the file has "
            f"{', '.join(t.columns)}",
        )
    return out


def parse_reading_times(
    t: Table,
    corpus: str,
    texts: Texts,
    texts_name: str,
    measures: tuple[str, ...],
    units: str,
    source_path: str,
    sha256: str,
) -> tuple[pl.DataFrame, dict]:
    """One row per (measure, reader or mean, word) read; notes count what was skipped."""
    _require(t, "text_id", "word_id")
    cols = measure_columns(t, measures)
    per_reader = "reader_id" in t.columns
    scale = UNITS[units]
    out = {k: [] for k in ("measure", "reader_id", "doc_id", "word_index", "rt_ms", "n_readers")}
    seen: dict[tuple, int] = {}
    skipped = 0
    for k, r in enumerate(t.rows):
        doc_id, wi = _joined(t, k, texts, texts_name)
        reader = r["reader_id"].strip() if per_reader else None
        if per_reader and not reader:
            raise IngestError(t.name, f"line {t.lines[k]}: empty reader_id")
        n = None
        if not per_reader and "n_readers" in t.columns and r["n_readers"].strip().lower() not in MISSING:
            n = _integer(t, k, "n_readers", r["n_readers"].strip(), 1)
        for m, col in cols.items():
            v = r[col].strip()
            if v.lower() in MISSING:
                skipped += 1
                continue
            x = _number(t, k, col, v)
            if x < 0 or (x == 0 and (m not in EYE_MEASURES or not per_reader)):
                raise IngestError(t.name, f"line {t.lines[k]}, column {col}: {v} is not a reading time > 0 {units}")
            if x == 0:  # an eye tracker's 0 for a word not fixated: skipped, not 0 ms
                skipped += 1
                continue
            key = (m, reader, doc_id, wi)
            if key in seen:
                raise IngestError(
                    t.name,
                    f"line {t.lines[k]}: {m} of text {doc_id!r} word {r['word_id']!r}"
                    + (f" reader {reader!r}" if per_reader else "")
                    + f" appears twice (first on line {seen[key]})",
                )
            seen[key] = t.lines[k]
            for c, val in zip(out, (m, reader, doc_id, wi, x * scale, n)):
                out[c].append(val)
    if not out["measure"]:
        raise IngestError(t.name, "no reading time in the file")
    rows = _rows_of(
        RT_SCHEMA,
        pl.DataFrame(out, schema={c: RT_SCHEMA[c] for c in out}, strict=True),
        texts,
        corpus=corpus,
        source_path=source_path,
        source_sha256=sha256,
    )
    return rows, {"per_reader": per_reader, "skipped": skipped, "rows": len(out["measure"])}


def _unique(t: Table, k: int, key: tuple, seen: dict) -> None:
    if key in seen:
        raise IngestError(
            t.name,
            f"line {t.lines[k]}: text {key[0]!r} word {t.rows[k]['word_id']!r} appears twice "
            f"(first on line {seen[key]})",
        )
    seen[key] = t.lines[k]


def parse_cloze(t: Table, corpus: str, texts: Texts, texts_name: str, source_path: str, sha256: str) -> pl.DataFrame:
    """A cloze file -> rows of raw.cloze_norms (one per word): the probability as given
    (cloze_probability_published, smoothing 'none') or the counts c of N (response_count, n_responses); the
    corpus word and its id from the texts; upstream_row = the file's line. dbt derives p, its smoothing and
    surprisal (mart_cloze)."""
    _require(t, "text_id", "word_id")
    probability = "cloze_probability" in t.columns
    if not probability:
        _require(t, "text_id", "word_id", "response_count", "n_responses")
    out = {
        k: []
        for k in (
            "doc_id",
            "word_index",
            "upstream_row",
            "cloze_probability_published",
            "response_count",
            "n_responses",
        )
    }
    seen: dict = {}
    for k, r in enumerate(t.rows):
        doc_id, wi = _joined(t, k, texts, texts_name)
        _unique(t, k, (doc_id, wi), seen)
        p = c = n = None
        if probability:
            p = _number(t, k, "cloze_probability", r["cloze_probability"].strip())
            if not 0 <= p <= 1:
                raise IngestError(t.name, f"line {t.lines[k]}, column cloze_probability: {p} is not in [0, 1]")
        else:
            c = _integer(t, k, "response_count", r["response_count"].strip(), 0)
            n = _integer(t, k, "n_responses", r["n_responses"].strip(), 1)
            if c > n:
                raise IngestError(t.name, f"line {t.lines[k]}: response_count {c} > n_responses {n}")
        for col, val in zip(out, (doc_id, wi, t.lines[k], p, c, n)):
            out[col].append(val)
    rows = pl.DataFrame(out, schema={c: NORMS_SCHEMA[c] for c in out}, strict=True)
    return _rows_of(
        NORMS_SCHEMA, rows, texts, corpus=corpus, smoothing="none", source_path=source_path, source_sha256=sha256
    )


def _rows_of(schema: dict, rows: pl.DataFrame, texts: Texts, **constants) -> pl.DataFrame:
    """`rows` (doc_id, word_index and some of a raw table's columns) as rows of that table, the one every corpus
    writes: the corpus word and its id from the texts, `constants` in every row, the table's other columns NULL."""
    words = texts.words.select("doc_id", "word_index", "native_id", "word")
    out = rows.join(words, on=["doc_id", "word_index"], how="left", maintain_order="left").with_columns(
        **{k: pl.lit(v) for k, v in constants.items()}
    )
    return out.select([pl.col(c) if c in out.columns else pl.lit(None).alias(c) for c in schema]).cast(schema)


def parse_frequencies(
    t: Table, corpus: str, texts: Texts, texts_name: str, source_path: str, sha256: str
) -> pl.DataFrame:
    """A frequencies file -> rows of raw.word_frequencies (frequency_source 'user'; zipf_frequency as given, NULL
    for a word the file has no value for)."""
    _require(t, "text_id", "word_id", "zipf_frequency")
    out = {k: [] for k in ("doc_id", "word_index", "zipf_frequency")}
    seen: dict = {}
    for k, r in enumerate(t.rows):
        doc_id, wi = _joined(t, k, texts, texts_name)
        _unique(t, k, (doc_id, wi), seen)
        v = r["zipf_frequency"].strip()
        z = None if v.lower() in MISSING else _number(t, k, "zipf_frequency", v)
        for col, val in zip(out, (doc_id, wi, z)):
            out[col].append(val)
    rows = pl.DataFrame(out, schema={c: FREQ_SCHEMA[c] for c in out}, strict=True)
    return _rows_of(
        FREQ_SCHEMA, rows, texts, corpus=corpus, source_path=source_path, source_sha256=sha256, **USER_FREQUENCIES
    )


# --------------------------------------------------------------------------- a whole corpus


@dataclass
class Parsed:
    texts: Texts
    reading_times: list[pl.DataFrame]
    cloze: pl.DataFrame | None
    frequencies: pl.DataFrame | None
    notes: dict


def parse_corpus(
    name: str,
    encoding: str,
    files: dict[str, tuple[Path, str, str]],
    reading: list[tuple[Path, str, str, tuple[str, ...], str]],
) -> Parsed:
    """Parse and validate a corpus's files. `files`: role (texts, cloze, frequencies) -> (local file, name for
    errors and source_path, sha256); `reading`: (local file, name, sha256, measures, units) per file."""
    local, tname, tsha = files["texts"]
    texts = parse_texts(read_table(local, encoding, tname, texts=True), name, tname, tsha)
    notes = {"texts": texts.docs.height, "words": texts.words.height, "layout": texts.layout}
    rts = []
    for p, rname, sha, measures, units in reading:
        df, n = parse_reading_times(read_table(p, encoding, rname), name, texts, tname, measures, units, rname, sha)
        rts.append(df)
        notes[f"reading_times {rname}"] = n
    out = {}
    for role, parse in (("cloze", parse_cloze), ("frequencies", parse_frequencies)):
        if role in files:
            p, fname, sha = files[role]
            out[role] = parse(read_table(p, encoding, fname), name, texts, tname, fname, sha)
    return Parsed(texts, rts, out.get("cloze"), out.get("frequencies"), notes)


def declared_path(paths: Paths, f: DeclaredFile) -> Path:
    """The declared copy of a user file, re-verified (ingest reads a user file only through here)."""
    return checked_copy(
        paths.raw / f.path,
        f.path,
        f.sha256,
        "missing from the warehouse; run `predictabase corpus add` again",
        lambda got: IngestError(
            f.path,
            f"sha256 {got[:12]}... is not the declared {f.sha256[:12]}... "
            "(the file changed after `corpus add`); run `predictabase "
            "corpus add --replace` again",
        ),
        digest=sha256_path,
    )


def load_declared(paths: Paths, d: Declaration) -> Parsed:
    files = {"texts": (declared_path(paths, d.texts), d.texts.path, d.texts.sha256)}
    for role in ("cloze", "frequencies"):
        f = getattr(d, role)
        if f is not None:
            files[role] = (declared_path(paths, f), f.path, f.sha256)
    reading = [(declared_path(paths, f), f.path, f.sha256, f.measures, f.units) for f in d.reading_times]
    return parse_corpus(d.name, d.encoding, files, reading)


def corpora_frame(decls: dict[str, Declaration]) -> pl.DataFrame:
    """raw.corpora: every corpus, shipped (ingest/corpora.toml) and the user's."""
    from datetime import datetime

    shipped = hashlib.sha256(corpus_table.TABLE_FILE.read_bytes()).hexdigest()
    rows = [
        dict(
            corpus=c.key,
            title=c.title,
            language=c.language,
            origin="shipped",
            has_texts=c.texts,
            reading_measures=shipped_measures(c),
            has_cloze=c.cloze,
            is_game=c.game,
            published=None,
            declared_at=None,
            declaration_sha256=shipped,
            source_path="ingest/corpora.toml",
            source_sha256=shipped,
        )
        for c in corpus_table.CORPORA.values()
    ]
    for d in decls.values():
        rows.append(
            dict(
                corpus=d.name,
                title=d.title,
                language=d.language,
                origin="user",
                has_texts=True,
                reading_measures=list(d.measures),
                has_cloze=d.cloze is not None,
                is_game=False,
                published=d.published,
                declared_at=datetime.fromisoformat(d.added_at) if d.added_at else None,
                declaration_sha256=d.digest(),
                source_path=d.texts.path,
                source_sha256=d.texts.sha256,
            )
        )
    return frame(rows, CORPORA_SCHEMA)


def prepare(paths: Paths, _prepared: dict | None = None) -> CorpusLoad:
    """Every declared corpus read and validated; raw.corpora. Records the declarations file among the job's
    inputs, so a corpus added or removed re-runs this job (and the jobs after it)."""
    decls = load_declarations(paths)
    record_input(INPUT_KEY, declarations_sha256(paths))
    tables: list = [("raw.corpora", corpora_frame(decls), {})]
    notes = {}
    for name, d in decls.items():
        parsed = load_declared(paths, d)
        part = {"corpus": name}
        rts = pl.concat(parsed.reading_times) if parsed.reading_times else pl.DataFrame(schema=RT_SCHEMA)
        tables += [
            ("raw.documents", parsed.texts.docs, part),
            ("raw.words", parsed.texts.words, part),
            ("raw.reading_times", rts, part),
            ("raw.cloze_norms", parsed.cloze if parsed.cloze is not None else pl.DataFrame(schema=CLOZE_SCHEMA), part),
            (
                "raw.word_frequencies",
                parsed.frequencies if parsed.frequencies is not None else pl.DataFrame(schema=FREQ_SCHEMA),
                {**part, **USER_FREQUENCIES},
            ),
        ]
        notes[name] = parsed.notes
    return CorpusLoad(JOB, tables, notes)


def write(con, load: CorpusLoad) -> int:
    """Replace every declared corpus's partitions and raw.corpora; delete the partitions of user corpora no
    longer declared (`corpus remove`), so nothing of them stays in raw."""
    from predictabase.ingest.raw import replace_partitions_in

    had = set()
    if con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = 'corpora'"
    ).fetchall()[0][0]:
        had = {r[0] for r in con.execute("SELECT corpus FROM raw.corpora WHERE origin = 'user'").fetchall()}
    n = replace_partitions_in(con, load.tables)
    for table in RETIRED:  # an older warehouse's copy; nothing reads it
        con.execute(f"DROP TABLE IF EXISTS {table}")
    now = {f["corpus"][0] for t, f, _ in load.tables if t == "raw.documents" and f.height}
    existing = {
        r[0]
        for r in con.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema = 'raw'"
        ).fetchall()
    }
    for gone in sorted(had - now):
        for table in TABLES:
            if table in existing:
                con.execute(f"DELETE FROM {table} WHERE corpus = ?", [gone])
    return n
