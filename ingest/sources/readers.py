"""The one generic reader: a dataset's file by role, verified, read with its declared options.

Every loader reads its inputs here. A file is read only through `fetch.verified_path` (present and
matching the catalog's sha256), decoded with the declared encoding, and checked against the declared
format and required columns; every problem raises `IngestError(catalog path, problem)`, before
anything is written.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.sources.catalog import SourceFile, by_path
from predictabase.ingest.sources.definitions import FileSpec
from predictabase.ingest.sources.fetch import verified_path


@dataclass(frozen=True)
class Source:
    """A fetched, re-verified catalog file, read once."""

    path: str  # catalog (mirror-relative) path, the value of `source_path`
    sha256: str
    local: Path
    data: bytes


def read_catalog_file(sf: SourceFile, paths: Paths) -> Source:
    local = verified_path(sf, paths)
    return Source(path=sf.path, sha256=sf.sha256, local=local, data=local.read_bytes())


def read_source(catalog_path: str, paths: Paths) -> Source:
    try:
        sf = by_path(catalog_path)
    except KeyError as exc:
        raise IngestError(catalog_path, "not in the source catalog") from exc
    return read_catalog_file(sf, paths)


def sources(spec: FileSpec, paths: Paths) -> list[Source]:
    """Every file of a role (a `glob` role may have many), verified and read."""
    files = spec.catalog_files()
    if not files:
        raise IngestError(spec.path or spec.glob, f"no catalog file for {spec.name}")
    return [read_catalog_file(sf, paths) for sf in files]


def source(spec: FileSpec, paths: Paths) -> Source:
    """The one file of a `path` role, verified and read."""
    if spec.path is None:
        raise ValueError(f"{spec.name} is a glob role; use sources()")
    return read_source(spec.path, paths)


# --------------------------------------------------------------------------- decoding by format


def decode(data: bytes, name: str, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding, errors="strict")
    except UnicodeDecodeError as exc:
        raise IngestError(
            name,
            f"not valid {encoding} text: byte {data[exc.start : exc.start + 1]!r} at offset {exc.start} ({exc.reason})",
        ) from exc


def text(data: bytes, name: str, spec: FileSpec) -> str:
    return decode(data, name, spec.encoding)


def json_value(data: bytes, name: str, spec: FileSpec | None = None) -> object:
    """Strict JSON in the declared encoding (a truncated file is an error, never a partial value)."""
    raw = decode(data, name, spec.encoding if spec else "utf-8")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise IngestError(name, f"truncated or malformed JSON ({exc})") from exc


def python_literal(data: bytes, name: str, spec: FileSpec | None = None) -> object:
    """A Python literal (a list, dict, str, number, ... as `repr` writes them: single-quoted strings, which
    JSON refuses) in the declared encoding, parsed with `ast.literal_eval`, never `eval`: names, calls and
    any other code are refused, so a bad file is an error, never executed. With the spec option
    `nan_keys = true`, a dict key written as the bare name `nan` reads as None (`_literal_with_nan_keys`)."""
    raw = decode(data, name, spec.encoding if spec else "utf-8")
    if not raw.strip():
        raise IngestError(name, "file is empty")
    nan_keys = bool(spec and spec.nan_keys)
    try:
        return _literal_with_nan_keys(raw, name) if nan_keys else ast.literal_eval(raw)
    except SyntaxError as exc:
        raise IngestError(
            name, f"truncated or malformed Python literal ({exc.msg} at line {exc.lineno}, column {exc.offset})"
        ) from exc
    except (ValueError, TypeError) as exc:  # a name (nan, x), a call, an operator: not a literal
        where = _first_non_literal(raw, allow_nan_keys=nan_keys) or re.sub(
            r" object at 0x[0-9a-fA-F]+", "", " ".join(str(exc).split())
        )
        raise IngestError(name, f"not a Python literal: {where}") from exc
    except (MemoryError, RecursionError) as exc:
        raise IngestError(name, f"Python literal too deeply nested to parse ({type(exc).__name__})") from exc


_LITERAL_NODES = (
    ast.Expression,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Load,
    ast.UnaryOp,
    ast.UAdd,
    ast.USub,
    ast.BinOp,
    ast.Add,
    ast.Sub,
)


def _nan_key_nodes(tree: ast.AST) -> set[int]:
    """ids of the dict keys written as the bare name `nan` (and their Load context)."""
    return {
        id(x)
        for n in ast.walk(tree)
        if isinstance(n, ast.Dict)
        for k in n.keys
        if isinstance(k, ast.Name) and k.id == "nan"
        for x in (k, k.ctx)
    }


def _literal_with_nan_keys(raw: str, name: str) -> object:
    """`ast.literal_eval` where a dict key may be the bare name `nan` (pandas writes a NaN key so), read as
    None. The tree is parsed, never evaluated: each such key node is replaced by the constant None and the
    tree handed to `literal_eval`, which refuses everything else that is not a literal (a `nan` VALUE, a call,
    a name). A dict with two keys that read the same (two `nan`s, or a repeated key) is refused: literal_eval
    would silently keep the last."""
    tree = ast.parse(raw.lstrip(" \t"), mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            seen: set = set()
            for k in node.keys:
                key = (
                    None
                    if isinstance(k, ast.Name) and k.id == "nan"
                    else (k.value if isinstance(k, ast.Constant) else id(k))
                )
                if key in seen:
                    raise IngestError(name, f"dict key {key!r} repeated at line {k.lineno} (ambiguous literal)")
                seen.add(key)
            node.keys = [
                ast.copy_location(ast.Constant(None), k) if isinstance(k, ast.Name) and k.id == "nan" else k
                for k in node.keys
            ]
    return ast.literal_eval(tree)


def _first_non_literal(raw: str, allow_nan_keys: bool = False) -> str | None:
    """Where `literal_eval` gave up: the first name, call or other expression, e.g. "`nan` at line 675"."""
    try:
        tree = ast.parse(raw.lstrip(" \t"), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    allowed = _nan_key_nodes(tree) if allow_nan_keys else set()
    bad = [
        n for n in ast.walk(tree) if not isinstance(n, _LITERAL_NODES) and hasattr(n, "lineno") and id(n) not in allowed
    ]
    if not bad:
        return None
    node = min(bad, key=lambda n: (n.lineno, n.col_offset))
    segment = " ".join((ast.get_source_segment(raw.lstrip(" \t"), node) or type(node).__name__).split())
    return f"`{segment[:40]}` at line {node.lineno}, column {node.col_offset + 1} (only literal values are allowed)"


def delimited(
    data: bytes, name: str, spec: FileSpec, columns: list[str] | tuple[str, ...] | None = None
) -> list[dict[str, str]]:
    """Strictly parse a delimited text file with the spec's encoding, delimiter and quoting: a header
    with the required columns (`columns`, else the spec's), every row as many fields as the header,
    the file ending with a newline (else truncated)."""
    return parse_delimited(
        data,
        name,
        list(spec.columns if columns is None else columns),
        delimiter=spec.delimiter,
        quoting=csv.QUOTE_NONE if spec.quoting == "none" else csv.QUOTE_MINIMAL,
        encoding=spec.encoding,
        row_names=spec.row_names,
    )


def parse_delimited(
    data: bytes,
    name: str,
    required: list[str],
    delimiter: str = ",",
    quoting: int = csv.QUOTE_MINIMAL,
    encoding: str = "utf-8",
    row_names: bool = False,
) -> list[dict[str, str]]:
    text_ = decode(data, name, encoding)
    if not text_:
        raise IngestError(name, "file is empty")
    if not text_.endswith("\n"):
        raise IngestError(name, "file does not end with a newline: truncated?")
    reader = csv.reader(io.StringIO(text_, newline=""), delimiter=delimiter, quoting=quoting, strict=True)
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise IngestError(name, f"cannot read the header ({exc})") from exc
    missing = [c for c in required if c not in header]
    if missing:
        raise IngestError(name, f"missing column(s) {missing}; header has {header}")
    if row_names:  # R's write.table: the header names every column but the row names' (kept as "")
        header = ["", *header]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise IngestError(name, f"duplicate column(s) {dupes}")
    rows = []
    try:
        for rec in reader:
            if len(rec) != len(header):
                raise IngestError(
                    name,
                    f"line {reader.line_num}: {len(rec)} fields, expected {len(header)} (truncated or malformed row)",
                )
            rows.append(dict(zip(header, rec)))
    except csv.Error as exc:
        raise IngestError(name, f"line {reader.line_num}: malformed CSV ({exc})") from exc
    if not rows:
        raise IngestError(name, "no data rows")
    return rows


def rdata(local_or_data: Path | bytes, name: str, spec: FileSpec):
    """The declared object of an R data file as a pandas DataFrame, strings decoded with the declared
    encoding (pyreadr, or the `rdata` package where the spec says `engine = "rdata"`), with the required
    columns present."""
    if spec.engine == "rdata":
        return _with_columns(_rdata_package(local_or_data, name, spec), name, spec)
    import pyreadr

    tmp = None
    if isinstance(local_or_data, (bytes, bytearray)):
        tmp = tempfile.NamedTemporaryFile(suffix=".rda", delete=False)
        tmp.write(local_or_data)
        tmp.close()
        local = Path(tmp.name)
    else:
        local = Path(local_or_data)
    try:
        res = pyreadr.read_r(str(local), encoding=spec.encoding)
    except Exception as exc:  # pyreadr raises several types for bad bytes
        raise IngestError(
            name, f"cannot read the R data file as {spec.encoding} ({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        if tmp is not None:
            Path(tmp.name).unlink(missing_ok=True)
    key = spec.object or (next(iter(res)) if len(res) == 1 else None)
    if key not in res:
        raise IngestError(name, f"no {spec.object or 'single'} object in the R data file (has {list(res)})")
    return _with_columns(res[key], name, spec)


def _with_columns(df, name: str, spec: FileSpec):
    missing = [c for c in spec.columns if c not in df.columns]
    if missing:
        raise IngestError(name, f"missing column(s) {missing}")
    return df


def _rdata_package(local_or_data: Path | bytes, name: str, spec: FileSpec):
    """The declared object read with the `rdata` package: every string decoded with the declared encoding
    (force_default_encoding; pyreadr's librdata refuses mac_roman: "File has an unsupported character set")."""
    import pandas as pd
    import rdata as rdata_pkg

    try:
        data = local_or_data if isinstance(local_or_data, (bytes, bytearray)) else Path(local_or_data).read_bytes()
        parsed = rdata_pkg.parser.parse_data(bytes(data))
        res = rdata_pkg.conversion.convert(parsed, default_encoding=spec.encoding, force_default_encoding=True)
    except Exception as exc:  # the rdata package raises several types for bad bytes
        raise IngestError(
            name,
            f"cannot read the R data file as {spec.encoding} ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]})",
        ) from exc
    key = spec.object or (next(iter(res)) if len(res) == 1 else None)
    if key not in res or not isinstance(res[key], pd.DataFrame):
        raise IngestError(name, f"no {spec.object or 'single'} data frame in the R data file (has {list(res)})")
    return res[key]
