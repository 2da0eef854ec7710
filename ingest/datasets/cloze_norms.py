"""Cloze norms: Provo (Luke & Christianson 2018) and UCL (de Varda et al. 2023), loaded and joined to raw.words.

Three jobs; no metric is computed here (cloze surprisal, entropy, smoothing of Provo's zero counts: dbt,
models/*/cloze/).

- `provo_cloze` (pangoling/data_provo_cloze.rda, cp1252) -> raw.cloze_norms, corpus provo: EVERY upstream row
  (2,730), joined to raw.words by (text_id -> doc_id, word_n -> native_id). Rows without norms are KEPT with
  NULL n_responses / probability (83 rows: the first word of each text, 57 rows as text 27 repeats it, and 26
  other words such as 'Rapa', '0.9', 'YouTube'): they are words of the corpus; dbt drops them (has_norms).
  The file repeats some (text_id, word_n): text 27 is listed twice, and text 18 word 3 has two different
  words ('the', 'evolution'); all are kept with their `upstream_row`, `upstream_id` (word_unique_id) and
  `word_matches` (the file's word equals the corpus word, letters and digits case-folded, as
  predictabase.ingest.datasets.provo aligns them); staging keeps one per word.
  `cp` is the raw share of the `total_response_count` responses equal to the word (smoothing 'none').
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
"""

from __future__ import annotations

import math
import re

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.datasets import provo, ucl
from predictabase.ingest.datasets._common import CLOZE_NORMS_SCHEMA, CorpusLoad, to_float, to_int
from predictabase.ingest.datasets.corpora import prepared_or_loaded
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

PROVO_SPEC = dataset("provo_cloze").file("cloze")
UCL_SPEC = dataset("ucl_cloze").file("ratings")
DIST_SPEC = dataset("ucl_cloze_distributions").file("distributions")
UCL_COLUMNS = [
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


def _words_by_doc(load: CorpusLoad) -> dict[str, list[tuple[int, str, str | None]]]:
    words = next(f for t, f, _ in load.tables if t == "raw.words")
    out: dict[str, list[tuple[int, str, str | None]]] = {}
    for doc_id, wi, w, nid in words.select("doc_id", "word_index", "word", "native_id").iter_rows():
        out.setdefault(doc_id, []).append((wi, w, nid))
    return out


def _num(v) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


# --------------------------------------------------------------------------- Provo


def build_provo(df, src: readers.Source, corpus: CorpusLoad) -> tuple[pl.DataFrame, dict]:
    words = {(d, nid): (wi, w) for d, ws in _words_by_doc(corpus).items() for wi, w, nid in ws if nid is not None}
    for col in ("total_response_count", "cp", "modal_response"):
        if col not in df.columns:
            raise IngestError(src.path, f"missing column {col!r}")
    rows, unjoined = [], []
    for k, r in enumerate(df.itertuples(index=False), start=1):
        tid, wn = _num(r.text_id), _num(r.word_n)
        if tid is None or wn is None or tid != int(tid) or wn != int(wn):
            raise IngestError(src.path, f"row {k} ({r.word_unique_id}): text_id / word_n {r.text_id!r} / {r.word_n!r}")
        doc_id, native_id = str(int(tid)), str(int(wn))
        hit = words.get((doc_id, native_id))
        if hit is None:
            unjoined.append(f"{r.word_unique_id} (text {doc_id} word {native_id})")
            continue
        n, cp = _num(r.total_response_count), _num(r.cp)
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
                corpus="provo",
                doc_id=doc_id,
                word_index=hit[0],
                native_id=native_id,
                word=hit[1],
                upstream_word=str(r.word),
                upstream_row=k,
                upstream_id=str(r.word_unique_id),
                word_matches=provo._key(str(r.word)) == provo._key(hit[1]),
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
    f = pl.DataFrame(rows, schema=NORMS_SCHEMA, strict=True)
    notes = dict(
        rows=f.height,
        texts=f["doc_id"].n_unique(),
        without_norms=int(f["cloze_probability_published"].null_count()),
        repeated_word_rows=f.height - f.select("doc_id", "word_index").n_unique(),
        word_mismatch=f.filter(~pl.col("word_matches"))["upstream_id"].to_list(),
    )
    return f, notes


def load_provo(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus = prepared_or_loaded(paths, prepared, provo.CORPUS)
    src = readers.source(PROVO_SPEC, paths)
    f, notes = build_provo(readers.rdata(src.local, src.path, PROVO_SPEC), src, corpus)
    return CorpusLoad("provo_cloze", [("raw.cloze_norms", f, {"corpus": "provo"})], notes)


# --------------------------------------------------------------------------- UCL norms


def _close(a: str, b: str) -> bool:
    x, y = float(a), float(b)
    return x == y or abs(x - y) <= 1e-12 * max(1.0, abs(x), abs(y))


def build_ucl(
    rows: list[dict[str, str]], src: readers.Source, measures: list[dict[str, str]], corpus: CorpusLoad
) -> tuple[pl.DataFrame, dict]:
    words = _words_by_doc(corpus)
    by_item = {}
    for m in measures:
        if m["item_id"] in by_item:
            raise IngestError(ucl.MEASURES, f"item_id {m['item_id']} appears twice")
        by_item[m["item_id"]] = m
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        m = by_item.get(r["item_id"])
        if m is None:
            raise IngestError(src.path, f"line {k}: item_id {r['item_id']} is not in {ucl.MEASURES}")
        if (
            r["sent_id"] != m["sent_id"]
            or r["sentence"] != m["item"].replace("'", "")
            or r["word"] != m["word"].replace("'", "")
        ):
            raise IngestError(
                src.path,
                f"line {k}: item {r['item_id']} ({r['sentence']!r} + {r['word']!r}, sentence "
                f"{r['sent_id']}) differs from {ucl.MEASURES} beyond apostrophes",
            )
        for col in UCL_COLUMNS[4:]:
            if not _close(r[col], m[col]):
                raise IngestError(src.path, f"line {k}: {col} {r[col]} differs from {ucl.MEASURES}'s {m[col]}")
        doc_id, wi = m["sent_id"], to_int(m["context_length"], ucl.MEASURES, "context_length")
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
                corpus="ucl",
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
    f = pl.DataFrame(out, schema=NORMS_SCHEMA, strict=True)
    return f, dict(
        rows=f.height,
        sentences=f["doc_id"].n_unique(),
        apostrophes_removed=sum(
            r["sentence"] != by_item[r["item_id"]]["item"] or r["word"] != by_item[r["item_id"]]["word"] for r in rows
        ),
    )


def _ucl_inputs(paths: Paths, prepared: dict | None) -> tuple[CorpusLoad, list[dict[str, str]]]:
    corpus = prepared_or_loaded(paths, prepared, ucl.CORPUS)
    msrc = readers.source(ucl.WORDS_SPEC, paths)
    return corpus, readers.delimited(
        msrc.data, msrc.path, ucl.WORDS_SPEC, columns=["item", "word", "sent_id", "context_length", "item_id"]
    )


def load_ucl(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus, measures = _ucl_inputs(paths, prepared)
    src = readers.source(UCL_SPEC, paths)
    f, notes = build_ucl(readers.delimited(src.data, src.path, UCL_SPEC, columns=UCL_COLUMNS), src, measures, corpus)
    return CorpusLoad("ucl_cloze", [("raw.cloze_norms", f, {"corpus": "ucl"})], notes)


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


def build_distributions(dist: object, src: readers.Source, corpus: CorpusLoad) -> tuple[pl.DataFrame, dict]:
    if not isinstance(dist, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in dist.items()):
        raise IngestError(src.path, "expected a dict of context string -> {response: probability}")
    positions: dict[str, list[tuple[str, int, str]]] = {}
    for doc_id, ws in _words_by_doc(corpus).items():
        for wi in range(1, len(ws)):
            ctx = " ".join(w for _, w, _ in ws[:wi])
            key = strip_punctuation(ctx)
            positions.setdefault(key, []).append((doc_id, wi, "exact" if key == ctx else "punctuation_removed"))
    unmapped = [c for c in dist if c not in positions]
    if unmapped:
        raise IngestError(src.path, f"{len(unmapped)} context(s) match no UCL position: {unmapped[:5]}")
    no_dist = [f"{d}:{wi}" for key, ps in positions.items() if key not in dist for d, wi, _ in ps]
    if no_dist:
        raise IngestError(src.path, f"{len(no_dist)} UCL position(s) have no distribution: {no_dist[:10]}")
    out = {k: [] for k in RESPONSES_SCHEMA}
    n_by_context, no_unseen = {}, []
    for ctx, d in dist.items():
        counts, n, v = laplace_counts(d, src.path, ctx)
        if counts.get(UNSEEN) != 0:
            no_unseen.append(ctx)
        n_by_context[ctx] = n
        for doc_id, wi, match in positions[ctx]:
            for resp, p in d.items():
                for key, val in (
                    ("corpus", "ucl"),
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
        raise IngestError(src.path, f"{len(no_unseen)} context(s) lack the zero-count {UNSEEN!r}: {no_unseen[:5]}")
    f = pl.DataFrame(out, schema=RESPONSES_SCHEMA, strict=True)
    ns = sorted(n_by_context.values())
    notes = dict(
        contexts=len(dist),
        pairs=sum(len(d) for d in dist.values()),
        rows=f.height,
        null_responses=sum(None in d for d in dist.values()),
        contexts_exact=sum(strip_punctuation(c) == c and any(m == "exact" for *_, m in positions[c]) for c in dist),
        positions=sum(len(ps) for c, ps in positions.items() if c in dist),
        positions_punctuation_removed=sum(m != "exact" for ps in positions.values() for *_, m in ps),
        n_responses_min=ns[0],
        n_responses_median=ns[len(ns) // 2],
        n_responses_max=ns[-1],
    )
    return f, notes


def load_distributions(paths: Paths, prepared: dict | None = None) -> CorpusLoad:
    corpus = prepared_or_loaded(paths, prepared, ucl.CORPUS)
    src = readers.source(DIST_SPEC, paths)
    f, notes = build_distributions(readers.python_literal(src.data, src.path, DIST_SPEC), src, corpus)
    return CorpusLoad("ucl_cloze_distributions", [("raw.cloze_responses", f, {"corpus": "ucl"})], notes)
