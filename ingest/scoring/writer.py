"""Token-score Parquet: part files of complete documents (atomic renames) and `_run.json`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ingest.fsutil import atomic_path

SCHEMA = pa.schema([
    ("run_id", pa.string()),
    ("model_key", pa.string()),
    ("corpus", pa.string()),
    ("doc_id", pa.string()),
    ("token_index", pa.int32()),
    ("token_id", pa.int32()),
    ("token", pa.string()),
    ("token_text", pa.string()),
    ("char_start", pa.int32()),
    ("char_end", pa.int32()),
    ("logprob_nats", pa.float64()),
    ("rank", pa.int32()),
    ("entropy_nats", pa.float64()),
    ("topk_token_ids", pa.list_(pa.int32())),
    ("topk_tokens", pa.list_(pa.string())),
    ("topk_logprobs_nats", pa.list_(pa.float64())),
    ("logprob_word_initial_nats", pa.float64()),
    ("context_tokens", pa.int32()),
])


def run_dir(token_scores: Path, model_key: str, corpus: str, run_id: str) -> Path:
    return token_scores / f"model={model_key}" / f"corpus={corpus}" / f"run={run_id}"


def part_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-*.parquet"))


def done_doc_ids(directory: Path) -> set[str]:
    """Documents already in part files (each part holds complete documents only)."""
    done: set[str] = set()
    for p in part_files(directory):
        done.update(pq.read_table(p, columns=["doc_id"]).column("doc_id").unique().to_pylist())
    return done


def next_part_number(directory: Path) -> int:
    nums = [int(p.stem.split("-")[1]) for p in part_files(directory) if p.stem.split("-")[1].isdigit()]
    return max(nums) + 1 if nums else 0


def clean_temporaries(directory: Path) -> None:
    for p in directory.glob(".tmp-*"):
        p.unlink(missing_ok=True)


def list_array(values: np.ndarray, typ: pa.DataType) -> pa.Array:
    """[n, k] array -> LIST<typ> column, NULL rows where the row is masked (nan-first column)."""
    n, k = values.shape if values.ndim == 2 else (len(values), 0)
    offsets = pa.array(np.arange(0, (n + 1) * k, k, dtype=np.int32) if n else np.zeros(1, np.int32))
    flat = pa.array(values.reshape(-1), type=typ)
    return pa.ListArray.from_arrays(offsets, flat)


def write_table_atomic(table: pa.Table, path: Path) -> None:
    with atomic_path(path, suffix=".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_part(directory: Path, table: pa.Table) -> Path:
    """Write one part file (complete documents) under a temporary name, then rename it."""
    table = table.cast(SCHEMA)
    path = directory / f"part-{next_part_number(directory):05d}.parquet"
    write_table_atomic(table, path)
    return path


def write_json_atomic(path: Path, obj: dict) -> None:
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def count_rows(directory: Path) -> tuple[int, int]:
    """(documents, rows) over the part files."""
    docs: set[str] = set()
    rows = 0
    for p in part_files(directory):
        t = pq.read_table(p, columns=["doc_id"])
        rows += t.num_rows
        docs.update(t.column("doc_id").unique().to_pylist())
    return len(docs), rows
