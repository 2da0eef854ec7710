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
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

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
)
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import whitespace_words

CORPUS = "provo"
N_TEXTS = 55
TEXTS = dataset(CORPUS).file("texts")
CLOZE_SPEC = dataset("provo_cloze").file("cloze")  # word numbering; declared once, there
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
