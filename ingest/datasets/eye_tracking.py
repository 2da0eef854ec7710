"""Eye tracking per reader, every upstream row kept: Provo and UCL fixations, UCL per-reader measures.

Three ingest names, two raw tables (no metric is computed here; the reading measures are derived in dbt):

- `provo_eye_tracking` (provo_vasilev/data/df.Rda, mac_roman, read with the `rdata` package) and
  `ucl_fixations` (pangoling/data_frank2013_et_fix.rda) -> `raw.eye_tracking_fixations`, one row per
  fixation; each job replaces its corpus's partition only.
- `ucl_eye_tracking` (pangoling/data_frank2013_et_rt.rda) -> `raw.eye_tracking_measures_upstream`, one
  row per reader x word as published: RTfirstfix / RTfirstpass / RTrightbound / RTgopast, where all four
  are 0 for a word not fixated in first pass; that 0 becomes NULL with `skipped` = true (a file where the
  four are not 0 together is refused).

Fixation order (`fixation_index`, 1-based within reader x doc):
- Provo: by (seq, fix_num). `seq` is the trial (1..56: every reader reads the text of trial 1 again in
  trial 56, so 84 reader x text pairs hold two readings; `trial_index` = seq tells them apart) and
  `fix_num` numbers the fixations of a trial 1..n in file order (checked).
- UCL: the file's row order within (subj, sent_id) (the file has no index column; it is the temporal
  order: the first fixation on a word in this order is the reader's RTfirstfix for nearly all first-pass
  words, see tests/test_eye_tracking_ingest.py).

Word keys (every reading row must join raw.words of its corpus, else IngestError listing the ids):
- Provo: `word_text` numbers the words as displayed in the eye-tracking experiment (1..n per text) and
  `wordID` labels them. The displayed words are aligned to raw.words (Texts/N.txt) by their letters and
  digits (`align_numbers`): in 53 texts they are the same words one for one, so number k is word_index
  k-1 (quotes may differ: '"snow' ~ 'snow'). Text 36 displays 'earth — betting that' where Texts/36.txt
  has 'earth betting — that': the fixations' x positions confirm the displayed order (a 25 px region
  481-506 for the dash, 506-602 for 'betting'; df.Rda's x1/x2 columns are one word off there), so each
  label joins its own word. Text 55 displays 'livres--a' and 'profession--writing.' as single words where
  Texts/55.txt has 'livres, a' and 'profession, writing.': a displayed word spanning several raw words
  joins the raw word its first letter falls in (the first). `native_id` is the raw.words native_id of
  the joined word (the cloze norms' word_n; NULL for text 36's dash), `upstream_word_number` keeps
  word_text, `upstream_word` keeps wordID. notes['word_join'] lists every deviation.
- UCL: pangoling numbers sentences 1..361 (its own sent_id, kept in `upstream_item`); each is mapped to
  the ucl corpus doc_id by its text (the file's words in word_n order joined by spaces = raw.documents
  text); word_n is the 1-based position (native_id), word_index = word_n - 1, and the word must equal
  raw.words.word.
"""

from __future__ import annotations

import bisect
import difflib
import re

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import provo, ucl
from predictabase.ingest.datasets._common import CorpusLoad, Source
from predictabase.ingest.datasets.corpora import corpus_frames
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import FileSpec, dataset

PROVO_NAME, UCL_FIX_NAME, UCL_RT_NAME = "provo_eye_tracking", "ucl_fixations", "ucl_eye_tracking"
PROVO_SPEC = dataset(PROVO_NAME).file("fixations")
UCL_FIX_SPEC = dataset(UCL_FIX_NAME).file("fixations")
UCL_RT_SPEC = dataset(UCL_RT_NAME).file("measures")
FIXATIONS = "raw.eye_tracking_fixations"
MEASURES = "raw.eye_tracking_measures_upstream"
RT_COLUMNS = {
    "RTfirstfix": "first_fixation_ms",
    "RTfirstpass": "first_pass_ms",
    "RTrightbound": "right_bounded_ms",
    "RTgopast": "go_past_ms",
}

FIXATION_SCHEMA = {
    "corpus": pl.String,
    "reader_id": pl.String,
    "doc_id": pl.String,
    "fixation_index": pl.Int32,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "duration_ms": pl.Int32,
    "blink": pl.String,
    "x_px": pl.Float64,
    "y_px": pl.Float64,
    "upstream_word": pl.String,
    "trial_index": pl.Int32,  # Provo seq (the trial; NULL for UCL)
    "upstream_item": pl.String,  # the file's text / sentence id (Provo item; pangoling sent_id)
    "upstream_word_number": pl.Int32,  # the file's word number (Provo word_text; UCL word_n)
    "source_path": pl.String,
    "source_sha256": pl.String,
}
MEASURE_SCHEMA = {
    "corpus": pl.String,
    "reader_id": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "native_id": pl.String,
    "word": pl.String,
    "first_fixation_ms": pl.Int32,
    "first_pass_ms": pl.Int32,
    "right_bounded_ms": pl.Int32,
    "go_past_ms": pl.Int32,
    "skipped": pl.Boolean,
    "comprehension_correct": pl.String,
    "sentence_order": pl.Int32,
    "answer_time_ms": pl.Float64,  # upstream answer_time (NULL where no question followed the sentence)
    "upstream_item": pl.String,  # pangoling sent_id
    "source_path": pl.String,
    "source_sha256": pl.String,
}


# --------------------------------------------------------------------------- shared checks


def _ids(items: list, n: int | None = None) -> str:
    n = len(items) if n is None else n
    head = ", ".join(str(x) for x in items[:5])
    return f"{head}{', ...' if n > 5 else ''} ({n} in all)"


def _frame(src: Source, spec: FileSpec) -> pl.DataFrame:
    """The declared R object as polars (categories as strings), with a 1-based `_row` (file row)."""
    pdf = readers.rdata(src.data, src.path, spec)
    cols = {}
    for c in spec.columns:
        s = pdf[c]
        if str(s.dtype) in ("category", "object") or "str" in str(s.dtype).lower():
            cols[c] = pl.Series(c, [None if v is None or v != v else str(v) for v in s.astype(object)], dtype=pl.String)
        else:
            cols[c] = pl.from_pandas(s.reset_index(drop=True)).rename(c)
    return pl.DataFrame(cols).with_row_index("_row", offset=1)


def _no_nulls(df: pl.DataFrame, cols: list[str], name: str) -> None:
    for c in cols:
        bad = df.filter(pl.col(c).is_null())["_row"].to_list()
        if bad:
            raise IngestError(name, f"column {c} is missing in row(s) {_ids(bad)}")


def _whole_numbers(df: pl.DataFrame, col: str, name: str, minimum: int) -> pl.DataFrame:
    """`col` (float or int, NULL allowed) as Int32, refusing fractions and values below `minimum`."""
    v = pl.col(col).cast(pl.Float64)
    bad = df.filter(v.is_not_null() & (v.is_nan() | (v != v.round(0)) | (v < minimum)))
    if bad.height:
        raise IngestError(
            name,
            f"{col} must be a whole number >= {minimum}: row(s) "
            f"{_ids([f'{r} ({x})' for r, x in zip(bad['_row'], bad[col])], bad.height)}",
        )
    return df.with_columns(pl.when(v.is_nan()).then(None).otherwise(v).cast(pl.Int32).alias(col))


def _not_joined(name: str, corpus: str, ids: list[str]) -> IngestError:
    return IngestError(name, f"reading rows do not join raw.words ({corpus}): {_ids(sorted(set(ids)))}")


# --------------------------------------------------------------------------- Provo


def _key(w: str) -> str:
    """Letters and digits, case-folded ('"snow' ~ 'snow'); a word without any (a dash) is its own key."""
    return re.sub(r"[^0-9a-z]", "", w.casefold()) or w


def align_numbers(numbered: dict[int, str], words: list[str], window: int = 2) -> tuple[dict[int, int], dict]:
    """Displayed word number -> word_index in `words` (the corpus's words of the text), and the deviations.

    The displayed words (number k, label w) are aligned to the corpus's words by their keys (`_key`):
    1. runs of equal keys in order (difflib, no autojunk);
    2. a number left over joins a left-over word with the same key within `window` words of where its
       predecessor's match puts it (two words shown in the other order: 'reordered');
    3. between two joined numbers, left-over numbers and words of equal count join by position
       ('by_position'), or, when their keys concatenate to the same string, each displayed word joins the
       word its first letter falls in (a word shown as 'livres--a' where the text has 'livres,' 'a':
       'spanning').
    Numbers still left over do not join (the caller lists them)."""
    n = max(numbered)
    a = {k: _key(w) for k, w in numbered.items()}
    b = [_key(w) for w in words]
    seq_a = [a.get(k) for k in range(1, n + 1)]  # None: a number nobody fixated (never matches)
    mapping: dict[int, int] = {}
    for blk in difflib.SequenceMatcher(None, seq_a, b, autojunk=False).get_matching_blocks():
        mapping.update({blk.a + 1 + i: blk.b + i for i in range(blk.size)})
    dev: dict[str, list] = {"reordered": [], "by_position": [], "spanning": []}
    used = set(mapping.values())
    for k in sorted(set(numbered) - set(mapping)):  # 2. nearby, in the other order
        prev = max((p for p in mapping if p < k), default=None)
        expected = (k - 1) if prev is None else mapping[prev] + (k - prev)
        near = sorted(
            (abs(j - expected), j)
            for j in range(max(expected - window, 0), min(expected + window + 1, len(b)))
            if j not in used and b[j] == a[k]
        )
        if near:
            mapping[k] = near[0][1]
            used.add(near[0][1])
            dev["reordered"].append((k, numbered[k], near[0][1], words[near[0][1]]))
    anchors = sorted(mapping.items())
    for (k0, j0), (k1, j1) in zip([(0, -1)] + anchors, anchors + [(n + 1, len(b))]):  # 3. the gaps
        ks = [k for k in range(k0 + 1, k1) if k not in mapping]
        js = [j for j in range(j0 + 1, j1) if j not in used] if j1 > j0 else []
        if not ks or not js:
            continue
        if len(ks) == len(js):
            pairs = list(zip(ks, js))
            dev["by_position"] += [(k, numbered[k], j, words[j]) for k, j in pairs if k in numbered and a[k] != b[j]]
        elif all(k in a for k in ks) and "".join(a[k] for k in ks) == "".join(b[j] for j in js):
            starts, o = [], 0
            for j in js:
                starts.append(o)
                o += len(b[j])
            pairs, o = [], 0
            for k in ks:
                pairs.append((k, js[max(bisect.bisect_right(starts, o) - 1, 0)]))
                o += len(a[k])
            dev["spanning"] += [(k, numbered[k], [words[j] for j in js]) for k in ks]
        else:
            continue
        for k, j in pairs:
            if k in numbered:
                mapping[k] = j
    return {k: v for k, v in mapping.items() if k in numbered}, {k: v for k, v in dev.items() if v}


def build_provo(src: Source, words: pl.DataFrame) -> CorpusLoad:
    """Every fixation of df.Rda joined to raw.words of provo (`words`)."""
    name = src.path
    df = _frame(src, PROVO_SPEC)
    _no_nulls(df, ["sub", "item", "seq", "fix_num", "fix_dur", "wordID", "blink", "xPos", "yPos"], name)
    df = _whole_numbers(df, "word_text", name, 1)
    df = _whole_numbers(df, "fix_dur", name, 1)
    bad = df.filter(pl.col("item").n_unique().over("sub", "seq") > 1)
    if bad.height:
        raise IngestError(name, f"a trial (sub, seq) shows two texts: row(s) {_ids(bad['_row'].to_list())}")
    bad = df.filter(pl.col("fix_num") != pl.int_range(1, pl.len() + 1).over("sub", "seq"))
    if bad.height:
        raise IngestError(
            name, f"fix_num does not count 1, 2, ... in file order within a trial: row(s) {_ids(bad['_row'].to_list())}"
        )
    df = df.with_columns(doc_id=pl.col("item").cast(pl.String))
    unknown = sorted(set(df["doc_id"].to_list()) - set(words["doc_id"].to_list()))
    if unknown:
        raise IngestError(name, f"text(s) {_ids(unknown)} are not provo documents")
    # the displayed words: one wordID per (text, number)
    labels = (
        df.filter(pl.col("word_text").is_not_null())
        .group_by("doc_id", "word_text")
        .agg(pl.col("wordID").unique().sort())
    )
    two = labels.filter(pl.col("wordID").list.len() > 1)
    if two.height:
        raise IngestError(name, f"word number(s) with two words: {_ids(two.rows())}")
    wmap, join_notes, unjoined = [], {}, []
    by_doc = {d: g.sort("word_index") for (d,), g in words.group_by("doc_id")}
    for (doc_id,), g in labels.group_by("doc_id"):
        numbered = dict(zip(g["word_text"].to_list(), (w[0] for w in g["wordID"].to_list())))
        w = by_doc[doc_id]
        m, dev = align_numbers(numbered, w["word"].to_list())
        if dev:
            join_notes[doc_id] = dev
        unjoined += [f"text {doc_id} word {k}" for k in sorted(set(numbered) - set(m))]
        wmap += [(doc_id, k, wi) for k, wi in m.items()]
    if unjoined:
        raise _not_joined(name, provo.CORPUS, unjoined)
    wmap_df = pl.DataFrame(
        wmap, schema={"doc_id": pl.String, "word_text": pl.Int32, "word_index": pl.Int32}, orient="row"
    ).join(words.select("doc_id", "word_index", "native_id"), on=["doc_id", "word_index"], how="left")
    out = (
        df.join(wmap_df, on=["doc_id", "word_text"], how="left")
        .sort("sub", "doc_id", "seq", "fix_num")
        .with_columns(fixation_index=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("sub", "doc_id"))
        .select(
            corpus=pl.lit(provo.CORPUS),
            reader_id=pl.col("sub"),
            doc_id="doc_id",
            fixation_index="fixation_index",
            word_index="word_index",
            native_id="native_id",
            duration_ms="fix_dur",
            blink=pl.when(pl.col("blink") == "NONE").then(None).otherwise(pl.col("blink")),
            x_px="xPos",
            y_px="yPos",
            upstream_word="wordID",
            trial_index="seq",
            upstream_item=pl.col("item").cast(pl.String),
            upstream_word_number="word_text",
            source_path=pl.lit(src.path),
            source_sha256=pl.lit(src.sha256),
        )
        .cast(FIXATION_SCHEMA)
    )
    twice = (
        out.group_by("reader_id", "doc_id")
        .agg(pl.col("trial_index").n_unique().alias("n"))
        .filter(pl.col("n") > 1)
        .height
    )
    return CorpusLoad(
        PROVO_NAME,
        [(FIXATIONS, out, {"corpus": provo.CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            texts=out["doc_id"].n_unique(),
            no_word_rows=out["word_index"].null_count(),
            reader_texts_read_twice=twice,
            word_join=join_notes,
        ),
    )


# --------------------------------------------------------------------------- UCL


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
            f"{_ids(sorted(two.select('sent_id', 'word_n').rows()))}",
        )
    out, missing = {}, []
    for (sid,), g in w.sort("word_n").group_by("sent_id", maintain_order=True):
        nums, ws = g["word_n"].to_list(), [x[0] for x in g["word"].to_list()]
        m = next((i for i, k in enumerate(nums) if k != i + 1), len(nums))
        doc = by_text.get(" ".join(ws[:m]))
        (missing.append(sid) if doc is None else out.__setitem__(sid, doc))
    if missing:
        raise IngestError(name, f"sentence(s) not among the ucl documents by text (sent_id): {_ids(sorted(missing))}")
    if len(set(out.values())) != len(out):
        raise IngestError(name, "two sentences map to one ucl document")
    return out


def _join_ucl(df: pl.DataFrame, docs: pl.DataFrame, words: pl.DataFrame, name: str) -> pl.DataFrame:
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
        raise _not_joined(
            name, ucl.CORPUS, [f"sent_id {s} word {w}" for s, w in bad.select("sent_id", "word_n").rows()]
        )
    return j.sort("_row")


def build_ucl_fixations(src: Source, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    df = _frame(src, UCL_FIX_SPEC)
    _no_nulls(df, ["subj", "sent_id", "gaze_x", "gaze_y", "fix_duration", "word", "blink"], name)
    df = _whole_numbers(df, "word_n", name, 1)
    df = _whole_numbers(df, "fix_duration", name, 1)
    j = _join_ucl(df, docs, words, name)
    out = (
        j.with_columns(fixation_index=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("subj", "sent_id"))
        .select(
            corpus=pl.lit(ucl.CORPUS),
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
        .cast(FIXATION_SCHEMA)
    )
    return CorpusLoad(
        UCL_FIX_NAME,
        [(FIXATIONS, out, {"corpus": ucl.CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            sentences=out["doc_id"].n_unique(),
            no_word_rows=out["word_index"].null_count(),
            sent_id_differs_from_doc_id=out.filter(pl.col("upstream_item") != pl.col("doc_id"))["doc_id"].n_unique(),
        ),
    )


def build_ucl_measures(src: Source, docs: pl.DataFrame, words: pl.DataFrame) -> CorpusLoad:
    name = src.path
    df = _frame(src, UCL_RT_SPEC)
    _no_nulls(df, [c for c in UCL_RT_SPEC.columns if c != "answer_time"], name)
    for c in ["word_n", "sent_n"]:
        df = _whole_numbers(df, c, name, 1)
    for c in RT_COLUMNS:
        df = _whole_numbers(df, c, name, 0)
    zeros = pl.sum_horizontal([(pl.col(c) == 0).cast(pl.Int32) for c in RT_COLUMNS])
    bad = df.filter((zeros > 0) & (zeros < len(RT_COLUMNS)))
    if bad.height:
        raise IngestError(
            name,
            f"0 ms (= not fixated in first pass) in some but not all of {list(RT_COLUMNS)}: "
            f"row(s) {_ids(bad['_row'].to_list())}",
        )
    dup = df.filter(pl.len().over("subj", "sent_id", "word_n") > 1)
    if dup.height:
        raise IngestError(name, f"(subj, sent_id, word_n) repeated: row(s) {_ids(dup['_row'].to_list())}")
    j = _join_ucl(df, docs, words, name)
    skipped = pl.col("RTfirstfix") == 0
    out = j.select(
        corpus=pl.lit(ucl.CORPUS),
        reader_id=pl.col("subj").cast(pl.String),
        doc_id="doc_id",
        word_index="word_index",
        native_id="native_id",
        word="word",
        **{new: pl.when(skipped).then(None).otherwise(pl.col(old)) for old, new in RT_COLUMNS.items()},
        skipped=skipped,
        comprehension_correct="acc_comprehension",
        sentence_order="sent_n",
        answer_time_ms="answer_time",
        upstream_item=pl.col("sent_id").cast(pl.String),
        source_path=pl.lit(src.path),
        source_sha256=pl.lit(src.sha256),
    ).cast(MEASURE_SCHEMA)
    return CorpusLoad(
        UCL_RT_NAME,
        [(MEASURES, out, {"corpus": ucl.CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            sentences=out["doc_id"].n_unique(),
            skipped=int(out["skipped"].sum()),
        ),
    )


# --------------------------------------------------------------------------- jobs


def load_provo(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    """The job's prepare(): the corpus's words as this command ingests them (when it does), else as its
    loader reads them now (never the warehouse's, which may be older)."""
    _, words = corpus_frames(paths, prepared, provo.CORPUS)
    return build_provo(readers.source(PROVO_SPEC, paths), words)


def _ucl_frames(paths: Paths, prepared: dict | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    return corpus_frames(paths, prepared, ucl.CORPUS)


def load_ucl_fixations(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    return build_ucl_fixations(readers.source(UCL_FIX_SPEC, paths), *_ucl_frames(paths, prepared))


def load_ucl_measures(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    return build_ucl_measures(readers.source(UCL_RT_SPEC, paths), *_ucl_frames(paths, prepared))
