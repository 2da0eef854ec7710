"""The worked example's files: Brown (Smith & Levy 2013's self-paced reading corpus), which the mirror holds only as
Pimentel & Meister's per-word table, derived as a user would (README "Worked example: Brown")."""
from __future__ import annotations

from pathlib import Path

import polars as pl

BROWN = "pimentel_meister/checkpoints/rt/merged_data/brown-gpt2-small.tsv"
BROWN_TITLE = "Brown (Smith & Levy 2013)"


def brown_frames(mirror: Path) -> pl.DataFrame:
    """Brown's words and per-word mean reading times (ms), as in the upstream file."""
    return pl.read_csv(mirror / BROWN, separator="\t", infer_schema=False).select("text_id", "word_id", "word", "time")


def brown_files(mirror: Path, folder: Path) -> tuple[Path, Path]:
    """brown_words.csv (text_id, word_id, word) and brown_rt.csv (text_id, word_id, rt_ms) in `folder`."""
    df = brown_frames(mirror)
    words, rt = folder / "brown_words.csv", folder / "brown_rt.csv"
    df.select("text_id", "word_id", "word").write_csv(words)
    df.select("text_id", "word_id", pl.col("time").alias("rt_ms")).write_csv(rt)
    return words, rt


def add_brown_args(words: Path, rt: Path) -> list[str]:
    return ["corpus", "add", "brown", "--texts", str(words), "--reading-times", str(rt), "--measure", "spr",
            "--title", BROWN_TITLE, "--published", "pimentel_meister:brown"]
