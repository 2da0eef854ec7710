"""The scoring engine: every token of every document, scored by a causal LM, written as Parquet."""
from ingest.scoring.pipeline import ScoreSettings, score_corpora

__all__ = ["ScoreSettings", "score_corpora"]
