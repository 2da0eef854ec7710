"""Natural Stories (Futrell et al.): 10 stories from naturalstories_RTS/all_stories.tok.

The .tok file is one word a row (`word`, `zone`, `item`). A story's text is its words
joined by single spaces; doc_id = item ('1'..'10'), native_id = zone. This reproduces the
text that probs/all_stories_gpt3.csv rebuilds from its tokens/offsets character for
character in 9 of 10 stories; story 2 differs in exactly one character: word zone 749 is
"peaked" here and "peeked" in the GPT-3 file (same length, so all offsets still align).

Self-paced reading per reader -> raw.reading_times, measure spr (one row per upstream row, every row kept):
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

`natural_stories_spr_means` -> raw.natural_stories_spr_means: the per-word self-paced reading means over readers
(processed_wordinfo.tsv), one row per story word: item = doc_id, zone = the word's native_id in raw.words, with units
in the column names. No metric is computed here.
"""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import self_paced_reading
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
from predictabase.ingest.datasets.corpora import corpus_frames
from predictabase.ingest.raw import replace_tables_in
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import join_with_spans

CORPUS = "natural_stories"
TOKENS = dataset(CORPUS).file("tokens")
TOK = TOKENS.path


def parse_tok(data: bytes, name: str) -> dict[int, list[tuple[str, int]]]:
    """-> {item: [(word, zone), ...]} in zone order; validates zones 1..n per story."""
    rows = readers.delimited(data, name, TOKENS)
    stories: dict[int, list[tuple[str, int]]] = {}
    for k, r in enumerate(rows, start=2):
        w = r["word"]
        if not w or any(c.isspace() for c in w):
            raise IngestError(name, f"line {k}: word {w!r} is empty or holds whitespace")
        stories.setdefault(to_int(r["item"], name, f"line {k} item"), []).append(
            (w, to_int(r["zone"], name, f"line {k} zone"))
        )
    for item, ws in stories.items():
        zones = [z for _, z in ws]
        if zones != list(range(1, len(zones) + 1)):
            raise IngestError(name, f"story {item}: zones are not 1..{len(zones)} in order")
    return dict(sorted(stories.items()))


def build(src: Source, stories: dict[int, list[tuple[str, int]]]) -> CorpusLoad:
    version = corpus_version([src])
    docs, words = [], []
    for doc_index, (item, ws) in enumerate(stories.items()):
        doc_id = str(item)
        text, spans = join_with_spans([w for w, _ in ws])
        docs.append(doc_row(CORPUS, doc_id, doc_index, text, src, version))
        for wi, ((w, zone), (a, b)) in enumerate(zip(ws, spans)):
            words.append(
                dict(
                    corpus=CORPUS,
                    doc_id=doc_id,
                    word_index=wi,
                    word=w,
                    char_start=a,
                    char_end=b,
                    native_id=str(zone),
                    source_path=src.path,
                    source_sha256=src.sha256,
                )
            )
    d, w = frame(docs, DOC_SCHEMA), frame(words, WORD_SCHEMA)
    return CorpusLoad(
        CORPUS,
        [("raw.documents", d, {"corpus": CORPUS}), ("raw.words", w, {"corpus": CORPUS})],
        dict(documents=d.height, words=w.height),
    )


def load(paths: Paths) -> CorpusLoad:
    src = readers.source(TOKENS, paths)
    return build(src, parse_tok(src.data, src.path))


# --------------------------------------------------------------------------- self-paced reading


SPR = "natural_stories_spr"
SPR_SPEC = dataset(SPR).file("spr")


def build_spr(src: Source, df: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    ints = ["subj", "correct", "item", "word_n", "RT"]
    df = self_paced_reading.require(df, name, ints, [*ints, "word"])
    rows = df.select(
        pl.lit(CORPUS).alias("corpus"),
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
    out = self_paced_reading.join_words(rows, words, name, "_id")
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
    table = table.with_columns(measure=pl.lit(self_paced_reading.MEASURE), n_readers=pl.lit(None)).select(
        [pl.col(c).cast(t) for c, t in self_paced_reading.SCHEMA.items()]
    )
    notes = dict(
        rows=table.height,
        readers=table["reader_id"].n_unique(),
        reader_stories=per_story.height,
        duplicate_reader_word_keys=dupes,
        **self_paced_reading.mismatches(out),
    )
    return CorpusLoad(SPR, [(self_paced_reading.TABLE, table, {"corpus": CORPUS})], notes)


def load_spr(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    _, words = corpus_frames(paths, prepared, CORPUS)
    src, df = self_paced_reading.read_frame(SPR_SPEC, paths)
    return build_spr(src, df, words)


# --------------------------------------------------------------------------- the published per-word means


SPR_MEANS = "natural_stories_spr_means"


SPR_MEANS_SPEC = dataset(SPR_MEANS).file("means")


SPR_MEANS_SCHEMA = {
    "doc_id": pl.String,
    "native_id": pl.String,
    "word": pl.String,
    "n_readers": pl.Int32,
    "mean_rt_ms": pl.Float64,
    "sd_rt_ms": pl.Float64,
    "geometric_mean_rt_ms": pl.Float64,
    "geometric_sd_factor": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def load_spr_means(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(SPR_MEANS_SPEC, paths)
    rows = readers.delimited(src.data, src.path, SPR_MEANS_SPEC)
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        item, zone = to_int(r["item"], src.path, f"line {k} item"), to_int(r["zone"], src.path, f"line {k} zone")
        if (item, zone) in seen:
            raise IngestError(src.path, f"line {k}: story {item} zone {zone} appears twice")
        seen.add((item, zone))
        out.append(
            {
                "doc_id": str(item),
                "native_id": str(zone),
                "word": r["word"],
                "n_readers": to_int(r["nItem"], src.path, f"line {k} nItem"),
                "mean_rt_ms": to_float(r["meanItemRT"], src.path, f"line {k} meanItemRT"),
                "sd_rt_ms": to_float(r["sdItemRT"], src.path, f"line {k} sdItemRT"),
                "geometric_mean_rt_ms": to_float(r["gmeanItemRT"], src.path, f"line {k} gmeanItemRT"),
                "geometric_sd_factor": to_float(r["gsdItemRT"], src.path, f"line {k} gsdItemRT"),
                "source_path": src.path,
                "source_sha256": src.sha256,
            }
        )
    return {SPR_MEANS: pl.DataFrame(out, schema=SPR_MEANS_SCHEMA, strict=True)}


# --------------------------------------------------------------------------- the adapter's jobs


def jobs(_corpora: dict) -> list[Job]:
    """Natural Stories: its texts, the self-paced reading times per reader, the published per-word means."""
    return [
        Job(CORPUS, paths_only(load), write_partitions, writes=TEXTS_WRITES),
        Job(SPR, load_spr, self_paced_reading.write, after=(CORPUS,), writes=(self_paced_reading.TABLE,)),
        Job(SPR_MEANS, paths_only(load_spr_means), replace_tables_in, writes=(f"raw.{SPR_MEANS}",)),
    ]
