"""The scoring engine: every token of every document, scored by a causal LM, written as Parquet.

`ScoreSettings` and `score_corpora` are imported on first use, so importing a light module of this package
(`predictabase.ingest.scoring.model_table`) does not import torch."""

from __future__ import annotations

__all__ = ["ScoreSettings", "score_corpora"]


def __getattr__(name: str):
    if name in __all__:
        from predictabase.ingest.scoring import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
