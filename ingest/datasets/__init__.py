"""Datasets: one module per source dataset (corpora, the LM game, the questionnaires, imported
log-probabilities), each reading and validating its verified files; `registry` holds the ingest jobs."""
