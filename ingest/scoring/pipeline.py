"""score_corpora: read raw.documents, score with one model, write resumable token-score runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from predictabase.core.config import Paths
from predictabase.core.errors import OptionError, ScoringError, WarehouseError
from predictabase.core.failpoints import failpoint
from predictabase.core.progress import progress_bar as shared_progress_bar
from predictabase.ingest.raw import now_utc
from predictabase.ingest.scoring import store
from predictabase.ingest.scoring.engine import STATS, Scorer, make_batches, make_windows, memory_batch_tokens
from predictabase.ingest.scoring.model_identity import record_source
from predictabase.ingest.scoring.models import LoadedModel, load_model
from predictabase.ingest.scoring.profile import TokenizerProfile

# 2: the column logprob_word_initial_after_nats (ln B after each token, at the end of the text after the
#    last one) and end-of-text = the pre-training document separator only (not a chat turn end)
SCORER_VERSION = 2
# Documents are scored in groups; group g becomes part file g, the unit an interrupted run resumes
# from and the unit a Ray worker scores (predictabase.ingest.scoring.distributed). The first group holds about
# FIRST_PART_TOKENS tokens; later ones about the tokens the model scores in PART_SECONDS on this kind of
# device (within [MIN_PART_TOKENS, PART_TOKENS]), so a kill loses at most about that much work. The
# groups are planned over all of a run's documents from the model's parameter count and the device type
# only, never from measured time or the process's thread count: the groups decide which windows share a
# forward batch, and a different batch changes the last bits of a log-probability (timing-sized parts
# made two runs of the same job differ by up to 2e-5 nats on 1,001 of 27,258 lm_game tokens). So a
# resumed run, and a run whose groups Ray workers scored, hold exactly the rows of an uninterrupted
# local run.
PART_TOKENS = 1 << 16
FIRST_PART_TOKENS = 2048
MIN_PART_TOKENS = 512
PART_SECONDS = 30.0
# tokens/s x parameters on a CPU, measured: SmolLM2-135M scores ~180 tokens/s on 2 threads here (the
# thread count does not change a log-probability: 1 and 2 threads give identical bits on Natural Stories)
CPU_PARAM_TOKENS_S = 2.4e10
# Padded tokens per forward batch when not given. Measured on 2 CPU cores (SmolLM2-135M, 60 lm_game prefixes,
# one run each): 8192 -> 28 s, 2048 -> 10.5 s, 1024 -> 6.8 s of scoring: on a CPU large batches lose to cache
# misses; a GPU wants them large: there they are sized to the device's total memory (engine.memory_batch_tokens;
# its total, not what is free at the moment, so the same job always batches alike). The batch changes only the
# last bits of a log-probability (see above).
CPU_BATCH_TOKENS = 1024
GPU_SPEEDUP = 100.0  # a GPU forward pass is at least this much faster; parts stay well under PART_SECONDS


@dataclass(frozen=True)
class ScoreSettings:
    context_length: int | None = None
    stride: int | None = None
    top_k: int = 10
    batch_tokens: int | None = None  # None: CPU_BATCH_TOKENS on CPU, sized to the memory of a GPU
    limit: int | None = None
    full: bool = False
    device: str | None = None
    dtype: str | None = None
    part_tokens: int | None = None  # tokens per part file / work unit; None: sized from the model and device


@dataclass
class Document:
    doc_id: str
    doc_index: int
    text: str  # the characters to score (lm_game: the guessed prefix unless full)


def load_documents(paths: Paths, corpus: str, settings: ScoreSettings) -> tuple[list[Document], str]:
    if not paths.duckdb.exists():
        raise WarehouseError(paths.duckdb, "no warehouse yet; run `predictabase ingest` first")
    con = duckdb.connect(str(paths.duckdb), read_only=True)
    try:
        try:
            rows = con.execute(
                "SELECT doc_id, doc_index, text, score_prefix_chars, corpus_version FROM raw.documents "
                "WHERE corpus = ? ORDER BY doc_index",
                [corpus],
            ).fetchall()
        except duckdb.Error as exc:
            raise ScoringError(
                paths.duckdb, f"cannot read raw.documents ({exc}); run `predictabase ingest` first"
            ) from exc
    finally:
        con.close()
    if not rows:
        raise ScoringError(
            paths.duckdb, f"raw.documents has no documents for corpus {corpus!r}; run `predictabase ingest` first"
        )
    versions = {r[4] for r in rows}
    if len(versions) != 1:
        raise ScoringError(paths.duckdb, f"corpus {corpus!r} has {len(versions)} corpus_version values")
    if settings.limit is not None:
        rows = rows[: settings.limit]
    docs = []
    for doc_id, doc_index, text, prefix, _ in rows:
        if prefix is not None and not settings.full:
            text = text[:prefix]
        docs.append(Document(str(doc_id), int(doc_index), text))
    return docs, versions.pop()


def package_versions() -> dict[str, str]:
    out = {}
    for name in ("predictabase", "torch", "transformers", "tokenizers", "gguf", "numpy", "pyarrow", "duckdb"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


DEFAULT_CONTEXT_CAP = 2048  # every Natural Story (<= ~1,300 tokens) fits one window; attention stays cheap


def effective_lengths(lm: LoadedModel, settings: ScoreSettings) -> tuple[int, int]:
    """Context length (incl. BOS) and stride: the user's, else the model's maximum capped
    at DEFAULT_CONTEXT_CAP with half of it as stride (each token keeps >= half a window of context)."""
    maxpos = lm.max_positions or 1024
    ctx = settings.context_length if settings.context_length is not None else min(maxpos, DEFAULT_CONTEXT_CAP)
    if ctx < 2 or ctx > maxpos:
        raise OptionError(
            "--context-length", f"{ctx} is not allowed; an integer from 2 to {maxpos} (the maximum of {lm.model_id})"
        )
    stride = settings.stride if settings.stride is not None else max(1, ctx // 2)
    if not 1 <= stride <= ctx - 1:
        raise OptionError("--stride", f"{stride} is not allowed; an integer from 1 to {ctx - 1} (context length - 1)")
    return ctx, stride


def make_run_id(
    lm: LoadedModel,
    profile: TokenizerProfile,
    corpus: str,
    corpus_version: str,
    ctx: int,
    stride: int,
    settings: ScoreSettings,
) -> str:
    key = {
        "scorer_version": SCORER_VERSION,
        "model_revision": lm.model_revision,
        "tokenizer_sha256": lm.tokenizer_sha256,
        "bos_token_id": profile.bos.token_id,
        "dtype": lm.dtype,
        "end_of_text_ids": sorted(int(i) for i in profile.end_of_text_ids),
        "corpus": corpus,
        "corpus_version": corpus_version,
        "context_length": ctx,
        "stride": stride,
        "top_k": settings.top_k,
        "limit": settings.limit,
        "full": bool(settings.full),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def build_table(
    run_id: str, model_key: str, corpus: str, docs: list[Document], encoded, results, scorer: Scorer
) -> pa.Table:
    """The token rows of scored documents (`results`: Scorer.score_windows, keyed by column name)."""
    per_token = (*STATS, "logprob_word_initial_after_nats", "context_tokens")
    names = ("doc_id", "token_index", "token_id", "token_text", "char_start", "char_end", *per_token)
    cols: dict[str, list] = {n: [] for n in names}
    for d, (doc, (ids, spans)) in enumerate(zip(docs, encoded)):
        n = len(ids)
        if n == 0:
            continue
        r = results[d]
        if np.isnan(r["logprob_nats"]).any() or (r["context_tokens"] < 0).any():
            raise AssertionError(f"document {doc.doc_id}: a token was left unscored")
        cols["doc_id"].append(np.full(n, doc.doc_id, dtype=object))
        cols["token_index"].append(np.arange(n, dtype=np.int32))
        cols["token_id"].append(np.asarray(ids, dtype=np.int32))
        sp = np.asarray(spans, dtype=np.int32).reshape(n, 2)
        cols["char_start"].append(sp[:, 0])
        cols["char_end"].append(sp[:, 1])
        cols["token_text"].append(np.array([doc.text[s:e] for s, e in spans], dtype=object))
        for name in per_token:
            cols[name].append(r[name])
    if not cols["doc_id"]:
        return store.SCHEMA.empty_table()
    cat = {name: np.concatenate(v) for name, v in cols.items()}
    strings = scorer.profile.strings
    topi = cat["topk_token_ids"]
    return store.token_table(
        run_id,
        model_key,
        corpus,
        {
            **cat,
            "token": strings[cat["token_id"]],
            "topk_tokens": strings[topi.reshape(-1)].reshape(topi.shape),
        },
    )


def plan_groups(token_counts: list[int], sizes: Iterator[int]) -> list[list[int]]:
    """Consecutive documents, each group at least the next size from `sizes` tokens (the last may be
    smaller; a document without tokens joins the group it falls in)."""
    groups: list[list[int]] = []
    cur: list[int] = []
    size = 0
    target = next(sizes)
    for i, n in enumerate(token_counts):
        cur.append(i)
        size += n
        if size >= target:
            groups.append(cur)
            cur, size = [], 0
            target = next(sizes)
    if cur:
        groups.append(cur)
    return groups


class PartSizer:
    """Part sizes in tokens: FIRST_PART_TOKENS, then about PART_SECONDS of work each, estimated from the
    model size and the device type only (deterministic: see PART_SECONDS above); or `fixed` every time."""

    def __init__(self, n_params: int, device: str, fixed: int | None = None) -> None:
        speed = CPU_PARAM_TOKENS_S / max(n_params, 1)  # tokens per second
        if device.startswith("cuda"):
            speed *= GPU_SPEEDUP
        self.part = fixed or min(PART_TOKENS, max(MIN_PART_TOKENS, int(speed * PART_SECONDS) // 256 * 256))
        self.first = fixed is None

    def __iter__(self):
        return self

    def __next__(self) -> int:
        if self.first:
            self.first = False
            return min(FIRST_PART_TOKENS, PART_TOKENS)
        return self.part


@dataclass
class RunPlan:
    """One run of one model over one corpus, cut into groups of documents: what every engine scores
    the same way. `groups[g]` (indices into `docs`) is written as part file g."""

    run_id: str
    model_key: str
    corpus: str
    corpus_version: str
    context_length: int
    stride: int
    batch_tokens: int
    top_k: int
    docs: list[Document]
    groups: list[list[int]]
    doc_tokens: list[int]  # real tokens per document

    def tokens_of(self, doc_indices: list[int]) -> int:
        return sum(self.doc_tokens[i] for i in doc_indices)

    def windows_and_batches(self, encoded) -> list[list]:
        windows = [
            w for d, (ids, _) in enumerate(encoded) for w in make_windows(d, len(ids), self.context_length, self.stride)
        ]
        return make_batches(windows, self.batch_tokens)


def default_batch_tokens(lm: LoadedModel, context_length: int) -> int:
    if str(lm.device).startswith("cuda"):
        import torch

        total = torch.cuda.get_device_properties(torch.device(lm.device)).total_memory
        return memory_batch_tokens(lm.model, total, context_length)
    return CPU_BATCH_TOKENS


def plan_run(
    lm: LoadedModel,
    profile: TokenizerProfile,
    corpus: str,
    docs: list[Document],
    corpus_version: str,
    settings: ScoreSettings,
) -> RunPlan:
    ctx, stride = effective_lengths(lm, settings)
    batch_tokens = settings.batch_tokens or default_batch_tokens(lm, ctx)
    counts = [len(ids) for ids, _ in profile.encode([d.text for d in docs])]
    sizer = PartSizer(sum(p.numel() for p in lm.model.parameters()), str(lm.device), settings.part_tokens)
    groups = plan_groups(counts, sizer)
    return RunPlan(
        run_id=make_run_id(lm, profile, corpus, corpus_version, ctx, stride, settings),
        model_key=lm.model_key,
        corpus=corpus,
        corpus_version=corpus_version,
        context_length=ctx,
        stride=stride,
        batch_tokens=batch_tokens,
        top_k=settings.top_k,
        docs=docs,
        groups=groups,
        doc_tokens=counts,
    )


def pending_parts(plan: RunPlan, directory: store.Location) -> list[tuple[int, list[int]]]:
    """(part number, document indices) still to score: the groups none of whose documents are in a part
    file yet, as part g. A group that a run written by an older plan left half-done keeps its missing
    documents, under a part number after every existing one and every group's."""
    done = store.resume_run(directory)
    taken = {store.part_number(p) for p in store.part_files(directory)}
    spare = max([len(plan.groups) - 1, *(n for n in taken if n is not None)], default=-1) + 1
    out = []
    for g, group in enumerate(plan.groups):
        todo = [i for i in group if plan.docs[i].doc_id not in done]
        if not todo:
            continue
        if len(todo) == len(group) and g not in taken:
            out.append((g, todo))
        else:
            out.append((spare, todo))
            spare += 1
    return out


def score_part(plan: RunPlan, scorer: Scorer, g_docs: list[Document], on_batch=None) -> pa.Table:
    """The token rows of some of the plan's documents (one group, or what is left of it)."""
    g_enc = scorer.profile.encode([d.text for d in g_docs])
    results = scorer.score_windows([ids for ids, _ in g_enc], plan.windows_and_batches(g_enc), on_batch=on_batch)
    return build_table(plan.run_id, plan.model_key, plan.corpus, g_docs, g_enc, results, scorer)


def write_scored_part(
    plan: RunPlan, scorer: Scorer, directory: store.Location, number: int, g_docs: list[Document], on_batch=None
) -> int:
    """Score one part and write it as part file `number`; its row count (0: nothing written)."""
    table = score_part(plan, scorer, g_docs, on_batch)
    if table.num_rows:
        store.write_part(directory, table, number)
        failpoint("score.part_written")
    return table.num_rows


def run_record(
    lm: LoadedModel,
    profile: TokenizerProfile,
    plan: RunPlan,
    settings: ScoreSettings,
    started: str,
    directory: store.Location,
) -> store.RunRecord:
    n_docs_written, n_tokens = store.count_rows(directory)
    return store.RunRecord(
        run_id=plan.run_id,
        model_key=lm.model_key,
        model_id=lm.model_id,
        model_revision=lm.model_revision,
        tokenizer=lm.tokenizer_name,
        tokenizer_sha256=lm.tokenizer_sha256,
        vocab_size=lm.vocab_size,
        dtype=lm.dtype,
        device=lm.device,
        bos_policy=profile.bos.policy,
        bos_token_id=profile.bos.token_id,
        bos_token=profile.bos.token,
        corpus=plan.corpus,
        corpus_version=plan.corpus_version,
        context_length=plan.context_length,
        stride=plan.stride,
        top_k=settings.top_k,
        batch_tokens=plan.batch_tokens,
        limit=settings.limit,
        full=bool(settings.full),
        n_docs=len(plan.doc_tokens),
        n_docs_with_tokens=n_docs_written,
        n_tokens=n_tokens,
        source="scored",
        started_at=started,
        finished_at=now_utc().isoformat(),
        package_versions=package_versions(),
        scorer_version=SCORER_VERSION,
        end_of_text_ids=sorted(int(i) for i in profile.end_of_text_ids),
        end_of_text_tokens=[str(profile.strings[i]) for i in sorted(profile.end_of_text_ids)],
    )


def progress_bar(show: bool) -> Progress:
    return shared_progress_bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tokens"),
        TimeRemainingColumn(),
        show=show,
    )


def score_corpus(
    paths: Paths,
    lm: LoadedModel,
    scorer: Scorer,
    corpus: str,
    docs: list[Document],
    corpus_version: str,
    settings: ScoreSettings,
    show_progress: bool = True,
) -> dict:
    plan = plan_run(lm, scorer.profile, corpus, docs, corpus_version, settings)
    rdir = store.run_dir(paths.token_scores, lm.model_key, corpus, plan.run_id)
    done_run = store.read_run(rdir)
    if done_run is not None:
        return {**done_run.to_json(), "status": "already complete"}
    started = now_utc().isoformat()
    parts = pending_parts(plan, rdir)
    status = "resumed" if store.part_files(rdir) else "scored"
    with progress_bar(show_progress) as progress:
        task = progress.add_task(f"{lm.model_key} / {corpus}", total=sum(plan.tokens_of(t) for _, t in parts))
        for number, todo in parts:
            write_scored_part(
                plan, scorer, rdir, number, [docs[i] for i in todo], on_batch=lambda m: progress.advance(task, m)
            )
    if not rdir.exists():
        rdir.mkdir(parents=True)
    return {**store.finish_run(rdir, run_record(lm, scorer.profile, plan, settings, started, rdir)), "status": status}


def check_settings(settings: ScoreSettings) -> None:
    if (
        settings.top_k < 0
        or (settings.batch_tokens is not None and settings.batch_tokens < 1)
        or (settings.limit is not None and settings.limit < 1)
        or (settings.part_tokens is not None and settings.part_tokens < 1)
    ):
        raise OptionError(None, "top_k must be >= 0, batch_tokens >= 1, part_tokens >= 1 and limit (when given) >= 1")


def check_top_k(lm: LoadedModel, top_k: int) -> None:
    if top_k > lm.vocab_size:
        raise OptionError(
            "--top-k", f"{top_k} is not allowed; an integer from 0 to {lm.vocab_size} (the vocabulary of {lm.model_id})"
        )


def score_corpora(
    paths: Paths, model_spec: str, corpora: list[str], settings: ScoreSettings, show_progress: bool = True
) -> list[dict]:
    """Score every document of each corpus with one model; one run (directory) per corpus.

    Documents are read (and validated) for every corpus before the model loads, so a
    missing corpus or an unloadable model writes nothing. The model's tokenizer profile
    (BOS, end-of-text ids, word-initial mask) is built once, and the scorer checks its
    log-probabilities against the model's own loss on a probe text before scoring anything.
    """
    check_settings(settings)
    loaded = {c: load_documents(paths, c, settings) for c in corpora}
    lm = load_model(model_spec, paths, settings.device, settings.dtype)
    record_source(paths, model_spec)
    profile = TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, model_spec)
    check_top_k(lm, settings.top_k)
    scorer = Scorer(lm.model, profile, settings.top_k, lm.device)
    return [
        score_corpus(paths, lm, scorer, c, docs, version, settings, show_progress)
        for c, (docs, version) in loaded.items()
    ]


# --- the Ray engine (predictabase.ingest.scoring.distributed): the same plan, its groups scored by the replicas -------


def _ray_plan(loaded, corpus: str, docs: list[Document], version: str, settings: ScoreSettings) -> RunPlan:
    check_top_k(loaded.lm, settings.top_k)
    return plan_run(loaded.lm, loaded.profile, corpus, docs, version, settings)


def _ray_score(loaded, plan: RunPlan, g_docs: list[Document], directory: store.Location, number: int) -> int:
    key = ("scorer", plan.top_k)
    if key not in loaded.cache:  # built (and probe-checked) once per replica
        loaded.cache[key] = Scorer(loaded.lm.model, loaded.profile, plan.top_k, loaded.lm.device)
    return write_scored_part(plan, loaded.cache[key], directory, number, g_docs)


def _ray_record(loaded, plan: RunPlan, settings: ScoreSettings, started: str, directory: store.Location):
    return run_record(loaded.lm, loaded.profile, plan, settings, started, directory)


def score_corpora_ray(
    paths: Paths,
    model_spec: str,
    corpora: list[str],
    settings: ScoreSettings,
    options,
    output: str | None = None,
    show_progress: bool = True,
) -> list[dict]:
    """`score --engine ray`: the runs of `score_corpora`, their groups scored by Ray workers.

    `output`: the token-score root the workers write (a shared path or an fsspec URL); default the
    warehouse's. The documents are read here and sent to the workers, which need no warehouse."""
    from predictabase.ingest.scoring.distributed import ray_pool

    check_settings(settings)
    if output:
        try:
            store._fs(output)
        except (ValueError, ImportError) as exc:  # an unknown protocol; its fsspec backend not installed
            raise OptionError("--output", f"{output!r} is not allowed; {exc}") from None
    loaded = {c: load_documents(paths, c, settings) for c in corpora}
    root: store.Location = output if output else paths.token_scores
    out = []
    with ray_pool(model_spec, paths, settings.device, settings.dtype, options) as pool:
        record_source(paths, model_spec)
        for corpus, (docs, version) in loaded.items():
            plan = pool.call_one(_ray_plan, corpus, docs, version, settings)
            rdir = store.run_dir(root, plan.model_key, corpus, plan.run_id)
            done_run = store.read_run(rdir)
            if done_run is not None:
                out.append({**done_run.to_json(), "status": "already complete"})
                continue
            started = now_utc().isoformat()
            parts = pending_parts(plan, rdir)
            status = "resumed" if store.part_files(rdir) else "scored"
            light = RunPlan(**{**plan.__dict__, "docs": []})  # each unit carries its own documents
            units = [(n, (light, [docs[i] for i in todo], rdir, n)) for n, todo in parts]
            sizes = {n: plan.tokens_of(todo) for n, todo in parts}
            with progress_bar(show_progress) as progress:
                task = progress.add_task(
                    f"{plan.model_key} / {corpus} (Ray, {len(pool.actors)} workers)", total=sum(sizes.values())
                )
                for n, _rows in pool.map_unordered(_ray_score, units, size=sizes.__getitem__):
                    progress.advance(task, sizes[n])
            if isinstance(rdir, Path):
                rdir.mkdir(parents=True, exist_ok=True)
            record = pool.call_one(_ray_record, light, settings, started, rdir)
            out.append({**store.finish_run(rdir, record), "status": status})
    return out


# --- the `score` step (predictabase.ingest.scoring.steps): its code version and its runner ----------------------------


def code_version() -> list:
    """What of this code the `score` step's plan keys hold."""
    return [SCORER_VERSION, DEFAULT_CONTEXT_CAP]


def run_step(paths: Paths, entry, corpora: list[str], show_progress: bool = False, engine=None) -> list:
    """The `score` step of one models.toml entry on several corpora: one model load, one run per corpus."""
    settings = ScoreSettings(
        context_length=entry.context_length,
        stride=entry.stride,
        top_k=entry.top_k,
        device=entry.device,
        dtype=entry.dtype,
    )
    if engine is None:
        done = score_corpora(paths, entry.name, corpora, settings, show_progress=show_progress)
    else:
        done = score_corpora_ray(paths, entry.name, corpora, settings, engine, show_progress=show_progress)
    return step_runs(paths, done)


def step_runs(paths: Paths, done: list[dict]) -> list:
    """The runs `score_corpora` returned, as the step's finished tasks (`predictabase.ingest.scoring.steps.StepRun`)."""
    from predictabase.ingest.scoring.steps import StepRun

    return [
        StepRun(
            run["corpus"],
            store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"]),
            run["run_id"],
            run["status"],
        )
        for run in done
    ]
