"""Word surprisals of a typed sentence, on demand: the same scorer and the same SQL as the warehouse.

The dashboard's "type a sentence" box (page "Word surprisal") and the tests use this. Nothing here
computes a metric: the text is scored by `Scorer.score_windows` into token rows exactly as
`predictabase score` writes them (`pipeline.build_table`), the words are the text's whitespace-
delimited words (the reading corpora's own definition: punctuation attached), and the word
surprisals come from the dbt macro `word_surprisal_sql` (dbt_project/macros/word_surprisal.sql),
rendered with jinja2 and run by DuckDB over the two in-memory tables.
"""

from __future__ import annotations

from functools import lru_cache

import duckdb
import polars as pl

from predictabase.core.config import DBT_PROJECT_DIR, Paths
from predictabase.core.errors import OptionError

MACRO_FILE = DBT_PROJECT_DIR / "macros" / "word_surprisal.sql"
MAX_CHARS = 2000  # a sentence box, not a corpus: keeps one request to one short window

# The columns of the result, named as in mart_word_surprisal.
COLUMNS = [
    "word_index",
    "word",
    "is_first_word",
    "is_last_word",
    "n_tokens",
    "is_multitoken",
    "is_aligned",
    "surprisal_lw_nats",
    "surprisal_lw_bits",
    "surprisal_wt_nats",
    "surprisal_wt_bits",
    "surprisal_wt_minus_lw_bits",
    "logprob_boundary_before_nats",
    "logprob_boundary_after_nats",
    "tokens",
]


@lru_cache(maxsize=1)
def _macro_text() -> str:
    return MACRO_FILE.read_text(encoding="utf-8")


def render_with_macros(template: str, macro_text: str | None = None, **context) -> str:
    """`template` rendered with jinja2 after the macros of macros/word_surprisal.sql (or `macro_text`)."""
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return env.from_string((_macro_text() if macro_text is None else macro_text) + template).render(**context)


def word_surprisal_sql(tokens: str, words: str) -> str:
    """The dbt macro `word_surprisal_sql(tokens, words)` rendered over two relation names."""
    return render_with_macros("{{ word_surprisal_sql(tokens, words) }}", tokens=tokens, words=words)


def words_of(text: str) -> pl.DataFrame:
    """The text's whitespace-delimited words with their spans (the reading corpora's word definition)."""
    from predictabase.ingest.text import whitespace_words

    rows = [(i, w, a, b) for i, (w, a, b) in enumerate(whitespace_words(text))]
    return pl.DataFrame(
        rows,
        schema={"word_index": pl.Int32, "word": pl.String, "char_start": pl.Int32, "char_end": pl.Int32},
        orient="row",
    ).with_columns(corpus=pl.lit("typed"), doc_id=pl.lit("1"))


def surprisal_from_tables(tokens, words: pl.DataFrame) -> pl.DataFrame:
    """Run the macro over token rows (a pyarrow table in the token-store schema) and words."""
    con = duckdb.connect(":memory:")
    try:
        con.register("typed_tokens", tokens)
        con.register("typed_words", words.to_arrow())
        sql = f"""
            with ws as ({word_surprisal_sql("typed_tokens", "typed_words")}),
            toks as (
                select doc_id, token_index, token from typed_tokens
            )
            select
                ws.word_index, ws.word, ws.word_index = 0 as is_first_word, ws.is_last_word,
                ws.n_tokens, ws.is_multitoken, ws.is_aligned,
                -ws.logprob_lw_nats as surprisal_lw_nats, -ws.logprob_lw_nats / ln(2) as surprisal_lw_bits,
                -ws.logprob_wt_nats as surprisal_wt_nats, -ws.logprob_wt_nats / ln(2) as surprisal_wt_bits,
                (ws.logprob_lw_nats - ws.logprob_wt_nats) / ln(2) as surprisal_wt_minus_lw_bits,
                ws.logprob_boundary_before_nats, ws.logprob_boundary_after_nats,
                (select list(t.token order by t.token_index) from toks as t
                 where t.doc_id = ws.doc_id and t.token_index between ws.first_token_index and ws.last_token_index)
                    as tokens
            from ws
            order by ws.word_index
        """
        return con.sql(sql).pl().select(COLUMNS)
    finally:
        con.close()


class SentenceScorer:
    """One loaded model, scoring typed texts into word surprisals (LW and WT)."""

    def __init__(self, model_spec: str, paths: Paths, device: str | None = None, dtype: str | None = None):
        from predictabase.ingest.scoring.engine import Scorer
        from predictabase.ingest.scoring.models import load_model
        from predictabase.ingest.scoring.profile import TokenizerProfile

        self.lm = load_model(model_spec, paths, device, dtype)
        self.profile = TokenizerProfile.build(self.lm.tokenizer, self.lm.model_type, self.lm.vocab_size, model_spec)
        self.scorer = Scorer(self.lm.model, self.profile, top_k=0, device=self.lm.device)

    @classmethod
    def from_parts(cls, model, profile, device: str = "cpu") -> SentenceScorer:
        """A scorer for an already built model and profile (tests: small models)."""
        from predictabase.ingest.scoring.engine import Scorer

        self = cls.__new__(cls)
        self.lm = None
        self.profile = profile
        self.scorer = Scorer(model, profile, top_k=0, device=device, probe=False)
        return self

    @property
    def end_of_text_tokens(self) -> list[str]:
        return [str(self.profile.strings[i]) for i in sorted(self.profile.end_of_text_ids)]

    def token_rows(self, text: str):
        """The text's token rows, as `predictabase score` writes them (one window: BOS + the text)."""
        from predictabase.ingest.scoring.engine import Window
        from predictabase.ingest.scoring.pipeline import Document, build_table

        [(ids, spans)] = self.profile.encode([text])
        if not ids:
            raise OptionError("text", "has no tokens; type a sentence")
        from predictabase.ingest.scoring.models import max_positions

        limit = (max_positions(self.scorer.model.config) or 1 << 30) - 1
        if len(ids) > limit:
            raise OptionError("text", f"has {len(ids)} tokens; this model takes at most {limit} in one window")
        results = self.scorer.score_windows([ids], [[Window(0, 0, len(ids), 0)]])
        return build_table("typed", "typed", "typed", [Document("1", 0, text)], [(ids, spans)], results, self.scorer)

    def word_surprisals(self, text: str) -> pl.DataFrame:
        """Per whitespace-delimited word of `text`: LW and WT surprisal (nats, bits), tokens, boundary terms."""
        if not text or not text.strip():
            raise OptionError("text", "is empty; type a sentence")
        if len(text) > MAX_CHARS:
            raise OptionError("text", f"has {len(text)} characters; at most {MAX_CHARS}")
        return surprisal_from_tables(self.token_rows(text), words_of(text))
