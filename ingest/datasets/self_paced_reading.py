"""Self-paced reading per reader -> raw.reading_times, measure spr (one row per upstream row, every row kept).

Two jobs write the shipped corpora's rows of the table (a user corpus's are declared_corpora's), each replacing
only its corpus's rows (partition `corpus`):

`natural_stories_spr` — pangoling/data_natural_spr.rda, 1,013,377 rows `subj, correct, item, word_n, RT,
word`, unfiltered (pangoling's data-raw/DATASET.R rebuilds it from naturalstories' batch1_pro.csv and
batch2_pro.csv with the story-3 realignment of process_RTs.R and leaves the filter commented out).
- reader_id = `subj` (pangoling's `as.numeric(factor(WorkerId))`, 181 readers) as text;
  doc_id = `item` (story), native_id = `word_n` (= the .tok zone); word_index from raw.words.
- `correct` is the number of correct comprehension answers (of 6) of THAT reader on THAT story (it
  varies between the stories of one reader, never within one): reader_correct_answers.
- every row must join raw.words (corpus natural_stories) on (doc_id, native_id), else IngestError
  listing the rows; the file's `word` is kept as written and compared with raw.words.word (the
  number of disagreeing rows and words goes to the notes; pangoling joined all_stories.tok, so none
  are expected).

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

Only loading and validation here; the exclusions and means are dbt models (mart_self_paced_reading*).
"""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.corpus_declarations import SHIPPED_MEASURES
from predictabase.ingest.datasets._common import READING_TIMES_SCHEMA, CorpusLoad, Source
from predictabase.ingest.datasets.corpora import corpus_frames
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

TABLE = "raw.reading_times"
NS_SPEC = dataset("natural_stories_spr").file("spr")
UCL_SPEC = dataset("ucl_spr").file("spr")

SCHEMA = READING_TIMES_SCHEMA  # raw.reading_times, every corpus's (ingest/datasets/_common.py)
MEASURE = SHIPPED_MEASURES["self_paced_reading"][0]  # "spr"
MAX_LISTED = 5
RETIRED = "raw.self_paced_reading"  # this table's former name (an older warehouse's copy, dropped)


def read_frame(spec, paths: Paths) -> tuple[Source, pl.DataFrame]:
    src = readers.source(spec, paths)
    df = pl.from_pandas(readers.rdata(src.local, src.path, spec))
    return src, df


def _require(df: pl.DataFrame, name: str, ints: list[str], nonnull: list[str]) -> pl.DataFrame:
    """Integer columns cast strictly (a fractional or missing value is an error naming the first row)."""
    for col in nonnull:
        bad = df.with_row_index("row").filter(pl.col(col).is_null())
        if bad.height:
            raise IngestError(name, f"{bad.height} row(s) with no {col} (first: row {bad['row'][0] + 1})")
    for col in ints:
        v = df[col]
        if v.dtype.is_float():
            frac = df.with_row_index("row").filter(pl.col(col).is_not_null() & (pl.col(col) != pl.col(col).round()))
            if frac.height:
                raise IngestError(name, f"{col} is not an integer in row {frac['row'][0] + 1}: {frac[col][0]}")
    return df.with_columns([pl.col(c).cast(pl.Int32) for c in ints])


def _join_words(rows: pl.DataFrame, words: pl.DataFrame, name: str, what: str) -> pl.DataFrame:
    """Attach word_index and the corpus word on (doc_id, native_id); a row that does not join is an error."""
    keys = words.select("doc_id", "native_id", "word_index", pl.col("word").alias("corpus_word"))
    out = rows.join(keys, on=["doc_id", "native_id"], how="left")
    missing = out.filter(pl.col("word_index").is_null())
    if missing.height:
        ids = missing.select(what).unique(maintain_order=True).head(MAX_LISTED)[what].to_list()
        raise IngestError(
            name,
            f"{missing.height} row(s) do not join raw.words: "
            + "; ".join(ids)
            + (" ..." if missing.height > MAX_LISTED else ""),
        )
    return out


def _mismatches(out: pl.DataFrame) -> dict:
    bad = out.filter(pl.col("word") != pl.col("corpus_word"))
    pairs = bad.select("doc_id", "native_id", "word", "corpus_word").unique().sort("doc_id", "native_id")
    return dict(
        word_mismatch_rows=bad.height,
        word_mismatch_words=pairs.height,
        word_mismatch_examples=[f"{r[0]}:{r[1]} {r[2]!r} vs {r[3]!r}" for r in pairs.head(MAX_LISTED).iter_rows()],
    )


# --------------------------------------------------------------------------- Natural Stories


def build_natural_stories(src: Source, df: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    ints = ["subj", "correct", "item", "word_n", "RT"]
    df = _require(df, name, ints, [*ints, "word"])
    rows = df.select(
        pl.lit("natural_stories").alias("corpus"),
        pl.col("subj").cast(pl.String).alias("reader_id"),
        pl.col("item").cast(pl.String).alias("doc_id"),
        pl.col("word_n").cast(pl.String).alias("native_id"),
        pl.col("word").cast(pl.String),
        pl.col("RT").alias("rt_ms"),
        pl.col("correct").alias("reader_correct_answers"),
        (
            pl.lit("subj ")
            + pl.col("subj").cast(pl.String)
            + pl.lit(" item ")
            + pl.col("item").cast(pl.String)
            + pl.lit(" word_n ")
            + pl.col("word_n").cast(pl.String)
        ).alias("_id"),
    )
    out = _join_words(rows, words, name, "_id")
    per_story = out.group_by("reader_id", "doc_id").agg(pl.col("reader_correct_answers").n_unique().alias("n"))
    if per_story.filter(pl.col("n") > 1).height:
        raise IngestError(name, "`correct` varies within one reader and story")
    dupes = out.group_by("reader_id", "doc_id", "native_id").len().filter(pl.col("len") > 1).height
    table = out.with_columns(
        pl.lit(None).alias("reader_accuracy"),
        pl.lit(None).alias("trial_order"),
        pl.lit(None).alias("trial_answer_correct"),
        pl.lit(None).alias("upstream_sentence_id"),
        pl.lit(src.path).alias("source_path"),
        pl.lit(src.sha256).alias("source_sha256"),
    )
    table = table.with_columns(measure=pl.lit(MEASURE), n_readers=pl.lit(None)).select(
        [pl.col(c).cast(t) for c, t in SCHEMA.items()]
    )
    notes = dict(
        rows=table.height,
        readers=table["reader_id"].n_unique(),
        reader_stories=per_story.height,
        duplicate_reader_word_keys=dupes,
        **_mismatches(out),
    )
    return CorpusLoad("natural_stories_spr", [(TABLE, table, {"corpus": "natural_stories"})], notes)


def load_natural_stories(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    _, words = corpus_frames(paths, prepared, "natural_stories")
    src, df = read_frame(NS_SPEC, paths)
    return build_natural_stories(src, df, words)


# --------------------------------------------------------------------------- UCL

UCL_COLUMNS = ["subj", "sent_id", "sent_n", "word_n", "word", "RT", "acc_comprehension", "correct_perc"]


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


def build_ucl(src: Source, df: pl.DataFrame, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    missing = [c for c in UCL_COLUMNS if c not in df.columns]
    if missing:
        raise IngestError(name, f"missing column(s) {missing}")
    df = _require(df, name, ["subj", "sent_id", "sent_n", "word_n", "RT"], ["subj", "sent_id", "word_n", "RT", "word"])
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
        pl.lit("ucl").alias("corpus"),
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
    out = _join_words(rows, words, name, "_id")
    table = out.with_columns(pl.lit(src.path).alias("source_path"), pl.lit(src.sha256).alias("source_sha256"))
    table = table.with_columns(measure=pl.lit(MEASURE), n_readers=pl.lit(None)).select(
        [pl.col(c).cast(t) for c, t in SCHEMA.items()]
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
        **_mismatches(out),
    )
    return CorpusLoad("ucl_spr", [(TABLE, table, {"corpus": "ucl"})], notes)


def load_ucl(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    docs, words = corpus_frames(paths, prepared, "ucl")
    src, df = read_frame(UCL_SPEC, paths)
    return build_ucl(src, df, docs, words)


def write(con, load: CorpusLoad) -> int:
    """Replace the corpus's rows of raw.reading_times (write_partitions), and drop the table these jobs wrote before
    every corpus's reading times were one table: nothing reads it, and it held a million rows."""
    from predictabase.ingest.datasets._common import write_partitions

    n = write_partitions(con, load)
    con.execute(f"DROP TABLE IF EXISTS {RETIRED}")
    return n
