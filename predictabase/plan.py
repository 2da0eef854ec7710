"""The pipeline, in one order, which `predictabase all`, `predictabase refresh` and the Dagster definitions run.

    fetch -> ingest -> score, top1, cloze, entropy, temperature (the model steps, `predictabase.ingest.scoring.steps`)
          -> build (dbt, then publish)

`all` runs every stage with the default model; `refresh` runs every stage doing only what changed; the Dagster
assets carry each stage's group, and their dependencies follow the same order (ingest after fetch, each model
step after the ingest jobs that write what it reads, dbt after both, the snapshot last).
"""

from __future__ import annotations

from dataclasses import dataclass

from predictabase.ingest.scoring.steps import STEPS as MODEL_STEPS


@dataclass(frozen=True)
class Stage:
    name: str  # fetch | ingest | score | top1 | cloze | entropy | temperature | build
    kind: str  # fetch | ingest | model | build
    group: str  # the Dagster asset group of its assets
    description: str


PLAN: tuple[Stage, ...] = (
    Stage("fetch", "fetch", "sources", "every catalog file from the mirror or upstream, sha256-verified"),
    Stage("ingest", "ingest", "ingest", "the ingest jobs: load and validate the fetched files into raw tables"),
    *(Stage(s.name, "model", "scoring", s.description) for s in MODEL_STEPS.values()),
    Stage("build", "build", "publish", "dbt build (every metric, with its schema tests), then publish the snapshot"),
)
STAGES: dict[str, Stage] = {s.name: s for s in PLAN}


def stages(kind: str | None = None) -> list[Stage]:
    """The stages in pipeline order (of one kind)."""
    return [s for s in PLAN if kind is None or s.kind == kind]
