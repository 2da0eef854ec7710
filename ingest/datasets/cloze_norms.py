"""Cloze norms: the raw tables' schemas and what every adapter's cloze loader shares.

- `raw.cloze_norms`: one row per word with norms (Provo's: ingest/datasets/provo.py; UCL's: ingest/datasets/ucl.py;
  a user's corpus's: user_corpus.py), each corpus its own partition.
- `raw.cloze_responses`: every response of a context, where the norms keep them (UCL's), with `laplace_counts`
  recovering exact counts from Laplace-smoothed probabilities.

No metric is computed here (cloze surprisal, entropy, smoothing of zero counts: dbt, models/*/cloze/).
"""

from __future__ import annotations

import math
import re

import polars as pl

from predictabase.core.errors import IngestError
from predictabase.ingest.datasets._common import CLOZE_NORMS_SCHEMA, CorpusLoad
from predictabase.ingest.sources.definitions import dataset

PROVO_SPEC = dataset("provo_cloze").file("cloze")
UNSEEN = "unk"  # upstream's pseudo-response for unseen words (count 0 in every context)

NORMS_SCHEMA = CLOZE_NORMS_SCHEMA  # raw.cloze_norms (ingest/datasets/_common.py: user corpora write it too)
RESPONSES_SCHEMA = {
    "corpus": pl.String,
    "doc_id": pl.String,
    "word_index": pl.Int32,
    "context": pl.String,
    "context_match": pl.String,
    "response": pl.String,
    "probability_laplace": pl.Float64,
    "response_count": pl.Int32,
    "n_responses_context": pl.Int32,
    "n_types_context": pl.Int32,
    "source_path": pl.String,
    "source_sha256": pl.String,
}


def strip_punctuation(text: str) -> str:
    """The distribution file's context key for a context: letters, digits, '_' and whitespace kept."""
    return re.sub(r"[^\w\s]", "", text)


def words_by_doc(load: CorpusLoad) -> dict[str, list[tuple[int, str, str | None]]]:
    words = next(f for t, f, _ in load.tables if t == "raw.words")
    out: dict[str, list[tuple[int, str, str | None]]] = {}
    for doc_id, wi, w, nid in words.select("doc_id", "word_index", "word", "native_id").iter_rows():
        out.setdefault(doc_id, []).append((wi, w, nid))
    return out


def optional_number(v) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


# --------------------------------------------------------------------------- Provo


# --------------------------------------------------------------------------- UCL norms


# --------------------------------------------------------------------------- UCL distributions


def laplace_counts(dist: dict, name: str, context: str) -> tuple[dict, int, int]:
    """{response: count}, N, V from Laplace probabilities p = (c+1)/(N+V); an IngestError if not exact."""
    if not dist or not all(isinstance(p, float) and 0 < p < 1 for p in dist.values()):
        raise IngestError(name, f"context {context!r}: probabilities must be floats in (0, 1)")
    total = 1 / min(dist.values())
    n_plus_v = round(total)
    if abs(total - n_plus_v) > 1e-6 * n_plus_v:
        raise IngestError(name, f"context {context!r}: 1 / min p = {total} is not an integer (not Laplace)")
    counts = {}
    for resp, p in dist.items():
        c = p * n_plus_v - 1
        if abs(c - round(c)) > 1e-6 or round(c) < 0:
            raise IngestError(name, f"context {context!r}: p({resp!r}) = {p} is not (c+1)/{n_plus_v}")
        counts[resp] = round(c)
    n, v = sum(counts.values()), len(counts)
    if n + v != n_plus_v:
        raise IngestError(name, f"context {context!r}: N {n} + V {v} != 1 / min p = {n_plus_v}")
    if abs(sum(dist.values()) - 1) > 1e-9:
        raise IngestError(name, f"context {context!r}: probabilities sum to {sum(dist.values())}")
    return counts, n, v
