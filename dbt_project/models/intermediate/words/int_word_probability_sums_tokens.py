"""Token rows of the word-probability-sums diagnostic (paper 001, Theorems 1 and 2).

A bigram LM over a 5-token vocabulary scored by the project's Scorer (ingest/scoring/diagnostics.py):
every text is a fixed context followed by one candidate word of 1 to 8 tokens, every candidate
enumerated. Token-store schema (ingest.scoring.store.SCHEMA), top-k = the whole vocabulary. The model
is a plain torch module: importing transformers would add ~3 s to every build, and
tests/test_word_probability_sums.py checks that a LlamaForCausalLM with hand-set weights gives the
same rows. Nothing is computed here: the word probabilities and their sums come from the macro
word_surprisal_sql in mart_word_probability_sums.
"""


def model(dbt, session):
    from ingest.scoring.diagnostics import token_rows
    return token_rows()
