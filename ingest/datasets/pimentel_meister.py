"""Pimentel & Meister (2024) word surprisals of 11 public models, and their published delta log-likelihoods.

`pimentel_meister_surprisal` -> raw.pimentel_meister_words: one row per (corpus, model, word) of their merged
files `merged_data/{natural_stories,provo}-MODEL.tsv` (GPT-2 small/medium/large/xl, Pythia 70m ... 12b), every
column as published: the word's whitespace-trailing (`surprisal`, their "corrected") and leading-whitespace
(`surprisal_buggy`) surprisal in nats, their per-word mean reading time, word length, their log frequency, and
the previous 1-3 words' values as they merged them (empty at a text's start). Each file's words must join our
corpus's words one to one, by (text_id -> doc_id, word_id -> word_index): 10,256 Natural Stories and 2,745
Provo words; a key that does not join, or a corpus word without a row, is a one-line error listing the keys.
Where their word string differs from ours (a spelling of their text version) both are kept (`word`,
`corpus_word`) and dbt lists them (int_pimentel_meister_words.word_matches_corpus).

`pimentel_meister_delta_llh` -> raw.pimentel_meister_delta_llh: their published result per (corpus, model,
predictor, fold): `diff_empty` = held-out mean log-likelihood per word of the model with surprisal minus the
baseline's (nats/word). External reference rows, never mixed with ours (mart_reading_vs_published).

Only loads and validates: the regressions are dbt's (int_delta_loglik, int_reading_vs_published).
"""

from __future__ import annotations

import math
import re

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import to_float, to_int
from predictabase.ingest.datasets.corpora import corpus_frames
from predictabase.ingest.scoring import model_table
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

SURPRISAL = dataset("pimentel_meister_surprisal")
#: Brown, which the warehouse has only when a user adds it (`corpus add NAME ... --published pimentel_meister:brown`)
BROWN = dataset("pimentel_meister_brown").file("brown")
LINK = "pimentel_meister:brown"
DELTA_LLH = dataset("pimentel_meister_delta_llh").file("delta_llh")
CORPORA = ("natural_stories", "provo")

#: their file name's model (Pythia sizes without the dot) -> our model_key; its hub id is in the model table
MODELS: dict[str, str] = {
    "gpt2-small": "gpt2",
    "gpt2-medium": "gpt2-medium",
    "gpt2-large": "gpt2-large",
    "gpt2-xl": "gpt2-xl",
    "pythia-70m": "pythia-70m",
    "pythia-160m": "pythia-160m",
    "pythia-410m": "pythia-410m",
    "pythia-14b": "pythia-1.4b",
    "pythia-28b": "pythia-2.8b",
    "pythia-69b": "pythia-6.9b",
    "pythia-120b": "pythia-12b",
}
WORDS_TABLE = "pimentel_meister_words"
LLH_TABLE = "pimentel_meister_delta_llh"
#: their column -> our raw column (unit in the name); each a number or empty
NUMBERS = {
    "time": "time_ms",
    "skipped": "skip_rate",
    "nItem": "n_readers",
    "word_len": "word_length_chars",
    "freq": "log_frequency_published",
    "surprisal": "surprisal_wt_nats",
    "surprisal_buggy": "surprisal_lw_nats",
    "prev_surprisal": "prev1_surprisal_wt_nats",
    "prev2_surprisal": "prev2_surprisal_wt_nats",
    "prev3_surprisal": "prev3_surprisal_wt_nats",
    "prev_surprisal_buggy": "prev1_surprisal_lw_nats",
    "prev2_surprisal_buggy": "prev2_surprisal_lw_nats",
    "prev3_surprisal_buggy": "prev3_surprisal_lw_nats",
    "prev_freq": "prev1_log_frequency_published",
    "prev2_freq": "prev2_log_frequency_published",
    "prev3_freq": "prev3_log_frequency_published",
    "prev_word_len": "prev1_word_length_chars",
    "prev2_word_len": "prev2_word_length_chars",
    "prev3_word_len": "prev3_word_length_chars",
}
WORDS_SCHEMA = {
    "corpus": pl.String,
    "model_key": pl.String,
    "model_id": pl.String,
    "upstream_model": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "text_id": pl.Int32,
    "word_id": pl.Int32,
    "word": pl.String,
    "corpus_word": pl.String,
    "ref_token": pl.String,
    **{c: pl.Float64 for c in NUMBERS.values()},
    "source_path": pl.String,
    "source_sha256": pl.String,
}
LLH_SCHEMA = {
    "corpus": pl.String,
    "model_key": pl.String,
    "upstream_model": pl.String,
    "predictor_name": pl.String,
    "definition": pl.String,
    "predictor": pl.String,
    "predictor_type": pl.Int32,
    "fold": pl.Int32,
    "delta_loglik_nats_per_word": pl.Float64,
    "diff_full_surprisal_nats_per_word": pl.Float64,
    "upstream_dataset": pl.String,  # their dataset, from the file name: natural_stories, provo or brown
    "upstream_table": pl.String,  # the file, from delta_llh/ on (llh-DATASET-MODEL.tsv)
    "upstream_measure": pl.String,  # what their dataset's times measure, in their words
    "measure": pl.String,  # our reading measure of their dataset (DATASET_MEASURES)
    "source_path": pl.String,
    "source_sha256": pl.String,
}
#: their dataset -> (what its reading times measure, our measure of it): their Natural Stories and Brown times are
#: self-paced reading; Provo's are the first-pass dwell time, which our gaze duration is (SOURCES.md)
DATASET_MEASURES = {
    "natural_stories": ("spr", "spr"),
    "provo": ("first-pass dwell time", "gaze_duration"),
    "brown": ("spr", "spr"),
}
#: their predictor names: the word's (or a previous word's) surprisal; `_buggy` = leading-whitespace (LW), else
#: whitespace-trailing (WT). predictor_type 1 = the word's and the 3 previous words' surprisal (the main result);
#: the pythia-1.4b files also hold other subsets (types -3, 5, 6)
_PREDICTOR = re.compile(r"(prev[23]?_)?surprisal(_buggy)?")
_FILE = re.compile(r"(?:llh-)?(natural_stories|provo|brown)-(.+)\.tsv")


def file_parts(path: str) -> tuple[str, str]:
    """(corpus, upstream model) of a merged or delta_llh file name; an unknown model is an error."""
    m = _FILE.fullmatch(path.rsplit("/", 1)[-1])
    if m is None or m.group(2) not in MODELS:
        raise IngestError(path, f"file name is not CORPUS-MODEL.tsv with MODEL one of {sorted(MODELS)}")
    return m.group(1), m.group(2)


def _number(value: str, path: str, what: str) -> float | None:
    if value == "":
        return None
    v = to_float(value, path, what)
    if not math.isfinite(v):
        raise IngestError(path, f"{what}: {value!r} is not a finite number")
    return v


def brown_corpus(paths: Paths) -> str | None:
    """The user corpus declared as Pimentel & Meister's Brown (`published = "pimentel_meister:brown"`), if any."""
    from predictabase.ingest.corpus_declarations import load_declarations

    return next((n for n, d in load_declarations(paths).items() if d.published == LINK), None)


def build_words(
    src: readers.Source,
    rows: list[dict[str, str]],
    corpus: str,
    words: dict[tuple[str, int], str],
    their_corpus: str | None = None,
) -> pl.DataFrame:
    """One file's rows joined one to one to `words` ((doc_id, word_index) -> word string). `their_corpus`: the
    file's corpus name when ours differs (a user corpus linked to their Brown)."""
    file_corpus, upstream = file_parts(src.path)
    if file_corpus != (their_corpus or corpus):
        raise IngestError(src.path, f"a {file_corpus} file listed under {corpus}")
    model_key = MODELS[upstream]
    model_id = model_table.BY_KEY[model_key].hub_id
    out = {k: [] for k in WORDS_SCHEMA}
    seen: set[tuple[str, int]] = set()
    unmatched: list[str] = []
    for k, r in enumerate(rows, start=2):
        text_id = to_int(r["text_id"], src.path, f"line {k} text_id")
        word_id = to_int(r["word_id"], src.path, f"line {k} word_id")
        key = (str(text_id), word_id)
        if key in seen:
            raise IngestError(src.path, f"line {k}: text {text_id} word {word_id} appears twice")
        seen.add(key)
        if key not in words:
            unmatched.append(f"text {text_id} word {word_id} {r['word']!r}")
            continue
        row = {
            "corpus": corpus,
            "model_key": model_key,
            "model_id": model_id,
            "upstream_model": upstream,
            "doc_id": key[0],
            "word_index": word_id,
            "text_id": text_id,
            "word_id": word_id,
            "word": r["word"],
            "corpus_word": words[key],
            "ref_token": r["ref_token"] or None,
            "source_path": src.path,
            "source_sha256": src.sha256,
        }
        for col, name in NUMBERS.items():
            row[name] = _number(r[col], src.path, f"line {k} {col}") if col in r else None
        for s in ("surprisal_wt_nats", "surprisal_lw_nats"):
            if row[s] is None or row[s] < 0:
                raise IngestError(src.path, f"line {k}: {s} {row[s]} is not a surprisal >= 0 nats")
        for c, v in row.items():
            out[c].append(v)
    missing = sorted(set(words) - seen, key=lambda t: (int(t[0]), t[1]))
    if unmatched or missing:
        listed = unmatched[:5] + [f"ours without a row: text {d} word {w}" for d, w in missing[:5]]
        raise IngestError(
            src.path,
            f"{len(unmatched)} word(s) do not join the {corpus} corpus words and "
            f"{len(missing)} corpus word(s) have no row: {'; '.join(listed)}",
        )
    return pl.DataFrame(out, schema=WORDS_SCHEMA, strict=True)


def load_surprisal(paths: Paths, prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    frames = []
    brown = brown_corpus(paths)
    for corpus, spec in [(c, SURPRISAL.file(c)) for c in CORPORA] + ([(brown, BROWN)] if brown else []):
        _docs, w = corpus_frames(paths, prepared, corpus)
        words = {(d, i): s for d, i, s in w.select("doc_id", "word_index", "word").iter_rows()}
        for src in readers.sources(spec, paths):
            frames.append(
                build_words(
                    src,
                    readers.delimited(src.data, src.path, spec),
                    corpus,
                    words,
                    "brown" if corpus == brown else None,
                )
            )
    return {WORDS_TABLE: pl.concat(frames)}


def load_delta_llh(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    out = {k: [] for k in LLH_SCHEMA}
    brown = brown_corpus(paths)
    for src in readers.sources(DELTA_LLH, paths):
        corpus, upstream = file_parts(src.path)
        dataset = corpus
        their_measure, measure = DATASET_MEASURES[dataset]
        if corpus == "brown" and brown:
            corpus = brown  # their Brown is this warehouse's user corpus `brown`
        seen = set()
        for k, r in enumerate(readers.delimited(src.data, src.path, DELTA_LLH), start=2):
            name = r["name"]
            if not _PREDICTOR.fullmatch(name):
                raise IngestError(src.path, f"line {k}: name {name!r} is not a (prev[23]_)surprisal(_buggy) predictor")
            fold = to_int(r["fold"], src.path, f"line {k} fold")
            ptype = to_int(r["predictor_type"], src.path, f"line {k} predictor_type")
            if (r["predictor"], name, ptype, fold) in seen:
                raise IngestError(
                    src.path, f"line {k}: {r['predictor']} ({name}, type {ptype}) fold {fold} appears twice"
                )
            seen.add((r["predictor"], name, ptype, fold))
            row = {
                "corpus": corpus,
                "model_key": MODELS[upstream],
                "upstream_model": upstream,
                "predictor_name": name,
                "definition": "lw" if name.endswith("_buggy") else "wt",
                "predictor": r["predictor"],
                "predictor_type": ptype,
                "fold": fold,
                "delta_loglik_nats_per_word": _number(r["diff_empty"], src.path, f"line {k} diff_empty"),
                "diff_full_surprisal_nats_per_word": _number(
                    r.get("diff_full_surprisal", ""), src.path, f"line {k} diff_full_surprisal"
                ),
                "upstream_dataset": dataset,
                "upstream_table": "delta_llh/" + src.path.rsplit("/", 1)[-1],
                "upstream_measure": their_measure,
                "measure": measure,
                "source_path": src.path,
                "source_sha256": src.sha256,
            }
            for c, v in row.items():
                out[c].append(v)
    return {LLH_TABLE: pl.DataFrame(out, schema=LLH_SCHEMA, strict=True)}
