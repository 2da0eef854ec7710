"""Import GPT-3 davinci token log-probs on the Natural Stories (natural_stories/probs/all_stories_gpt3.csv).

The CSV (columns token, logprob, offset, model, time, id, story) holds, per story,
the OpenAI completions API echo of the whole story: each token's text, its
log-prob (natural log; empty for the first token, which the API does not score),
and its character offset in GPT-3's copy of the story.

Story numbering: `story` is 0-based; story s is Natural Stories item s + 1
(verified: the concatenated tokens of story s reproduce item s+1's words joined by
single spaces, character for character, for 9 of the 10 stories; story 1 = item 2
has the same length and one differing word, GPT-3's "peeked" where all_stories.tok
has "peaked"). So doc_id = str(story + 1).

Spans: offsets refer to GPT-3's text; they are mapped onto raw.documents' text for
natural_stories through a character alignment (difflib opcodes), then tiled
(start = previous end, last end = len(text)). `token` keeps GPT-3's token string,
`token_text` is the characters of our document text at the span (so it can differ
from `token` where the two texts differ). Written as model_key `gpt3-davinci`,
corpus `natural_stories`, source 'imported', with token_id, rank, entropy, top-k
and word-initial mass NULL; the first token of each story has NULL logprob.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.raw import now_utc
from predictabase.ingest.scoring import store
from predictabase.ingest.sources.catalog import by_path
from predictabase.ingest.sources.fetch import verified_path

CSV_PATH = "natural_stories/probs/all_stories_gpt3.csv"
MODEL_KEY = "gpt3-davinci"
CORPUS = "natural_stories"
COLUMNS = ["token", "logprob", "offset", "model", "time", "id", "story"]


def _read_csv(path: Path) -> dict[int, list[dict]]:
    stories: dict[int, list[dict]] = {}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or [c for c in COLUMNS if c not in reader.fieldnames]:
                raise IngestError(path, f"expected columns {COLUMNS}, found {reader.fieldnames}")
            for line, row in enumerate(reader, start=2):
                try:
                    story = int(row["story"])
                    offset = int(row["offset"])
                    lp = None if row["logprob"] == "" else float(row["logprob"])
                except (TypeError, ValueError) as exc:
                    raise IngestError(path, f"line {line}: bad story/offset/logprob ({exc})") from None
                if row["token"] is None:
                    raise IngestError(path, f"line {line}: missing token")
                if lp is not None and not (lp <= 0.0):
                    raise IngestError(path, f"line {line}: logprob {lp} is not a log-probability")
                stories.setdefault(story, []).append(
                    {"token": row["token"], "logprob": lp, "offset": offset, "model": row["model"]}
                )
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"not UTF-8 ({exc})") from None
    if sorted(stories) != list(range(10)):
        raise IngestError(path, f"expected stories 0..9, found {sorted(stories)}")
    for s, toks in stories.items():
        pos = 0
        for i, t in enumerate(toks):
            if t["offset"] != pos:
                raise IngestError(path, f"story {s} token {i}: offset {t['offset']} != {pos} (tokens out of order?)")
            pos += len(t["token"])
            if (t["logprob"] is None) != (i == 0):
                raise IngestError(path, f"story {s} token {i}: only the first token may lack a logprob")
    return stories


def _char_map(src: str, dst: str) -> list[int]:
    """For each position 0..len(src) in src, the corresponding position in dst."""
    m = [0] * (len(src) + 1)
    sm = difflib.SequenceMatcher(None, src, dst, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        for k in range(i1, i2 + 1):
            if op in ("equal",) or (op == "replace" and i2 - i1 == j2 - j1):
                m[k] = j1 + (k - i1)
            else:  # insert/delete/unequal replace: map the block's interior to its end in dst
                m[k] = j1 if k == i1 else j2
    m[len(src)] = len(dst)
    return m


def _documents(paths: Paths) -> tuple[dict[str, str], str]:
    if not paths.duckdb.exists():
        raise IngestError(paths.duckdb, "no warehouse yet; ingest natural_stories first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        rows = con.execute(
            "SELECT doc_id, text, corpus_version FROM raw.documents WHERE corpus = ?", [CORPUS]
        ).fetchall()
    except duckdb.Error as exc:
        raise IngestError(paths.duckdb, f"cannot read raw.documents ({exc}); ingest natural_stories first") from None
    finally:
        con.close()
    if not rows:
        raise IngestError(paths.duckdb, "raw.documents has no natural_stories documents; ingest them first")
    return {str(r[0]): r[1] for r in rows}, rows[0][2]


@dataclass
class Gpt3Import:
    """A validated import, ready to write (`write_gpt3`); `done` holds the run record when the
    same import is already complete."""

    run_dir: Path
    table: pa.Table | None = None
    record: store.RunRecord | None = None
    done: store.RunRecord | None = None


def prepare_gpt3(paths: Paths, documents: tuple[dict[str, str], str] | None = None) -> Gpt3Import:
    """Read and validate the upstream CSV against the natural_stories documents (`documents`:
    doc_id -> text and the corpus_version, when natural_stories is ingested in the same command;
    else raw.documents). Writes nothing."""
    sf = by_path(CSV_PATH)
    path = verified_path(sf, paths)
    stories = _read_csv(path)
    docs, corpus_version = documents if documents is not None else _documents(paths)
    run_id = hashlib.sha256(
        json.dumps({"model_key": MODEL_KEY, "source_sha256": sf.sha256, "corpus_version": corpus_version}).encode()
    ).hexdigest()[:16]
    rdir = store.run_dir(paths.token_scores, MODEL_KEY, CORPUS, run_id)
    done = store.read_run(rdir)
    if done is not None:
        return Gpt3Import(rdir, done=done)
    started = now_utc().isoformat()
    cols: dict[str, list] = {
        k: []
        for k in (
            "doc_id",
            "token_index",
            "token",
            "token_text",
            "char_start",
            "char_end",
            "logprob_nats",
            "context_tokens",
        )
    }
    differences = {}
    for s, toks in sorted(stories.items()):
        doc_id = str(s + 1)
        if doc_id not in docs:
            raise IngestError(path, f"story {s} maps to natural_stories doc {doc_id}, which raw.documents lacks")
        text = docs[doc_id]
        gtext = "".join(t["token"] for t in toks)
        if gtext != text:
            ratio = difflib.SequenceMatcher(None, gtext, text, autojunk=False).ratio()
            if ratio < 0.98:
                raise IngestError(
                    path,
                    f"story {s}: GPT-3 text does not match natural_stories doc {doc_id} "
                    f"(similarity {ratio:.3f}); wrong story mapping?",
                )
            differences[doc_id] = sum(a != b for a, b in zip(gtext, text)) + abs(len(gtext) - len(text))
        cmap = _char_map(gtext, text) if gtext != text else list(range(len(text) + 1))
        prev = 0
        for i, t in enumerate(toks):
            end = max(cmap[t["offset"] + len(t["token"])], prev)
            if i == len(toks) - 1:
                end = len(text)
            cols["doc_id"].append(doc_id)
            cols["token_index"].append(i)
            cols["token"].append(t["token"])
            cols["token_text"].append(text[prev:end])
            cols["char_start"].append(prev)
            cols["char_end"].append(end)
            cols["logprob_nats"].append(t["logprob"])
            cols["context_tokens"].append(i)
            prev = end
    n = len(cols["doc_id"])
    table = store.token_table(run_id, MODEL_KEY, CORPUS, cols)  # token ids and statistics: NULL
    models = sorted({t["model"] for toks in stories.values() for t in toks})
    record = store.RunRecord(
        run_id=run_id,
        model_key=MODEL_KEY,
        model_id=",".join(models),
        model_revision=sf.sha256,
        tokenizer="GPT-3 BPE (r50k_base), tokens as echoed by the OpenAI API",
        tokenizer_sha256=None,
        vocab_size=50257,
        dtype=None,
        device=None,
        bos_policy="none (API echo; first token unscored)",
        bos_token_id=None,
        bos_token=None,
        corpus=CORPUS,
        corpus_version=corpus_version,
        context_length=2048,
        stride=None,
        top_k=0,
        batch_tokens=None,
        limit=None,
        full=True,
        n_docs=len(stories),
        n_tokens=n,
        source="imported",
        started_at=started,
        finished_at=now_utc().isoformat(),
        package_versions={},
        source_path=CSV_PATH,
        source_sha256=sf.sha256,
        doc_id_mapping="doc_id = story + 1",
        text_differences_chars=differences,
    )
    return Gpt3Import(rdir, table, record)


def write_gpt3(prep: Gpt3Import) -> dict:
    """Write a prepared import as one complete run (part file, then `_run.json`)."""
    if prep.done is not None:
        return {**prep.done.to_json(), "status": "already complete"}
    store.restart_run(prep.run_dir)  # an interrupted import: start the (single-part) run over
    store.write_part(prep.run_dir, prep.table)
    prep.record.finished_at = now_utc().isoformat()
    return {**store.finish_run(prep.run_dir, prep.record), "status": "imported"}


def import_gpt3_natural_stories(paths: Paths) -> dict:
    """Import the upstream GPT-3 davinci token log-probabilities as a complete run (idempotent)."""
    return write_gpt3(prepare_gpt3(paths))
