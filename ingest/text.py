"""Words of a text with their character spans: how the corpora's texts are split into words (`whitespace_words`)
and joined from them (`join_with_spans`). Public: the dataset loaders, the scorer's diagnostics and the sentence
box all use it, so a word is the same span everywhere."""

from __future__ import annotations

import re

_SPACE_SPLIT = re.compile(r"(\s+)")


def whitespace_words(text: str) -> list[tuple[str, int, int]]:
    """Maximal runs of non-whitespace characters with their [start, end) spans."""
    out, pos = [], 0
    for k, piece in enumerate(_SPACE_SPLIT.split(text)):  # alternates word, space, word, ...
        if k % 2 == 0 and piece:
            out.append((piece, pos, pos + len(piece)))
        pos += len(piece)
    return out


def join_with_spans(words: list[str], sep: str = " ") -> tuple[str, list[tuple[int, int]]]:
    """The text of `words` joined by `sep`, and each word's [start, end) span in it."""
    spans, pos = [], 0
    for i, w in enumerate(words):
        if i:
            pos += len(sep)
        spans.append((pos, pos + len(w)))
        pos += len(w)
    return sep.join(words), spans
