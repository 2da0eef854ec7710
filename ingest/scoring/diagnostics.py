"""Word probability sums on a model whose vocabulary can be enumerated (Oh & Schuler 2024, Theorems 1 and 2).

Oh & Schuler (2024) prove that leading-whitespace (LW) word probabilities, the product of
a word's token probabilities, can sum to more than 1 over all words in a context (Theorem 1), and that
whitespace-trailing (WT) probabilities, eq. 5-6, sum to 1 (Theorem 2). This module makes the second a
check of this project's own code: a tiny causal LM is scored by the project's `Scorer` into token rows
in the token-store schema, and the word probabilities and their sums come from the dbt macro
`word_surprisal_sql` and the mart `mart_word_probability_sums` (SQL). Nothing here computes a
metric; the tests compare the SQL with an independent numpy computation from the bigram table.

The model. A bigram LM over a 5-token vocabulary (`VOCAB`): `<|endoftext|>` (the BOS every window
starts with and the end-of-text, as in GPT-2 and SmolLM2), the word-initial tokens " a", " b", and
the continuation tokens "a", "b"; the logits after token t are ln BIGRAM[t, :] (float32). Two
backends compute it (`bigram_model`): a real `transformers` LlamaForCausalLM whose weights are set by
hand (attention output and MLP down projections zero, so the residual stream is the token embedding;
one-hot embeddings; the final RMSNorm weight undoes the norm's scale; the log table in the LM head),
and a plain torch module with the same embedding and head. The warehouse uses the plain one (the
ingest job `word_probability_sums`, ingest/datasets/word_probability_sums.py, writes its rows to raw
tables that dbt reads); the tests check that both give the same token rows through the Scorer. Every
token is word-initial, end-of-text or a continuation token (no other
special token), so the probability of continuing a word is exactly 1 - B, B = the mass on
word-initial tokens plus end-of-text.

The enumeration. A context c is a short text (`CONTEXTS`); its candidates are every word w of 1 to
`MAX_WORD_TOKENS` tokens (a word-initial token, then continuation tokens), and each enumerated text
is c followed by w, so w is the text's last word and the boundary after it is the end of the text:
the macro's after-term is B after w, exactly as eq. 5 needs. Over "the next word, or the end of the
text" the WT probabilities are a complete distribution:

    sum over all words w of p_WT(w | c) + p(end-of-text | c) / B(c) = 1.

Words are infinitely many; the words of more than L tokens are accounted for exactly by the mass of
the length-L words that go on: R_L = sum over words w of L tokens of p_LW(w | c) (1 - B(after w)) / B(c)
(with S_n = sum over the n-token word prefixes q of p(q | c) / B(c), the words of exactly n tokens
take sum p(q | c) B(after q) / B(c) = S_n - R_n; S_1 = 1 - p(eot | c) / B(c) and S_{n+1} = R_n,
because every token outside B continues the word). Hence, for every L,

    sum_{words of <= L tokens} p_WT(w | c) + p(eot | c) / B(c) + R_L = 1.

p(eot | c) is read from the scorer's own distribution at c: the first candidate token's top-k list,
with top_k = the vocabulary size, so every token is in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np
import pyarrow as pa

RUN_ID = "word-probability-sums:bigram-v1"
MODEL_KEY = "bigram-diagnostic"
CORPUS = "probability_sums"
END_OF_TEXT = "<|endoftext|>"

# id -> vocabulary string; the string is also the token's text (the scored characters)
VOCAB = (END_OF_TEXT, " a", " b", "a", "b")
EOT_ID = 0
WORD_INITIAL_IDS = (1, 2)
CONTINUATION_IDS = (3, 4)

# P[prev, next]: the probability of the next token after `prev` (rows sum to 1; row 0 after BOS).
#            eot    " a"   " b"   "a"    "b"
BIGRAM = np.array(
    [
        [0.02, 0.03, 0.03, 0.52, 0.40],  # after BOS (<|endoftext|>): a text starts without whitespace
        [0.01, 0.02, 0.02, 0.55, 0.40],  # after " a": a word that has just begun goes on (B = 0.05)
        [0.02, 0.04, 0.04, 0.50, 0.40],  # after " b": the same (B = 0.10)
        [0.10, 0.03, 0.02, 0.55, 0.30],  # after "a": mostly goes on; if not, the text mostly ends (B = 0.15)
        [0.30, 0.35, 0.25, 0.05, 0.05],  # after "b": a word mostly ends here (B = 0.90)
    ],
    dtype=np.float64,
)

MAX_POSITIONS = 64
MAX_WORD_TOKENS = 8  # candidates of 1..8 tokens: 2 * (2^8 - 1) = 510 words per context


@dataclass(frozen=True)
class Context:
    key: str
    tokens: tuple[int, ...]
    note: str

    @property
    def text(self) -> str:
        return "".join(VOCAB[t] for t in self.tokens)


CONTEXTS = (
    Context(
        "word_end",
        (3, 4),
        "ends where a word most likely ends (after 'b', B = 0.90) and new words run long: "
        "the LW sum exceeds 1 (Theorem 1)",
    ),
    Context(
        "mid_word",
        (3, 4, 1),
        "ends inside a word (after ' a', B = 0.05): WT divides by the small B; the LW sum stays below 1",
    ),
    Context(
        "text_end",
        (3, 4, 2, 3),
        "ends where a boundary is unlikely (after 'a', B = 0.15) but, if one comes, "
        "it is mostly the end of the text (p(eot)/B = 2/3)",
    ),
)


def candidate_words(max_tokens: int = MAX_WORD_TOKENS) -> list[tuple[int, ...]]:
    """Every word of 1..max_tokens tokens: a word-initial token, then continuation tokens."""
    out = []
    for n in range(1, max_tokens + 1):
        for first in WORD_INITIAL_IDS:
            for rest in product(CONTINUATION_IDS, repeat=n - 1):
                out.append((first, *rest))
    return out


@dataclass(frozen=True)
class EnumeratedText:
    doc_id: str
    context: Context
    ids: tuple[int, ...]

    @property
    def text(self) -> str:
        return "".join(VOCAB[t] for t in self.ids)

    @property
    def spans(self) -> list[tuple[int, int]]:
        out, pos = [], 0
        for t in self.ids:
            out.append((pos, pos + len(VOCAB[t])))
            pos += len(VOCAB[t])
        return out


def enumerate_texts(contexts=CONTEXTS, max_tokens: int = MAX_WORD_TOKENS) -> list[EnumeratedText]:
    """Each context followed by each candidate word (the candidate is the text's last word)."""
    out = []
    for c in contexts:
        for w in candidate_words(max_tokens):
            word = "".join(VOCAB[t] for t in w).strip()
            out.append(EnumeratedText(f"{c.key}/{word}", c, c.tokens + w))
    return out


# --- the model --------------------------------------------------------------------------------------


def _head_weights(table: np.ndarray, d: int):
    """[V, d] LM-head weights: row v holds ln table[:, v] on the first V dimensions (one-hot hidden states)."""
    import torch

    head = torch.zeros(table.shape[0], d)
    head[:, : table.shape[0]] = torch.tensor(np.log(table).T, dtype=torch.float32)
    return head


def bigram_model(table: np.ndarray = BIGRAM, backend: str = "torch"):
    """A causal LM (float32) computing logits = ln table[previous token, :].

    backend "llama": a transformers LlamaForCausalLM (1 layer) with hand-set weights: the attention
    output and MLP down projections are zero, so the residual stream is the token embedding; one-hot
    embeddings, the final RMSNorm weight 1/sqrt(d) (RMSNorm(one-hot) = one-hot * sqrt(d) * weight), the
    log table in the LM head. backend "torch": `plain_bigram_lm`, the same embedding and head without the
    transformer around them: importing transformers costs ~3 s of every warehouse build, so the dbt model
    uses it, and the tests check that both give the same token rows.
    """
    import torch

    v, d = table.shape[0], 8  # hidden size >= vocabulary size: one-hot embeddings
    emb = torch.zeros(v, d)
    emb[torch.arange(v), torch.arange(v)] = 1.0
    if backend == "torch":
        return plain_bigram_lm(emb, _head_weights(table, d))
    if backend != "llama":
        raise ValueError(f"backend must be 'torch' or 'llama', not {backend!r}")
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=v,
        hidden_size=d,
        intermediate_size=d,
        num_hidden_layers=1,
        num_attention_heads=1,
        num_key_value_heads=1,
        max_position_embeddings=MAX_POSITIONS,
        rms_norm_eps=0.0,
        tie_word_embeddings=False,
        bos_token_id=EOT_ID,
        eos_token_id=EOT_ID,
        pad_token_id=EOT_ID,
        attn_implementation="eager",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(torch.float32).eval()
    with torch.no_grad():
        for layer in model.model.layers:  # nothing is added to the residual stream
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.embed_tokens.weight.copy_(emb)
        model.model.norm.weight.fill_(1.0 / np.sqrt(d))
        model.lm_head.weight.copy_(_head_weights(table, d))
    return model


def plain_bigram_lm(embedding, head):
    """A plain torch bigram LM with the interface the Scorer uses: `model(input_ids=..., attention_mask=...)
    .logits`, `get_output_embeddings()`, `config.max_position_embeddings`; no `base_model` (the Scorer takes
    full logits). The class is defined in here so that importing this module needs no torch."""
    import types

    import torch

    class _BigramLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding.from_pretrained(embedding, freeze=True)
            self.lm_head = torch.nn.Linear(embedding.shape[1], head.shape[0], bias=False)
            with torch.no_grad():
                self.lm_head.weight.copy_(head)
            self.config = types.SimpleNamespace(max_position_embeddings=MAX_POSITIONS, model_type="bigram")

        def get_output_embeddings(self):
            return self.lm_head

        def forward(self, input_ids, attention_mask=None, use_cache=False):
            return types.SimpleNamespace(logits=self.lm_head(self.embed(input_ids)))

    return _BigramLM().eval()


def bigram_profile(vocab_size: int = len(VOCAB)):
    """The tokenizer profile of the bigram vocabulary (no tokenizer: the texts are built from ids)."""
    from predictabase.ingest.scoring.bos import BosPolicy
    from predictabase.ingest.scoring.profile import TokenizerProfile

    strings = np.array(VOCAB, dtype=object)
    word_initial = np.array([t == EOT_ID or VOCAB[t][:1].isspace() for t in range(vocab_size)], dtype=bool)
    return TokenizerProfile(
        name=MODEL_KEY,
        tokenizer=None,
        model_type="llama",
        vocab_size=vocab_size,
        bos=BosPolicy("endoftext", EOT_ID, END_OF_TEXT),
        byte_level=False,
        end_of_text_ids=frozenset({EOT_ID}),
        special_ids=frozenset({EOT_ID}),
        strings=strings,
        word_initial=word_initial,
    )


def scorer(backend: str = "torch"):
    """The project's Scorer over the bigram model, top_k = the vocabulary (the full distribution)."""
    from predictabase.ingest.scoring.engine import Scorer

    return Scorer(bigram_model(backend=backend), bigram_profile(), top_k=len(VOCAB), device="cpu", probe=False)


# --- the two tables ---------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def token_rows(backend: str = "torch") -> pa.Table:
    """The token rows of every enumerated text, scored by the Scorer (store SCHEMA, one window each)."""
    return score_texts(scorer(backend))


def score_texts(sc) -> pa.Table:
    """The enumerated texts scored by a Scorer `sc` into token rows, as `predictabase score` writes them."""
    from predictabase.ingest.scoring.engine import make_batches, make_windows
    from predictabase.ingest.scoring.pipeline import Document, build_table
    from predictabase.ingest.scoring.profile import check_spans_tile

    texts = enumerate_texts()
    windows = [w for d, t in enumerate(texts) for w in make_windows(d, len(t.ids), MAX_POSITIONS, MAX_POSITIONS - 1)]
    if len(windows) != len(texts):
        raise ValueError(f"every enumerated text must fit one window of {MAX_POSITIONS} positions")
    results = sc.score_windows([list(t.ids) for t in texts], make_batches(windows, 1 << 16))
    for t in texts:
        check_spans_tile(t.spans, t.text, MODEL_KEY)
    docs = [Document(t.doc_id, i, t.text) for i, t in enumerate(texts)]
    return build_table(RUN_ID, MODEL_KEY, CORPUS, docs, [(list(t.ids), t.spans) for t in texts], results, sc)


WORD_SCHEMA = pa.schema(
    [
        ("corpus", pa.string()),
        ("doc_id", pa.string()),
        ("word_index", pa.int32()),
        ("word", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("context_key", pa.string()),
        ("context", pa.string()),
        ("context_note", pa.string()),
        ("end_of_text_token", pa.string()),
    ]
)


def word_rows() -> pa.Table:
    """The whitespace-delimited words of every enumerated text (the reading corpora's definition), with
    the text's context (key, text, note) and the end-of-text token string (to find p(eot | c) in top-k)."""
    from predictabase.ingest.text import whitespace_words

    cols: dict[str, list] = {f.name: [] for f in WORD_SCHEMA}
    for t in enumerate_texts():
        for i, (w, a, b) in enumerate(whitespace_words(t.text)):
            for name, value in (
                ("corpus", CORPUS),
                ("doc_id", t.doc_id),
                ("word_index", i),
                ("word", w),
                ("char_start", a),
                ("char_end", b),
                ("context_key", t.context.key),
                ("context", t.context.text),
                ("context_note", t.context.note),
                ("end_of_text_token", END_OF_TEXT),
            ):
                cols[name].append(value)
    return pa.table(cols, schema=WORD_SCHEMA)


# --- the mart's SQL outside dbt (tests, and a quick look without a build) ---------------------------

TOKENS_MODEL = "stg_word_probability_sums_tokens"
WORDS_MODEL = "stg_word_probability_sums_words"
MART_MODEL = "mart_word_probability_sums"


def mart_sql(macro_text: str | None = None) -> str:
    """`mart_word_probability_sums.sql` rendered with jinja2 over the relations named as its two refs,
    with the macro `word_surprisal_sql` from macros/word_surprisal.sql (or `macro_text`: the tests
    render a changed macro to see the check fail)."""
    from predictabase.core.config import DBT_PROJECT_DIR
    from predictabase.ingest.scoring.sentence import render_with_macros

    mart = (DBT_PROJECT_DIR / "models" / "marts" / "words" / f"{MART_MODEL}.sql").read_text(encoding="utf-8")
    return render_with_macros(mart, macro_text, ref=lambda name: name)


def sums_from_tables(tokens: pa.Table, words: pa.Table, macro_text: str | None = None):
    """The mart's rows (polars) from token and word rows, by the mart's own SQL in an in-memory DuckDB."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        con.register(TOKENS_MODEL, tokens)
        con.register(WORDS_MODEL, words)
        return con.sql(mart_sql(macro_text)).pl()
    finally:
        con.close()
