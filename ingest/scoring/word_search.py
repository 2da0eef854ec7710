"""The exact best-first search for a model's most probable whole words after a context, shared by the top-1
game (`predictabase.ingest.scoring.top1_words`) and the cloze comparison
(`predictabase.ingest.scoring.cloze_responses`).

Word probability (Oh & Schuler 2024, eqs. 5-6, defined in `word_boundaries`: the whitespace-trailing definition
without its constant denominator): for a word w whose model tokens are t_1..t_n after the context c,

    p(w | c) = prod_i p(t_i | c, t_<i)  *  B(c, t_1..t_n),

B = the probability that a word boundary follows: the mass on word-initial tokens and
end-of-text (`TokenizerProfile.word_initial`). Dividing by B(c) (the boundary before the word,
the same for every candidate) gives Oh & Schuler's (2024) p_WT; the argmax does not change and the stored
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
enforces the window. The attention of these calls is computed segment by segment (`_segment_attention`): a
query only ever sees its own document window's slots, so the work on the slots the mask zeroes (the other
documents of a pack, the other questions' expansions) is skipped; the numbers are the dense call's to float32
rounding (the summation runs over fewer slots), and the predicted words the same.
"""

from __future__ import annotations

import contextvars
import heapq
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from predictabase.core.errors import OptionError, ScoringError
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.word_boundaries import log_boundary_mass


@contextmanager
def quiet_cache_argument() -> Iterator[None]:
    """`past_key_values=` (the KV-cache argument every transformers release of the supported range takes) without
    the newest releases' FutureWarning that it is being renamed `cache`, which users would otherwise see."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*past_key_values.* is deprecated", category=FutureWarning)
        yield


# --------------------------------------------------------------------------- attention within a segment

# Where a call's attention is block-sparse (every query attends to keys of its own segment only), the groups of
# (query rows, key slots) to compute; None: the model's own attention over every slot.
_SEGMENT_GROUPS: contextvars.ContextVar = contextvars.ContextVar("segment_groups", default=None)
_SEGMENT_ATTENTION = "predictabase_segments"


def _segment_attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' SDPA attention restricted, group by group, to the key slots a group's queries may see.
    The 4-D mask still decides within a group (causality, a node's path, a sliding window), so the result is
    the dense call's to float32 rounding (each softmax sums over fewer slots); what is skipped is the work on
    slots the mask zeroes (other segments of a pack, other questions' expansions), which grew with the pack and
    dominated the search's forward calls."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plan = _SEGMENT_GROUPS.get()
    if plan is None:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    import torch

    groups, masks = plan
    rep = query.shape[1] // key.shape[1]
    out = query.new_empty(query.shape[0], query.shape[2], query.shape[1], query.shape[3])
    for g, (rows, slots) in enumerate(groups):
        mask = masks.get((id(attention_mask), g))  # the layers share a call's mask (or its two kinds): cut once
        if mask is None and attention_mask is not None:
            mask = masks[id(attention_mask), g] = attention_mask[:, :, rows][:, :, :, slots]
        o = torch.nn.functional.scaled_dot_product_attention(
            query[:, :, rows],
            key[:, :, slots],
            value[:, :, slots],
            attn_mask=mask,
            scale=scaling,
            enable_gqa=rep > 1,
        )
        out[:, rows] = o.transpose(1, 2)
    return out, None


def _row_groups(allowed: np.ndarray, group_of_row: np.ndarray) -> list:
    """(query rows, key slots) per group of rows: the slots any of the group's rows may attend to, as slices
    where they are contiguous (views, no copy)."""
    import torch

    def index(ix: np.ndarray):
        if len(ix) and ix[-1] - ix[0] + 1 == len(ix):
            return slice(int(ix[0]), int(ix[-1]) + 1)
        return torch.from_numpy(ix)

    groups = []
    for g in np.unique(group_of_row):
        rows = np.flatnonzero(group_of_row == g)
        groups.append((index(rows), index(np.flatnonzero(allowed[rows].any(axis=0)))))
    return groups


@contextmanager
def _segments(model, groups: list) -> Iterator[None]:
    """Run the model's attention per group of `groups` [(query rows, key slots)] for the calls inside."""
    from transformers import AttentionInterface

    if _SEGMENT_ATTENTION not in AttentionInterface._global_mapping:
        AttentionInterface.register(_SEGMENT_ATTENTION, _segment_attention)
    configs = {
        id(c): c
        for c in (getattr(model, "config", None), getattr(getattr(model, "model", None), "config", None))
        if c is not None
    }
    before = {k: c._attn_implementation for k, c in configs.items()}
    token = _SEGMENT_GROUPS.set((groups, {}))
    try:
        for c in configs.values():
            c._attn_implementation = _SEGMENT_ATTENTION
        yield
    finally:
        for k, c in configs.items():
            c._attn_implementation = before[k]
        _SEGMENT_GROUPS.reset(token)


@dataclass(frozen=True)
class SearchSettings:
    max_expansions: int = 64  # per question: forward steps at most
    per_round: int = 8  # at most this many prefixes per question and round (1, 1, 2, 2, 4, ...)
    n_candidates: int = 1  # words proven and kept per question, most probable first (the search's k)
    n_first_tokens: int = 5  # most probable first tokens kept per question (free: from the prefix pass)
    batch_tokens: int = 2048  # new tokens per forward call
    pack_tokens: int = 2048  # document windows packed into one sequence (block-diagonal mask)

    def check(self) -> None:
        for name, value, lo, hi in (
            ("--max-expansions", self.max_expansions, 1, 100_000),
            ("--per-round", self.per_round, 1, 1024),
            ("--candidates", self.n_candidates, 1, 100),
            ("--first-tokens", self.n_first_tokens, 0, 100),
            ("--batch-tokens", self.batch_tokens, 1, 1 << 20),
            ("--pack-tokens", self.pack_tokens, 1, 1 << 20),
        ):
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
    word_at: dict[int, str] = field(default_factory=dict)  # node -> the word whose path ends there
    skipped: list[str] = field(default_factory=list)  # words without a clean token path

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
    token_index: int | None = None  # model token index of the true token (its context = tokens[:i])
    status: str = "ok"


@dataclass
class _State:
    """One question's best-first search."""

    q: Question
    ctx_off: int  # cache slot of its segment's BOS
    n_ctx: int  # slots of its context (BOS + real tokens)
    lp0: np.ndarray  # float64 log-probabilities at the question
    root_order: np.ndarray  # root nodes, most probable first, as far as the search can reach
    root_lp: np.ndarray  # their log-probabilities
    lnb_before: float
    root_total: float  # total probability of all roots
    next_root: int = 0
    root_expanded_mass: float = 0.0
    heap: list = field(default_factory=list)  # (-logP, node)
    node_lp: dict = field(default_factory=dict)  # node -> ln P(path)
    node_slot: dict = field(default_factory=dict)  # expanded node -> cache slot
    scored: list = field(default_factory=list)  # (logp, word, n_tokens)
    best: float = -math.inf  # ln p of the k-th best scored word (k = settings.n_candidates)
    top: list = field(default_factory=list)  # min-heap of the k best scores
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

    def __init__(
        self,
        model,
        profile: TokenizerProfile,
        trie: WordTrie,
        settings: SearchSettings,
        device: str = "cpu",
        context_length: int = 2048,
    ) -> None:
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

    def prefix_pass(
        self, segments: list[Segment]
    ) -> tuple[list[tuple[int, Question]], list[int], np.ndarray, object, list[int]]:
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
        with torch.inference_mode(), quiet_cache_argument(), _segments(self.model, _row_groups(allowed, sg)):
            out = self.model(
                input_ids=torch.tensor([tokens], device=self.device),
                position_ids=torch.from_numpy(pos)[None].to(self.device),
                attention_mask=self._masks(pos, allowed, pos),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=keep.to(self.device),
            )
        lps = _log_softmax(out.logits[0])
        del out, allowed
        return qs, offsets, lps, cache, kv_pos

    def predict_segments(self, segments: list[Segment]) -> list[dict]:
        qs, offsets, lps, cache, kv_pos = self.prefix_pass(segments)
        states: list[_State] = []
        for r, (g, q) in enumerate(qs):
            lp0 = lps[r]
            rl = lp0[self.root_tokens]
            order = self._root_order(rl)
            states.append(
                _State(
                    q=q,
                    ctx_off=offsets[g],
                    n_ctx=q.token_index + 1,
                    lp0=lp0,
                    root_order=self.root_nodes[order],
                    root_lp=rl[order],
                    lnb_before=log_boundary_mass(lp0, self.mask_word_initial),
                    root_total=float(np.exp(rl).sum()),
                )
            )
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
                self._expand(states, batch[start : start + self.settings.batch_tokens], cache, kv_pos)
            rnd += 1
        return [self._result(st) for st in states]

    def _root_order(self, rl: np.ndarray) -> np.ndarray:
        """The indices of the roots most probable first, as far as a question's search can reach: the
        `max_expansions + 1` most probable (and the first `n_first_tokens` stored), with every root tied with the
        last of them. The same order as a stable sort of every root (ties by index), for those; sorting all
        of the choice set's first tokens for each question cost more than the search itself."""
        reach = max(self.settings.max_expansions, self.settings.n_first_tokens) + 1
        if reach >= len(rl):
            return np.argsort(-rl, kind="stable")
        threshold = np.partition(rl, len(rl) - reach)[len(rl) - reach]
        head = np.flatnonzero(rl >= threshold)
        return head[np.argsort(-rl[head], kind="stable")]

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
            allowed[r, st.ctx_off : st.ctx_off + st.n_ctx] = True
            anc = trie.parent[node]
            while anc > 0:
                allowed[r, st.node_slot[anc]] = True
                anc = trie.parent[anc]
            allowed[r, n_old + r] = True
            st.node_slot[node] = n_old + r
        k_pos = np.concatenate([np.asarray(kv_pos, dtype=np.int64), new_pos])
        mask = self._masks(new_pos, allowed, k_pos)
        segment = np.fromiter((states[si].ctx_off for si, _ in batch), dtype=np.int64, count=m)
        with torch.inference_mode(), quiet_cache_argument(), _segments(self.model, _row_groups(allowed, segment)):
            out = self.model(
                input_ids=torch.from_numpy(tokens)[None].to(self.device),
                position_ids=torch.from_numpy(new_pos)[None].to(self.device),
                attention_mask=mask,
                past_key_values=cache,
                use_cache=True,
            )
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
                score = base + log_boundary_mass(lp, wi)
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
        scored = sorted(st.scored, key=lambda t: (-t[0], t[1]))[: self.settings.n_candidates]
        first = [int(n) for n in st.root_order[: self.settings.n_first_tokens]]
        return dict(
            doc_id=st.q.doc_id,
            position=st.q.position,
            true_char_start=st.q.char_start,
            status=st.q.status,
            context_tokens=st.n_ctx - 1,
            logprob_boundary_before_nats=st.lnb_before,
            candidate_words=[w for _, w, _ in scored],
            candidate_logprobs_nats=[s for s, _, _ in scored],
            candidate_token_counts=[n for _, _, n in scored],
            top_first_tokens=[self._text(self.trie.token[n]) for n in first],
            top_first_token_logprobs_nats=[float(x) for x in st.root_lp[: len(first)]],
            n_expanded=st.n_expanded,
            max_unexplored_bound=bound,
            unexplored_mass=mass,
        )

    # ---- documents

    def segments_of(self, text: str, questions: list[Question]) -> tuple[list[Segment], list[dict]]:
        """A document's windows with their questions (contexts are text[:char_start]), and the
        results of questions no model token boundary matches."""
        failed: list[dict] = []
        if not questions:
            return [], failed
        ((ids, spans),) = self.profile.encode([text])
        first_at: dict[int, int] = {}
        for k, (s, _) in enumerate(spans):
            first_at.setdefault(s, k)  # the context tokens[:k] end exactly at character s
        ok: list[Question] = []
        for q in questions:
            k = first_at.get(q.char_start)
            if k is None:
                failed.append(
                    dict(
                        doc_id=q.doc_id,
                        position=q.position,
                        true_char_start=q.char_start,
                        status="no_token_boundary",
                        context_tokens=None,
                        logprob_boundary_before_nats=None,
                        candidate_words=[],
                        candidate_logprobs_nats=[],
                        candidate_token_counts=[],
                        top_first_tokens=[],
                        top_first_token_logprobs_nats=[],
                        n_expanded=0,
                        max_unexplored_bound=None,
                        unexplored_mass=None,
                    )
                )
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
            segments.append(
                Segment(
                    list(ids[s:last]), [Question(q.doc_id, q.position, q.char_start, q.token_index - s) for q in qs]
                )
            )
        return segments, failed

    def plan_documents(self, docs: list[tuple[str, list[Question]]]) -> list[Pack | list[dict]]:
        """The work of `predict_documents`, in its order: packs of segments (up to `pack_tokens` slots),
        each one forward pass and one unit of work, and the results already known (questions no token
        boundary matches). The packs depend on the tokenizer and the settings only, so every engine
        forms the same ones."""
        plan: list[Pack | list[dict]] = []
        pack: list[Segment] = []
        size = 0
        for text, questions in docs:
            segments, failed = self.segments_of(text, questions)
            if failed:
                plan.append(failed)
            for seg in segments:
                if pack and size + len(seg.ids) + 1 > self.settings.pack_tokens:
                    plan.append(Pack(pack))
                    pack, size = [], 0
                pack.append(seg)
                size += len(seg.ids) + 1
        if pack:
            plan.append(Pack(pack))
        return plan

    def predict_documents(
        self, docs: list[tuple[str, list[Question]]], on_done: Callable[[int], None] | None = None
    ) -> list[dict]:
        """All questions of the documents, segments packed up to `pack_tokens` slots."""
        results: list[dict] = []
        for unit in self.plan_documents(docs):
            done = unit if isinstance(unit, list) else self.predict_segments(unit.segments)
            results.extend(done)
            if on_done:
                on_done(len(done))
        return results


@dataclass
class Pack:
    """Segments scored in one prefix pass (one result per question)."""

    segments: list[Segment]

    @property
    def slots(self) -> int:
        return sum(len(s.ids) + 1 for s in self.segments)


# --- the Ray engine (predictabase.ingest.scoring.distributed): the same packs, predicted by the model replicas --------


@dataclass(frozen=True)
class PredictorSpec:
    """How every replica builds the same predictor: `build(loaded, *args)` (a module-level function);
    built once per replica and kept under `key`."""

    key: str
    build: Callable
    args: tuple


def _replica_predictor(loaded, spec: PredictorSpec) -> WordPredictor:
    if spec.key not in loaded.cache:
        loaded.cache[spec.key] = spec.build(loaded, *spec.args)
    return loaded.cache[spec.key]


def _ray_plan(loaded, spec: PredictorSpec, docs) -> list:
    return _replica_predictor(loaded, spec).plan_documents(docs)


def _ray_pack(loaded, spec: PredictorSpec, pack: Pack) -> tuple[list[dict], int]:
    predictor = _replica_predictor(loaded, spec)
    before = getattr(predictor, "n_nodes", 0)
    results = predictor.predict_segments(pack.segments)
    return results, getattr(predictor, "n_nodes", 0) - before


def predict_documents_with(
    spec: PredictorSpec,
    lm,
    profile: TokenizerProfile,
    docs: list[tuple[str, list[Question]]],
    on_done: Callable[[int], None] | None = None,
    pool=None,
) -> tuple[list[dict], int]:
    """`WordPredictor.predict_documents` of the predictor `spec` builds: here, from the loaded model `lm`,
    or with the packs spread over the replicas of `pool` (`predictabase.ingest.scoring.distributed.RayPool`; `lm.model`
    is then None), the same results in the same order. Also the nodes scored (`ResponseScorer.n_nodes`; 0
    for a plain predictor)."""
    if pool is None:
        from predictabase.ingest.scoring.distributed import Loaded

        predictor = spec.build(Loaded(lm, profile, {}), *spec.args)
        return predictor.predict_documents(docs, on_done), getattr(predictor, "n_nodes", 0)
    ref = pool.ray.put(spec)
    plan = pool.call_one(_ray_plan, ref, docs)
    for unit in plan:
        if isinstance(unit, list) and on_done:
            on_done(len(unit))
    units = [(i, (ref, unit)) for i, unit in enumerate(plan) if isinstance(unit, Pack)]
    done: dict[int, list[dict]] = {}
    nodes = 0
    for i, (results, n) in pool.map_unordered(_ray_pack, units, size=lambda i: plan[i].slots):
        done[i], nodes = results, nodes + n
        if on_done:
            on_done(len(results))
    return [r for i, unit in enumerate(plan) for r in (unit if isinstance(unit, list) else done[i])], nodes
