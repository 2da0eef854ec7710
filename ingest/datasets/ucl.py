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

Eye tracking: `ucl_fixations` (pangoling/data_frank2013_et_fix.rda) -> `raw.eye_tracking_fixations`, one row per
fixation; `ucl_eye_tracking` (pangoling/data_frank2013_et_rt.rda) -> `raw.eye_tracking_measures_upstream`, one row per
reader x word as published: RTfirstfix / RTfirstpass / RTrightbound / RTgopast, where all four are 0 for a word not
fixated in first pass; that 0 becomes NULL with `skipped` = true (a file where the four are not 0 together is
refused). Fixation order (`fixation_index`, 1-based within reader x doc):
- UCL: the file's row order within (subj, sent_id) (the file has no index column; it is the temporal
  order: the first fixation on a word in this order is the reader's RTfirstfix for nearly all first-pass
  words, see tests/test_eye_tracking_ingest.py).
Word keys:
- UCL: pangoling numbers sentences 1..361 (its own sent_id, kept in `upstream_item`); each is mapped to
  the ucl corpus doc_id by its text (the file's words in word_n order joined by spaces = raw.documents
  text); word_n is the 1-based position (native_id), word_index = word_n - 1, and the word must equal
  raw.words.word.

Cloze norms:
- `ucl_cloze` (ucl_devarda/ratings_and_cloze.csv) -> raw.cloze_norms, corpus ucl: one row per word with
  norms (1,726). The file's `sentence` is the CONTEXT (the preceding words) and, like `word`, has its
  apostrophes removed ("I dont"); each row is joined through its `item_id` to the all_measures row (unique
  per row) which gives sent_id (= doc_id) and context_length (= word_index) and must equal it after removing
  apostrophes; every norm column must equal all_measures' to 1e-12 (they differ only in float printing).
  cloze_p_smoothed is upstream's Laplace-smoothed probability; cloze_s = -ln(cloze_p_smoothed) (checked);
  `entropy` is in nats (see the cloze marts).
- `ucl_cloze_distributions` (cloze_laplace.txt, a Python dict literal, read by readers.python_literal with
  `nan_keys`) -> raw.cloze_responses: one row per (context, response) and corpus position with that context.
  The keys are the contexts with every character that is not a letter, digit, '_' or whitespace removed
  (`re.sub(r"[^\\w\\s]", "", context)`): 1,388 of 1,610 keys have no punctuation to lose, 222 do. A key maps
  to every UCL position (word_index >= 1) whose preceding words, so stripped, equal it; a key that maps to no
  position, or a position without a key, is an error. Counts are recovered exactly: in each context one
  response has p = min p = 1/(N+V), upstream's unseen-word pseudo-type 'unk' (count 0); p = (c+1)/(N+V), so
  c = p (N+V) - 1 must be an integer >= 0 within 1e-6 for every response; N = sum of c, V = number of
  response types INCLUDING 'unk' (the Laplace vocabulary), and N + V must equal 1/min p. The bare-name `nan`
  keys (84, an empty response written by pandas) are response NULL.

Self-paced reading per reader -> raw.reading_times, measure spr:
`ucl_spr` — pangoling/data_frank2013_spr.rda, 165,040 rows. SOURCES.md says 117 readers; the file has
54. How readers are identified: `subj` is Frank et al.'s (2013) `subj_nr` (values 1..116), ONE person
each — age, sex, hand and correct_perc are constant within a subj and no (subj, sent_id, word_n)
occurs twice, so subj is not reused across groups. The 54 are what pangoling kept of the 117:
data-raw/DATASET.R filters `age_en == 0` (English from birth), `correct_perc > .8` (comprehension
accuracy over the session) and drops sentences 43, 269 and 337 (typos on screen: "Sott",
"that", "Margeret") — that is the upstream cleaning; no RT was removed upstream.
- pangoling's `sent_id` (1..361, Frank's sent_nr) is mapped to the corpus document (de Varda's sent_id,
  raw.documents corpus ucl) by SENTENCE TEXT: the file's words in word_n order joined by single
  spaces == raw.documents.text. 204 of the 205 corpus sentences match exactly; corpus sentence 43
  ("Scott got up and washed his plate.") is pangoling's sent_id 43, one of the three typo sentences
  dropped upstream, so it has no SPR rows at all (there is nothing to re-map). The file's sentences
  that are not corpus sentences (154 of its 358) cannot join raw.words: their rows are left out and
  counted in the notes.
- reader_accuracy = correct_perc (share, 0..1); trial_order = sent_n (the sentence's position in the
  reader's session); trial_answer_correct = acc_comprehension (NULL: no question after that sentence);
  upstream_sentence_id = pangoling sent_id.
"""

from __future__ import annotations

import math

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import cloze_norms, eye_tracking, self_paced_reading
from predictabase.ingest.datasets._common import (
    DOC_SCHEMA,
    TEXTS_WRITES,
    WORD_SCHEMA,
    CorpusLoad,
    Job,
    Source,
    corpus_version,
    doc_row,
    frame,
    paths_only,
    to_float,
    to_int,
    write_partitions,
)
from predictabase.ingest.datasets.corpora import corpus_frames, prepared_or_loaded
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import join_with_spans

CORPUS = "ucl"
WORDS_SPEC = dataset(CORPUS).file("measures")
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


# --------------------------------------------------------------------------- cloze norms


CLOZE_SPEC = dataset("ucl_cloze").file("ratings")


DIST_SPEC = dataset("ucl_cloze_distributions").file("distributions")


CLOZE_COLUMNS = [
    "sentence",
    "word",
    "sent_id",
    "item_id",
    "list",
    "rating_mean",
    "rating_sd",
    "cloze_p_smoothed",
    "cloze_s",
    "competition",
    "entropy",
]


def _close(a: str, b: str) -> bool:
    x, y = float(a), float(b)
    return x == y or abs(x - y) <= 1e-12 * max(1.0, abs(x), abs(y))


def build_cloze(
    rows: list[dict[str, str]], src: readers.Source, measures: list[dict[str, str]], corpus: CorpusLoad
) -> tuple[pl.DataFrame, dict]:
    words = cloze_norms.words_by_doc(corpus)
    by_item = {}
    for m in measures:
        if m["item_id"] in by_item:
            raise IngestError(MEASURES, f"item_id {m['item_id']} appears twice")
        by_item[m["item_id"]] = m
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        m = by_item.get(r["item_id"])
        if m is None:
            raise IngestError(src.path, f"line {k}: item_id {r['item_id']} is not in {MEASURES}")
        if (
            r["sent_id"] != m["sent_id"]
            or r["sentence"] != m["item"].replace("'", "")
            or r["word"] != m["word"].replace("'", "")
        ):
            raise IngestError(
                src.path,
                f"line {k}: item {r['item_id']} ({r['sentence']!r} + {r['word']!r}, sentence "
                f"{r['sent_id']}) differs from {MEASURES} beyond apostrophes",
            )
        for col in CLOZE_COLUMNS[4:]:
            if not _close(r[col], m[col]):
                raise IngestError(src.path, f"line {k}: {col} {r[col]} differs from {MEASURES}'s {m[col]}")
        doc_id, wi = m["sent_id"], to_int(m["context_length"], MEASURES, "context_length")
        ws = words.get(doc_id)
        if ws is None or not 1 <= wi < len(ws) or ws[wi][1] != m["word"]:
            raise IngestError(src.path, f"line {k}: no UCL word {wi} {m['word']!r} in sentence {doc_id}")
        if (doc_id, wi) in seen:
            raise IngestError(src.path, f"line {k}: sentence {doc_id} word {wi} appears twice")
        seen.add((doc_id, wi))
        p = to_float(r["cloze_p_smoothed"], src.path, f"line {k} cloze_p_smoothed")
        s = to_float(r["cloze_s"], src.path, f"line {k} cloze_s")
        if not 0 < p < 1 or abs(s + math.log(p)) > 1e-9:
            raise IngestError(src.path, f"line {k}: cloze_s {s} is not -ln(cloze_p_smoothed {p})")
        out.append(
            dict(
                corpus=CORPUS,
                doc_id=doc_id,
                word_index=wi,
                native_id=ws[wi][2],
                word=ws[wi][1],
                upstream_word=r["word"],
                upstream_row=k,
                upstream_id=r["item_id"],
                word_matches=True,
                n_responses=None,
                cloze_probability_published=p,
                smoothing="laplace",
                modal_response=None,
                rating_mean=to_float(r["rating_mean"], src.path, f"line {k} rating_mean"),
                rating_sd=to_float(r["rating_sd"], src.path, f"line {k} rating_sd"),
                cloze_surprisal_published_nats=s,
                entropy_published_nats=to_float(r["entropy"], src.path, f"line {k} entropy"),
                competition_published=to_float(r["competition"], src.path, f"line {k} competition"),
                upstream_list=to_int(r["list"], src.path, f"line {k} list"),
                source_path=src.path,
                source_sha256=src.sha256,
            )
        )
    f = pl.DataFrame(out, schema=cloze_norms.NORMS_SCHEMA, strict=True)
    return f, dict(
        rows=f.height,
        sentences=f["doc_id"].n_unique(),
        apostrophes_removed=sum(
            r["sentence"] != by_item[r["item_id"]]["item"] or r["word"] != by_item[r["item_id"]]["word"] for r in rows
        ),
    )


def _cloze_inputs(paths: Paths, prepared: dict | None) -> tuple[CorpusLoad, list[dict[str, str]]]:
    corpus = prepared_or_loaded(paths, prepared, CORPUS)
    msrc = readers.source(WORDS_SPEC, paths)
    return corpus, readers.delimited(
        msrc.data, msrc.path, WORDS_SPEC, columns=["item", "word", "sent_id", "context_length", "item_id"]
    )


def load_cloze(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus, measures = _cloze_inputs(paths, prepared)
    src = readers.source(CLOZE_SPEC, paths)
    f, notes = build_cloze(
        readers.delimited(src.data, src.path, CLOZE_SPEC, columns=CLOZE_COLUMNS), src, measures, corpus
    )
    return CorpusLoad("ucl_cloze", [("raw.cloze_norms", f, {"corpus": CORPUS})], notes)


def build_distributions(dist: object, src: readers.Source, corpus: CorpusLoad) -> tuple[pl.DataFrame, dict]:
    if not isinstance(dist, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in dist.items()):
        raise IngestError(src.path, "expected a dict of context string -> {response: probability}")
    positions: dict[str, list[tuple[str, int, str]]] = {}
    for doc_id, ws in cloze_norms.words_by_doc(corpus).items():
        for wi in range(1, len(ws)):
            ctx = " ".join(w for _, w, _ in ws[:wi])
            key = cloze_norms.strip_punctuation(ctx)
            positions.setdefault(key, []).append((doc_id, wi, "exact" if key == ctx else "punctuation_removed"))
    unmapped = [c for c in dist if c not in positions]
    if unmapped:
        raise IngestError(src.path, f"{len(unmapped)} context(s) match no UCL position: {unmapped[:5]}")
    no_dist = [f"{d}:{wi}" for key, ps in positions.items() if key not in dist for d, wi, _ in ps]
    if no_dist:
        raise IngestError(src.path, f"{len(no_dist)} UCL position(s) have no distribution: {no_dist[:10]}")
    out = {k: [] for k in cloze_norms.RESPONSES_SCHEMA}
    n_by_context, no_unseen = {}, []
    for ctx, d in dist.items():
        counts, n, v = cloze_norms.laplace_counts(d, src.path, ctx)
        if counts.get(cloze_norms.UNSEEN) != 0:
            no_unseen.append(ctx)
        n_by_context[ctx] = n
        for doc_id, wi, match in positions[ctx]:
            for resp, p in d.items():
                for key, val in (
                    ("corpus", CORPUS),
                    ("doc_id", doc_id),
                    ("word_index", wi),
                    ("context", ctx),
                    ("context_match", match),
                    ("response", resp),
                    ("probability_laplace", p),
                    ("response_count", counts[resp]),
                    ("n_responses_context", n),
                    ("n_types_context", v),
                    ("source_path", src.path),
                    ("source_sha256", src.sha256),
                ):
                    out[key].append(val)
    if no_unseen:
        raise IngestError(
            src.path, f"{len(no_unseen)} context(s) lack the zero-count {cloze_norms.UNSEEN!r}: {no_unseen[:5]}"
        )
    f = pl.DataFrame(out, schema=cloze_norms.RESPONSES_SCHEMA, strict=True)
    ns = sorted(n_by_context.values())
    notes = dict(
        contexts=len(dist),
        pairs=sum(len(d) for d in dist.values()),
        rows=f.height,
        null_responses=sum(None in d for d in dist.values()),
        contexts_exact=sum(
            cloze_norms.strip_punctuation(c) == c and any(m == "exact" for *_, m in positions[c]) for c in dist
        ),
        positions=sum(len(ps) for c, ps in positions.items() if c in dist),
        positions_punctuation_removed=sum(m != "exact" for ps in positions.values() for *_, m in ps),
        n_responses_min=ns[0],
        n_responses_median=ns[len(ns) // 2],
        n_responses_max=ns[-1],
    )
    return f, notes


def load_distributions(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus = prepared_or_loaded(paths, prepared, CORPUS)
    src = readers.source(DIST_SPEC, paths)
    f, notes = build_distributions(readers.python_literal(src.data, src.path, DIST_SPEC), src, corpus)
    return CorpusLoad("ucl_cloze_distributions", [("raw.cloze_responses", f, {"corpus": CORPUS})], notes)


# --------------------------------------------------------------------------- self-paced reading


SPR_SPEC = dataset("ucl_spr").file("spr")


SPR_COLUMNS = ["subj", "sent_id", "sent_n", "word_n", "word", "RT", "acc_comprehension", "correct_perc"]


def sentence_map(df: pl.DataFrame, docs: pl.DataFrame, name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pangoling sent_id -> corpus doc_id for the sentences whose text is a corpus text, per-sentence texts)."""
    words = df.select("sent_id", "word_n", "word").unique()
    dup = words.group_by("sent_id", "word_n").len().filter(pl.col("len") > 1)
    if dup.height:
        r = dup.row(0, named=True)
        raise IngestError(name, f"sentence {r['sent_id']} word {r['word_n']} has {r['len']} different words")
    sents = words.group_by("sent_id").agg(
        pl.col("word").sort_by("word_n").str.join(" ").alias("text"),
        pl.col("word_n").min().alias("lo"),
        pl.col("word_n").max().alias("hi"),
        pl.len().alias("n"),
    )
    gaps = sents.filter((pl.col("lo") != 1) | (pl.col("hi") != pl.col("n")))
    if gaps.height:
        raise IngestError(name, f"sentence {gaps['sent_id'][0]}: word_n is not 1..n")
    texts = docs.select("doc_id", "text")
    if texts["text"].n_unique() != texts.height:
        raise IngestError(name, "two corpus documents have the same text")
    mapped = sents.join(texts, on="text", how="left").select("sent_id", "doc_id", "text")
    return mapped, texts


def build_spr(src: Source, df: pl.DataFrame, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    missing = [c for c in SPR_COLUMNS if c not in df.columns]
    if missing:
        raise IngestError(name, f"missing column(s) {missing}")
    df = self_paced_reading.require(
        df, name, ["subj", "sent_id", "sent_n", "word_n", "RT"], ["subj", "sent_id", "word_n", "RT", "word"]
    )
    person = df.group_by("subj").agg(
        [pl.col(c).n_unique().alias(c) for c in ("age", "sex", "hand", "correct_perc") if c in df.columns]
    )
    if person.height and any(person[c].max() > 1 for c in person.columns if c != "subj"):
        raise IngestError(name, "a subj has two different age/sex/hand/correct_perc: subj does not identify one reader")
    dupes = df.group_by("subj", "sent_id", "word_n").len().filter(pl.col("len") > 1)
    if dupes.height:
        r = dupes.row(0, named=True)
        raise IngestError(name, f"subj {r['subj']} sentence {r['sent_id']} word {r['word_n']} appears {r['len']} times")
    acc = df["acc_comprehension"]
    if acc.drop_nulls().drop_nans().is_in([0.0, 1.0]).not_().any():
        raise IngestError(name, "acc_comprehension holds a value other than 0, 1 or NA")
    mapped, texts = sentence_map(df, docs, name)
    matched = mapped.filter(pl.col("doc_id").is_not_null())
    rows = df.join(matched.select("sent_id", "doc_id"), on="sent_id", how="inner")
    rows = rows.select(
        pl.lit(CORPUS).alias("corpus"),
        pl.col("subj").cast(pl.String).alias("reader_id"),
        "doc_id",
        pl.col("word_n").cast(pl.String).alias("native_id"),
        pl.col("word").cast(pl.String),
        pl.col("RT").alias("rt_ms"),
        pl.lit(None, pl.Int32).alias("reader_correct_answers"),
        pl.col("correct_perc").cast(pl.Float64).alias("reader_accuracy"),
        pl.col("sent_n").alias("trial_order"),
        pl.when(pl.col("acc_comprehension").is_nan())
        .then(None)
        .otherwise(pl.col("acc_comprehension") == 1.0)
        .alias("trial_answer_correct"),
        pl.col("sent_id").alias("upstream_sentence_id"),
        (
            pl.lit("subj ")
            + pl.col("subj").cast(pl.String)
            + pl.lit(" sent_id ")
            + pl.col("sent_id").cast(pl.String)
            + pl.lit(" word_n ")
            + pl.col("word_n").cast(pl.String)
        ).alias("_id"),
    )
    out = self_paced_reading.join_words(rows, words, name, "_id")
    table = out.with_columns(pl.lit(src.path).alias("source_path"), pl.lit(src.sha256).alias("source_sha256"))
    table = table.with_columns(measure=pl.lit(self_paced_reading.MEASURE), n_readers=pl.lit(None)).select(
        [pl.col(c).cast(t) for c, t in self_paced_reading.SCHEMA.items()]
    )
    unmatched = mapped.filter(pl.col("doc_id").is_null())
    docs_without = texts.filter(~pl.col("doc_id").is_in(matched["doc_id"].implode()))
    notes = dict(
        rows=table.height,
        rows_in_file=df.height,
        readers=table["reader_id"].n_unique(),
        readers_in_file=df["subj"].n_unique(),
        file_sentences=mapped.height,
        corpus_sentences_matched=matched.height,
        file_sentences_not_in_corpus=unmatched.height,
        rows_not_in_corpus=df.height - table.height,
        corpus_sentences_without_spr=sorted(docs_without["doc_id"].to_list(), key=int),
        **self_paced_reading.mismatches(out),
    )
    return CorpusLoad("ucl_spr", [(self_paced_reading.TABLE, table, {"corpus": CORPUS})], notes)


def load_spr(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    docs, words = corpus_frames(paths, prepared, CORPUS)
    src, df = self_paced_reading.read_frame(SPR_SPEC, paths)
    return build_spr(src, df, docs, words)


# --------------------------------------------------------------------------- eye tracking


FIXATIONS_SPEC = dataset("ucl_fixations").file("fixations")


READING_MEASURES_SPEC = dataset("ucl_eye_tracking").file("measures")


def sentence_docs(df: pl.DataFrame, docs: pl.DataFrame, name: str) -> dict[int, str]:
    """pangoling sent_id -> ucl doc_id, by the sentence's text: the file's words numbered 1, 2, ... (up to
    the first number missing) joined by spaces must be a raw.documents text. A word numbered beyond that
    fails the word join afterwards."""
    by_text = dict(zip(docs["text"].to_list(), docs["doc_id"].to_list()))
    w = df.filter(pl.col("word_n").is_not_null()).group_by("sent_id", "word_n").agg(pl.col("word").unique())
    two = w.filter(pl.col("word").list.len() > 1)
    if two.height:
        raise IngestError(
            name,
            f"sentence word(s) with two spellings (sent_id, word_n): "
            f"{eye_tracking.listed(sorted(two.select('sent_id', 'word_n').rows()))}",
        )
    out, missing = {}, []
    for (sid,), g in w.sort("word_n").group_by("sent_id", maintain_order=True):
        nums, ws = g["word_n"].to_list(), [x[0] for x in g["word"].to_list()]
        m = next((i for i, k in enumerate(nums) if k != i + 1), len(nums))
        doc = by_text.get(" ".join(ws[:m]))
        (missing.append(sid) if doc is None else out.__setitem__(sid, doc))
    if missing:
        raise IngestError(
            name, f"sentence(s) not among the ucl documents by text (sent_id): {eye_tracking.listed(sorted(missing))}"
        )
    if len(set(out.values())) != len(out):
        raise IngestError(name, "two sentences map to one ucl document")
    return out


def _join_sentences(df: pl.DataFrame, docs: pl.DataFrame, words: pl.DataFrame, name: str) -> pl.DataFrame:
    """doc_id, word_index and native_id from (sent_id, word_n); every row with a word_n must join."""
    smap = sentence_docs(df, docs, name)
    df = df.with_columns(
        doc_id=pl.col("sent_id").replace_strict(smap, default=None, return_dtype=pl.String),
        word_index=(pl.col("word_n") - 1).cast(pl.Int32),
    )
    j = df.join(
        words.select("doc_id", "word_index", pl.col("word").alias("_raw_word"), "native_id"),
        on=["doc_id", "word_index"],
        how="left",
    )
    bad = j.filter(
        pl.col("word_n").is_not_null() & (pl.col("_raw_word").is_null() | (pl.col("_raw_word") != pl.col("word")))
    )
    if bad.height:
        raise eye_tracking.not_joined(
            name, CORPUS, [f"sent_id {s} word {w}" for s, w in bad.select("sent_id", "word_n").rows()]
        )
    return j.sort("_row")


def build_fixations(src: Source, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    df = eye_tracking.rdata_frame(src, FIXATIONS_SPEC)
    eye_tracking.no_nulls(df, ["subj", "sent_id", "gaze_x", "gaze_y", "fix_duration", "word", "blink"], name)
    df = eye_tracking.whole_numbers(df, "word_n", name, 1)
    df = eye_tracking.whole_numbers(df, "fix_duration", name, 1)
    j = _join_sentences(df, docs, words, name)
    out = (
        j.with_columns(fixation_index=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("subj", "sent_id"))
        .select(
            corpus=pl.lit(CORPUS),
            reader_id=pl.col("subj").cast(pl.String),
            doc_id="doc_id",
            fixation_index="fixation_index",
            word_index="word_index",
            native_id="native_id",
            duration_ms="fix_duration",
            blink=pl.when(pl.col("blink") == "-").then(None).otherwise(pl.col("blink")),
            x_px="gaze_x",
            y_px="gaze_y",
            upstream_word="word",
            trial_index=pl.lit(None, pl.Int32),
            upstream_item=pl.col("sent_id").cast(pl.String),
            upstream_word_number="word_n",
            source_path=pl.lit(src.path),
            source_sha256=pl.lit(src.sha256),
        )
        .cast(eye_tracking.FIXATION_SCHEMA)
    )
    return CorpusLoad(
        "ucl_fixations",
        [(eye_tracking.FIXATIONS, out, {"corpus": CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            sentences=out["doc_id"].n_unique(),
            no_word_rows=out["word_index"].null_count(),
            sent_id_differs_from_doc_id=out.filter(pl.col("upstream_item") != pl.col("doc_id"))["doc_id"].n_unique(),
        ),
    )


def build_eye_tracking(src: Source, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    df = eye_tracking.rdata_frame(src, READING_MEASURES_SPEC)
    eye_tracking.no_nulls(df, [c for c in READING_MEASURES_SPEC.columns if c != "answer_time"], name)
    for c in ["word_n", "sent_n"]:
        df = eye_tracking.whole_numbers(df, c, name, 1)
    for c in eye_tracking.RT_COLUMNS:
        df = eye_tracking.whole_numbers(df, c, name, 0)
    zeros = pl.sum_horizontal([(pl.col(c) == 0).cast(pl.Int32) for c in eye_tracking.RT_COLUMNS])
    bad = df.filter((zeros > 0) & (zeros < len(eye_tracking.RT_COLUMNS)))
    if bad.height:
        raise IngestError(
            name,
            f"0 ms (= not fixated in first pass) in some but not all of {list(eye_tracking.RT_COLUMNS)}: "
            f"row(s) {eye_tracking.listed(bad['_row'].to_list())}",
        )
    dup = df.filter(pl.len().over("subj", "sent_id", "word_n") > 1)
    if dup.height:
        raise IngestError(
            name, f"(subj, sent_id, word_n) repeated: row(s) {eye_tracking.listed(dup['_row'].to_list())}"
        )
    j = _join_sentences(df, docs, words, name)
    skipped = pl.col("RTfirstfix") == 0
    out = j.select(
        corpus=pl.lit(CORPUS),
        reader_id=pl.col("subj").cast(pl.String),
        doc_id="doc_id",
        word_index="word_index",
        native_id="native_id",
        word="word",
        **{new: pl.when(skipped).then(None).otherwise(pl.col(old)) for old, new in eye_tracking.RT_COLUMNS.items()},
        skipped=skipped,
        comprehension_correct="acc_comprehension",
        sentence_order="sent_n",
        answer_time_ms="answer_time",
        upstream_item=pl.col("sent_id").cast(pl.String),
        source_path=pl.lit(src.path),
        source_sha256=pl.lit(src.sha256),
    ).cast(eye_tracking.MEASURE_SCHEMA)
    return CorpusLoad(
        "ucl_eye_tracking",
        [(eye_tracking.MEASURES, out, {"corpus": CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            sentences=out["doc_id"].n_unique(),
            skipped=int(out["skipped"].sum()),
        ),
    )


def _frames(paths: Paths, prepared: dict | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    return corpus_frames(paths, prepared, CORPUS)


def load_fixations(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    return build_fixations(readers.source(FIXATIONS_SPEC, paths), *_frames(paths, prepared))


def load_eye_tracking(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    return build_eye_tracking(readers.source(READING_MEASURES_SPEC, paths), *_frames(paths, prepared))


# --------------------------------------------------------------------------- the adapter's jobs


def jobs(_corpora: dict) -> list[Job]:
    """UCL: its sentences, the surprisals its file publishes, the cloze norms and full response distributions, the
    self-paced reading times, the eye-tracking fixations and the per-reader measures as published."""
    after = (CORPUS,)
    return [
        Job(CORPUS, paths_only(load), write_partitions, writes=TEXTS_WRITES),
        Job(
            "ucl_imported_surprisal",
            paths_only(load_imported),
            write_partitions,
            writes=("raw.imported_word_surprisal",),
        ),
        Job("ucl_cloze", load_cloze, write_partitions, after=after, writes=("raw.cloze_norms",)),
        Job(
            "ucl_cloze_distributions",
            load_distributions,
            write_partitions,
            after=after,
            writes=("raw.cloze_responses",),
        ),
        Job("ucl_spr", load_spr, self_paced_reading.write, after=after, writes=(self_paced_reading.TABLE,)),
        Job("ucl_fixations", load_fixations, write_partitions, after=after, writes=(eye_tracking.FIXATIONS,)),
        Job("ucl_eye_tracking", load_eye_tracking, write_partitions, after=after, writes=(eye_tracking.MEASURES,)),
    ]
