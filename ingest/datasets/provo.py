"""Provo (Luke & Christianson 2018): the 55 texts provo_vasilev/corpus/Texts/N.txt.

Text normalisation (documented decision):
- the files are UTF-8 (52 plain ASCII); their line breaks are display wrapping, so the text
  is the file's whitespace-separated words joined by single spaces (no leading/trailing space).
- 4 files (27, 36, 45, 54) hold mojibake: Mac Roman bytes mis-decoded as Latin-1 and saved as
  UTF-8 ('doesnÕt', 'Ñ'). It is repaired by re-encoding as Latin-1 and decoding as Mac Roman
  ('doesn’t', '—'), which is exactly what provo_vasilev/data/df.Rda (decoded as mac_roman)
  shows readers saw.

Words are the whitespace tokens with spans. native_id = Provo `word_n` of the cloze norms
(pangoling/data_provo_cloze.rda), found by aligning the tokens to the norms' words (letters and
digits, case-folded); tokens the norms skip get the number between their neighbours when
exactly one is free, numbers continue past the norms' last word, text 2 (absent from the
norms) is numbered 1..n. Where no number can be given the native_id is NULL
(text 36: the dash '—'). See notes['numbering'] for every deviation.

Eye tracking (`provo_eye_tracking`: provo_vasilev/data/df.Rda, mac_roman, read with the `rdata` package) ->
`raw.eye_tracking_fixations`, one row per fixation, every upstream row kept (the measures are derived in dbt).
Fixation order (`fixation_index`, 1-based within reader x doc):
- Provo: by (seq, fix_num). `seq` is the trial (1..56: every reader reads the text of trial 1 again in
  trial 56, so 84 reader x text pairs hold two readings; `trial_index` = seq tells them apart) and
  `fix_num` numbers the fixations of a trial 1..n in file order (checked).
Word keys (every fixation on a word must join raw.words of provo, else IngestError listing the ids):
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

Cloze norms:
- `provo_cloze` (pangoling/data_provo_cloze.rda, cp1252) -> raw.cloze_norms, corpus provo: EVERY upstream row
  (2,730), joined to raw.words by (text_id -> doc_id, word_n -> native_id). Rows without norms are KEPT with
  NULL n_responses / probability (83 rows: the first word of each text, 57 rows as text 27 repeats it, and 26
  other words such as 'Rapa', '0.9', 'YouTube'): they are words of the corpus; dbt drops them (has_norms).
  The file repeats some (text_id, word_n): text 27 is listed twice, and text 18 word 3 has two different
  words ('the', 'evolution'); all are kept with their `upstream_row`, `upstream_id` (word_unique_id) and
  `word_matches` (the file's word equals the corpus word, letters and digits case-folded, as
  predictabase.ingest.datasets.provo aligns them); staging keeps one per word.
  `cp` is the raw share of the `total_response_count` responses equal to the word (smoothing 'none').
"""

from __future__ import annotations

import bisect
import difflib
import re
from pathlib import Path

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import cloze_norms, eye_tracking
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
    write_partitions,
)
from predictabase.ingest.datasets.corpora import corpus_frames, prepared_or_loaded
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import whitespace_words

CORPUS = "provo"
N_TEXTS = 55
TEXTS = dataset(CORPUS).file("texts")
CLOZE_JOB, EYE_TRACKING_JOB = "provo_cloze", "provo_eye_tracking"
CLOZE_SPEC = dataset(CLOZE_JOB).file("cloze")  # word numbering; declared once, there
CLOZE = CLOZE_SPEC.path
CLOZE_COLUMNS = list(CLOZE_SPEC.columns)


def text_number(catalog_path: str) -> int:
    """provo_vasilev/corpus/Texts/12.txt -> 12"""
    return int(re.fullmatch(r"(\d+)\.txt", catalog_path.rsplit("/", 1)[-1]).group(1))


def text_path(n: int) -> str:
    return next(f.path for f in TEXTS.catalog_files() if text_number(f.path) == n)


def parse_text(data: bytes, name: str) -> str:
    raw = readers.text(data, name, TEXTS)
    if not raw.strip():
        raise IngestError(name, "empty text")
    text = " ".join(raw.split())
    if any(ord(c) > 127 for c in text):
        try:
            text = text.encode("latin-1").decode("mac_roman")
        except UnicodeEncodeError as exc:
            raise IngestError(
                name, f"unexpected non-Latin-1 character {text[exc.start]!r}: not the known Mac Roman mojibake"
            ) from exc
    return text


def parse_cloze(local_or_data: Path | bytes, name: str) -> dict[int, list[tuple[int, str]]]:
    """{text_id: [(word_n, word), ...]} sorted by word_n, one row per word_n (the first by
    word_unique_id when the norms repeat a number). Reads the R data file or its bytes."""
    df = readers.rdata(local_or_data, name, CLOZE_SPEC)
    if df[CLOZE_COLUMNS].isna().any().any():
        raise IngestError(name, "null text_id / word_n / word")
    out: dict[int, dict[int, tuple[int, str]]] = {}
    for uid, tid, n, w in df[CLOZE_COLUMNS].itertuples(index=False):
        qid = int(re.sub(r"\D", "", str(uid)) or 0)
        per = out.setdefault(int(tid), {})
        if int(n) not in per or qid < per[int(n)][0]:
            per[int(n)] = (qid, str(w))
    return {t: [(n, w) for n, (_, w) in sorted(per.items())] for t, per in sorted(out.items())}


def _key(w: str) -> str:
    return re.sub(r"[^0-9a-z]", "", w.casefold())


def number_words(tokens: list[str], cloze: list[tuple[int, str]] | None) -> list[int | None]:
    """Provo word numbers for whitespace tokens, aligned to the cloze norms' (word_n, word) list."""
    if not cloze:
        return list(range(1, len(tokens) + 1))
    a, b = [_key(t) for t in tokens], [_key(w) for _, w in cloze]
    anchors: list[tuple[int, int]] = []  # (token index, word_n)
    for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        anchors.extend((blk.a + k, cloze[blk.b + k][0]) for k in range(blk.size))
    nums: list[int | None] = [None] * len(tokens)
    for i, n in anchors:
        nums[i] = n
    bounds = [(-1, 0)] + anchors + [(len(tokens), None)]
    for (i0, n0), (i1, n1) in zip(bounds, bounds[1:]):
        gap = list(range(i0 + 1, i1))
        if not gap:
            continue
        if n1 is None or n1 - n0 - 1 == len(gap):  # after the last anchor, or exactly the free numbers
            for k, i in enumerate(gap):
                nums[i] = n0 + 1 + k
    return nums


def build(
    texts: dict[int, tuple[Source, str]], cloze_src: Source, cloze: dict[int, list[tuple[int, str]]]
) -> CorpusLoad:
    version = corpus_version([s for s, _ in texts.values()] + [cloze_src])
    docs, words = [], []
    numbering: dict[int, dict] = {}
    for doc_index, (tid, (src, text)) in enumerate(sorted(texts.items())):
        doc_id = str(tid)
        docs.append(doc_row(CORPUS, doc_id, doc_index, text, src, version))
        toks = whitespace_words(text)
        nums = number_words([t for t, _, _ in toks], cloze.get(tid))
        seen = [n for n in nums if n is not None]
        if len(set(seen)) != len(seen) or seen != sorted(seen):
            raise IngestError(src.path, f"word numbering against {cloze_src.path} is not increasing")
        c = cloze.get(tid)
        dev = {}
        if c is None:
            dev["not_in_cloze_norms"] = True
        else:
            cmax = c[-1][0]
            if cmax != len(toks):
                dev["tokens_vs_cloze_max_word_n"] = (len(toks), cmax)
            shifted = [(i + 1, t, n) for i, ((t, _, _), n) in enumerate(zip(toks, nums)) if n != i + 1]
            if shifted:
                dev["tokens_numbered_not_position"] = len(shifted)
                dev["first"] = shifted[0]
            unnumbered = [t for (t, _, _), n in zip(toks, nums) if n is None]
            if unnumbered:
                dev["no_word_n"] = unnumbered
            missing = sorted(set(range(1, max(seen) + 1)) - set(seen))
            cl = {n for n, _ in c}
            no_cloze_row = [n for n in seen if n not in cl]
            if missing:
                dev["word_n_skipped"] = missing
            if no_cloze_row:
                dev["words_without_cloze_row"] = no_cloze_row
        if dev:
            numbering[tid] = dev
        for wi, ((w, a, b), n) in enumerate(zip(toks, nums)):
            words.append(
                dict(
                    corpus=CORPUS,
                    doc_id=doc_id,
                    word_index=wi,
                    word=w,
                    char_start=a,
                    char_end=b,
                    native_id=None if n is None else str(n),
                    source_path=src.path,
                    source_sha256=src.sha256,
                )
            )
    d, w = frame(docs, DOC_SCHEMA), frame(words, WORD_SCHEMA)
    return CorpusLoad(
        CORPUS,
        [("raw.documents", d, {"corpus": CORPUS}), ("raw.words", w, {"corpus": CORPUS})],
        dict(documents=d.height, words=w.height, numbering=numbering, null_native_id=int(w["native_id"].null_count())),
    )


def load(paths: Paths) -> CorpusLoad:
    texts = {text_number(src.path): (src, parse_text(src.data, src.path)) for src in readers.sources(TEXTS, paths)}
    if sorted(texts) != list(range(1, N_TEXTS + 1)):
        raise IngestError(TEXTS.glob, f"expected texts 1..{N_TEXTS}, the catalog has {sorted(texts)}")
    texts = dict(sorted(texts.items()))
    cloze_src = readers.source(CLOZE_SPEC, paths)
    return build(texts, cloze_src, parse_cloze(cloze_src.local, cloze_src.path))  # the verified copy


parse_cloze_bytes = parse_cloze  # the tests of corrupted copies pass bytes


# --------------------------------------------------------------------------- eye tracking


FIXATIONS_SPEC = dataset(EYE_TRACKING_JOB).file("fixations")


def _display_key(w: str) -> str:
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
    a = {k: _display_key(w) for k, w in numbered.items()}
    b = [_display_key(w) for w in words]
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


def build_eye_tracking(src: Source, words: pl.DataFrame) -> CorpusLoad:
    """Every fixation of df.Rda joined to raw.words of provo (`words`)."""
    name = src.path
    df = eye_tracking.rdata_frame(src, FIXATIONS_SPEC)
    eye_tracking.no_nulls(df, ["sub", "item", "seq", "fix_num", "fix_dur", "wordID", "blink", "xPos", "yPos"], name)
    df = eye_tracking.whole_numbers(df, "word_text", name, 1)
    df = eye_tracking.whole_numbers(df, "fix_dur", name, 1)
    bad = df.filter(pl.col("item").n_unique().over("sub", "seq") > 1)
    if bad.height:
        raise IngestError(
            name, f"a trial (sub, seq) shows two texts: row(s) {eye_tracking.listed(bad['_row'].to_list())}"
        )
    bad = df.filter(pl.col("fix_num") != pl.int_range(1, pl.len() + 1).over("sub", "seq"))
    if bad.height:
        raise IngestError(
            name,
            f"fix_num does not count 1, 2, ... in file order within a trial: row(s) {eye_tracking.listed(bad['_row'].to_list())}",
        )
    df = df.with_columns(doc_id=pl.col("item").cast(pl.String))
    unknown = sorted(set(df["doc_id"].to_list()) - set(words["doc_id"].to_list()))
    if unknown:
        raise IngestError(name, f"text(s) {eye_tracking.listed(unknown)} are not provo documents")
    # the displayed words: one wordID per (text, number)
    labels = (
        df.filter(pl.col("word_text").is_not_null())
        .group_by("doc_id", "word_text")
        .agg(pl.col("wordID").unique().sort())
    )
    two = labels.filter(pl.col("wordID").list.len() > 1)
    if two.height:
        raise IngestError(name, f"word number(s) with two words: {eye_tracking.listed(two.rows())}")
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
        raise eye_tracking.not_joined(name, CORPUS, unjoined)
    wmap_df = pl.DataFrame(
        wmap, schema={"doc_id": pl.String, "word_text": pl.Int32, "word_index": pl.Int32}, orient="row"
    ).join(words.select("doc_id", "word_index", "native_id"), on=["doc_id", "word_index"], how="left")
    out = (
        df.join(wmap_df, on=["doc_id", "word_text"], how="left")
        .sort("sub", "doc_id", "seq", "fix_num")
        .with_columns(fixation_index=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("sub", "doc_id"))
        .select(
            corpus=pl.lit(CORPUS),
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
        .cast(eye_tracking.FIXATION_SCHEMA)
    )
    twice = (
        out.group_by("reader_id", "doc_id")
        .agg(pl.col("trial_index").n_unique().alias("n"))
        .filter(pl.col("n") > 1)
        .height
    )
    return CorpusLoad(
        EYE_TRACKING_JOB,
        [(eye_tracking.FIXATIONS, out, {"corpus": CORPUS})],
        dict(
            rows=out.height,
            readers=out["reader_id"].n_unique(),
            texts=out["doc_id"].n_unique(),
            no_word_rows=out["word_index"].null_count(),
            reader_texts_read_twice=twice,
            word_join=join_notes,
        ),
    )


def load_eye_tracking(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    """The job's prepare(): the corpus's words as this command ingests them (when it does), else as its
    loader reads them now (never the warehouse's, which may be older)."""
    _, words = corpus_frames(paths, prepared, CORPUS)
    return build_eye_tracking(readers.source(FIXATIONS_SPEC, paths), words)


# --------------------------------------------------------------------------- cloze norms


def build_cloze(df, src: readers.Source, corpus: CorpusLoad) -> tuple[pl.DataFrame, dict]:
    words = {
        (d, nid): (wi, w) for d, ws in cloze_norms.words_by_doc(corpus).items() for wi, w, nid in ws if nid is not None
    }
    for col in ("total_response_count", "cp", "modal_response"):
        if col not in df.columns:
            raise IngestError(src.path, f"missing column {col!r}")
    rows, unjoined = [], []
    for k, r in enumerate(df.itertuples(index=False), start=1):
        tid, wn = cloze_norms.optional_number(r.text_id), cloze_norms.optional_number(r.word_n)
        if tid is None or wn is None or tid != int(tid) or wn != int(wn):
            raise IngestError(src.path, f"row {k} ({r.word_unique_id}): text_id / word_n {r.text_id!r} / {r.word_n!r}")
        doc_id, native_id = str(int(tid)), str(int(wn))
        hit = words.get((doc_id, native_id))
        if hit is None:
            unjoined.append(f"{r.word_unique_id} (text {doc_id} word {native_id})")
            continue
        n, cp = cloze_norms.optional_number(r.total_response_count), cloze_norms.optional_number(r.cp)
        if (n is None) != (cp is None):
            raise IngestError(
                src.path,
                f"row {k} ({r.word_unique_id}): cp and total_response_count disagree "
                f"on being missing ({r.cp!r}, {r.total_response_count!r})",
            )
        if n is not None and (n != int(n) or n < 1 or not 0 <= cp <= 1 or abs(cp * n - round(cp * n)) > 1e-6):
            raise IngestError(src.path, f"row {k} ({r.word_unique_id}): cp {cp} is not a share of {n} responses")
        modal = r.modal_response if isinstance(r.modal_response, str) else None
        rows.append(
            dict(
                corpus=CORPUS,
                doc_id=doc_id,
                word_index=hit[0],
                native_id=native_id,
                word=hit[1],
                upstream_word=str(r.word),
                upstream_row=k,
                upstream_id=str(r.word_unique_id),
                word_matches=_key(str(r.word)) == _key(hit[1]),
                n_responses=None if n is None else int(n),
                cloze_probability_published=cp,
                smoothing="none",
                modal_response=modal,
                rating_mean=None,
                rating_sd=None,
                cloze_surprisal_published_nats=None,
                entropy_published_nats=None,
                competition_published=None,
                upstream_list=None,
                source_path=src.path,
                source_sha256=src.sha256,
            )
        )
    if unjoined:
        raise IngestError(src.path, f"{len(unjoined)} row(s) join no Provo word: {', '.join(unjoined[:20])}")
    f = pl.DataFrame(rows, schema=cloze_norms.NORMS_SCHEMA, strict=True)
    notes = dict(
        rows=f.height,
        texts=f["doc_id"].n_unique(),
        without_norms=int(f["cloze_probability_published"].null_count()),
        repeated_word_rows=f.height - f.select("doc_id", "word_index").n_unique(),
        word_mismatch=f.filter(~pl.col("word_matches"))["upstream_id"].to_list(),
    )
    return f, notes


def load_cloze(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus = prepared_or_loaded(paths, prepared, CORPUS)
    src = readers.source(CLOZE_SPEC, paths)
    f, notes = build_cloze(readers.rdata(src.local, src.path, CLOZE_SPEC), src, corpus)
    return CorpusLoad(CLOZE_JOB, [("raw.cloze_norms", f, {"corpus": CORPUS})], notes)


# --------------------------------------------------------------------------- the adapter's jobs


def jobs(_corpora: dict) -> list[Job]:
    """Provo: its texts, the eye-tracking fixations per reader, the cloze norms."""
    return [
        Job(CORPUS, paths_only(load), write_partitions, writes=TEXTS_WRITES),
        Job(CLOZE_JOB, load_cloze, write_partitions, after=(CORPUS,), writes=("raw.cloze_norms",)),
        Job(EYE_TRACKING_JOB, load_eye_tracking, write_partitions, after=(CORPUS,), writes=(eye_tracking.FIXATIONS,)),
    ]
