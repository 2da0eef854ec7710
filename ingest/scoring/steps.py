"""The model steps, declared once: each step is one object that owns what it reads from the warehouse, where it
writes its runs, its Dagster asset, which models it runs for, its code version and how it runs.

`score` (token log-probabilities per corpus), `top1` (the top-1 game's most probable next word), `cloze`
(the probability of every cloze response), `entropy` (each word's entropy by Monte Carlo over whole words, on the
corpora with reading times) and `temperature` (token log-probabilities under softmax(logits / T) for a grid of T, on
the same corpora). `refresh` (its plan keys and task runner), the Dagster assets (keys,
upstream ingest jobs, partitions) and the dbt sources' writers iterate these objects (the CLI's `all` runs each
step's own command, in the pipeline's order); a
fourth step is one more entry here plus its scorer module's `code_version()` and `run_step()`. Light on purpose:
the scorer module is imported only when a step's code version is asked for or the step runs (no torch here).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from predictabase.core.errors import OptionError
from predictabase.ingest import corpus_table

#: the `temperature` step's default grid of T: Liu, Škrjanec & Demberg (2024) scan T from below 1 to 10 and find the
#: best fits between 2 and 3 for most corpora; 1 is the model's own distribution (the reference)
TEMPERATURES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0)


@dataclass(frozen=True)
class StepRun:
    """One finished task of a step: the corpus it scored (None: the step's corpora together), its run folder
    and id (None where nothing is written: top-1 of a model with the game's own tokenizer, `exact_token`) and
    what happened, in words."""

    corpus: str | None
    run_dir: Path | None
    run_id: str | None
    status: str
    exact_token: bool = False


def check_corpora(corpora: list[str], allowed: tuple[str, ...], what: str) -> None:
    """A one-line --corpus error for a corpus a step does not run on."""
    unknown = [c for c in corpora if c not in allowed]
    if unknown:
        raise OptionError("--corpus", f"{', '.join(unknown)}: not {what} ({', '.join(allowed)})")


def run_corpora(paths, model_spec: str, corpora: list[str], device, dtype, step: str, show_progress: bool, loaded,
                unit: str = "") -> list[dict]:  # fmt: skip
    """Load the model once and run one corpus after another under a progress bar: `loaded(lm, profile)` returns
    the function `(corpus, progress) -> run record` of what is built once per model (a scorer, a mask); `progress`
    is called with (done, total) in `unit`s."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    from predictabase.core.progress import progress_bar
    from predictabase.ingest.scoring.distributed import model_steps

    runs = []
    with model_steps(model_spec, paths, device, dtype, None) as (lm, profile, _pool):
        one = loaded(lm, profile)
        columns = [TextColumn(f"{step} {{task.description}}"), BarColumn(), MofNCompleteColumn()]
        columns += [TextColumn(unit)] if unit else []
        with progress_bar(*columns, TimeRemainingColumn(), show=show_progress, transient=False) as bar:
            for corpus in corpora:
                task = bar.add_task(f"{lm.model_key} {corpus}", total=None)
                runs.append(one(corpus, lambda d, t, _task=task: bar.update(_task, completed=d, total=t)))
    return runs


def corpus_step_runs(runs: list[dict], run_dir) -> list[StepRun]:
    """The StepRun of each run record of a step with one run per corpus (`run_dir(model_key, corpus, run_id)`)."""
    return [
        StepRun(
            r["corpus"],
            run_dir(r["model_key"], r["corpus"], r["run_id"]),
            r["run_id"],
            "already complete" if r.get("skipped") else "scored",
        )
        for r in runs
    ]


@dataclass(frozen=True)
class ModelStep:
    name: str  # the `predictabase` command and the refresh step
    reads: tuple[str, ...]  # the raw tables it reads
    output: str  # its Parquet folder: a `Paths` attribute (`paths.token_scores`, ...)
    run_glob: str  # a complete run's record under that folder
    corpora: tuple[str, ...]  # score: one run per corpus; the others: one run over these corpora
    dbt_schema: str  # the dbt source schema that reads its runs
    description: str
    selects: str | None  # the models.toml flag choosing its models (None: every model, on each of its corpora)
    module: str  # its scorer: `code_version()` and `run_step(paths, entry, corpora, ...)`

    @property
    def asset(self) -> str:
        """Its Dagster asset's key: its Parquet folder's name."""
        return self.output

    def _scorer(self):
        return importlib.import_module(self.module)

    def code_version(self) -> Any:
        """What of its code a finished task's plan key holds (a new version re-runs every task of the step)."""
        return self._scorer().code_version()

    def tasks_for(self, entry, own_corpora: tuple[str, ...] | list[str] = ()) -> list[str | None]:
        """The corpus of each task a models.toml entry asks of this step: `score` one per corpus of the entry and
        per corpus the user added; a step run once per model one task (its corpus, or None for several)."""
        if self.selects is None:
            return [*entry.corpora, *own_corpora]
        if not getattr(entry, self.selects):
            return []
        return [self.corpora[0] if len(self.corpora) == 1 else None]

    def run(self, paths, entry, corpora: list[str | None], show_progress: bool = False, engine=None) -> list[StepRun]:
        """Run the tasks of one models.toml entry (one model load for all of them) with the entry's settings;
        `engine`: None (this process) or the Ray engine's options."""
        return self._scorer().run_step(paths, entry, corpora, show_progress=show_progress, engine=engine)


STEPS: dict[str, ModelStep] = {
    s.name: s
    for s in (
        ModelStep(
            "score",
            ("raw.documents",),
            "token_scores",
            "*/*/*/_run.json",
            corpus_table.SCORED,
            "scores",
            "Token log-probabilities of one corpus by one model",
            None,
            "predictabase.ingest.scoring.pipeline",
        ),
        ModelStep(
            "top1",
            ("raw.documents", "raw.top1_guesses", "raw.game_doc_tokens", "raw.game_vocabulary"),
            "top1_predictions",
            "*/*/_run.json",
            (corpus_table.GAME,),
            "top1_scores",
            "The model's most probable next word on the top-1 game's questions",
            "top1",
            "predictabase.ingest.scoring.top1_words",
        ),
        ModelStep(
            "cloze",
            ("raw.documents", "raw.words", "raw.cloze_responses", "raw.cloze_norms"),
            "cloze_model_scores",
            "*/*/_run.json",
            corpus_table.CLOZE,
            "cloze_model_scores",
            "The model's probability of every human cloze response",
            "cloze",
            "predictabase.ingest.scoring.cloze_responses",
        ),
        ModelStep(
            "entropy",
            ("raw.documents", "raw.words"),
            "word_entropy",
            "*/*/*/_run.json",
            tuple(k for k, c in corpus_table.CORPORA.items() if c.texts and c.reading),
            "word_entropy",
            "Each word's entropy by Monte Carlo over whole words, with its Rényi entropy and the first-token entropy",
            "entropy",
            "predictabase.ingest.scoring.anticipation",
        ),
        ModelStep(
            "temperature",
            ("raw.documents",),
            "temperature_scores",
            "*/*/*/_run.json",
            tuple(k for k, c in corpus_table.CORPORA.items() if c.texts and c.reading),
            "temperature_scores",
            "Each token's log-probability and word-boundary mass under softmax(logits / T) for a grid of temperatures",
            "temperature",
            "predictabase.ingest.scoring.temperature",
        ),
    )
}
