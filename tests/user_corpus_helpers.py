"""The worked example's files: Brown (Smith & Levy 2013's self-paced reading corpus), which the mirror holds only as
Pimentel & Meister's per-word table, derived as a user would (the worked example of docs/guides/own-corpus.md)."""

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
    return [
        "corpus",
        "add",
        "brown",
        "--texts",
        str(words),
        "--reading-times",
        str(rt),
        "--measure",
        "spr",
        "--title",
        BROWN_TITLE,
        "--published",
        "pimentel_meister:brown",
    ]


MECO_GERMAN = "wilcox_xlang/merged_data/ge.csv"
MECO_GERMAN_TITLE = "MECO German (Siegelman et al. 2022)"
#: MECO's eye-tracking means (ms) -> the user-corpus measure names
MECO_MEASURES = {"firstfix_rt": "first_fixation", "gaze_rt": "gaze_duration", "total_rt": "total_reading_time"}


def meco_german_frames(mirror: Path) -> pl.DataFrame:
    """MECO German's words (text, position, the word as printed) and its readers' mean eye-tracking measures (ms),
    once per word (the file repeats every word for each of Wilcox et al.'s four models). A mean of 0 ms is a word
    no reader fixated: skipped, so empty here (never 0 ms)."""
    df = pl.read_csv(mirror / MECO_GERMAN, null_values="NA", infer_schema_length=0)
    first = df["model"][0]
    return (
        df.filter(pl.col("model") == first)
        .select(
            pl.col("trialid").cast(pl.Int32).alias("text_id"),
            pl.col("ianum").cast(pl.Int32).alias("word_id"),
            pl.col("ia").alias("word"),
            *(
                pl.when(pl.col(c).cast(pl.Float64) > 0).then(pl.col(c).cast(pl.Float64)).alias(m)
                for c, m in MECO_MEASURES.items()
            ),
        )
        .sort("text_id", "word_id")
    )


def meco_german_files(mirror: Path, folder: Path) -> tuple[Path, Path]:
    """meco_de_words.csv (text_id, word_id, word) and meco_de_rt.csv (text_id, word_id, one column per measure;
    empty where no reader fixated the word) in `folder`."""
    df = meco_german_frames(mirror)
    words, rt = folder / "meco_de_words.csv", folder / "meco_de_rt.csv"
    df.select("text_id", "word_id", "word").write_csv(words)
    df.select("text_id", "word_id", *MECO_MEASURES.values()).write_csv(rt)
    return words, rt


def add_meco_german_args(words: Path, rt: Path) -> list[str]:
    """A corpus in another language by declaration alone: `corpus add` with `--language de` (no code)."""
    return [
        "corpus",
        "add",
        "meco_german",
        "--texts",
        str(words),
        "--reading-times",
        str(rt),
        *(a for m in MECO_MEASURES.values() for a in ("--measure", m)),
        "--title",
        MECO_GERMAN_TITLE,
        "--language",
        "de",
    ]
