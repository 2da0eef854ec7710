"""Ingest the LM game's pairwise ("which one scored") experiment: Shlegeris et al. 2024, section 4.

Loads and validates only; every metric (r, the importance-sampling terms, L_h - L_G,
perplexities) is derived in dbt (`dbt_project/models/*/pairwise/`).

Inputs (catalog dataset `lm_game_pairwise`, read only through `verified_path`):

- `lm_game/analysis/results_raw/res_loss_anonym.json`: rows
  `[id, user, guess, comparison_id, comparison_number]`; `guess` is the player's
  probability in percent that the TRUE token y is the real next token, `comparison_number`
  is k, the index of the generator sample x_k that was shown against y.
- `lm_game/server/multi_comparisons/doc{comparison_id}.json`: the context c
  (`input_str`), y (`correct_token_str`), 400 samples x_k (`generated_token_strs`) drawn
  from the generator G (`generator_names[generator_index]`, GPT-2 small), and the natural-log
  probabilities of y (`correct_logprobs[m]`) and of each x_k (`generated_logprobss[m][k]`)
  under the three models m. `generation_probs` (g(x_k|c), equal to
  exp(generated_logprobss[generator_index][k])) exists only in the 10000-series files.

Raw tables written (schema `raw`, all in ONE transaction, whole tables replaced):

- `pairwise_questions`: one row per comparison file.
- `pairwise_samples`: one row per (comparison_id, k), k = 0..399.
- `pairwise_answers`: one row per upstream answer row (kept as is: duplicates and
  incomplete players too; which players count is decided in dbt).
- `pairwise_skipped_files`: comparison files outside the experiment (not in a question set,
  not training, never answered) that could not be read, with the problem. Upstream
  `doc20156.json` is truncated at the pinned commit; it is not part of the experiment, so it
  is recorded here instead of blocking the ingest. A bad file that the experiment needs
  (a question-set, training or answered comparison, or the answers file) raises
  `IngestError(file, problem)` before anything is written.

Word tokens (Shlegeris et al. 2024, appendix D): y "starts with a space and otherwise only contains
alphabetical characters" (`y[0] == ' '` and `y[1:].isalpha()`; 84 of the 120 question-set
tokens). The top-1 game's extra condition (the NEXT token starts with a space, SOURCES.md)
cannot be applied here: a comparison file holds the context and y only, not the token after
y, and appendix D does not use it for the pairwise game.
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl

from predictabase.core.config import Paths
from predictabase.core.errors import IngestError
from predictabase.ingest.raw import replace_tables
from predictabase.ingest.sources import readers
from predictabase.ingest.sources.catalog import SourceFile
from predictabase.ingest.sources.definitions import dataset
from predictabase.ingest.sources.fetch import verified_path

DATASET = "pairwise"
ANSWERS = dataset(DATASET).file("answers")
COMPARISONS = dataset(DATASET).file("comparisons")
ANSWERS_PATH = ANSWERS.path
COMPARISONS_DIR = COMPARISONS.glob.rsplit("/", 1)[0] + "/"

# Question sets as the authors define them (Shlegeris et al. 2024, section 4.1; SOURCES.md).
QUESTION_SETS = {"set_1": range(10000, 10040), "set_2": range(20010, 20090)}
TRAINING = range(20000, 20010)
N_SAMPLES = 400
# The upstream model names, in the order of `generator_names`, and our column stems.
MODELS = {
    "gelu_two_layers/": "two_layers",
    "gelu_twelve_layers/": "twelve_layers",
    "gelu_twenty_four_layers/": "twenty_four_layers",
}
# The interface's 11 choices (percent that y is the real token); 50 is also the auto answer.
CHOICES_PERCENT = (1.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 99.0)

TABLES = ("pairwise_questions", "pairwise_samples", "pairwise_answers", "pairwise_skipped_files")


def question_set(comparison_id: int) -> str:
    for name, ids in QUESTION_SETS.items():
        if comparison_id in ids:
            return name
    return "training" if comparison_id in TRAINING else "pool"


def is_word_token(token: str) -> bool:
    """Shlegeris et al. 2024, appendix D: a space, then only alphabetical characters (at least one)."""
    return len(token) > 1 and token[0] == " " and token[1:].isalpha()


def _finite_logprob(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v <= 1e-6


def _load_json(path: Path, spec=COMPARISONS) -> object:
    return readers.json_value(path.read_bytes(), str(path), spec)


def parse_comparison(path: Path, comparison_id: int) -> dict:
    """Validate one docN.json and return its fields; IngestError names the problem."""
    d = _load_json(path)
    if not isinstance(d, dict):
        raise IngestError(path, "expected a JSON object")
    required = (
        "id",
        "input_str",
        "correct_token_str",
        "generated_token_strs",
        "generator_index",
        "generator_names",
        "correct_logprobs",
        "generated_logprobss",
    )
    missing = [k for k in required if k not in d]
    if missing:
        raise IngestError(path, f"missing field(s) {', '.join(missing)}")
    if d["id"] != comparison_id:
        raise IngestError(path, f"id {d['id']!r} does not match the file name ({comparison_id})")
    if not isinstance(d["input_str"], str) or not isinstance(d["correct_token_str"], str) or not d["correct_token_str"]:
        raise IngestError(path, "input_str / correct_token_str must be strings (y non-empty)")
    names = d["generator_names"]
    if list(names) != list(MODELS):
        raise IngestError(path, f"generator_names {names!r}, expected {list(MODELS)!r}")
    gi = d["generator_index"]
    if not isinstance(gi, int) or not 0 <= gi < len(names):
        raise IngestError(path, f"generator_index {gi!r} out of range")
    xs = d["generated_token_strs"]
    if not isinstance(xs, list) or len(xs) != N_SAMPLES or not all(isinstance(x, str) for x in xs):
        raise IngestError(path, f"generated_token_strs must be {N_SAMPLES} strings")
    cl = d["correct_logprobs"]
    if not isinstance(cl, list) or len(cl) != len(names) or not all(_finite_logprob(v) for v in cl):
        raise IngestError(path, "correct_logprobs must hold one finite log-probability (<= 0) per model")
    gl = d["generated_logprobss"]
    if (
        not isinstance(gl, list)
        or len(gl) != len(names)
        or any(not isinstance(row, list) or len(row) != N_SAMPLES for row in gl)
    ):
        raise IngestError(path, f"generated_logprobss must be {len(names)} lists of {N_SAMPLES}")
    if not all(_finite_logprob(v) for row in gl for v in row):
        raise IngestError(path, "generated_logprobss holds a non-finite or positive log-probability")
    gp = d.get("generation_probs")
    if gp is not None:
        if (
            not isinstance(gp, list)
            or len(gp) != N_SAMPLES
            or not all(isinstance(v, (int, float)) and 0 < v <= 1 for v in gp)
        ):
            raise IngestError(path, f"generation_probs must be {N_SAMPLES} probabilities in (0, 1]")
    return d


def parse_answers(path: Path) -> list[list]:
    rows = _load_json(path)
    if not isinstance(rows, list) or not rows:
        raise IngestError(path, "expected a non-empty JSON list of answer rows")
    seen: set[int] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 5:
            raise IngestError(path, f"row {i}: expected [id, user, guess, comparison_id, comparison_number]")
        rid, user, guess, cid, k = row
        if not isinstance(rid, int) or rid in seen:
            raise IngestError(path, f"row {i}: id {rid!r} missing or duplicated")
        seen.add(rid)
        if not isinstance(user, int) or isinstance(user, bool):
            raise IngestError(path, f"row {i}: user {user!r} is not an integer hash")
        if not isinstance(guess, (int, float)) or float(guess) not in CHOICES_PERCENT:
            raise IngestError(path, f"row {i}: guess {guess!r} is not one of the interface's choices {CHOICES_PERCENT}")
        if not isinstance(cid, int) or not isinstance(k, int) or not 0 <= k < N_SAMPLES:
            raise IngestError(path, f"row {i}: comparison_id {cid!r} / comparison_number {k!r} invalid")
    return rows


def _provenance(sf: SourceFile) -> dict[str, str]:
    return {"source_path": sf.path, "source_sha256": sf.sha256}


def build_frames(paths: Paths) -> dict[str, pl.DataFrame]:
    """Read and validate every input; no warehouse access. Raises IngestError on a bad needed file."""
    answers_sf = next(iter(ANSWERS.catalog_files()), None)
    if answers_sf is None:
        raise IngestError(ANSWERS_PATH, f"not in the source catalog ({DATASET}.answers)")
    comparisons: dict[int, SourceFile] = {}
    for f in COMPARISONS.catalog_files():
        stem = Path(f.path).stem
        if not stem.startswith("doc") or not stem[3:].isdigit():
            raise IngestError(f.path, "unexpected comparison file name")
        comparisons[int(stem[3:])] = f

    answers_file = verified_path(answers_sf, paths)
    answers = parse_answers(answers_file)
    answered = {row[3] for row in answers}
    needed = set(answered) | {i for ids in QUESTION_SETS.values() for i in ids} | set(TRAINING)
    absent = sorted(needed - set(comparisons))
    if absent:
        raise IngestError(COMPARISONS_DIR, f"no comparison file for needed comparison_id(s) {absent[:10]}")

    q_rows, s_cols, skipped = (
        [],
        {
            c: []
            for c in (
                "comparison_id",
                "k",
                "sample_token",
                "is_true_token",
                "generation_prob",
                "generator_logprob_x_nats",
                *[f"logprob_x_{m}_nats" for m in MODELS.values()],
                "source_path",
                "source_sha256",
            )
        },
        [],
    )
    parsed: dict[int, dict] = {}
    for cid in sorted(comparisons):
        sf = comparisons[cid]
        p = verified_path(sf, paths)
        try:
            d = parse_comparison(p, cid)
        except IngestError as exc:
            if cid in needed:
                raise
            skipped.append({"comparison_id": cid, "problem": exc.problem, **_provenance(sf)})
            continue
        parsed[cid] = d
        gi, y = d["generator_index"], d["correct_token_str"]
        qset = question_set(cid)
        q_rows.append(
            {
                "comparison_id": cid,
                "question_set": qset,
                "is_training": qset == "training",
                "context": d["input_str"],
                "true_token": y,
                "is_word_token": is_word_token(y),
                "generator_index": gi,
                "generator_name": d["generator_names"][gi],
                "generator_logprob_y_nats": float(d["correct_logprobs"][gi]),
                **{f"logprob_y_{m}_nats": float(d["correct_logprobs"][j]) for j, m in enumerate(MODELS.values())},
                "has_generation_probs": "generation_probs" in d,
                "n_samples": N_SAMPLES,
                **_provenance(sf),
            }
        )
        gp = d.get("generation_probs")
        for k, x in enumerate(d["generated_token_strs"]):
            s_cols["comparison_id"].append(cid)
            s_cols["k"].append(k)
            s_cols["sample_token"].append(x)
            s_cols["is_true_token"].append(x == y)
            s_cols["generation_prob"].append(float(gp[k]) if gp is not None else None)
            s_cols["generator_logprob_x_nats"].append(float(d["generated_logprobss"][gi][k]))
            for j, m in enumerate(MODELS.values()):
                s_cols[f"logprob_x_{m}_nats"].append(float(d["generated_logprobss"][j][k]))
            s_cols["source_path"].append(sf.path)
            s_cols["source_sha256"].append(sf.sha256)

    a_rows = []
    for rid, user, guess, cid, k in answers:
        d = parsed[cid]
        auto = d["generated_token_strs"][k] == d["correct_token_str"]
        if auto and float(guess) != 50.0:
            raise IngestError(answers_file, f"answer id {rid}: x_k = y (auto-answered) but guess is {guess}, not 50")
        a_rows.append(
            {
                "answer_id": rid,
                "player": str(user),
                "comparison_id": cid,
                "k": k,
                "p_percent": float(guess),
                "auto_answered": auto,
                **_provenance(answers_sf),
            }
        )

    return {
        "pairwise_questions": pl.DataFrame(
            q_rows, schema_overrides={"comparison_id": pl.Int32, "generator_index": pl.Int32, "n_samples": pl.Int32}
        ),
        "pairwise_samples": pl.DataFrame(
            s_cols, schema_overrides={"comparison_id": pl.Int32, "k": pl.Int32, "generation_prob": pl.Float64}
        ),
        "pairwise_answers": pl.DataFrame(
            a_rows, schema_overrides={"answer_id": pl.Int64, "comparison_id": pl.Int32, "k": pl.Int32}
        ),
        "pairwise_skipped_files": pl.DataFrame(
            skipped,
            schema={"comparison_id": pl.Int32, "problem": pl.Utf8, "source_path": pl.Utf8, "source_sha256": pl.Utf8},
        ),
    }


def write_frames(paths: Paths, frames: dict[str, pl.DataFrame]) -> dict[str, int]:
    """Replace every `raw.pairwise_*` table in one transaction (re-running replaces, never duplicates)."""
    return replace_tables(paths, frames)


def ingest_pairwise(paths: Paths) -> dict[str, int]:
    """Load the pairwise game into `raw.pairwise_*`; returns rows written per table."""
    return write_frames(paths, build_frames(paths))


__all__ = [
    "ingest_pairwise",
    "build_frames",
    "write_frames",
    "parse_comparison",
    "parse_answers",
    "is_word_token",
    "question_set",
]
