"""UCL sentences (Frank et al. 2013) as published by de Varda et al. (ucl_devarda/all_measures.csv).

all_measures.csv has one row per word EXCEPT the first word of each sentence (it has no
context): 1,726 rows for 205 sentences of 1,931 words. Each row carries the whole `sentence`,
`sent_id` (1..205, de Varda's numbering = doc_id), `context_length` (number of preceding
words) and `item` (the preceding words joined by spaces).

- documents: text = `sentence` exactly; words = its space-separated words, ALL of them.
- native_id = 1-based word position in the sentence (Frank 2013's `word_n`), so an
  all_measures row joins on native_id = context_length + 1 (and word_index = context_length).
  NB: pangoling's data_frank2013_* files number sentences differently (1..361; 53 of the 205
  sentences have another sent_id there) — join those by sentence text, not by id.

`ucl_imported_surprisal` -> raw.imported_word_surprisal: the s_* columns in long format.
Unit: NATS — upstream get_LM_surprisal.py computes `-np.log(p)` ("e as base of log"); the
values agree with cloze_s = -ln(cloze_p_smoothed) in scale. `s_GPTNeo` is EleutherAI/gpt-neo-1.3B.
"""

from __future__ import annotations

import math

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import (
    DOC_SCHEMA,
    WORD_SCHEMA,
    CorpusLoad,
    Source,
    corpus_version,
    doc_row,
    frame,
    to_float,
    to_int,
)
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import join_with_spans

CORPUS = "ucl"
WORDS_SPEC = dataset("ucl").file("measures")
SURPRISAL_SPEC = dataset("ucl_imported_surprisal").file("measures")
MEASURES = WORDS_SPEC.path

# all_measures column suffix -> normalized model name
MODELS = {
    "GPT2": "gpt2",
    "GPT2_medium": "gpt2-medium",
    "GPT2_large": "gpt2-large",
    "GPT2_xl": "gpt2-xl",
    "GPTNeo_125M": "gpt-neo-125m",
    "GPTNeo": "gpt-neo-1.3b",
    "GPTNeo_2.7B": "gpt-neo-2.7b",
}
assert sorted(c[2:] for c in SURPRISAL_SPEC.columns if c.startswith("s_")) == sorted(MODELS), (
    "datasets.toml ucl_imported_surprisal columns and ucl.MODELS disagree"
)

IMPORTED_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "model": pl.String,
    "surprisal_nats": pl.Float64,
    "is_multitoken": pl.Boolean,
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def parse_measures(data: bytes, name: str, surprisal: bool = False) -> list[dict[str, str]]:
    return readers.delimited(data, name, SURPRISAL_SPEC if surprisal else WORDS_SPEC)


def sentences(rows: list[dict[str, str]], name: str) -> dict[int, list[str]]:
    """{sent_id: words} sorted by sent_id; checks every row against its sentence."""
    out: dict[int, str] = {}
    for k, r in enumerate(rows, start=2):
        sid = to_int(r["sent_id"], name, f"line {k} sent_id")
        s = r["sentence"]
        if out.setdefault(sid, s) != s:
            raise IngestError(name, f"line {k}: sentence {sid} has two different texts")
    words = {}
    for sid, s in sorted(out.items()):
        ws = s.split(" ")
        if not s or s != s.strip() or "" in ws or any(c.isspace() and c != " " for c in s):
            raise IngestError(name, f"sentence {sid}: unexpected whitespace in {s!r}")
        words[sid] = ws
    for k, r in enumerate(rows, start=2):
        sid, ws = to_int(r["sent_id"], name, "sent_id"), None
        ws = words[sid]
        n = to_int(r["context_length"], name, f"line {k} context_length")
        if not 1 <= n < len(ws) or ws[n] != r["word"] or " ".join(ws[:n]) != r["item"]:
            raise IngestError(
                name, f"line {k}: word {r['word']!r} / context {r['item']!r} do not match word {n} of sentence {sid}"
            )
    return words


def build(src: Source, rows: list[dict[str, str]]) -> CorpusLoad:
    sents = sentences(rows, src.path)
    version = corpus_version([src])
    docs, words = [], []
    for doc_index, (sid, ws) in enumerate(sents.items()):
        text, spans = join_with_spans(ws)
        docs.append(doc_row(CORPUS, str(sid), doc_index, text, src, version))
        for wi, (w, (a, b)) in enumerate(zip(ws, spans)):
            words.append(
                dict(
                    corpus=CORPUS,
                    doc_id=str(sid),
                    word_index=wi,
                    word=w,
                    char_start=a,
                    char_end=b,
                    native_id=str(wi + 1),
                    source_path=src.path,
                    source_sha256=src.sha256,
                )
            )
    d, w = frame(docs, DOC_SCHEMA), frame(words, WORD_SCHEMA)
    keys = {(r["sent_id"], r["context_length"]) for r in rows}
    if len(keys) != len(rows):
        raise IngestError(src.path, "duplicate (sent_id, context_length) rows")
    return CorpusLoad(
        CORPUS,
        [("raw.documents", d, {"corpus": CORPUS}), ("raw.words", w, {"corpus": CORPUS})],
        dict(documents=d.height, words=w.height, measure_rows=len(rows), words_without_measures=w.height - len(rows)),
    )


def build_imported(src: Source, rows: list[dict[str, str]]) -> CorpusLoad:
    sentences(rows, src.path)  # same consistency checks as the words
    out = {k: [] for k in IMPORTED_SCHEMA}
    for k, r in enumerate(rows, start=2):
        for col, model in MODELS.items():
            s = to_float(r[f"s_{col}"], src.path, f"line {k} s_{col}")
            if not math.isfinite(s) or s < 0:
                raise IngestError(src.path, f"line {k} s_{col}: surprisal {s} is not a finite value >= 0")
            multi = r[f"is_multitoken_{col}"]
            if multi not in ("0", "1"):
                raise IngestError(src.path, f"line {k} is_multitoken_{col}: {multi!r} is not 0/1")
            for key, v in (
                ("corpus", CORPUS),
                ("doc_id", str(int(r["sent_id"]))),
                ("word_index", int(r["context_length"])),
                ("model", model),
                ("surprisal_nats", s),
                ("is_multitoken", multi == "1"),
                ("source_path", src.path),
                ("source_sha256", src.sha256),
            ):
                out[key].append(v)
    df = pl.DataFrame(out, schema=IMPORTED_SCHEMA, strict=True)
    return CorpusLoad(
        "ucl_imported_surprisal",
        [("raw.imported_word_surprisal", df, {"corpus": CORPUS})],
        dict(rows=df.height, models=sorted(MODELS.values())),
    )


def load(paths: Paths) -> CorpusLoad:
    src = readers.source(WORDS_SPEC, paths)
    return build(src, parse_measures(src.data, src.path))


def load_imported(paths: Paths) -> CorpusLoad:
    src = readers.source(SURPRISAL_SPEC, paths)
    return build_imported(src, parse_measures(src.data, src.path, surprisal=True))
