"""The model side of the human-vs-model next-word comparison.

For every corpus position with human cloze data, the model's log-probability of each human
response WORD after the position's context, as Oh & Schuler's (2024) eqs. 5-6 need it:

    LW        = ln p(tokens of ' ' + response | context)   (sum of the token log-probabilities)
    ln B(c)   = ln (mass on word-initial tokens + end-of-text) before the word
    ln B(c,w) = the same after the word's last token

dbt computes p_LW = exp(LW) and p_WT = exp(LW + ln B(c,w) - ln B(c)) (Oh & Schuler 2024, eq. 6); nothing
here is a metric, only the three log-probabilities per (position, candidate).

Candidates (`candidate_kind`):
* `response`: UCL, every human response of the position's context (raw.cloze_responses) with a
  count > 0. The empty response (NULL, upstream `nan`) is not a word and upstream's unseen-word
  pseudo-response 'unk' (count 0 everywhere) is not a response: neither is scored.
* `modal_response`: Provo, the modal cloze response (raw.cloze_norms).
* `true_word`: Provo and UCL, the word the text has there, its leading and trailing punctuation
  removed (the cloze norms ignore punctuation: Provo's `cp` compares cleaned words).

Case: the norms are case-folded (every UCL response and Provo modal response is lower case). A
response at a sentence start (the context ends in . ! or ?, closing quotes or brackets allowed)
is scored with its first letter upper-cased, as a reader would see it ('the' -> 'The'). Nowhere
else is case changed. `scored_text` records what was scored (without the leading space).

Context: the document's text up to the end of the previous word (`raw.words.char_end`), i.e. the
sentence as printed, punctuation included (the cloze file's keys drop punctuation; they are only
keys). The word is ' ' + scored_text after it; the context must end at a model token boundary
(else status `no_token_boundary`).

Computation (`ResponseScorer`, a `WordPredictor` of ingest/scoring/top1_words.py in an "all
candidates" mode): positions whose context text is the same (UCL "He", "The", ...) are scored
once. A document (sentence / Provo text) goes through the model once (KV cache); every trie node
of every context's candidate paths is then appended to the cache under the tree-shaped 4-D mask
(a node attends to its context and to its path's earlier tokens), parents before children, so a
pack of documents costs one prefix pass plus (number of distinct candidate-path nodes /
`batch_tokens`) forward calls. The float64 log-softmax is taken over the full vocabulary for
every node.

Runs are stored like the top-1 runs: `<parquet>/cloze_model_scores/model=<key>/run=<id>/`
(`scores.parquet`, `_run.json` written last: a run is complete exactly when it exists; dbt reads
only complete, unlimited runs). The run id is a hash of the scorer version, the model's revision,
tokenizer, BOS, dtype and end-of-text ids, the inputs' checksum (every scored (position,
candidate) and context) and the settings that change results; re-running a complete run is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError, ScoringError, WarehouseError
from predictabase.core.fsutil import atomic_dir
from predictabase.ingest import corpus_table
from predictabase.ingest.raw import now_iso
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.word_boundaries import log_boundary_mass, log_normalizer_and_boundary
from predictabase.ingest.scoring.word_search import (
    PredictorSpec,
    Question,
    Segment,
    WordPredictor,
    WordTrie,
    predict_documents_with,
    word_token_ids,
)

SCORER_VERSION = 1
CORPORA = corpus_table.CLOZE
KINDS = ("response", "modal_response", "true_word")
UNSEEN = "unk"  # upstream's unseen-word pseudo-response (count 0); never scored
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("model_key", pa.string()),
        ("corpus", pa.string()),
        ("doc_id", pa.string()),
        ("word_index", pa.int32()),  # the predicted position (raw.words)
        ("candidate_kind", pa.string()),  # response | modal_response | true_word
        ("response", pa.string()),  # as in the human data (true_word: the corpus word)
        ("scored_text", pa.string()),  # the word scored, after one space (case / punctuation rule)
        ("status", pa.string()),  # ok | no_token_boundary | no_token_path
        ("context_chars", pa.int32()),  # the context is the document's text[:context_chars]
        ("context_tokens", pa.int32()),  # model tokens of context seen (BOS not counted)
        ("n_tokens", pa.int32()),  # model tokens of ' ' + scored_text
        ("logprob_tokens_nats", pa.float64()),  # LW = sum ln p(token | context, earlier tokens)
        ("logprob_boundary_before_nats", pa.float64()),  # ln B before the word
        ("logprob_boundary_after_nats", pa.float64()),  # ln B after its last token
    ]
)
RUN_FILE = "_run.json"
SCORES_FILE = "scores.parquet"
SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s*$")
EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


@dataclass(frozen=True)
class ClozeSettings:
    pack_tokens: int = 32  # document tokens per prefix pass (each pack's candidate nodes share its cache)
    batch_tokens: int = 1024  # candidate nodes per forward call

    def check(self) -> None:
        for name, value, lo, hi in (
            ("--pack-tokens", self.pack_tokens, 1, 1 << 20),
            ("--batch-tokens", self.batch_tokens, 1, 1 << 20),
        ):
            if not lo <= int(value) <= hi:
                raise OptionError(name, f"{value} is not allowed; an integer from {lo} to {hi}")


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Candidate:
    corpus: str
    doc_id: str
    word_index: int
    kind: str
    response: str


@dataclass
class ClozeInputs:
    texts: dict[tuple[str, str], str]  # (corpus, doc_id) -> text
    cuts: dict[tuple[str, str, int], int]  # position -> context end (chars)
    words: dict[tuple[str, str, int], str]  # position -> the corpus word
    candidates: list[Candidate]
    sources: list[dict] = field(default_factory=list)  # distinct (table, source_path, source_sha256)

    def checksum(self) -> str:
        h = hashlib.sha256()
        for c in self.candidates:
            pos = (c.corpus, c.doc_id, c.word_index)
            ctx = self.texts[pos[:2]][: self.cuts[pos]]
            h.update(json.dumps([*pos, c.kind, c.response, scored_text(c, ctx)]).encode() + b"\n")
            h.update(ctx.encode() + b"\x00")
        return h.hexdigest()


def scored_text(c: Candidate, context: str) -> str | None:
    """The word scored after one space (module docstring: case and punctuation rules); None if empty."""
    if c.kind == "true_word":
        word = EDGE_PUNCT.sub("", c.response)
        return word or None
    text = c.response.strip()
    if text and SENTENCE_END.search(context) and text[0].islower():
        text = text[0].upper() + text[1:]
    return text or None


def read_inputs(paths: Paths, limit: int | None = None) -> ClozeInputs:
    """The positions with cloze data and their candidates, from raw.cloze_responses (UCL),
    raw.cloze_norms (Provo), raw.words and raw.documents. `limit`: the first N documents per corpus."""
    if not paths.duckdb.exists():
        raise WarehouseError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        try:
            # the corpora with cloze norms, as declared (ingest/corpora.toml), bound as a list parameter
            mine = "corpus IN (SELECT unnest($corpora))"
            at = {"corpora": list(CORPORA)}
            texts = {
                (c, d): t
                for c, d, t in con.execute(
                    f"SELECT corpus, doc_id, text FROM raw.documents WHERE {mine}", at
                ).fetchall()
            }
            wrows = con.execute(
                f"""
                SELECT w.corpus, w.doc_id, w.word_index, w.word, p.char_end
                FROM raw.words w JOIN raw.words p
                  ON p.corpus = w.corpus AND p.doc_id = w.doc_id AND p.word_index = w.word_index - 1
                WHERE w.{mine}""",
                at,
            ).fetchall()
            resp = con.execute(
                f"""
                SELECT DISTINCT corpus, doc_id, word_index, response FROM raw.cloze_responses
                WHERE {mine} AND response IS NOT NULL AND response_count > 0
                  AND response <> '{UNSEEN}'""",
                at,
            ).fetchall()
            norms = con.execute(
                f"""
                SELECT DISTINCT corpus, doc_id, word_index, modal_response FROM raw.cloze_norms
                WHERE {mine} AND n_responses IS NOT NULL AND word_index IS NOT NULL""",
                at,
            ).fetchall()
            sources = [
                dict(table=t, source_path=p, source_sha256=s)
                for t, p, s in con.execute(
                    f"""
                SELECT DISTINCT 'cloze_responses', source_path, source_sha256 FROM raw.cloze_responses
                UNION SELECT DISTINCT 'cloze_norms', source_path, source_sha256 FROM raw.cloze_norms
                  WHERE {mine}
                UNION SELECT DISTINCT 'documents', source_path, source_sha256 FROM raw.documents
                  WHERE {mine} ORDER BY 1, 2, 3""",
                    at,
                ).fetchall()
            ]
        except duckdb.Error as exc:
            raise ScoringError(
                paths.duckdb,
                f"cannot read the cloze raw tables ({str(exc).splitlines()[0]}); run `predictabase ingest` first",
            ) from exc
    finally:
        con.close()
    if not resp or not norms:
        raise ScoringError(
            paths.duckdb,
            "the cloze data is not ingested (raw.cloze_responses, raw.cloze_norms); run `predictabase ingest` first",
        )
    cuts = {(c, d, int(i)): int(e) for c, d, i, _, e in wrows}
    words = {(c, d, int(i)): w for c, d, i, w, _ in wrows}
    cands: set[Candidate] = set()
    # a corpus with every response (UCL) has each response scored; one with norms only (Provo) its modal response
    with_responses = {c for c, *_ in resp}
    for c, d, i, r in resp:
        cands.add(Candidate(c, d, int(i), "response", r))
    for c, d, i, modal in norms:
        pos = (c, d, int(i))
        if pos not in cuts:  # the first word of a text has no context
            continue
        if modal is not None and c not in with_responses:
            cands.add(Candidate(c, d, int(i), "modal_response", modal))
        cands.add(Candidate(c, d, int(i), "true_word", words[pos]))
    # positions with responses get their true word too
    for c, d, i, _ in resp:
        if (c, d, int(i)) in cuts:
            cands.add(Candidate(c, d, int(i), "true_word", words[(c, d, int(i))]))
    missing = sorted({(c.corpus, c.doc_id, c.word_index) for c in cands} - set(cuts))
    if missing:
        raise ScoringError(
            paths.duckdb, f"{len(missing)} cloze positions have no preceding word in raw.words, e.g. {missing[:3]}"
        )
    if limit is not None:
        keep = set()
        for corpus in CORPORA:
            ids = sorted({c.doc_id for c in cands if c.corpus == corpus}, key=_doc_key)[:limit]
            keep |= {(corpus, d) for d in ids}
        cands = {c for c in cands if (c.corpus, c.doc_id) in keep}
    ordered = sorted(cands, key=lambda c: (c.corpus, _doc_key(c.doc_id), c.word_index, c.kind, c.response))
    return ClozeInputs(texts, cuts, words, ordered, sources)


def _doc_key(doc_id: str):
    return (0, int(doc_id), "") if doc_id.isdigit() else (1, 0, doc_id)


# --------------------------------------------------------------------------- scoring


@dataclass
class _Ctx:
    """One context's candidates: what `WordPredictor.forward_nodes` needs, and the results."""

    q: Question
    ctx_off: int
    n_ctx: int
    lnb_before: float
    nodes: list[int]  # trie nodes to append (all path prefixes), by depth
    need: set[int]  # the same, as a set
    words: list[int]  # the candidates' word nodes
    node_lp: dict = field(default_factory=dict)  # node -> LW of its path
    node_slot: dict = field(default_factory=dict)
    lnb_after: dict = field(default_factory=dict)  # word node -> ln B after it


class ResponseScorer(WordPredictor):
    """`WordPredictor` in an all-candidates mode: instead of a best-first search, every candidate
    word of every question is scored exactly. Questions are keyed by (doc_id, position); their
    candidate word nodes (in the shared trie) are `self.candidates[(doc_id, position)]`."""

    def __init__(
        self,
        model,
        profile: TokenizerProfile,
        trie: WordTrie,
        settings: ClozeSettings,
        candidates: dict[tuple[str, int], list[int]],
        device: str = "cpu",
        context_length: int = 2048,
    ):
        super().__init__(model, profile, trie, settings, device=device, context_length=context_length)
        self.candidates = candidates
        self.n_nodes = 0
        import torch

        self._wi = torch.from_numpy(profile.word_initial).to(device)

    def predict_segments(self, segments: list[Segment]) -> list[dict]:
        import torch

        trie = self.trie
        qs, offsets, lps, cache, kv_pos = self.prefix_pass(segments)
        states: list[_Ctx] = []
        for r, (g, q) in enumerate(qs):
            words = self.candidates.get((q.doc_id, q.position), [])
            need: set[int] = set()
            for w in words:
                n = w
                while n > 0 and n not in need:
                    need.add(n)
                    n = trie.parent[n]
            st = _Ctx(
                q=q,
                ctx_off=offsets[g],
                n_ctx=q.token_index + 1,
                lnb_before=log_boundary_mass(lps[r], self.mask_word_initial),
                nodes=sorted(need, key=lambda n: trie.depth[n]),
                need=need,
                words=words,
            )
            for n in st.nodes:
                if trie.depth[n] == 1:
                    st.node_lp[n] = float(lps[r][trie.token[n]])
            states.append(st)
        del lps
        batch = sorted(
            ((si, n) for si, st in enumerate(states) for n in st.nodes), key=lambda b: trie.depth[b[1]]
        )  # parents before children
        self.n_nodes += len(batch)
        for start in range(0, len(batch), self.settings.batch_tokens):
            chunk = batch[start : start + self.settings.batch_tokens]
            with torch.inference_mode():
                logits = self.forward_nodes(states, chunk, cache, kv_pos)
                self._score_chunk(states, chunk, logits if logits.dtype == torch.float64 else logits.float())
        return [self._scored(st) for st in states]

    def _score_chunk(self, states: list[_Ctx], chunk: list[tuple[int, int]], logits) -> None:
        """From the logits [len(chunk), vocab] (float32, or float64 for a float64 model; overwritten):
        each needed child's LW and ln B after each node (`word_boundaries.log_normalizer_and_boundary`: one
        in-place exp pass)."""
        import torch

        trie = self.trie
        rows, toks, kids = [], [], []
        for r, (si, node) in enumerate(chunk):
            st = states[si]
            for tok, child in trie.children[node].items():
                if child in st.need:
                    rows.append(r)
                    toks.append(tok)
                    kids.append((si, child, node))
        ri = torch.tensor(rows, dtype=torch.long)
        picked = logits[ri, torch.tensor(toks, dtype=torch.long)].double()
        log_z, ln_b = log_normalizer_and_boundary(logits, self._wi)
        for (si, child, parent), v in zip(kids, (picked - log_z[ri]).tolist()):
            states[si].node_lp[child] = states[si].node_lp[parent] + v
        for (si, node), v in zip(chunk, ln_b.tolist()):
            states[si].lnb_after[node] = v

    def _scored(self, st: _Ctx) -> dict:
        trie = self.trie
        return dict(
            doc_id=st.q.doc_id,
            position=st.q.position,
            status="ok",
            context_tokens=st.n_ctx - 1,
            lnb_before=st.lnb_before,
            scores={trie.word_at[w]: (st.node_lp[w], st.lnb_after[w], trie.depth[w]) for w in st.words},
        )


def _build_scorer(loaded, trie: WordTrie, settings: ClozeSettings, candidates: dict, context_length: int):
    """The response scorer of a loaded model (here, or on a replica of the Ray engine)."""
    return ResponseScorer(
        loaded.lm.model,
        loaded.profile,
        trie,
        settings,
        candidates,
        device=loaded.lm.device,
        context_length=context_length,
    )


def score_candidates(
    model,
    profile: TokenizerProfile,
    inputs: ClozeInputs,
    settings: ClozeSettings,
    device: str = "cpu",
    context_length: int = 2048,
    progress: Callable[[int, int], None] | None = None,
    pool=None,
) -> tuple[list[dict], dict]:
    """Every candidate of `inputs` scored; rows in SCHEMA's columns (without run_id / model_key) and
    counters. Positions with the same context text are scored once. `pool`: the Ray engine's replicas
    (`predictabase.ingest.scoring.distributed`; `model` is then None)."""
    texts = {}
    for c in inputs.candidates:
        pos = (c.corpus, c.doc_id, c.word_index)
        ctx = inputs.texts[pos[:2]][: inputs.cuts[pos]]
        texts[c] = (pos, ctx, scored_text(c, ctx))
    words = sorted({s for _, _, s in texts.values() if s})
    trie = WordTrie()
    node_of: dict[str, int] = {}
    no_path: set[str] = set()
    for w, ids in zip(words, word_token_ids(profile, [" " + w for w in words])):
        if not ids:
            no_path.add(w)
            continue
        trie.add(" " + w, ids)
    for node, w in trie.word_at.items():
        node_of[w[1:]] = node
    # one question per distinct context text: its first position (corpus, document order)
    rep: dict[str, tuple] = {}
    cands: dict[tuple[str, int], set[int]] = {}
    for _c, (pos, ctx, s) in texts.items():
        r = rep.setdefault(ctx, pos)
        key = (f"{r[0]}/{r[1]}", r[2])
        cands.setdefault(key, set())
        if s in node_of:
            cands[key].add(node_of[s])
    by_doc: dict[tuple[str, str], list[Question]] = {}
    for ctx, (corpus, doc, wi) in rep.items():
        by_doc.setdefault((corpus, doc), []).append(Question(f"{corpus}/{doc}", wi, len(ctx)))
    candidates = {k: sorted(v) for k, v in cands.items()}
    docs = [
        (inputs.texts[k], sorted(qs, key=lambda q: q.position))
        for k, qs in sorted(by_doc.items(), key=lambda kv: (kv[0][0], _doc_key(kv[0][1])))
    ]
    done = 0

    def on_done(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(done, len(rep))

    spec = PredictorSpec(uuid.uuid4().hex, _build_scorer, (trie, settings, candidates, context_length))
    results, n_nodes = predict_documents_with(
        spec, SimpleNamespace(model=model, device=device), profile, docs, on_done, pool
    )
    by_q = {(r["doc_id"], r["position"]): r for r in results}
    rows = []
    for c, (_pos, ctx, s) in texts.items():
        r = rep[ctx]
        res = by_q[(f"{r[0]}/{r[1]}", r[2])]
        row = dict(
            corpus=c.corpus,
            doc_id=c.doc_id,
            word_index=c.word_index,
            candidate_kind=c.kind,
            response=c.response,
            scored_text=s,
            context_chars=len(ctx),
            context_tokens=None,
            n_tokens=None,
            logprob_tokens_nats=None,
            logprob_boundary_before_nats=None,
            logprob_boundary_after_nats=None,
        )
        if res["status"] != "ok":
            row["status"] = res["status"]
        elif s is None or s in no_path:
            row.update(
                status="no_token_path",
                context_tokens=res["context_tokens"],
                logprob_boundary_before_nats=res["lnb_before"],
            )
        else:
            lw, after, n = res["scores"][" " + s]
            row.update(
                status="ok",
                context_tokens=res["context_tokens"],
                n_tokens=n,
                logprob_tokens_nats=lw,
                logprob_boundary_before_nats=res["lnb_before"],
                logprob_boundary_after_nats=after,
            )
        rows.append(row)
    stats = dict(
        n_candidates=len(rows),
        n_contexts=len(rep),
        n_positions=len({p for p, _, _ in texts.values()}),
        n_words=len(words),
        n_words_without_path=len(no_path),
        n_nodes=n_nodes,
        n_documents=len(docs),
    )
    return rows, stats


# --------------------------------------------------------------------------- runs


def scores_root(paths: Paths) -> Path:
    return paths.cloze_model_scores


def run_dir(paths: Paths, model_key: str, run_id: str) -> Path:
    return scores_root(paths) / f"model={model_key}" / f"run={run_id}"


def make_run_id(
    lm,
    profile: TokenizerProfile,
    inputs_sha: str,
    settings: ClozeSettings,
    context_length: int,
    limit: int | None = None,
) -> str:
    key = {
        "scorer_version": SCORER_VERSION,
        "model_revision": lm.model_revision,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "bos_token_id": profile.bos.token_id,
        "dtype": lm.dtype,
        "end_of_text_ids": sorted(int(i) for i in profile.end_of_text_ids),
        "inputs_sha256": inputs_sha,
        "context_length": context_length,
        "limit": limit,
    }
    # pack_tokens / batch_tokens change nothing but speed (tests/test_cloze_vs_model.py)
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def table_of(run_id: str, model_key: str, rows: list[dict]) -> pa.Table:
    cols = {name: [r[name] for r in rows] for name in SCHEMA.names if name not in ("run_id", "model_key")}
    n = len(rows)
    return pa.table({"run_id": [run_id] * n, "model_key": [model_key] * n, **cols}).cast(SCHEMA)


def score_cloze(
    paths: Paths,
    lm,
    profile: TokenizerProfile,
    settings: ClozeSettings,
    context_length: int,
    inputs: ClozeInputs,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    pool=None,
) -> dict:
    """Score every candidate for one loaded model and write the run; returns the run record. A
    complete run (its `_run.json`) is not redone."""
    settings.check()
    inputs_sha = inputs.checksum()
    run_id = make_run_id(lm, profile, inputs_sha, settings, context_length, limit)
    directory = run_dir(paths, lm.model_key, run_id)
    if (directory / RUN_FILE).exists():
        rec = json.loads((directory / RUN_FILE).read_text())
        rec["skipped"] = True
        return rec
    started, t0 = now_iso(), time.perf_counter()
    rows, stats = score_candidates(
        lm.model,
        profile,
        inputs,
        settings,
        device=lm.device,
        context_length=context_length,
        progress=progress,
        pool=pool,
    )
    run = dict(
        run_id=run_id,
        model_key=lm.model_key,
        model_id=lm.model_id,
        model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name,
        tokenizer_sha256=lm.tokenizer_sha256,
        dtype=lm.dtype,
        device=lm.device,
        bos_token_id=profile.bos.token_id,
        bos_token=profile.bos.token,
        end_of_text_ids=sorted(int(i) for i in profile.end_of_text_ids),
        scorer_version=SCORER_VERSION,
        inputs_sha256=inputs_sha,
        sources=inputs.sources,
        context_length=context_length,
        **asdict(settings),
        **stats,
        n_ok=sum(r["status"] == "ok" for r in rows),
        limit=limit,
        started_at=started,
        finished_at=now_iso(),
        seconds=round(time.perf_counter() - t0, 2),
    )
    with atomic_dir(directory) as tmp:
        pq.write_table(table_of(run_id, lm.model_key, rows), tmp / SCORES_FILE, compression="zstd")
        (tmp / RUN_FILE).write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
    return run


def run_cloze(
    paths: Paths,
    model_spec: str,
    settings: ClozeSettings = ClozeSettings(),
    device: str | None = None,
    dtype: str | None = None,
    limit: int | None = None,
    show_progress: bool = True,
    engine=None,
) -> dict:
    """`predictabase cloze`: load the model and score every human response word after its context.
    `engine`: None (this process) or the Ray engine's options (`predictabase.ingest.scoring.distributed.RayOptions`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    from predictabase.core.progress import progress_bar
    from predictabase.ingest.scoring.distributed import model_steps
    from predictabase.ingest.scoring.pipeline import ScoreSettings, effective_lengths

    settings.check()
    if limit is not None and limit < 1:
        raise OptionError("--limit", f"{limit} is not allowed; an integer >= 1 (leave it out for every document)")
    inputs = read_inputs(paths, limit)  # fail before loading a model
    with model_steps(model_spec, paths, device, dtype, engine) as (lm, profile, pool):
        ctx, _ = effective_lengths(lm, ScoreSettings())
        with progress_bar(
            TextColumn("cloze {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            show=show_progress,
            transient=False,
        ) as bar:
            task = bar.add_task(lm.model_key, total=None)
            return score_cloze(
                paths,
                lm,
                profile,
                settings,
                ctx,
                inputs,
                limit,
                progress=lambda d, t: bar.update(task, completed=d, total=t),
                pool=pool,
            )


# --- the `cloze` step (predictabase.ingest.scoring.steps): its code version and its runner ----------------------------


def code_version() -> list:
    """What of this code the `cloze` step's plan keys hold."""
    return [SCORER_VERSION]


def run_step(paths: Paths, entry, corpora: list[str | None], show_progress: bool = False, engine=None) -> list:
    """The `cloze` step of one models.toml entry (one run over every corpus with cloze norms)."""
    [corpus] = corpora
    run = run_cloze(
        paths, entry.name, device=entry.device, dtype=entry.dtype, show_progress=show_progress, engine=engine
    )
    return [step_run(paths, corpus, run)]


def step_run(paths: Paths, corpus: str | None, run: dict):
    """What `run_cloze` returned, as the step's finished task (`predictabase.ingest.scoring.steps.StepRun`)."""
    from predictabase.ingest.scoring.steps import StepRun

    return StepRun(
        corpus,
        run_dir(paths, run["model_key"], run["run_id"]),
        run["run_id"],
        "already complete" if run.get("skipped") else "scored",
    )
