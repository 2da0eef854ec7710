"""The word-probability-sums diagnostic (Oh & Schuler 2024, Theorems 1 and 2) as raw tables: every text of a context
followed by one candidate word of 1 to 8 tokens, every candidate enumerated, scored by the project's Scorer with a
hand-set bigram LM over <|endoftext|>, ' a', ' b', 'a', 'b' (ingest/scoring/diagnostics.py), and the texts'
whitespace-delimited words. No source file: the model and the texts ship with the code, like the model table.
dbt derives the word probabilities and their sums (mart_word_probability_sums); nothing is computed here."""

from __future__ import annotations

import polars as pl

from predictabase.core.config import Paths
from predictabase.ingest.scoring import diagnostics

TOKENS, WORDS = "word_probability_sums_tokens", "word_probability_sums_words"


def load(paths: Paths, _prepared: dict | None = None) -> dict[str, pl.DataFrame]:
    return {TOKENS: pl.from_arrow(diagnostics.token_rows()), WORDS: pl.from_arrow(diagnostics.word_rows())}
