"""Natural Stories (Futrell et al.): 10 stories from naturalstories_RTS/all_stories.tok.

The .tok file is one word a row (`word`, `zone`, `item`). A story's text is its words
joined by single spaces; doc_id = item ('1'..'10'), native_id = zone. This reproduces the
text that probs/all_stories_gpt3.csv rebuilds from its tokens/offsets character for
character in 9 of 10 stories; story 2 differs in exactly one character: word zone 749 is
"peaked" here and "peeked" in the GPT-3 file (same length, so all offsets still align).
"""

from __future__ import annotations

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
    to_int,
)
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
