"""The model steps, declared once: what each reads from the warehouse and where it writes its runs.

`score` (token log-probabilities per corpus), `top1` (the top-1 game's most probable next word) and `cloze`
(the probability of every cloze response). Refresh's data versions, the Dagster assets' upstream ingest jobs
and the dbt sources' writers all derive from these declarations; light on purpose (no torch).
"""
from __future__ import annotations

from dataclasses import dataclass

from ingest import corpus_table


@dataclass(frozen=True)
class ModelStep:
    name: str                  # the `predictabase` command and the refresh step
    reads: tuple[str, ...]     # the raw tables it reads
    output: str                # its Parquet folder: a `Paths` attribute (`paths.token_scores`, ...)
    run_glob: str              # a complete run's record under that folder
    corpora: tuple[str, ...]   # score: one run per corpus; the others: one run over these corpora
    dbt_schema: str            # the dbt source schema that reads its runs
    description: str


STEPS: dict[str, ModelStep] = {s.name: s for s in (
    ModelStep("score", ("raw.documents",), "token_scores", "*/*/*/_run.json", corpus_table.SCORED, "scores",
              "Token log-probabilities of one corpus by one model"),
    ModelStep("top1", ("raw.documents", "raw.top1_guesses", "raw.game_doc_tokens", "raw.game_vocabulary"),
              "top1_predictions", "*/*/_run.json", (corpus_table.GAME,), "top1_scores",
              "The model's most probable next word on the top-1 game's questions"),
    ModelStep("cloze", ("raw.documents", "raw.words", "raw.cloze_responses", "raw.cloze_norms"),
              "cloze_model_scores", "*/*/_run.json", corpus_table.CLOZE, "cloze_model_scores",
              "The model's probability of every human cloze response"),
)}
