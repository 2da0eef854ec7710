"""MECO in 11 languages (Siegelman et al. 2022), as Wilcox et al. (2023) prepared it (`wilcox_xlang/`): the adapter
of the corpora ingest/corpora.toml declares with `adapter = "meco"`, one corpus per language (meco_nl, meco_en, ...).

Their file `merged_data/<upstream>.csv` has one row per (word, model) for four models (mGPT with short and long
context, monolingual transformers trained on 30M words and on all data). Two jobs read it:

- the corpus job of each language (`load_corpus`) -> raw.documents, raw.words and raw.reading_times of that corpus, the
  same tables every corpus writes: the words are the union of every model's rows (the mGPT rows miss some words),
  one per (trialid, ianum), in that order; a text (`trialid`, doc_id '1' ... '12') is its words joined by single
  spaces (SOURCES.md); word_index = the position in the text (0-based), native_id = `ianum` (a text may skip one).
  The three measures (first fixation, gaze duration, total reading time) are per-word means over the language's
  readers: a mean of 0 ms or NA is a word no reader fixated, so it has no row (never 0 ms). Every model's row of a
  word must agree on the word and its means, else a one-line error.
- `wilcox_xlang` (`load_wilcox`) -> raw.wilcox_xlang_words: every row of every language as published (their
  surprisal, entropy, unigram surprisal `freq`, length, the previous words' values as they merged them, the three
  means with their 0s), joined to our words by (trialid, ianum), with its row in the file (their analysis folds
  rows in file order); raw.wilcox_xlang_link_curves: their fitted surprisal-to-gaze-duration curves (gam_saves).

Only loads and validates: the regressions (their ΔLL replayed, ours) are dbt's.
"""

from __future__ import annotations

import math

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest import corpus_table
from predictabase.ingest.datasets._common import (
    DOC_SCHEMA,
    READING_TIMES_SCHEMA,
    TEXTS_WRITES,
    WORD_SCHEMA,
    CorpusLoad,
    Job,
    check_word_spans,
    corpus_version,
    doc_row,
    frame,
    to_float,
    to_int,
    write_partitions,
)
from predictabase.ingest.raw import replace_tables_in
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.catalog import SourceFile
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import join_with_spans

ADAPTER = "meco"
DATASET = dataset("wilcox_xlang")
MERGED = DATASET.file("merged")
CURVES = DATASET.file("link_curves")
#: their measure columns (ms means) -> the warehouse's measures (ingest/corpus_declarations.py)
MEASURES = {"firstfix_rt": "first_fixation", "gaze_rt": "gaze_duration", "total_rt": "total_reading_time"}
#: their model names -> model_key of the imported runs
MODELS = {"mgpt_sc": "mgpt-sc", "mgpt_lc": "mgpt-lc", "monot_30m": "monot-30m", "monot_all": "monot-all"}
WORDS_TABLE = "wilcox_xlang_words"
CURVES_TABLE = "wilcox_xlang_link_curves"
#: their numeric columns -> our raw column (unit in the name); R's NA is NULL, Inf stays inf (their analysis
#: filters on is.finite)
_WORD_NUMBERS = {
    "surp": "surprisal_bits",
    "ent": "entropy_bits",
    "freq": "unigram_surprisal_bits",
    "len": "length_chars",
}
NUMBERS = {
    **_WORD_NUMBERS,
    # the previous two words' values as they merged them: prev_surp, prev2_surp, ... -> prev1_..., prev2_...
    **{f"prev{'' if k == 1 else k}_{col}": f"prev{k}_{ours}" for k in (1, 2) for col, ours in _WORD_NUMBERS.items()},
    **{col: f"{measure}_ms" for col, measure in MEASURES.items()},  # the means' columns, named after our measures
}
WORDS_SCHEMA = {
    "corpus": pl.String,
    "upstream_language": pl.String,
    "model_key": pl.String,
    "upstream_model": pl.String,
    "file_row": pl.Int32,
    "upstream_row": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "trialid": pl.Int32,
    "ianum": pl.Int32,
    "word": pl.String,
    "model_word": pl.String,
    "mismatch": pl.Boolean,
    **{c: pl.Float64 for c in NUMBERS.values()},
    "source_path": pl.String,
    "source_sha256": pl.String,
}
CURVES_SCHEMA = {
    "corpus": pl.String,
    "upstream_language": pl.String,
    "model_key": pl.String,
    "upstream_model": pl.String,
    "measure": pl.String,
    "link": pl.String,
    "surprisal_bits": pl.Float64,
    "effect_ms": pl.Float64,
    "effect_low_ms": pl.Float64,
    "effect_high_ms": pl.Float64,
    "plot_offset_ms": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
_LINKS = {"linear": "linear", "non-linear": "gam"}
#: the mean their link analysis models (analysis_link.Rmd: psychometric = "gaze_rt")
LINK_MEASURE = MEASURES["gaze_rt"]
_NA = "NA"


def corpora() -> dict[str, corpus_table.Corpus]:
    """The corpora this adapter loads, in declared order."""
    return corpus_table.adapted(ADAPTER)


def _catalog_file(spec_files: list[SourceFile], upstream: str, corpus: str) -> SourceFile:
    hit = [f for f in spec_files if f.path.rsplit("/", 1)[-1] == f"{upstream}.csv"]
    if not hit:
        raise IngestError(corpus, f"no {MERGED.glob} file for upstream language {upstream!r} in the catalog")
    return hit[0]


def _rows(paths: Paths, corpus: str) -> tuple[readers.Source, list[dict[str, str]]]:
    c = corpus_table.CORPORA[corpus]
    src = readers.read_catalog_file(_catalog_file(MERGED.catalog_files(), c.upstream, corpus), paths)
    rows = readers.delimited(src.data, src.path, MERGED)
    wrong = {r["lang"] for r in rows} - {c.upstream}
    if wrong:
        raise IngestError(src.path, f"holds rows of language(s) {sorted(wrong)}, not only {c.upstream!r}")
    return src, rows


def _number(value: str, path: str, what: str) -> float | None:
    """R's reading of a numeric field: NA or empty is missing; Inf, -Inf and numbers as written."""
    v = value.strip()
    return None if v in (_NA, "") else to_float(v, path, what)


def _whole(value: str, path: str, what: str, low: int) -> int:
    n = to_int(value, path, what)
    if n < low:
        raise IngestError(path, f"{what}: {n} is below {low}")
    return n


def _word_table(src: readers.Source, rows: list[dict[str, str]]) -> dict[tuple[int, int], dict]:
    """(trialid, ianum) -> the word and its means, checked to agree across the models' rows."""
    words: dict[tuple[int, int], dict] = {}
    for k, r in enumerate(rows, start=2):
        key = (
            _whole(r["trialid"], src.path, f"line {k} trialid", 1),
            _whole(r["ianum"], src.path, f"line {k} ianum", 1),
        )
        w = r["ia"]
        if not w or w != w.strip() or any(ch.isspace() and ch != "\u00a0" for ch in w):
            raise IngestError(src.path, f"line {k}: word {w!r} is empty or holds a space, tab or line break")
        item = {"word": w, **{m: _number(r[col], src.path, f"line {k} {col}") for col, m in MEASURES.items()}}
        for m in MEASURES.values():
            if item[m] is not None and not (math.isfinite(item[m]) and item[m] >= 0):
                raise IngestError(src.path, f"line {k}: {m} {item[m]} is not a mean reading time >= 0 ms")
        kept = words.setdefault(key, item)
        if kept != item:
            raise IngestError(
                src.path,
                f"line {k}: text {key[0]} word {key[1]} differs between the models' rows ({kept} against {item})",
            )
    return words


def _texts(words: dict[tuple[int, int], dict]) -> dict[int, list[tuple[int, int]]]:
    """trialid -> its words' keys in order (their position in the list is word_index)."""
    return {t: sorted(k for k in words if k[0] == t) for t in sorted({t for t, _ in words})}


def load_corpus(paths: Paths, corpus: str) -> CorpusLoad:
    """One language's documents, words and reading times (the module docstring)."""
    src, rows = _rows(paths, corpus)
    words = _word_table(src, rows)
    version = corpus_version([src])
    doc_rows, word_rows, rt_rows, skipped = [], [], [], {m: 0 for m in MEASURES.values()}
    for d, (trial, keys) in enumerate(_texts(words).items()):
        text, spans = join_with_spans([words[k]["word"] for k in keys])
        doc_id = str(trial)
        doc_rows.append(doc_row(corpus, doc_id, d, text, src, version))
        for i, (key, (a, b)) in enumerate(zip(keys, spans)):
            w = words[key]
            word_rows.append(
                dict(
                    corpus=corpus,
                    doc_id=doc_id,
                    word_index=i,
                    word=w["word"],
                    char_start=a,
                    char_end=b,
                    native_id=str(key[1]),
                    source_path=src.path,
                    source_sha256=src.sha256,
                )
            )
            for m in MEASURES.values():
                if not w[m]:  # NA, or 0 ms: no reader fixated the word
                    skipped[m] += 1
                    continue
                rt_rows.append(
                    dict(
                        corpus=corpus,
                        measure=m,
                        doc_id=doc_id,
                        word_index=i,
                        native_id=str(key[1]),
                        word=w["word"],
                        rt_ms=w[m],
                        source_path=src.path,
                        source_sha256=src.sha256,
                    )
                )
    docs, wordf = frame(doc_rows, DOC_SCHEMA), frame(word_rows, WORD_SCHEMA)
    check_word_spans(docs, wordf, src.path)
    rts = frame(rt_rows, READING_TIMES_SCHEMA)  # a column a row does not name is NULL (reader, trial, ...)
    where = {"corpus": corpus}
    return CorpusLoad(
        corpus,
        [("raw.documents", docs, where), ("raw.words", wordf, where), ("raw.reading_times", rts, where)],
        notes={"texts": docs.height, "words": wordf.height, "reading_times": rts.height, "not_fixated": skipped},
    )


def _their_rows(
    src: readers.Source, rows: list[dict[str, str]], corpus: str, index: dict[tuple[int, int], int]
) -> pl.DataFrame:
    out = {k: [] for k in WORDS_SCHEMA}
    seen: set[tuple[str, int, int]] = set()
    for k, r in enumerate(rows):
        line = k + 2
        if r["model"] not in MODELS:
            raise IngestError(src.path, f"line {line}: model {r['model']!r} is not one of {sorted(MODELS)}")
        trial, ia = int(r["trialid"]), int(r["ianum"])
        if (r["model"], trial, ia) in seen:
            raise IngestError(src.path, f"line {line}: {r['model']} text {trial} word {ia} appears twice")
        seen.add((r["model"], trial, ia))
        if r["mismatch"] not in ("TRUE", "FALSE", _NA):
            raise IngestError(src.path, f"line {line}: mismatch {r['mismatch']!r} is not TRUE, FALSE or NA")
        row = {
            "corpus": corpus,
            "upstream_language": r["lang"],
            "model_key": MODELS[r["model"]],
            "upstream_model": r["model"],
            "file_row": k,
            "upstream_row": r[""],
            "doc_id": str(trial),
            "word_index": index[(trial, ia)],
            "trialid": trial,
            "ianum": ia,
            "word": r["ia"],
            "model_word": None if r["model_ia"] == _NA else r["model_ia"],
            "mismatch": None if r["mismatch"] == _NA else r["mismatch"] == "TRUE",
            "source_path": src.path,
            "source_sha256": src.sha256,
        }
        for col, name in NUMBERS.items():
            row[name] = _number(r[col], src.path, f"line {line} {col}")
        for c, v in row.items():
            out[c].append(v)
    return pl.DataFrame(out, schema=WORDS_SCHEMA, strict=True)


def _curves(paths: Paths) -> pl.DataFrame:
    by_upstream = {c.upstream: key for key, c in corpora().items()}
    out = {k: [] for k in CURVES_SCHEMA}
    for src in readers.sources(CURVES, paths):
        for k, r in enumerate(readers.delimited(src.data, src.path, CURVES), start=2):
            if r["lang"] not in by_upstream or r["model"] not in MODELS or r["linear"] not in _LINKS:
                raise IngestError(
                    src.path,
                    f"line {k}: language {r['lang']!r}, model {r['model']!r} or link "
                    f"{r['linear']!r} is not one of MECO's",
                )
            row = {
                "corpus": by_upstream[r["lang"]],
                "upstream_language": r["lang"],
                "model_key": MODELS[r["model"]],
                "upstream_model": r["model"],
                "measure": LINK_MEASURE,
                "link": _LINKS[r["linear"]],
                "source_path": src.path,
                "source_sha256": src.sha256,
            }
            for col, name in (
                ("surp", "surprisal_bits"),
                ("y", "effect_ms"),
                ("y_lower", "effect_low_ms"),
                ("y_upper", "effect_high_ms"),
                ("delta", "plot_offset_ms"),
            ):
                v = _number(r[col], src.path, f"line {k} {col}")
                if v is None or not math.isfinite(v):
                    raise IngestError(src.path, f"line {k}: {col} {r[col]!r} is not a finite number")
                row[name] = v
            for c, v in row.items():
                out[c].append(v)
    return pl.DataFrame(out, schema=CURVES_SCHEMA, strict=True)


def load_wilcox(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    """raw.wilcox_xlang_words (every language's rows, joined to its corpus's words by the same word order the corpus
    job gives them, from the same file read once) and their link curves."""
    frames = []
    for corpus in corpora():
        src, rows = _rows(paths, corpus)
        index = {key: i for keys in _texts(_word_table(src, rows)).values() for i, key in enumerate(keys)}
        frames.append(_their_rows(src, rows, corpus, index))
    return {WORDS_TABLE: pl.concat(frames), CURVES_TABLE: _curves(paths)}


# --------------------------------------------------------------------------- the adapter's jobs


def jobs(corpora: dict[str, corpus_table.Corpus]) -> list[Job]:
    """One texts job per language (documents, words and the eye-tracking means), then Wilcox et al.'s own rows and
    link curves, after every language."""
    return [
        *(
            Job(
                key,
                lambda paths, _prepared, _key=key: load_corpus(paths, _key),
                write_partitions,
                writes=(*TEXTS_WRITES, "raw.reading_times"),
            )
            for key in corpora
        ),
        Job(
            "wilcox_xlang",
            load_wilcox,
            replace_tables_in,
            after=tuple(corpora),
            writes=(f"raw.{WORDS_TABLE}", f"raw.{CURVES_TABLE}"),
        ),
    ]
