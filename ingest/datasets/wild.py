"""Ingest "Prompts in the wild" (Casares et al. 2022, AAAI): load and validate only.

Upstream: PabloAMC/LM_AAAI22 (catalog folder `in_the_wild`). The two questionnaire
files are Fernet-encrypted JSON so that the prompts stay out of LM training data;
the key is published in the upstream README (`in_the_wild/README.md`, fetched and
sha256-verified like every catalog file). We honour the upstream's wish: files are
decrypted **in memory only**, the plaintext goes straight into the DuckDB warehouse
(`raw.wild_*`) in one transaction, and nothing else (no temp file, no log line, no
error message) ever carries prompt text.

Plaintext layout (pandas `to_json` default orient: `{column: {row_key: value}}`, one
row a respondent; SOURCES.md "Prompts in the wild"):

* `with_GPT3.json` (group A, questionnaires Q1+Q2, 36 respondents): twelve task
  instances in order (items 1-3 numeric, 4-6 communication, 7-9 reasoning,
  10-12 writing; within a task, instance k has difficulty k).
  `form_1_response_i` / `form_1_time_i`: the prompt written for item i and its time
  (devising + wrapping on a task's first instance, wrapping only on the others:
  paper, Methodology). `gpt3_answer_i`: davinci-instruct's completion.
  `form_2_response_{2i-1}` / `form_2_time_{2i-1}`: the answer extracted from the
  completion (unwrapping, U_H); `form_2_response_{2i}` / `form_2_time_{2i}`: its
  usefulness 1-5 and the time to rate it (validation, V_H).
  Demographics: `age`, `engLevel` (Native/Proficient/Medium/Basic), `gpt3`
  (familiarity 0-4), `assistants` (1/2, the README's "yes/no").
* `without_GPT3.json` (group B, Q3, 34 respondents): `response_{2i-1}` /
  `time_{2i-1}`: own solution of item i and its time (G_H); `response_{2i}` /
  `time_{2i}`: self-rated usefulness 1-5 and the time to rate it. Demographics `age`,
  `engLevel` only.

Raw tables written (schema `raw`, every row with `source_path`, `source_sha256`):
`wild_respondents`, `wild_tasks`, `wild_efforts`, `wild_scores`, `wild_texts`.
No metric is computed here (loss, medians, costs live in dbt: models/wild/).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from cryptography.fernet import Fernet, InvalidToken

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.raw import replace_tables
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

DATASET = "wild"
KEY = dataset(DATASET).file("key")
WITH_MODEL = dataset(DATASET).file("with_model")
WITHOUT_MODEL = dataset(DATASET).file("without_model")
README_PATH = KEY.path
WITH_PATH = WITH_MODEL.path
WITHOUT_PATH = WITHOUT_MODEL.path

# The four tasks in questionnaire order (SOURCES.md; paper, Methodology: one task per
# CHC category). Items 3*(t-1)+1 .. 3*t belong to task t; instance k has difficulty k.
TASKS = (
    ("numeric", "Apply price discounts to shoes; difficulty = number of operations"),
    (
        "communication",
        "Write a bank customer an e-mail on an investment's gain or loss; difficulty = how bad the news is",
    ),
    (
        "reasoning",
        "Propose a recipe from a list of ingredients and utensils; difficulty = number of ingredients and utensils",
    ),
    ("writing", "Write song lyrics for a two-year-old about animals; difficulty = number of animals"),
)
N_ITEMS = 12
ENG_LEVELS = {"Native": 1, "Proficient": 2, "Medium": 3, "Basic": 4}  # upstream README coding, 1 = best
# upstream README: "assistants: Previous use of virtual assistants: (yes/no)"; coded 1/2 in the
# data. We keep the code and read it in the README's listed order (1 = yes, 2 = no).
ASSISTANTS = {1: True, 2: False}

# The key line of the upstream README: key = b'...'
_KEY_RE = re.compile(rb"key\s*=\s*b'([A-Za-z0-9_\-]{43}=)'")

TABLES = ("wild_respondents", "wild_tasks", "wild_efforts", "wild_scores", "wild_texts")


def read_key(paths: Paths) -> bytes:
    """The Fernet key, parsed from the fetched, sha256-verified upstream README."""
    readme = readers.source(KEY, paths)
    found = _KEY_RE.findall(readme.data)
    if len(found) != 1:
        raise IngestError(
            readme.path,
            f"expected exactly one Fernet key line `key = b'...'` in the upstream README, "
            f"found {len(found)}; cannot decrypt {WITH_PATH} / {WITHOUT_PATH}",
        )
    return found[0]


def decrypt_json(path: Path, key: bytes) -> dict:
    """Decrypt one questionnaire file in memory and parse its JSON. Errors name the file, never the plaintext."""
    try:
        fernet = Fernet(key)
    except (ValueError, TypeError) as exc:
        raise IngestError(path, f"the Fernet key is malformed ({type(exc).__name__}); nothing written") from None
    try:
        plain = fernet.decrypt(path.read_bytes())
    except InvalidToken:
        raise IngestError(
            path,
            "Fernet decryption failed: wrong key or tampered/corrupted file (token signature invalid); nothing written",
        ) from None
    try:
        data = json.loads(plain)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(
            path,
            f"decrypted payload is not JSON ({type(exc).__name__} at position "
            f"{getattr(exc, 'pos', getattr(exc, 'start', '?'))}); nothing written",
        ) from None
    finally:
        del plain
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise IngestError(path, "decrypted JSON is not a {column: {row: value}} table")
    return data


@dataclass(frozen=True)
class _Source:
    path: str  # catalog path
    sha256: str
    file: Path  # local verified copy (for error messages)
    data: dict
    rows: list[str]  # upstream row keys, numeric order


def _load(paths: Paths, spec, key: bytes) -> _Source:
    src = readers.source(spec, paths)
    catalog_path, local = src.path, src.local
    data = decrypt_json(local, key)
    rows = None
    for col, values in data.items():
        keys = sorted(values, key=lambda k: (len(k), k))
        if rows is None:
            rows = keys
        elif keys != rows:
            raise IngestError(local, f"column {col!r} has a different set of respondent rows than the others")
    return _Source(catalog_path, src.sha256, local, data, rows or [])


def _require(src: _Source, cols: list[str]) -> None:
    missing = [c for c in cols if c not in src.data]
    if missing:
        raise IngestError(src.file, f"missing columns {missing[:6]}{' ...' if len(missing) > 6 else ''}")


def _int(src: _Source, col: str, row: str, lo: int, hi: int, nullable: bool = False) -> int | None:
    v = src.data[col][row]
    if v is None and nullable:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise IngestError(
            src.file, f"row {row} column {col!r}: expected an integer in [{lo}, {hi}], got a {type(v).__name__}"
        )
    return v


def _seconds(src: _Source, col: str, row: str) -> float | None:
    """A measured time in seconds; NULL stays NULL (the upstream has a few missing self-rating times)."""
    v = src.data[col][row]
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0:
        raise IngestError(src.file, f"row {row} column {col!r}: expected a non-negative time in seconds")
    return float(v)


def _text(src: _Source, col: str, row: str) -> str | None:
    v = src.data[col][row]
    if v is None:
        return None
    if not isinstance(v, str):
        return str(v)
    return v


def _item(i: int) -> tuple[str, int]:
    """Item 1..12 -> (domain, instance 1..3)."""
    return TASKS[(i - 1) // 3][0], (i - 1) % 3 + 1


def _prov(src: _Source) -> dict:
    return {"source_path": src.path, "source_sha256": src.sha256}


def _eng(src: _Source, row: str) -> str:
    v = src.data["engLevel"][row]
    if v not in ENG_LEVELS:
        raise IngestError(src.file, f"row {row} column 'engLevel': unknown level (expected one of {list(ENG_LEVELS)})")
    return v


def _item_rows(
    src: _Source,
    row: str,
    key: dict,
    out: dict[str, list],
    efforts: list[tuple[str, str]],
    rated: tuple[str, str],
    texts: list[tuple[str, str]],
) -> None:
    """One respondent's rows for one item: the time of each (component, field), the usefulness score of
    `rated` = (what was rated, field), and each (kind, field) text."""
    out["efforts"] += [
        dict(**key, component=c, upstream_field=f, time_s=_seconds(src, f, row), **_prov(src)) for c, f in efforts
    ]
    what, field = rated
    out["scores"].append(
        dict(**key, rated=what, upstream_field=field, usefulness_score=_int(src, field, row, 1, 5), **_prov(src))
    )
    out["texts"] += [dict(**key, kind=k, upstream_field=f, text=_text(src, f, row), **_prov(src)) for k, f in texts]


def _rows_with_model(a: _Source, out: dict[str, list]) -> None:
    """Group A (with the model): each respondent, their prompting / unwrapping / validating times, the
    usefulness they gave the model's answer, and their prompt, the completion and the answer they extracted."""
    items = range(1, N_ITEMS + 1)
    for row in a.rows:
        rid = f"A{int(row):03d}"
        level = _eng(a, row)
        assist = _int(a, "assistants", row, 1, 2)
        out["respondents"].append(
            dict(
                respondent_id=rid,
                condition="with_model",
                group_label="A",
                upstream_row=row,
                session_ids=f"q1={a.data['session_id1'][row]};q2={a.data['session_id2'][row]};re={a.data['session_id_re'][row]}",
                age_years=_int(a, "age", row, 10, 100),
                eng_level=level,
                eng_level_code=ENG_LEVELS[level],
                gpt3_familiarity=_int(a, "gpt3", row, 0, 4),
                assistants_code=assist,
                uses_assistants=ASSISTANTS[assist],
                **_prov(a),
            )
        )
        for i in items:
            dom, inst = _item(i)
            key = dict(respondent_id=rid, condition="with_model", domain=dom, instance=inst, item=i)
            _item_rows(
                a,
                row,
                key,
                out,
                efforts=[
                    ("prompting", f"form_1_time_{i}"),
                    ("unwrapping", f"form_2_time_{2 * i - 1}"),
                    ("validating", f"form_2_time_{2 * i}"),
                ],
                rated=("model_answer", f"form_2_response_{2 * i}"),
                texts=[
                    ("prompt", f"form_1_response_{i}"),
                    ("completion", f"gpt3_answer_{i}"),
                    ("extracted_answer", f"form_2_response_{2 * i - 1}"),
                ],
            )


def _rows_without_model(b: _Source, out: dict[str, list]) -> None:
    """Group B (without the model): each respondent, their solving and self-rating times, the usefulness they
    gave their own answer, and that answer."""
    items = range(1, N_ITEMS + 1)
    for row in b.rows:
        rid = f"B{int(row):03d}"
        level = _eng(b, row)
        out["respondents"].append(
            dict(
                respondent_id=rid,
                condition="without_model",
                group_label="B",
                upstream_row=row,
                session_ids=f"user={b.data['user_id'][row]};q3={b.data['session_id'][row]}",
                age_years=_int(b, "age", row, 10, 100),
                eng_level=level,
                eng_level_code=ENG_LEVELS[level],
                gpt3_familiarity=None,
                assistants_code=None,
                uses_assistants=None,
                **_prov(b),
            )
        )
        for i in items:
            dom, inst = _item(i)
            key = dict(respondent_id=rid, condition="without_model", domain=dom, instance=inst, item=i)
            _item_rows(
                b,
                row,
                key,
                out,
                efforts=[("solving", f"time_{2 * i - 1}"), ("self_rating", f"time_{2 * i}")],
                rated=("own_answer", f"response_{2 * i}"),
                texts=[("own_answer", f"response_{2 * i - 1}")],
            )


def _frames(a: _Source, b: _Source) -> dict[str, pl.DataFrame]:
    items = range(1, N_ITEMS + 1)
    _require(
        a,
        ["age", "engLevel", "gpt3", "assistants", "session_id1", "session_id2", "session_id_re"]
        + [f"form_1_{k}_{i}" for i in items for k in ("response", "time")]
        + [f"gpt3_answer_{i}" for i in items]
        + [f"form_2_{k}_{j}" for j in range(1, 2 * N_ITEMS + 1) for k in ("response", "time")],
    )
    _require(
        b,
        ["age", "engLevel", "user_id", "session_id"]
        + [f"{k}_{j}" for j in range(1, 2 * N_ITEMS + 1) for k in ("response", "time")],
    )

    out: dict[str, list] = {"respondents": [], "efforts": [], "scores": [], "texts": []}
    _rows_with_model(a, out)
    _rows_without_model(b, out)
    tasks = [
        dict(
            domain=dom,
            task_index=t + 1,
            instance=k,
            item=3 * t + k,
            difficulty=k,
            description=desc,
            source_path=a.path,
            source_sha256=a.sha256,
        )
        for t, (dom, desc) in enumerate(TASKS)
        for k in (1, 2, 3)
    ]

    eff_schema = {"time_s": pl.Float64}
    return {
        "wild_respondents": pl.DataFrame(
            out["respondents"],
            schema_overrides={
                "gpt3_familiarity": pl.Int32,
                "assistants_code": pl.Int32,
                "uses_assistants": pl.Boolean,
                "age_years": pl.Int32,
                "eng_level_code": pl.Int32,
            },
        ),
        "wild_tasks": pl.DataFrame(tasks),
        "wild_efforts": pl.DataFrame(out["efforts"], schema_overrides=eff_schema),
        "wild_scores": pl.DataFrame(out["scores"], schema_overrides={"usefulness_score": pl.Int32}),
        "wild_texts": pl.DataFrame(out["texts"], schema_overrides={"text": pl.Utf8}),
    }


def ingest_wild(paths: Paths, key: bytes | None = None) -> dict[str, int]:
    """Decrypt (in memory), validate and load both questionnaires into `raw.wild_*`.

    `key` overrides the Fernet key parsed from the fetched upstream README (tests use it
    to check that a wrong key fails cleanly). All five tables are replaced in a single
    transaction: a wrong key, a tampered file or a validation failure raises
    `IngestError` naming the file before anything is written. Returns rows per table.
    """
    # One transaction for the whole dataset; the tables hold this dataset only.
    return replace_tables(paths, build_frames(paths, key))


def build_frames(paths: Paths, key: bytes | None = None) -> dict[str, pl.DataFrame]:
    """Decrypt, parse and validate both questionnaires (nothing is written)."""
    if key is None:
        key = read_key(paths)
    return _frames(_load(paths, WITH_MODEL, key), _load(paths, WITHOUT_MODEL, key))
