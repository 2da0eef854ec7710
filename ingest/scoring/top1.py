"""Word-level top-1 predictions on the top-1 game's questions (issue 9; paper 000 section 3).

The game asked for GPT-2 tokens. A model with another tokenizer (SmolLM2, Gemma, ...) cannot be
compared token by token, so on the questions whose true token is a whole word (the paper's
word-token subset: ' ' + letters, followed by a token starting with a space) we ask which *word*
the model finds most probable, among the words a player could have typed (the game's choice set:
the GPT-2 vocabulary entries ' ' + letters).

Word probability (paper 001, eqs. 5-6: the whitespace-trailing definition without its constant
denominator): for a word w whose model tokens are t_1..t_n after the context c,

    p(w | c) = prod_i p(t_i | c, t_<i)  *  B(c, t_1..t_n),

B = the probability that a word boundary follows: the mass on word-initial tokens and
end-of-text (`TokenizerProfile.word_initial`). Dividing by B(c) (the boundary before the word,
the same for every candidate) gives paper 001's p_WT; the argmax does not change and the stored
`logprob_boundary_before_nats` lets SQL normalise.

Search (exact, best-first). Every word's probability is at most the probability of any prefix of
its token path, so: expand the path prefix with the highest probability (one forward step gives
the boundary mass after it and its children's probabilities), score the words that end there,
and stop as soon as the best scored word is at least as probable as every unexpanded prefix. The
result is then provably the argmax over the choice set. A per-question budget caps the
expansions; `max_unexplored_bound` (the most probable unexpanded prefix) and `unexplored_mass`
(the total probability of all unexpanded prefixes) are stored, so SQL can tell where the
prediction is proven (`p(best) >= max_unexplored_bound`, and the stricter
`p(best) > unexplored_mass`).

Speed: a document's prefix goes through the model once (KV cache). Every expansion of every
question of the document then costs ONE new token: the new tokens of a round are appended to the
cache as one sequence with a tree-shaped 4-D attention mask (each attends to its question's
context and to its own path's earlier tokens, which earlier rounds left in the cache) and
explicit position ids. Models with sliding-window layers (Gemma 3) get a second mask that also
enforces the window.

Models whose tokenizer is the game's (GPT-2 BPE) do not go through here: dbt compares the
scorer's top-k tokens at the question exactly (`int_top1_model_predictions`).
"""
from __future__ import annotations

import hashlib
import heapq
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from predictabase.config import Paths
from predictabase.errors import OptionError, ScoringError, WarehouseError
from predictabase.fsutil import atomic_dir
from ingest.scoring.profile import TokenizerProfile

PREDICTOR_VERSION = 1
METHOD = "word"

SCHEMA = pa.schema([
    ("run_id", pa.string()),
    ("model_key", pa.string()),
    ("doc_id", pa.string()),
    ("position", pa.int32()),                      # the game's guessed_token_idx (1-based)
    ("true_char_start", pa.int32()),               # the context is the document's text[:true_char_start]
    ("status", pa.string()),                       # ok | no_token_boundary
    ("context_tokens", pa.int32()),                # model tokens of context seen (BOS not counted)
    ("logprob_boundary_before_nats", pa.float64()),  # ln B(c): mass on word-initial tokens + end-of-text
    ("candidate_words", pa.list_(pa.string())),    # most probable first, ' word' as the game writes it
    ("candidate_logprobs_nats", pa.list_(pa.float64())),  # ln p(w | c) = ln prod p(t_i) + ln B(after w)
    ("candidate_token_counts", pa.list_(pa.int32())),
    ("top_first_tokens", pa.list_(pa.string())),   # the most probable first pieces of choice-set words
    ("top_first_token_logprobs_nats", pa.list_(pa.float64())),  # their ln p (upper bounds on those words)
    ("n_expanded", pa.int32()),                    # forward steps (prefix nodes) this question cost
    ("max_unexplored_bound", pa.float64()),        # probability of the most probable unexpanded prefix
    ("unexplored_mass", pa.float64()),             # total probability of the unexpanded prefixes
])
RUN_FILE = "_run.json"
PREDICTIONS_FILE = "predictions.parquet"


@dataclass(frozen=True)
class Top1Settings:
    max_expansions: int = 64   # per question: forward steps at most
    per_round: int = 8         # at most this many prefixes per question and round (1, 1, 2, 2, 4, ...)
    n_candidates: int = 1      # words proven and kept per question, most probable first (the search's k)
    n_first_tokens: int = 5    # most probable first tokens kept per question (free: from the prefix pass)
    batch_tokens: int = 2048   # new tokens per forward call
    pack_tokens: int = 2048    # document windows packed into one sequence (block-diagonal mask)

    def check(self) -> None:
        for name, value, lo, hi in (("--max-expansions", self.max_expansions, 1, 100_000),
                                    ("--per-round", self.per_round, 1, 1024),
                                    ("--candidates", self.n_candidates, 1, 100),
                                    ("--first-tokens", self.n_first_tokens, 0, 100),
                                    ("--batch-tokens", self.batch_tokens, 1, 1 << 20),
                                    ("--pack-tokens", self.pack_tokens, 1, 1 << 20)):
            if not lo <= int(value) <= hi:
                raise OptionError(name, f"{value} is not allowed; an integer from {lo} to {hi}")


# --------------------------------------------------------------------------- the choice set as a trie

def is_word_token(token: str) -> bool:
    """The paper's word token: a space followed only by letters (str.isalpha = Unicode \\p{L})."""
    return len(token) >= 2 and token[0] == " " and token[1:].isalpha()


@dataclass
class WordTrie:
    """The choice-set words by their model token paths. Node 0 is the root (empty path)."""
    token: list[int] = field(default_factory=lambda: [-1])
    parent: list[int] = field(default_factory=lambda: [-1])
    depth: list[int] = field(default_factory=lambda: [0])
    children: list[dict[int, int]] = field(default_factory=lambda: [{}])
    word_at: dict[int, str] = field(default_factory=dict)   # node -> the word whose path ends there
    skipped: list[str] = field(default_factory=list)         # words without a clean token path

    def add(self, word: str, ids: list[int]) -> None:
        node = 0
        for t in ids:
            nxt = self.children[node].get(t)
            if nxt is None:
                nxt = len(self.token)
                self.token.append(t)
                self.parent.append(node)
                self.depth.append(self.depth[node] + 1)
                self.children.append({})
                self.children[node][t] = nxt
            node = nxt
        if node in self.word_at:  # two words with one path: impossible for a lossless tokenizer
            raise ScoringError("top1", f"words {self.word_at[node]!r} and {word!r} share a token path")
        self.word_at[node] = word

    @property
    def root_tokens(self) -> np.ndarray:
        return np.fromiter(self.children[0].keys(), dtype=np.int64)

    @property
    def root_nodes(self) -> np.ndarray:
        return np.fromiter(self.children[0].values(), dtype=np.int64)

    def max_depth(self) -> int:
        return max(self.depth)


def word_token_ids(profile: TokenizerProfile, words: list[str]) -> list[list[int] | None]:
    """Each word's model tokens as they come after a preceding word: `'.' + word` is tokenized and
    the tokens after the '.' kept (a tokenizer that adds a dummy prefix space to a text's start,
    such as Llama-2's SentencePiece, would otherwise give the word an extra '▁'). None where no
    token boundary falls between '.' and the word."""
    enc = profile.encode(["." + w for w in words])
    out: list[list[int] | None] = []
    for ids, spans in enc:
        cut = next((k for k, (s, _) in enumerate(spans) if s == 1), None)
        out.append(None if cut is None or cut == 0 else list(ids[cut:]))
    return out


def build_trie(profile: TokenizerProfile, words: list[str]) -> WordTrie:
    trie = WordTrie()
    for w, ids in zip(words, word_token_ids(profile, words)):
        if not ids:
            trie.skipped.append(w)
        else:
            trie.add(w, ids)
    return trie


# --------------------------------------------------------------------------- questions

@dataclass
class Question:
    doc_id: str
    position: int
    char_start: int
    token_index: int | None = None   # model token index of the true token (its context = tokens[:i])
    status: str = "ok"


@dataclass
class _State:
    """One question's best-first search."""
    q: Question
    ctx_off: int                     # cache slot of its segment's BOS
    n_ctx: int                       # slots of its context (BOS + real tokens)
    lp0: np.ndarray                  # float64 log-probabilities at the question
    root_order: np.ndarray           # root nodes, most probable first (lazily extended)
    root_lp: np.ndarray              # their log-probabilities
    lnb_before: float
    root_total: float                # total probability of all roots
    next_root: int = 0
    root_expanded_mass: float = 0.0
    heap: list = field(default_factory=list)      # (-logP, node)
    node_lp: dict = field(default_factory=dict)   # node -> ln P(path)
    node_slot: dict = field(default_factory=dict) # expanded node -> cache slot
    scored: list = field(default_factory=list)    # (logp, word, n_tokens)
    best: float = -math.inf          # ln p of the k-th best scored word (k = settings.n_candidates)
    top: list = field(default_factory=list)       # min-heap of the k best scores
    n_expanded: int = 0
    done: bool = False

    def next_bound(self) -> tuple[float, int, bool]:
        """(ln bound, node, is_root) of the most probable unexpanded prefix; (-inf, -1, False) if none."""
        h = -self.heap[0][0] if self.heap else -math.inf
        r = self.root_lp[self.next_root] if self.next_root < len(self.root_lp) else -math.inf
        if h == -math.inf and r == -math.inf:
            return -math.inf, -1, False
        if r >= h:
            return float(r), int(self.root_order[self.next_root]), True
        return float(h), int(self.heap[0][1]), False

    def pop(self, is_root: bool) -> None:
        if is_root:
            self.root_expanded_mass += math.exp(self.root_lp[self.next_root])
            self.next_root += 1
        else:
            heapq.heappop(self.heap)

    def unexplored(self) -> tuple[float, float]:
        bound = self.next_bound()[0]
        mass = max(self.root_total - self.root_expanded_mass, 0.0)
        mass += sum(math.exp(-negl) for negl, _ in self.heap)
        return (math.exp(bound) if bound > -math.inf else 0.0), mass


def _log_softmax(logits) -> np.ndarray:
    import torch
    if logits.dtype != torch.float64:  # a float64 model keeps its precision (the cloze scorer's exact test)
        logits = logits.float()
    return torch.log_softmax(logits, dim=-1).double().cpu().numpy()


def _logsumexp(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.exp(x - m).sum())) if m > -math.inf else -math.inf


@dataclass
class Segment:
    """A document window: its real tokens (the BOS is prepended when packed) and its questions,
    whose `token_index` is relative to the window."""
    ids: list[int]
    questions: list[Question]


class WordPredictor:
    """Best-first word search over a model; one instance per (model, choice set).

    Segments (document windows) are packed into one sequence of at most `pack_tokens` slots: a
    block-diagonal causal mask keeps them apart and positions restart at every segment's BOS, so
    a pack is one forward pass, and each expansion round of all its questions is one more.
    """

    def __init__(self, model, profile: TokenizerProfile, trie: WordTrie, settings: Top1Settings,
                 device: str = "cpu", context_length: int = 2048) -> None:
        self.model = model
        self.profile = profile
        self.trie = trie
        self.settings = settings
        self.device = device
        self.mask_word_initial = profile.word_initial
        self.root_tokens = trie.root_tokens
        self.root_nodes = trie.root_nodes
        cfg = getattr(model, "config", None)
        self.sliding_window = getattr(cfg, "sliding_window", None)
        self.layer_types = list(getattr(cfg, "layer_types", None) or [])
        self.sliding = bool(self.sliding_window) and "sliding_attention" in self.layer_types
        self.max_depth = trie.max_depth()
        self._texts: dict[int, str] = {}
        # a question's context plus its longest word path must fit the model's positions
        self.context_budget = max(1, context_length - 1 - self.max_depth)

    def _text(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = self.profile.tokenizer.decode([token_id])
        return text

    # ---- masks

    def _masks(self, q_pos: np.ndarray, allowed: np.ndarray, k_pos: np.ndarray):
        """Additive 4-D masks (1, 1, m, kv) from a boolean `allowed` [m, kv]; a dict for models
        with sliding-window layers (the window counted in positions)."""
        import torch
        dtype = next(self.model.parameters()).dtype
        neg = torch.finfo(dtype).min

        def additive(ok: np.ndarray):
            t = torch.zeros(ok.shape, dtype=dtype)
            t.masked_fill_(~torch.from_numpy(ok), neg)
            return t[None, None].to(self.device)

        full = additive(allowed)
        if not self.sliding:
            return full
        near = (q_pos[:, None] - k_pos[None, :]) < int(self.sliding_window)
        return {"full_attention": full, "sliding_attention": additive(allowed & near)}

    # ---- a pack of segments

    def prefix_pass(self, segments: list[Segment]) -> tuple[list[tuple[int, Question]], list[int], np.ndarray,
                                                              object, list[int]]:
        """One forward pass over the packed segments (BOS + tokens each, block-diagonal causal mask).
        Returns the questions as (segment index, question), each segment's cache slot of its BOS,
        the float64 log-probabilities at each question ([n questions, vocab], question order), the
        KV cache and the position id of every cache slot."""
        import torch
        from transformers import DynamicCache

        bos = self.profile.bos.token_id
        tokens: list[int] = []
        kv_pos: list[int] = []
        seg_of: list[int] = []
        offsets: list[int] = []
        for g, seg in enumerate(segments):
            offsets.append(len(tokens))
            tokens += [bos] + list(seg.ids)
            kv_pos += range(len(seg.ids) + 1)
            seg_of += [g] * (len(seg.ids) + 1)
        pos = np.asarray(kv_pos, dtype=np.int64)
        sg = np.asarray(seg_of, dtype=np.int64)
        n = len(tokens)
        idx = np.arange(n)
        allowed = (sg[:, None] == sg[None, :]) & (idx[None, :] <= idx[:, None])
        qs = [(g, q) for g, seg in enumerate(segments) for q in seg.questions]
        keep = torch.tensor([offsets[g] + q.token_index for g, q in qs], dtype=torch.long)
        cache = DynamicCache()
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([tokens], device=self.device),
                             position_ids=torch.from_numpy(pos)[None].to(self.device),
                             attention_mask=self._masks(pos, allowed, pos), past_key_values=cache,
                             use_cache=True, logits_to_keep=keep.to(self.device))
        lps = _log_softmax(out.logits[0])
        del out, allowed
        return qs, offsets, lps, cache, kv_pos

    def predict_segments(self, segments: list[Segment]) -> list[dict]:
        qs, offsets, lps, cache, kv_pos = self.prefix_pass(segments)
        states: list[_State] = []
        for r, (g, q) in enumerate(qs):
            lp0 = lps[r]
            rl = lp0[self.root_tokens]
            order = np.argsort(-rl, kind="stable")
            states.append(_State(q=q, ctx_off=offsets[g], n_ctx=q.token_index + 1, lp0=lp0,
                                 root_order=self.root_nodes[order], root_lp=rl[order],
                                 lnb_before=_logsumexp(lp0[self.mask_word_initial]),
                                 root_total=float(np.exp(rl).sum())))
        del lps
        budget = self.settings.max_expansions
        k = self.settings.n_candidates
        rnd = 0
        while True:
            # best-first: one prefix per question and round at first, more in later rounds (fewer calls)
            per_round = min(self.settings.per_round, 1 << (rnd // 2))
            batch: list[tuple[int, int]] = []  # (state index, node)
            for si, st in enumerate(states):
                if st.done:
                    continue
                picked = 0
                while picked < per_round and st.n_expanded + picked < budget:
                    lnb, node, is_root = st.next_bound()
                    if node < 0 or lnb < st.best or (lnb == st.best and len(st.top) == k):
                        break
                    st.pop(is_root)
                    if is_root:
                        st.node_lp[node] = float(st.lp0[self.trie.token[node]])
                    batch.append((si, node))
                    picked += 1
                if picked == 0:
                    st.done = True
            if not batch:
                break
            for start in range(0, len(batch), self.settings.batch_tokens):
                self._expand(states, batch[start:start + self.settings.batch_tokens], cache, kv_pos)
            rnd += 1
        return [self._result(st) for st in states]

    def _expand(self, states: list[_State], batch: list[tuple[int, int]], cache, kv_pos: list[int]) -> None:
        """One forward step for each (question, prefix) of the batch, as new cache slots."""
        lps = _log_softmax(self.forward_nodes(states, batch, cache, kv_pos))
        self._visit(states, batch, lps)

    def forward_nodes(self, states: list, batch: list[tuple[int, int]], cache, kv_pos: list[int]):
        """Append the last token of each (question, trie node) of the batch to the cache, attending to
        its question's context and to its path's earlier tokens (cached in earlier calls, or earlier
        in this batch: a node must come after its parent). Returns the logits [len(batch), vocab].
        A state needs `ctx_off`, `n_ctx` and `node_slot` (node -> cache slot, filled in here)."""
        import torch
        trie = self.trie
        m = len(batch)
        n_old = len(kv_pos)
        new_pos = np.empty(m, dtype=np.int64)
        tokens = np.empty(m, dtype=np.int64)
        allowed = np.zeros((m, n_old + m), dtype=bool)
        for r, (si, node) in enumerate(batch):
            st = states[si]
            tokens[r] = trie.token[node]
            new_pos[r] = st.n_ctx + trie.depth[node] - 1
            allowed[r, st.ctx_off:st.ctx_off + st.n_ctx] = True
            anc = trie.parent[node]
            while anc > 0:
                allowed[r, st.node_slot[anc]] = True
                anc = trie.parent[anc]
            allowed[r, n_old + r] = True
            st.node_slot[node] = n_old + r
        k_pos = np.concatenate([np.asarray(kv_pos, dtype=np.int64), new_pos])
        mask = self._masks(new_pos, allowed, k_pos)
        with torch.inference_mode():
            out = self.model(input_ids=torch.from_numpy(tokens)[None].to(self.device),
                             position_ids=torch.from_numpy(new_pos)[None].to(self.device),
                             attention_mask=mask, past_key_values=cache, use_cache=True)
        kv_pos.extend(int(p) for p in new_pos)
        return out.logits[0]

    def _visit(self, states: list[_State], batch: list[tuple[int, int]], lps: np.ndarray) -> None:
        """The search's bookkeeping after a forward step: score the words ending at the expanded
        nodes, push their children."""
        trie = self.trie
        wi = self.mask_word_initial
        for r, (si, node) in enumerate(batch):
            st = states[si]
            st.n_expanded += 1
            lp = lps[r]
            base = st.node_lp[node]
            word = trie.word_at.get(node)
            if word is not None:
                score = base + _logsumexp(lp[wi])
                st.scored.append((score, word, trie.depth[node]))
                heapq.heappush(st.top, score)
                if len(st.top) > self.settings.n_candidates:
                    heapq.heappop(st.top)
                if len(st.top) == self.settings.n_candidates:
                    st.best = st.top[0]
            for tok, child in trie.children[node].items():
                clp = base + float(lp[tok])
                st.node_lp[child] = clp
                heapq.heappush(st.heap, (-clp, child))

    def _result(self, st: _State) -> dict:
        bound, mass = st.unexplored()
        scored = sorted(st.scored, key=lambda t: (-t[0], t[1]))[:self.settings.n_candidates]
        first = [int(n) for n in st.root_order[:self.settings.n_first_tokens]]
        return dict(doc_id=st.q.doc_id, position=st.q.position, true_char_start=st.q.char_start,
                    status=st.q.status, context_tokens=st.n_ctx - 1, logprob_boundary_before_nats=st.lnb_before,
                    candidate_words=[w for _, w, _ in scored], candidate_logprobs_nats=[s for s, _, _ in scored],
                    candidate_token_counts=[n for _, _, n in scored],
                    top_first_tokens=[self._text(self.trie.token[n]) for n in first],
                    top_first_token_logprobs_nats=[float(x) for x in st.root_lp[:len(first)]],
                    n_expanded=st.n_expanded,
                    max_unexplored_bound=bound, unexplored_mass=mass)

    # ---- documents

    def segments_of(self, text: str, questions: list[Question]) -> tuple[list[Segment], list[dict]]:
        """A document's windows with their questions (contexts are text[:char_start]), and the
        results of questions no model token boundary matches."""
        failed: list[dict] = []
        if not questions:
            return [], failed
        (ids, spans), = self.profile.encode([text])
        first_at: dict[int, int] = {}
        for k, (s, _) in enumerate(spans):
            first_at.setdefault(s, k)  # the context tokens[:k] end exactly at character s
        ok: list[Question] = []
        for q in questions:
            k = first_at.get(q.char_start)
            if k is None:
                failed.append(dict(doc_id=q.doc_id, position=q.position, true_char_start=q.char_start,
                                   status="no_token_boundary", context_tokens=None,
                                   logprob_boundary_before_nats=None, candidate_words=[],
                                   candidate_logprobs_nats=[], candidate_token_counts=[], top_first_tokens=[],
                                   top_first_token_logprobs_nats=[], n_expanded=0,
                                   max_unexplored_bound=None, unexplored_mass=None))
            else:
                ok.append(Question(q.doc_id, q.position, q.char_start, k))
        # a question whose context exceeds the budget sees the last `budget` tokens or fewer,
        # from a multiple of half the budget (so questions share windows)
        budget = self.context_budget
        half = max(1, budget // 2)
        groups: dict[int, list[Question]] = {}
        for q in ok:
            s = 0 if q.token_index <= budget else half * math.ceil((q.token_index - budget) / half)
            groups.setdefault(s, []).append(q)
        segments = []
        for s, qs in sorted(groups.items()):
            last = max(q.token_index for q in qs)
            segments.append(Segment(list(ids[s:last]),
                                    [Question(q.doc_id, q.position, q.char_start, q.token_index - s) for q in qs]))
        return segments, failed

    def predict_documents(self, docs: list[tuple[str, list[Question]]],
                          on_done: Callable[[int], None] | None = None) -> list[dict]:
        """All questions of the documents, segments packed up to `pack_tokens` slots."""
        results: list[dict] = []
        pack: list[Segment] = []
        size = 0

        def flush():
            nonlocal pack, size
            if pack:
                results.extend(self.predict_segments(pack))
                if on_done:
                    on_done(sum(len(s.questions) for s in pack))
            pack, size = [], 0

        for text, questions in docs:
            segments, failed = self.segments_of(text, questions)
            results.extend(failed)
            if on_done and failed:
                on_done(len(failed))
            for seg in segments:
                if pack and size + len(seg.ids) + 1 > self.settings.pack_tokens:
                    flush()
                pack.append(seg)
                size += len(seg.ids) + 1
        flush()
        return results

# --------------------------------------------------------------------------- reading questions, writing runs

@dataclass
class Top1Inputs:
    docs: dict[str, str]                    # lm_game doc_id -> text
    questions: dict[str, list[Question]]    # doc_id -> its word-token questions
    game_vocab: list[str]                   # the game's vocabulary by GPT-2 id
    corpus_version: str
    choice_sha: str                         # checksum of the vocabulary file

    @property
    def words(self) -> list[str]:
        """The choice set: the vocabulary's word tokens (' ' + letters)."""
        return sorted({t for t in self.game_vocab if is_word_token(t)})


def read_inputs(paths: Paths) -> Top1Inputs:
    """The lm_game documents, the word-token questions, the game's vocabulary, the corpus version
    and the vocabulary's checksum, from the raw tables."""
    if not paths.duckdb.exists():
        raise WarehouseError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        try:
            docs = dict(con.execute("SELECT doc_id, text FROM raw.documents WHERE corpus = 'lm_game'").fetchall())
            version = con.execute("SELECT any_value(corpus_version) FROM raw.documents "
                                  "WHERE corpus = 'lm_game'").fetchone()[0]
            rows = con.execute("""
                SELECT DISTINCT g.doc_id, g.position, t.token, t.char_start, n.token
                FROM raw.top1_guesses g
                JOIN raw.game_doc_tokens t ON t.doc_id = g.doc_id AND t.token_index = g.position - 1
                LEFT JOIN raw.game_doc_tokens n ON n.doc_id = g.doc_id AND n.token_index = g.position
                ORDER BY 1, 2""").fetchall()
            vocab = con.execute("SELECT token, source_sha256 FROM raw.game_vocabulary ORDER BY token_id").fetchall()
        except duckdb.Error as exc:
            raise ScoringError(paths.duckdb, f"cannot read the top-1 game's raw tables ({str(exc).splitlines()[0]}); "
                                             "run `predictabase ingest` first")
    finally:
        con.close()
    if not docs or not rows or not vocab:
        raise ScoringError(paths.duckdb, "the top-1 game is not ingested (lm_game documents, raw.top1_guesses, "
                                         "raw.game_vocabulary); run `predictabase ingest` first")
    questions: dict[str, list[Question]] = {}
    for doc_id, pos, tok, cs, nxt in rows:
        if is_word_token(tok) and nxt is not None and nxt.startswith(" "):
            questions.setdefault(doc_id, []).append(Question(doc_id, int(pos), int(cs)))
    return Top1Inputs(docs, questions, [t for t, _ in vocab], str(version), vocab[0][1])


def tokenizer_is_games(profile: TokenizerProfile, game_vocab: list[str]) -> bool:
    """True when the model's ids decode to the game's vocabulary (GPT-2 BPE): dbt then compares the
    scorer's top-k tokens exactly. The game's file decodes ids with an old space clean-up (' .' reads
    '.': 23 of 50,257 ids), so 99% of the ids must agree, not all."""
    tok = profile.tokenizer
    if len(tok) != len(game_vocab):
        return False
    same = sum(tok.decode([i]) == game_vocab[i] for i in range(len(game_vocab)))
    return same >= 0.99 * len(game_vocab)


def make_run_id(lm, profile: TokenizerProfile, corpus_version: str, choice_sha: str, settings: Top1Settings,
                context_length: int, limit: int | None = None) -> str:
    key = {"predictor_version": PREDICTOR_VERSION, "model_revision": lm.model_revision,
           "tokenizer_sha256": lm.tokenizer_sha256, "bos_token_id": profile.bos.token_id, "dtype": lm.dtype,
           "end_of_text_ids": sorted(profile.end_of_text_ids), "corpus_version": corpus_version,
           "choice_set_sha256": choice_sha, "context_length": context_length, "limit": limit, **asdict(settings)}
    key.pop("batch_tokens")  # batching changes nothing but speed (checked by tests)
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def run_dir(paths: Paths, model_key: str, run_id: str) -> Path:
    return paths.top1_predictions / f"model={model_key}" / f"run={run_id}"


def table_of(run_id: str, model_key: str, results: list[dict]) -> pa.Table:
    cols = {name: [r[name] for r in results] for name in SCHEMA.names if name not in ("run_id", "model_key")}
    n = len(results)
    return pa.table({"run_id": [run_id] * n, "model_key": [model_key] * n, **cols}).cast(SCHEMA)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def predict_top1(paths: Paths, lm, profile: TokenizerProfile, settings: Top1Settings, context_length: int,
                 progress: Callable[[str, int, int], None] | None = None, limit: int | None = None,
                 inputs: Top1Inputs | None = None) -> dict:
    """Predict every word-token question for one loaded model; returns the run record.
    `inputs`: what `read_inputs` returns (read here when not given).

    A complete run (its `_run.json`) is not redone; a new run replaces nothing else.
    """
    settings.check()
    inputs = inputs or read_inputs(paths)
    docs, questions, words = inputs.docs, inputs.questions, inputs.words
    version, choice_sha = inputs.corpus_version, inputs.choice_sha
    run = {"method": METHOD}
    run_id = make_run_id(lm, profile, version, choice_sha, settings, context_length, limit)
    directory = run_dir(paths, lm.model_key, run_id)
    if (directory / RUN_FILE).exists():
        rec = json.loads((directory / RUN_FILE).read_text())
        rec["skipped"] = True
        return rec
    trie = build_trie(profile, words)
    predictor = WordPredictor(lm.model, profile, trie, settings, device=lm.device, context_length=context_length)
    doc_ids = sorted(questions, key=lambda d: int(d) if d.isdigit() else d)
    if limit is not None:
        doc_ids = doc_ids[:limit]
    n_q = sum(len(questions[d]) for d in doc_ids)
    started, t0 = now(), time.perf_counter()
    done = 0

    def on_done(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(lm.model_key, done, n_q)

    results = predictor.predict_documents([(docs[d], questions[d]) for d in doc_ids], on_done)
    table = table_of(run_id, lm.model_key, results)
    run.update(run_id=run_id, model_key=lm.model_key, model_id=lm.model_id, model_revision=lm.model_revision,
               tokenizer=lm.tokenizer_name, tokenizer_sha256=lm.tokenizer_sha256, dtype=lm.dtype, device=lm.device,
               bos_token_id=profile.bos.token_id, bos_token=profile.bos.token,
               end_of_text_ids=sorted(int(i) for i in profile.end_of_text_ids),
               corpus="lm_game", corpus_version=version, choice_set_sha256=choice_sha,
               n_choice_words=len(words), n_choice_words_without_path=len(trie.skipped),
               context_length=context_length, predictor_version=PREDICTOR_VERSION, **asdict(settings),
               n_docs=len(doc_ids), n_questions=n_q, n_expanded=int(sum(r["n_expanded"] for r in results)),
               limit=limit, started_at=started, finished_at=now(), seconds=round(time.perf_counter() - t0, 2))
    with atomic_dir(directory) as tmp:
        pq.write_table(table, tmp / PREDICTIONS_FILE, compression="zstd")
        (tmp / RUN_FILE).write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
    return run


def run_top1(paths: Paths, model_spec: str, settings: Top1Settings, device: str | None = None,
             dtype: str | None = None, limit: int | None = None, show_progress: bool = True) -> dict:
    """`predictabase top1`: load the model; word-level predictions unless its tokenizer is the
    game's (then dbt compares the scorer's top-k tokens exactly and nothing is written here)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ingest.scoring.models import load_model
    from ingest.scoring.pipeline import effective_lengths, ScoreSettings

    settings.check()
    if limit is not None and limit < 1:
        raise OptionError("--limit", f"{limit} is not allowed; an integer >= 1 (leave it out for every document)")
    inputs = read_inputs(paths)  # fail before loading a model
    lm = load_model(model_spec, paths, device, dtype)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, model_spec)
    if tokenizer_is_games(profile, inputs.game_vocab):
        return {"model_key": lm.model_key, "method": "exact_token", "skipped": True,
                "note": "the model's tokenizer is the game's: dbt compares the scorer's top-k tokens exactly "
                        "(score lm_game with this model)"}
    ctx, _ = effective_lengths(lm, ScoreSettings())
    if not show_progress:
        return predict_top1(paths, lm, profile, settings, ctx, limit=limit, inputs=inputs)
    with Progress(TextColumn("top-1 {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn()) as bar:
        task = bar.add_task(lm.model_key, total=None)

        def progress(_key: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return predict_top1(paths, lm, profile, settings, ctx, progress=progress, limit=limit, inputs=inputs)
