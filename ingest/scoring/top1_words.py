"""Word-level top-1 predictions on the top-1 game's questions (Shlegeris et al. 2024, section 3).

The game asked for GPT-2 tokens. A model with another tokenizer (SmolLM2, Gemma, ...) cannot be
compared token by token, so on the questions whose true token is a whole word (the paper's
word-token subset: ' ' + letters, followed by a token starting with a space) we ask which *word*
the model finds most probable, among the words a player could have typed (the game's choice set:
the GPT-2 vocabulary entries ' ' + letters).

The search itself (word probabilities, the exact best-first search, its speed) is
`predictabase.ingest.scoring.word_search`.

Models whose tokenizer is the game's (GPT-2 BPE) do not go through here: dbt compares the
scorer's top-k tokens at the question exactly (`int_top1_model_predictions`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError, ScoringError, WarehouseError
from predictabase.core.fsutil import atomic_dir
from predictabase.ingest import corpus_table
from predictabase.ingest.raw import now_iso
from predictabase.ingest.scoring.profile import TokenizerProfile
from predictabase.ingest.scoring.word_search import (
    PredictorSpec,
    Question,
    SearchSettings,
    WordPredictor,
    build_trie,
    is_word_token,
    predict_documents_with,
)

PREDICTOR_VERSION = 1
METHOD = "word"

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("model_key", pa.string()),
        ("doc_id", pa.string()),
        ("position", pa.int32()),  # the game's guessed_token_idx (1-based)
        ("true_char_start", pa.int32()),  # the context is the document's text[:true_char_start]
        ("status", pa.string()),  # ok | no_token_boundary
        ("context_tokens", pa.int32()),  # model tokens of context seen (BOS not counted)
        ("logprob_boundary_before_nats", pa.float64()),  # ln B(c): mass on word-initial tokens + end-of-text
        ("candidate_words", pa.list_(pa.string())),  # most probable first, ' word' as the game writes it
        ("candidate_logprobs_nats", pa.list_(pa.float64())),  # ln p(w | c) = ln prod p(t_i) + ln B(after w)
        ("candidate_token_counts", pa.list_(pa.int32())),
        ("top_first_tokens", pa.list_(pa.string())),  # the most probable first pieces of choice-set words
        ("top_first_token_logprobs_nats", pa.list_(pa.float64())),  # their ln p (upper bounds on those words)
        ("n_expanded", pa.int32()),  # forward steps (prefix nodes) this question cost
        ("max_unexplored_bound", pa.float64()),  # probability of the most probable unexpanded prefix
        ("unexplored_mass", pa.float64()),  # total probability of the unexpanded prefixes
    ]
)
RUN_FILE = "_run.json"
PREDICTIONS_FILE = "predictions.parquet"


#: the search settings of the game (predictabase.ingest.scoring.word_search)
Top1Settings = SearchSettings


# --------------------------------------------------------------------------- reading questions, writing runs


@dataclass
class Top1Inputs:
    docs: dict[str, str]  # lm_game doc_id -> text
    questions: dict[str, list[Question]]  # doc_id -> its word-token questions
    game_vocab: list[str]  # the game's vocabulary by GPT-2 id
    corpus_version: str
    choice_sha: str  # checksum of the vocabulary file

    @property
    def words(self) -> list[str]:
        """The choice set: the vocabulary's word tokens (' ' + letters)."""
        return sorted({t for t in self.game_vocab if is_word_token(t)})


def read_inputs(paths: Paths) -> Top1Inputs:
    """The lm_game documents, the word-token questions, the game's vocabulary, the corpus version
    and the vocabulary's checksum, from the raw tables."""
    if not paths.duckdb.exists():
        raise WarehouseError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        try:
            docs = dict(
                con.execute("SELECT doc_id, text FROM raw.documents WHERE corpus = ?", [corpus_table.GAME]).fetchall()
            )
            version = con.execute(
                "SELECT any_value(corpus_version) FROM raw.documents WHERE corpus = ?", [corpus_table.GAME]
            ).fetchone()[0]
            rows = con.execute("""
                SELECT DISTINCT g.doc_id, g.position, t.token, t.char_start, n.token
                FROM raw.top1_guesses g
                JOIN raw.game_doc_tokens t ON t.doc_id = g.doc_id AND t.token_index = g.position - 1
                LEFT JOIN raw.game_doc_tokens n ON n.doc_id = g.doc_id AND n.token_index = g.position
                ORDER BY 1, 2""").fetchall()
            vocab = con.execute("SELECT token, source_sha256 FROM raw.game_vocabulary ORDER BY token_id").fetchall()
        except duckdb.Error as exc:
            raise ScoringError(
                paths.duckdb,
                f"cannot read the top-1 game's raw tables ({str(exc).splitlines()[0]}); "
                "run `predictabase ingest` first",
            ) from exc
    finally:
        con.close()
    if not docs or not rows or not vocab:
        raise ScoringError(
            paths.duckdb,
            "the top-1 game is not ingested (lm_game documents, raw.top1_guesses, "
            "raw.game_vocabulary); run `predictabase ingest` first",
        )
    questions: dict[str, list[Question]] = {}
    for doc_id, pos, tok, cs, nxt in rows:
        if is_word_token(tok) and nxt is not None and nxt.startswith(" "):
            questions.setdefault(doc_id, []).append(Question(doc_id, int(pos), int(cs)))
    return Top1Inputs(docs, questions, [t for t, _ in vocab], str(version), vocab[0][1])


def tokenizer_is_games(profile: TokenizerProfile, game_vocab: list[str]) -> bool:
    """True when the model's ids decode to the game's vocabulary (GPT-2 BPE): dbt then compares the
    scorer's top-k tokens exactly. The game's file decodes ids with an old space clean-up (' .' reads
    '.': 23 of 50,257 ids), so 99% of the ids must agree, not all."""
    tok = profile.tokenizer
    if len(tok) != len(game_vocab):
        return False
    same = sum(tok.decode([i]) == game_vocab[i] for i in range(len(game_vocab)))
    return same >= 0.99 * len(game_vocab)


def make_run_id(
    lm,
    profile: TokenizerProfile,
    corpus_version: str,
    choice_sha: str,
    settings: Top1Settings,
    context_length: int,
    limit: int | None = None,
) -> str:
    key = {
        "predictor_version": PREDICTOR_VERSION,
        "model_revision": lm.model_revision,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "bos_token_id": profile.bos.token_id,
        "dtype": lm.dtype,
        "end_of_text_ids": sorted(profile.end_of_text_ids),
        "corpus_version": corpus_version,
        "choice_set_sha256": choice_sha,
        "context_length": context_length,
        "limit": limit,
        **asdict(settings),
    }
    key.pop("batch_tokens")  # batching changes nothing but speed (checked by tests)
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def run_dir(paths: Paths, model_key: str, run_id: str) -> Path:
    return paths.top1_predictions / f"model={model_key}" / f"run={run_id}"


def table_of(run_id: str, model_key: str, results: list[dict]) -> pa.Table:
    cols = {name: [r[name] for r in results] for name in SCHEMA.names if name not in ("run_id", "model_key")}
    n = len(results)
    return pa.table({"run_id": [run_id] * n, "model_key": [model_key] * n, **cols}).cast(SCHEMA)


def _build_predictor(loaded, trie, settings: Top1Settings, context_length: int) -> WordPredictor:
    """The top-1 predictor of a loaded model (here, or on a replica of the Ray engine)."""
    return WordPredictor(
        loaded.lm.model, loaded.profile, trie, settings, device=loaded.lm.device, context_length=context_length
    )


def predict_top1(
    paths: Paths,
    lm,
    profile: TokenizerProfile,
    settings: Top1Settings,
    context_length: int,
    progress: Callable[[str, int, int], None] | None = None,
    limit: int | None = None,
    inputs: Top1Inputs | None = None,
    pool=None,
) -> dict:
    """Predict every word-token question for one loaded model; returns the run record.
    `inputs`: what `read_inputs` returns (read here when not given). `pool`: the Ray engine's replicas
    (`predictabase.ingest.scoring.distributed`); `lm.model` is then None.

    A complete run (its `_run.json`) is not redone; a new run replaces nothing else.
    """
    settings.check()
    inputs = inputs or read_inputs(paths)
    docs, questions, words = inputs.docs, inputs.questions, inputs.words
    version, choice_sha = inputs.corpus_version, inputs.choice_sha
    run = {"method": METHOD}
    run_id = make_run_id(lm, profile, version, choice_sha, settings, context_length, limit)
    directory = run_dir(paths, lm.model_key, run_id)
    if (directory / RUN_FILE).exists():
        rec = json.loads((directory / RUN_FILE).read_text())
        rec["skipped"] = True
        return rec
    trie = build_trie(profile, words)
    doc_ids = sorted(questions, key=lambda d: int(d) if d.isdigit() else d)
    if limit is not None:
        doc_ids = doc_ids[:limit]
    n_q = sum(len(questions[d]) for d in doc_ids)
    started, t0 = now_iso(), time.perf_counter()
    done = 0

    def on_done(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(lm.model_key, done, n_q)

    todo = [(docs[d], questions[d]) for d in doc_ids]
    spec = PredictorSpec(run_id, _build_predictor, (trie, settings, context_length))
    results, _ = predict_documents_with(spec, lm, profile, todo, on_done, pool)
    table = table_of(run_id, lm.model_key, results)
    run.update(
        run_id=run_id,
        model_key=lm.model_key,
        model_id=lm.model_id,
        model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name,
        tokenizer_sha256=lm.tokenizer_sha256,
        dtype=lm.dtype,
        device=lm.device,
        bos_token_id=profile.bos.token_id,
        bos_token=profile.bos.token,
        end_of_text_ids=sorted(int(i) for i in profile.end_of_text_ids),
        corpus=corpus_table.GAME,
        corpus_version=version,
        choice_set_sha256=choice_sha,
        n_choice_words=len(words),
        n_choice_words_without_path=len(trie.skipped),
        context_length=context_length,
        predictor_version=PREDICTOR_VERSION,
        **asdict(settings),
        n_docs=len(doc_ids),
        n_questions=n_q,
        n_expanded=int(sum(r["n_expanded"] for r in results)),
        limit=limit,
        started_at=started,
        finished_at=now_iso(),
        seconds=round(time.perf_counter() - t0, 2),
    )
    with atomic_dir(directory) as tmp:
        pq.write_table(table, tmp / PREDICTIONS_FILE, compression="zstd")
        (tmp / RUN_FILE).write_text(json.dumps(run, indent=2, sort_keys=True) + "\n")
    return run


def run_top1(
    paths: Paths,
    model_spec: str,
    settings: Top1Settings,
    device: str | None = None,
    dtype: str | None = None,
    limit: int | None = None,
    show_progress: bool = True,
    engine=None,
) -> dict:
    """`predictabase top1`: load the model; word-level predictions unless its tokenizer is the
    game's (then dbt compares the scorer's top-k tokens exactly and nothing is written here).
    `engine`: None (this process) or the Ray engine's options (`predictabase.ingest.scoring.distributed.RayOptions`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    from predictabase.core.progress import progress_bar
    from predictabase.ingest.scoring.distributed import model_steps
    from predictabase.ingest.scoring.pipeline import ScoreSettings, effective_lengths

    settings.check()
    if limit is not None and limit < 1:
        raise OptionError("--limit", f"{limit} is not allowed; an integer >= 1 (leave it out for every document)")
    inputs = read_inputs(paths)  # fail before loading a model
    with model_steps(model_spec, paths, device, dtype, engine) as (lm, profile, pool):
        if tokenizer_is_games(profile, inputs.game_vocab):
            return {
                "model_key": lm.model_key,
                "method": "exact_token",
                "skipped": True,
                "note": "the model's tokenizer is the game's: dbt compares the scorer's top-k tokens exactly "
                "(score lm_game with this model)",
            }
        ctx, _ = effective_lengths(lm, ScoreSettings())
        with progress_bar(
            TextColumn("top-1 {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            show=show_progress,
            transient=False,
        ) as bar:
            task = bar.add_task(lm.model_key, total=None)

            def progress(_key: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return predict_top1(
                paths, lm, profile, settings, ctx, progress=progress, limit=limit, inputs=inputs, pool=pool
            )


# --- the `top1` step (predictabase.ingest.scoring.steps): its code version and its runner -----------------------------


def code_version() -> list:
    """What of this code the `top1` step's plan keys hold: the predictor's version and its default settings
    (but `batch_tokens`, which changes speed only, as in `make_run_id`)."""
    settings = asdict(Top1Settings())
    settings.pop("batch_tokens")
    return [PREDICTOR_VERSION, settings]


def run_step(paths: Paths, entry, corpora: list[str], show_progress: bool = False, engine=None) -> list:
    """The `top1` step of one models.toml entry with the default settings (its one corpus: the game's)."""
    [corpus] = corpora
    run = run_top1(
        paths,
        entry.name,
        Top1Settings(),
        device=entry.device,
        dtype=entry.dtype,
        show_progress=show_progress,
        engine=engine,
    )
    return [step_run(paths, corpus, run)]


def step_run(paths: Paths, corpus: str, run: dict):
    """What `run_top1` returned, as the step's finished task (`predictabase.ingest.scoring.steps.StepRun`)."""
    from predictabase.ingest.scoring.steps import StepRun

    if run.get("method") == "exact_token":
        return StepRun(corpus, None, None, "the game's tokenizer (dbt compares its scored tokens)", exact_token=True)
    return StepRun(
        corpus,
        run_dir(paths, run["model_key"], run["run_id"]),
        run["run_id"],
        "already complete" if run.get("skipped") else "predicted",
    )
