"""The next-token prediction game (Shlegeris et al.): 469 OpenWebText documents as GPT-2 token lists.

- text = ''.join(tokens) exactly (U+FFFD pieces of split multi-byte characters are kept).
- raw.game_doc_tokens keeps the token boundaries with their char spans.
- score_prefix_chars = characters of tokens[0 : max guessed_token_idx over the doc's
  top-1 game rows]; the true token of a row is tokens[guessed_token_idx - 1], so the prefix
  ends with the last token any player guessed. Rows pointing past the document's end are
  clamped to the end and counted (notes['rows_past_end']).
- words: maximal runs of non-whitespace characters; native_id = NULL (the game has no word key).
"""

from __future__ import annotations

import re
from itertools import accumulate

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import (
    DOC_SCHEMA,
    TOKEN_SCHEMA,
    WORD_SCHEMA,
    CorpusLoad,
    Job,
    Source,
    corpus_version,
    doc_row,
    paths_only,
    write_partitions,
)
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.text import whitespace_words

CORPUS = "lm_game"
DOCUMENTS = dataset(CORPUS).file("documents")
GUESSES = dataset(CORPUS).file("guesses")
ACCURACY = GUESSES.path


def doc_number(catalog_path: str) -> int:
    """doc1003.json -> 1003"""
    return int(re.fullmatch(r"doc(\d+)\.json", catalog_path.rsplit("/", 1)[-1]).group(1))


def doc_paths() -> list[str]:
    return sorted((f.path for f in DOCUMENTS.catalog_files()), key=doc_number)


def parse_doc(data: bytes, name: str) -> list[str]:
    """A docN.json: a non-empty JSON list of strings."""
    tokens = readers.json_value(data, name, DOCUMENTS)
    if not isinstance(tokens, list) or not tokens:
        raise IngestError(name, "expected a non-empty JSON list of token strings")
    for i, t in enumerate(tokens):
        if not isinstance(t, str) or t == "":
            raise IngestError(name, f"token {i} is {t!r}, expected a non-empty string")
    return tokens


def parse_accuracy(data: bytes, name: str) -> list[tuple[int, int]]:
    """res_accuracy_anonym.json rows [id, user, guess, correct_answer, guessed_token_idx, doc_id]
    -> (doc_id, guessed_token_idx) pairs."""
    rows = readers.json_value(data, name, GUESSES)
    if not isinstance(rows, list) or not rows:
        raise IngestError(name, "expected a non-empty JSON list of rows")
    out = []
    for k, r in enumerate(rows):
        if not isinstance(r, list) or len(r) != 6:
            raise IngestError(
                name, f"row {k}: expected [id, user, guess, correct_answer, guessed_token_idx, doc_id], got {r!r:.120}"
            )
        idx, doc = r[4], r[5]
        if not (isinstance(idx, int) and isinstance(doc, int)) or isinstance(idx, bool) or idx < 1:
            raise IngestError(
                name, f"row {k}: guessed_token_idx {idx!r} / doc_id {doc!r} are not valid (positive int, int)"
            )
        out.append((doc, idx))
    return out


def build(docs: dict[int, tuple[Source, list[str]]], acc_src: Source, guesses: list[tuple[int, int]]) -> CorpusLoad:
    """Assemble the three frames from parsed inputs (validates cross-file consistency)."""
    max_idx: dict[int, int] = {}
    past_end: list[tuple[int, int, int]] = []
    for doc, idx in guesses:
        if doc not in docs:
            raise IngestError(acc_src.path, f"refers to document {doc}, which is not among the fetched docs")
        n = len(docs[doc][1])
        if idx > n:
            past_end.append((doc, idx, n))
            idx = n
        max_idx[doc] = max(max_idx.get(doc, 0), idx)
    version = corpus_version([s for s, _ in docs.values()] + [acc_src])
    doc_rows, tok_cols, word_cols = [], {k: [] for k in TOKEN_SCHEMA}, {k: [] for k in WORD_SCHEMA}
    prefix_tokens = 0
    for doc_index, doc in enumerate(sorted(docs)):
        src, tokens = docs[doc]
        doc_id = str(doc)
        text = "".join(tokens)
        ends = list(accumulate(len(t) for t in tokens))
        nt = len(tokens)
        tok_cols["doc_id"].extend([doc_id] * nt)
        tok_cols["token_index"].extend(range(nt))
        tok_cols["token"].extend(tokens)
        tok_cols["char_start"].extend([0] + ends[:-1])
        tok_cols["char_end"].extend(ends)
        tok_cols["source_path"].extend([src.path] * nt)
        tok_cols["source_sha256"].extend([src.sha256] * nt)
        n_prefix = max_idx.get(doc)
        prefix_chars = ends[n_prefix - 1] if n_prefix else None
        prefix_tokens += n_prefix or 0
        doc_rows.append(doc_row(CORPUS, doc_id, doc_index, text, src, version, prefix_chars))
        ws = whitespace_words(text)
        nw = len(ws)
        if nw:
            w, a, b = zip(*ws)
            word_cols["word"].extend(w)
            word_cols["char_start"].extend(a)
            word_cols["char_end"].extend(b)
        word_cols["doc_id"].extend([doc_id] * nw)
        word_cols["word_index"].extend(range(nw))
        word_cols["corpus"].extend([CORPUS] * nw)
        word_cols["native_id"].extend([None] * nw)
        word_cols["source_path"].extend([src.path] * nw)
        word_cols["source_sha256"].extend([src.sha256] * nw)
    documents = pl.DataFrame(doc_rows, schema=DOC_SCHEMA, strict=True)
    words = pl.DataFrame(word_cols, schema=WORD_SCHEMA, strict=True)
    tokens_df = pl.DataFrame(tok_cols, schema=TOKEN_SCHEMA, strict=True)
    notes = dict(
        documents=documents.height,
        tokens=tokens_df.height,
        words=words.height,
        guess_rows=len(guesses),
        rows_past_end=len(past_end),
        rows_past_end_detail=past_end,
        docs_without_guesses=sum(1 for d in docs if d not in max_idx),
        prefix_tokens=prefix_tokens,
        prefix_chars=int(documents["score_prefix_chars"].sum()),
    )
    return CorpusLoad(
        CORPUS,
        [
            ("raw.documents", documents, {"corpus": CORPUS}),
            ("raw.words", words, {"corpus": CORPUS}),
            ("raw.game_doc_tokens", tokens_df, {}),
        ],
        notes,
    )


def load(paths: Paths) -> CorpusLoad:
    docs: dict[int, tuple[Source, list[str]]] = {}
    for src in readers.sources(DOCUMENTS, paths):
        docs[doc_number(src.path)] = (src, parse_doc(src.data, src.path))
    acc = readers.source(GUESSES, paths)
    return build(docs, acc, parse_accuracy(acc.data, acc.path))


# --------------------------------------------------------------------------- the adapter's jobs


def jobs(_corpora: dict) -> list[Job]:
    """The LM game's texts job (its documents, words and the game's GPT-2 tokens)."""
    return [
        Job(CORPUS, paths_only(load), write_partitions, writes=("raw.documents", "raw.game_doc_tokens", "raw.words"))
    ]
