"""UCL published per-word reading means (de Varda et al., ucl_devarda/all_measures.csv).

`ucl_published_measures` -> raw.ucl_published_word_measures: one row per all_measures.csv row (every word
but the first of each sentence: 1,726 rows), the eye-tracking means RTfirstfix, RTfirstpass, RTrightbound,
RTgopast and the self-paced reading mean, in ms, as published. Keys as the `ucl` corpus loader defines them
(ingest/datasets/ucl.py): doc_id = sent_id, word_index = context_length, native_id = context_length + 1;
every row is checked against its sentence by the same function. Only loads: the comparison with the means
derived from the fixations is dbt's (mart_reading_measures_agreement).
"""
from __future__ import annotations

import math

import polars as pl

from ingest.config import Paths
from ingest.datasets import ucl
from ingest.datasets._common import to_float, to_int
from ingest.errors import IngestError
from ingest.sources import readers
from ingest.sources.definitions import dataset

NAME = "ucl_published_measures"
TABLE = "ucl_published_word_measures"
MEASURES = dataset(NAME).file("measures")
# all_measures column -> raw column (ms)
COLUMNS = {"RTfirstfix": "rt_first_fixation_ms", "RTfirstpass": "rt_first_pass_ms",
           "RTrightbound": "rt_right_bounded_ms", "RTgopast": "rt_go_past_ms",
           "self_paced_reading_time": "self_paced_reading_time_ms"}
SCHEMA = {"corpus": pl.String, "doc_id": pl.String, "word_index": pl.Int32, "native_id": pl.String,
          "word": pl.String, **{c: pl.Float64 for c in COLUMNS.values()},
          "source_path": pl.String, "source_sha256": pl.String}


def build(src: readers.Source, rows: list[dict[str, str]]) -> dict[str, pl.DataFrame]:
    ucl.sentences(rows, src.path)  # every row's word and context match word context_length of its sentence
    out, seen = [], set()
    for k, r in enumerate(rows, start=2):
        sid = to_int(r["sent_id"], src.path, f"line {k} sent_id")
        n = to_int(r["context_length"], src.path, f"line {k} context_length")
        if (sid, n) in seen:
            raise IngestError(src.path, f"line {k}: sentence {sid} word {n} appears twice")
        seen.add((sid, n))
        row = {"corpus": ucl.CORPUS, "doc_id": str(sid), "word_index": n, "native_id": str(n + 1), "word": r["word"]}
        for col, name in COLUMNS.items():
            v = to_float(r[col], src.path, f"line {k} {col}")
            if not math.isfinite(v) or v < 0:
                raise IngestError(src.path, f"line {k} {col}: {v} is not a finite time >= 0 ms")
            row[name] = v
        out.append({**row, "source_path": src.path, "source_sha256": src.sha256})
    return {TABLE: pl.DataFrame(out, schema=SCHEMA, strict=True)}


def load(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(MEASURES, paths)
    return build(src, readers.delimited(src.data, src.path, MEASURES))
