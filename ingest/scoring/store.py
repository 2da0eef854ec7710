"""The token-score store: the one place that knows how token scores lie on disk.

Layout (docs/architecture.md, "token scores")::

    <token_scores>/model=<model_key>/corpus=<corpus>/run=<run_id>/
        part-00000.parquet, part-00001.parquet, ...   complete documents only, each written under a
                                                      temporary name and renamed into place
        _run.json                                     the run record, written last: a run is
                                                      complete exactly when it exists

Both writers use it: the scorer (`predictabase.ingest.scoring.pipeline`, many parts, resumable; part g holds the
documents of the run plan's group g, so any engine, the local one or a Ray worker, writes the same
part under the same name) and the GPT-3 import (`predictabase.ingest.datasets.gpt3_natural_stories`, one part).

A run directory is a local `Path`, or a `str`: a path or an fsspec URL (`s3://bucket/lake/...`,
`gs://...`, `file:///...`) that the Ray engine's workers write through fsspec. Locally a file is
written under a temporary name and renamed; on an object store it is one PUT, which makes the
object appear whole or not at all. Either way `_run.json` comes last. dbt reads the same files
(`stg_token_scores` for the parts, `stg_runs` for `_run.json`); tests/test_token_store.py checks
that every column dbt reads is in `SCHEMA` / `RunRecord` with a compatible type.

What a part file holds (`file_table`; bench/lake.py and bench/RESULTS.md, "The token lake at scale", measure
why): the per-token columns of `SCHEMA` only. The run columns (`RUN_COLUMNS`: run_id, model_key, corpus) are
the same in every row of a run, so they are not stored per row: they are the names of the run directory
(`model=<key>/corpus=<c>/run=<id>`, which dbt reads as hive partitions, one constant per file) and the part
file's key-value metadata (`read_part`). A float column (and the top-k log-probabilities) is stored as
float32 when every value of the part survives the round trip float64 -> float32 -> float64 exactly (the
scorer's statistics are float32 numbers), as float64 otherwise (an imported run's decimals); either reads
back as the same double. Float columns have no dictionary and, scalars, no compression (`_write_file`).
Part files written before this layout (every `SCHEMA` column in every row, doubles) read the same: dbt
unions the files by column name and `read_part` returns `SCHEMA` for either.
"""

from __future__ import annotations

import io
import json
import posixpath
import uuid
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from predictabase.core.errors import WarehouseError
from predictabase.core.fsutil import atomic_path, temp_prefix

# One row per real token of a document (the BOS is never a row).
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("model_key", pa.string()),
        ("corpus", pa.string()),
        ("doc_id", pa.string()),
        ("token_index", pa.int32()),  # 0-based among the document's real tokens
        ("token_id", pa.int32()),  # vocabulary id (NULL: imported)
        ("token", pa.string()),  # vocabulary string (Ġthe, ▁the)
        ("token_text", pa.string()),  # the document's characters at [char_start, char_end)
        ("char_start", pa.int32()),  # spans tile the scored text
        ("char_end", pa.int32()),
        ("logprob_nats", pa.float64()),  # ln p(token | BOS + context); NULL where not scored
        ("rank", pa.int32()),  # 1 + #{v : lp_v > lp_token}
        ("entropy_nats", pa.float64()),
        ("topk_token_ids", pa.list_(pa.int32())),
        ("topk_tokens", pa.list_(pa.string())),
        ("topk_logprobs_nats", pa.list_(pa.float64())),
        ("logprob_word_initial_nats", pa.float64()),  # ln B before the token: mass on word-initial tokens + end-of-text
        (
            "logprob_word_initial_after_nats",
            pa.float64(),
        ),  # ln B after it (the next row's; after the last: end of text)
        ("context_tokens", pa.int32()),  # real tokens of context seen
    ]
)
RUN_COLUMNS = ("run_id", "model_key", "corpus")  # the same in every row of a run: not stored per row
PART_COLUMNS = tuple(n for n in SCHEMA.names if n not in RUN_COLUMNS)  # what a part file holds
# stored as float32 where exact (see the module's docstring)
FLOAT_COLUMNS = tuple(
    f.name for f in SCHEMA if f.type == pa.float64() or (pa.types.is_list(f.type) and f.type.value_type == pa.float64())
)
RUN_METADATA_KEY = b"predictabase.run"  # a part file's key-value metadata: its run columns, as JSON

RUN_FILE = "_run.json"
PART_GLOB = "part-*.parquet"


Location = Path | str  # a local folder, or a path / fsspec URL (see the module's docstring)


def run_dir(token_scores: Location, model_key: str, corpus: str, run_id: str) -> Location:
    if isinstance(token_scores, str):
        return f"{token_scores.rstrip('/')}/model={model_key}/corpus={corpus}/run={run_id}"
    return token_scores / f"model={model_key}" / f"corpus={corpus}" / f"run={run_id}"


def _fs(directory: str):
    """(fsspec file system, path within it) of a `str` location."""
    from fsspec.core import url_to_fs

    return url_to_fs(directory)


def _is_local(fs) -> bool:
    return "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))


def _put(directory: str, name: str, data: bytes) -> str:
    """Write `data` as `<directory>/<name>`: local file systems write a temporary and rename it,
    object stores take one PUT (the object is whole or absent)."""
    fs, root = _fs(directory)
    fs.makedirs(root, exist_ok=True)
    dest = posixpath.join(root, name)
    if not _is_local(fs):
        fs.pipe_file(dest, data)
        return dest
    tmp = posixpath.join(root, f"{temp_prefix()}{uuid.uuid4().hex}")
    try:
        fs.pipe_file(tmp, data)
        fs.mv(tmp, dest)
    finally:
        if fs.exists(tmp):
            fs.rm(tmp)
    return dest


# --- the run record -------------------------------------------------------------------------------

# Written only when set: a scored run's `_run.json` has the first two, an imported run's the others.
_ONLY_WHEN_SET = (
    "n_docs_with_tokens",
    "scorer_version",
    "end_of_text_ids",
    "end_of_text_tokens",
    "source_path",
    "source_sha256",
    "doc_id_mapping",
    "text_differences_chars",
)


@dataclass
class RunRecord:
    """`_run.json`: what a run is (model, tokenizer, BOS, corpus, settings) and what it holds.

    The JSON keys are the field names; the fields of `_ONLY_WHEN_SET` are left out when None,
    so the files read exactly as the ones written before this class existed.
    """

    run_id: str
    model_key: str
    model_id: str
    model_revision: str
    tokenizer: str
    tokenizer_sha256: str | None
    vocab_size: int | None
    dtype: str | None
    device: str | None
    bos_policy: str
    bos_token_id: int | None
    bos_token: str | None
    corpus: str
    corpus_version: str
    context_length: int | None
    stride: int | None
    top_k: int
    batch_tokens: int | None
    limit: int | None
    full: bool
    n_docs: int
    n_tokens: int
    source: str  # 'scored' or 'imported'
    started_at: str
    finished_at: str | None
    package_versions: dict = field(default_factory=dict)
    # scored runs
    n_docs_with_tokens: int | None = None
    scorer_version: int | None = None
    end_of_text_ids: list[int] | None = None  # the ids counted in the word-boundary mass B (scorer_version >= 2)
    end_of_text_tokens: list[str] | None = None
    # imported runs
    source_path: str | None = None
    source_sha256: str | None = None
    doc_id_mapping: str | None = None
    text_differences_chars: dict | None = None

    def to_json(self) -> dict:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not (f.name in _ONLY_WHEN_SET and getattr(self, f.name) is None)
        }

    @classmethod
    def from_json(cls, obj: Mapping) -> RunRecord:
        known = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        unknown, missing = sorted(set(obj) - known), sorted(required - set(obj))
        if unknown or missing:
            raise ValueError(f"not a run record: unknown keys {unknown}, missing keys {missing}")
        return cls(**obj)


def read_run(directory: Location) -> RunRecord | None:
    """The record of a complete run, None while the run is not complete."""
    if isinstance(directory, str):
        fs, root = _fs(directory)
        path = posixpath.join(root, RUN_FILE)
        if not fs.exists(path):
            return None
        text = fs.cat_file(path).decode()
    else:
        path = directory / RUN_FILE
        if not path.exists():
            return None
        text = path.read_text()
    try:
        return RunRecord.from_json(json.loads(text))
    except ValueError as exc:  # json.JSONDecodeError is one
        raise WarehouseError(path, str(exc)) from None


def finish_run(directory: Location, record: RunRecord) -> dict:
    """Write `_run.json` (atomically, after every part file): from now on the run is complete."""
    obj = record.to_json()
    text = json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"
    if isinstance(directory, str):
        _put(directory, RUN_FILE, text.encode())
        return obj
    with atomic_path(directory / RUN_FILE, suffix=".json") as tmp:
        tmp.write_text(text)
    return obj


# --- part files -----------------------------------------------------------------------------------


def part_files(directory: Location) -> list:
    """The run's part files, sorted: `Path`s for a local folder, fsspec paths for a `str` location."""
    if isinstance(directory, str):
        fs, root = _fs(directory)
        return sorted(fs.glob(posixpath.join(root, PART_GLOB))) if fs.exists(root) else []
    return sorted(directory.glob(PART_GLOB))


def _read_parts(directory: Location, columns: list[str]) -> list[pa.Table]:
    """`columns` (per-token ones: stored in every layout) of each part file, as stored."""
    if isinstance(directory, str):
        fs, _ = _fs(directory)
        return [pq.read_table(p, columns=columns, filesystem=fs) for p in part_files(directory)]
    return [pq.read_table(p, columns=columns) for p in part_files(directory)]


def _run_of_path(path) -> dict[str, str]:
    """The run columns named by a part file's directories (`model=<key>/corpus=<c>/run=<id>/part-...`)."""
    names = dict(seg.split("=", 1) for seg in str(path).replace("\\", "/").split("/")[-4:-1] if "=" in seg)
    return {col: names[key] for col, key in zip(RUN_COLUMNS, ("run", "model", "corpus")) if key in names}


def read_part(path, columns: list[str] | None = None, filesystem=None) -> pa.Table:
    """One part file as `SCHEMA` (or its `columns`), whichever layout wrote it: the run columns from
    the file's metadata (or its directory names), floats as float64 (exact)."""
    f = pq.ParquetFile(filesystem.open(path, "rb") if filesystem is not None else path)
    columns = list(SCHEMA.names if columns is None else columns)
    stored = [c for c in columns if c in f.schema_arrow.names]
    table = f.read(columns=stored)
    meta = f.schema_arrow.metadata or {}
    run = json.loads(meta[RUN_METADATA_KEY]) if RUN_METADATA_KEY in meta else _run_of_path(path)
    n = table.num_rows
    arrays = []
    for name in columns:
        typ = SCHEMA.field(name).type
        if name in stored:
            arrays.append(table.column(name).cast(typ))
        elif name in RUN_COLUMNS and name in run:
            arrays.append(pa.repeat(pa.scalar(run[name], typ), n))
        else:
            arrays.append(pa.nulls(n, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema([SCHEMA.field(c) for c in columns]))


def read_parts(directory: Location, columns: list[str] | None = None) -> pa.Table:
    """Every part file of a run as one `SCHEMA` table (or its `columns`), in part order."""
    cols = list(SCHEMA.names if columns is None else columns)
    fs = _fs(directory)[0] if isinstance(directory, str) else None
    tables = [read_part(p, cols, fs) for p in part_files(directory)]
    return pa.concat_tables(tables) if tables else pa.schema([SCHEMA.field(c) for c in cols]).empty_table()


def done_doc_ids(directory: Location) -> set[str]:
    """Documents already in part files (each part holds complete documents only)."""
    done: set[str] = set()
    for t in _read_parts(directory, ["doc_id"]):
        done.update(t.column("doc_id").unique().to_pylist())
    return done


def part_number(path) -> int | None:
    number = posixpath.basename(str(path)).split(".")[0].split("-")[1]
    return int(number) if number.isdigit() else None


def part_name(number: int) -> str:
    return f"part-{number:05d}.parquet"


def next_part_number(directory: Location) -> int:
    nums = [n for n in map(part_number, part_files(directory)) if n is not None]
    return max(nums) + 1 if nums else 0


def clean_temporaries(directory: Path) -> None:
    for p in directory.glob(".tmp-*"):
        p.unlink(missing_ok=True)


def restart_run(directory: Path) -> None:
    """Forget what an interrupted run wrote (its part files and temporaries)."""
    if directory.exists():
        for p in part_files(directory):
            p.unlink()
        clean_temporaries(directory)


def resume_run(directory: Location) -> set[str]:
    """Clean an interrupted run's temporaries; the documents its part files already hold."""
    if isinstance(directory, str):
        fs, root = _fs(directory)
        if not fs.exists(root):
            return set()
        if _is_local(fs):
            for p in fs.glob(posixpath.join(root, ".tmp-*")):
                fs.rm(p)
        return done_doc_ids(directory)
    if not directory.exists():
        return set()
    clean_temporaries(directory)
    return done_doc_ids(directory)


def _exact_float32(column: pa.ChunkedArray) -> bool:
    """Whether every value of a float64 (or list of float64) column is a float32 number."""
    if pa.types.is_list(column.type):
        column = pa.chunked_array([c.flatten() for c in column.chunks], column.type.value_type)
    x = column.to_numpy(zero_copy_only=False).astype(np.float64)  # NULL -> NaN
    with np.errstate(over="ignore"):
        return bool(np.array_equal(x.astype(np.float32).astype(np.float64), x, equal_nan=True))


def file_table(table: pa.Table) -> pa.Table:
    """A `SCHEMA` table as a part file stores it: the per-token columns (floats as float32 where
    exact) and the run columns in the schema's metadata (see the module's docstring)."""
    table = table.cast(SCHEMA)
    run = {}
    for c in RUN_COLUMNS:
        values = table.column(c).unique().to_pylist()
        if len(values) > 1 or None in values:
            raise ValueError(f"a part file holds one run: column {c} has the values {values[:5]}")
        if values:
            run[c] = values[0]
    arrays, fields_ = [], []
    for f in SCHEMA:
        if f.name in RUN_COLUMNS:
            continue
        col = table.column(f.name)
        if f.name in FLOAT_COLUMNS and _exact_float32(col):
            typ = pa.list_(pa.float32()) if pa.types.is_list(f.type) else pa.float32()
            col = col.cast(typ, safe=False)
        arrays.append(col)
        fields_.append(pa.field(f.name, col.type, f.nullable))
    meta = {RUN_METADATA_KEY: json.dumps(run, sort_keys=True).encode()} if run else None
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields_, metadata=meta))


def _write_file(table: pa.Table, where) -> None:
    """The part file's encodings (bench/lake.py measures them): a scalar float column PLAIN and
    uncompressed (a scan of it, the usual aggregate, decodes nothing; zstd would save ~0.5 of its 4 bytes),
    the top-k log-probabilities BYTE_STREAM_SPLIT + zstd (the bulk of their bytes, rarely scanned); the
    other columns dictionary + zstd."""

    def leaf(c: str) -> str:  # a column's Parquet path (a list's values: <name>.list.element)
        return f"{c}.list.element" if pa.types.is_list(table.schema.field(c).type) else c

    scalar_floats = {c for c in table.column_names if c in FLOAT_COLUMNS and leaf(c) == c}
    pq.write_table(
        table,
        where,
        compression={leaf(c): ("none" if c in scalar_floats else "zstd") for c in table.column_names},
        use_dictionary=[leaf(c) for c in table.column_names if c not in FLOAT_COLUMNS],
        column_encoding={
            leaf(c): "BYTE_STREAM_SPLIT" for c in FLOAT_COLUMNS if c in table.column_names and c not in scalar_floats
        },
    )


def _check_directory(directory: Location, table: pa.Table) -> None:
    """A run directory named `model=/corpus=/run=` must name the run its rows belong to (dbt reads
    the run columns of a part file from those names)."""
    named = _run_of_path(f"{str(directory).rstrip('/')}/part")
    for c, v in named.items():
        values = table.column(c).unique().to_pylist()
        if values and values != [v]:
            raise ValueError(f"rows of {c} {values[:3]} written to the run directory {directory}")


def write_part(directory: Location, table: pa.Table, number: int | None = None) -> Location:
    """Write one part file (complete documents, `SCHEMA`) as part `number` (default: the next free one),
    under a temporary name and renamed, or in one PUT on an object store."""
    table = table.cast(SCHEMA)
    _check_directory(directory, table)
    data = file_table(table)
    name = part_name(next_part_number(directory) if number is None else number)
    if isinstance(directory, str):
        buf = io.BytesIO()
        _write_file(data, buf)
        return _put(directory, name, buf.getvalue())
    path = directory / name
    with atomic_path(path, suffix=".parquet") as tmp:
        _write_file(data, tmp)
    return path


def migrate_part(path: Path) -> bool:
    """Rewrite a local part file of the older layout (every `SCHEMA` column in every row) in the
    current one, atomically; False when it already is. The rows read back the same (`read_part`, dbt)."""
    if not set(RUN_COLUMNS) & set(pq.read_schema(path).names):
        return False
    table = read_part(path)
    with atomic_path(path, suffix=".parquet") as tmp:
        _write_file(file_table(table), tmp)
    return True


def count_rows(directory: Location) -> tuple[int, int]:
    """(documents, rows) over the part files."""
    docs: set[str] = set()
    rows = 0
    for t in _read_parts(directory, ["doc_id"]):
        rows += t.num_rows
        docs.update(t.column("doc_id").unique().to_pylist())
    return len(docs), rows


# --- building a table -----------------------------------------------------------------------------


def list_array(values: np.ndarray, typ: pa.DataType) -> pa.Array:
    """[n, k] array -> LIST<typ> column of n lists of k values (k may be 0: empty lists)."""
    n, k = values.shape if values.ndim == 2 else (len(values), 0)
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * np.int32(k))
    flat = pa.array(values.reshape(-1), type=typ)
    return pa.ListArray.from_arrays(offsets, flat)


def token_table(run_id: str, model_key: str, corpus: str, columns: Mapping[str, object]) -> pa.Table:
    """The rows of one run in `SCHEMA`: `columns` maps column names to one value per row
    (numpy arrays or lists; a list column also as an [n, k] array). run_id, model_key and
    corpus are filled in; a column not given is all NULL."""
    unknown = sorted((set(columns) - set(SCHEMA.names)) | (set(columns) & set(RUN_COLUMNS)))
    if unknown:
        raise ValueError(f"not per-token columns of {SCHEMA.names}: {unknown}")
    n = len(columns["doc_id"])
    constant = dict(zip(RUN_COLUMNS, (run_id, model_key, corpus)))
    arrays = []
    for f in SCHEMA:
        if f.name in constant:
            arrays.append(pa.array([constant[f.name]] * n, f.type))
            continue
        values = columns.get(f.name)
        if values is None:
            arrays.append(pa.nulls(n, f.type))
        elif pa.types.is_list(f.type) and isinstance(values, np.ndarray):
            arrays.append(list_array(values, f.type.value_type))
        else:
            arrays.append(pa.array(values, f.type))
        if len(arrays[-1]) != n:
            raise ValueError(f"column {f.name}: {len(arrays[-1])} values for {n} rows")
    return pa.Table.from_arrays(arrays, schema=SCHEMA)
