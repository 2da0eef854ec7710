"""The top-1 next-token game (Shlegeris et al. 2024, section 3): the players' guesses, the authors' model
accuracies and the game's vocabulary, loaded and validated as they are upstream.

Three ingest jobs, one per catalog dataset (definitions in ingest/sources/datasets.toml), each
writing whole tables (`replace_tables_in`, inside the command's one transaction):

- `lm_game_top1` -> `raw.top1_guesses`: one row per row of `res_accuracy_anonym.json`
  `[id, user, guess, correct_answer, guessed_token_idx, doc_id]`, every row kept (no filtering):
  `row_id` (id), `player_id` (the salted hash as decimal text), `doc_id` (str, the key of
  raw.documents for corpus lm_game), `position` (guessed_token_idx, 1-based: the true token is
  docs/doc{doc_id}.json[position - 1]), `guess`, `correct_answer_upstream` (a front-end bug upstream,
  not the true token: kept for the record only). The true token, the flags (out of range,
  impossible, word token, excluded player) and the analysis subset are derived in dbt
  (`int_top1_guesses`), from raw.game_doc_tokens.
- `lm_game_model_perfs` -> `raw.top1_reference_accuracies`: one row per (file, model) of the
  `model_perfs*.json` files (the authors' aggregate top-1 accuracies, computed elsewhere on samples of
  the questions): `reference_file` (basename), `model_name`, `accuracy` (0..1). Which subset a file
  measured is not stated upstream (seed `top1_reference_files`).
- `lm_game_vocabulary` -> `raw.game_vocabulary`: `token_id` (index in `tokens.json`), `token`.
  tokens.json is a Python list literal, not JSON (format `python_literal`). It holds the 50,257
  GPT-2 ids in id order, each decoded alone with transformers' old tokenization clean-up (23 ids such
  as 764 ' .' read '.', as in the game's documents); strings repeat (352 partial UTF-8 bytes read
  U+FFFD).

A bad file raises `IngestError(catalog path, problem)` (one line, naming the row) before anything is
written. No metric is computed here.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.definitions import dataset

GUESSES = dataset("lm_game_top1").file("guesses")
MODEL_PERFS = dataset("lm_game_model_perfs").file("model_perfs")
VOCABULARY = dataset("lm_game_vocabulary").file("tokens")
DOCUMENTS = dataset("lm_game").file("documents")

GUESS_SCHEMA = {
    "row_id": pl.Int64,
    "player_id": pl.String,
    "doc_id": pl.String,
    "position": pl.Int32,
    "guess": pl.String,
    "correct_answer_upstream": pl.String,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
ACCURACY_SCHEMA = {
    "reference_file": pl.String,
    "model_name": pl.String,
    "accuracy": pl.Float64,
    "source_path": pl.String,
    "source_sha256": pl.String,
}
VOCABULARY_SCHEMA = {"token_id": pl.Int32, "token": pl.String, "source_path": pl.String, "source_sha256": pl.String}

GPT2_VOCAB_SIZE = 50257
#: ids whose GPT-2 strings are known (encoder.json), to check that list order is GPT-2 id order
GPT2_KNOWN_IDS = {0: "!", 13: ".", 198: "\n", 220: " ", 262: " the", 290: " and", 464: "The", 50256: "<|endoftext|>"}
_INT64 = (-(2**63), 2**63 - 1)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _document_ids() -> set[int]:
    """The lm_game documents the catalog holds (docs/doc{N}.json)."""
    out = set()
    for f in DOCUMENTS.catalog_files():
        m = re.fullmatch(r"doc(\d+)\.json", PurePosixPath(f.path).name)
        if m:
            out.add(int(m.group(1)))
    return out


def parse_guesses(data: bytes, name: str, document_ids: set[int] | None = None) -> list[tuple]:
    """res_accuracy_anonym.json -> (row_id, player_id, doc_id, position, guess, correct_answer) per row,
    in file order. Every row must be `[id, user, guess, correct_answer, guessed_token_idx, doc_id]` with
    a unique positive int id, an int user hash, a non-empty guess string, a string correct_answer, a
    position >= 1 and (when `document_ids` is given) a doc_id the catalog has a document for."""
    rows = readers.json_value(data, name, GUESSES)
    if not isinstance(rows, list) or not rows:
        raise IngestError(name, "expected a non-empty JSON list of rows")
    out, seen = [], set()
    for k, r in enumerate(rows):
        if not isinstance(r, list) or len(r) != 6:
            raise IngestError(
                name, f"row {k}: expected [id, user, guess, correct_answer, guessed_token_idx, doc_id], got {r!r:.120}"
            )
        rid, user, guess, correct, idx, doc = r
        if not _is_int(rid) or rid < 1 or rid > _INT64[1]:
            raise IngestError(name, f"row {k}: id {rid!r} is not a positive integer")
        if rid in seen:
            raise IngestError(name, f"row {k}: id {rid} appears twice")
        seen.add(rid)
        where = f"row {k} (id {rid})"
        if not _is_int(user) or not _INT64[0] <= user <= _INT64[1]:
            raise IngestError(name, f"{where}: user {user!r:.60} is not an integer hash")
        if not isinstance(guess, str) or guess == "":
            raise IngestError(name, f"{where}: guess {guess!r:.60} is not a non-empty string")
        if not isinstance(correct, str):
            raise IngestError(name, f"{where}: correct_answer {correct!r:.60} is not a string")
        if not _is_int(idx) or not 1 <= idx <= 2**31 - 1:
            raise IngestError(name, f"{where}: guessed_token_idx {idx!r:.60} is not a positive integer (1-based)")
        if not _is_int(doc) or doc < 0:
            raise IngestError(name, f"{where}: doc_id {doc!r:.60} is not a non-negative integer")
        if document_ids is not None and doc not in document_ids:
            raise IngestError(
                name, f"{where}: doc_id {doc} has no document in the catalog ({DOCUMENTS.glob.replace('*', str(doc))})"
            )
        out.append((rid, str(user), str(doc), idx, guess, correct))
    return out


def load_guesses(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(GUESSES, paths)
    rows = parse_guesses(src.data, src.path, _document_ids())
    cols = list(zip(*rows))
    frame = {name: list(col) for name, col in zip(list(GUESS_SCHEMA)[:6], cols)}
    frame |= {"source_path": [src.path] * len(rows), "source_sha256": [src.sha256] * len(rows)}
    return {"top1_guesses": pl.DataFrame(frame, schema=GUESS_SCHEMA, strict=True)}


def parse_model_perfs(data: bytes, name: str) -> list[tuple[str, float]]:
    """A model_perfs*.json: a non-empty JSON object, model name -> accuracy in [0, 1]."""
    d = readers.json_value(data, name, MODEL_PERFS)
    if not isinstance(d, dict) or not d:
        raise IngestError(name, "expected a non-empty JSON object of model name -> top-1 accuracy")
    out = []
    for model, acc in d.items():
        if not model.strip():
            raise IngestError(name, f"model name {model!r} is empty")
        if not isinstance(acc, (int, float)) or isinstance(acc, bool) or not math.isfinite(acc) or not 0 <= acc <= 1:
            raise IngestError(name, f"model {model!r}: accuracy {acc!r:.60} is not a number in [0, 1]")
        out.append((model, float(acc)))
    return out


def load_model_perfs(paths: Paths) -> dict[str, pl.DataFrame]:
    rows = []
    for src in readers.sources(MODEL_PERFS, paths):
        base = PurePosixPath(src.path).name
        for model, acc in parse_model_perfs(src.data, src.path):
            rows.append(
                {
                    "reference_file": base,
                    "model_name": model,
                    "accuracy": acc,
                    "source_path": src.path,
                    "source_sha256": src.sha256,
                }
            )
    return {"top1_reference_accuracies": pl.DataFrame(rows, schema=ACCURACY_SCHEMA, strict=True)}


def parse_vocabulary(data: bytes, name: str) -> list[str]:
    """tokens.json (a Python list literal): the 50,257 GPT-2 token strings in id order."""
    tokens = readers.python_literal(data, name, VOCABULARY)
    if not isinstance(tokens, list):
        raise IngestError(name, f"expected a list of token strings, got a {type(tokens).__name__}")
    if len(tokens) != GPT2_VOCAB_SIZE:
        raise IngestError(name, f"{len(tokens)} tokens, expected the {GPT2_VOCAB_SIZE} of GPT-2")
    for i, t in enumerate(tokens):
        if not isinstance(t, str) or t == "":
            raise IngestError(name, f"token {i} is {t!r:.60}, expected a non-empty string")
    for i, t in GPT2_KNOWN_IDS.items():
        if tokens[i] != t:
            raise IngestError(name, f"token {i} is {tokens[i]!r}, GPT-2's id {i} is {t!r}: not in GPT-2 id order")
    return tokens


def load_vocabulary(paths: Paths) -> dict[str, pl.DataFrame]:
    src = readers.source(VOCABULARY, paths)
    tokens = parse_vocabulary(src.data, src.path)
    n = len(tokens)
    return {
        "game_vocabulary": pl.DataFrame(
            {"token_id": range(n), "token": tokens, "source_path": [src.path] * n, "source_sha256": [src.sha256] * n},
            schema=VOCABULARY_SCHEMA,
            strict=True,
        )
    }
