"""The assets upstream and downstream of dbt: fetch, ingest (one asset per ingest job), the scoring runs
(token scores one partition per model x corpus, top-1 and cloze predictions one per model) and the
published snapshot. Each calls what the matching `predictabase` command calls, under the writer lock."""

import json

import dagster as dg

from predictabase.ingest.datasets.registry import JOBS
from predictabase.ingest.scoring.steps import STEPS, ModelStep
from predictabase.models_config import CORPORA, ModelEntry, load_models_config
from predictabase.orchestrate.dbt import FETCH_KEY, WRITERS, ingest_key, mart_keys, step_key
from predictabase.orchestrate.resources import PredictabaseResource
from predictabase.plan import STAGES

# The models to keep scored ($PREDICTABASE_MODELS or models.toml), read when the definitions load: a model
# added there appears as new partitions when the code location reloads (the sensor starts a refresh at once).
MODELS: dict[str, ModelEntry] = {m.name: m for m in load_models_config()}

SCORING_PARTITIONS = dg.MultiPartitionsDefinition(
    {
        "model": dg.StaticPartitionsDefinition(list(MODELS)),
        "corpus": dg.StaticPartitionsDefinition(list(CORPORA)),
    }
)


@dg.asset(
    key=FETCH_KEY,
    group_name=STAGES["fetch"].group,
    kinds={"duckdb"},
    description="Every catalog file copied from the mirror (or downloaded), sha256-verified, recorded in "
    "raw.source_files (`predictabase fetch`).",
)
def fetch(context: dg.AssetExecutionContext, predictabase: PredictabaseResource) -> dg.MaterializeResult:
    from predictabase.ingest.sources.fetch import fetch_and_record

    mirror = predictabase.mirror_dir()
    with predictabase.writing(context, "fetch", {"mirror": str(mirror) if mirror else None}, create=True) as paths:
        results = fetch_and_record(paths, mirror, show_progress=False)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return dg.MaterializeResult(
        metadata={"files": len(results), "by_status": counts, "warehouse": str(paths.warehouse)}
    )


def _rows(result: object) -> dict:
    if isinstance(result, int):
        return {"rows": result}
    if isinstance(result, dict) and result and all(isinstance(v, int) for v in result.values()):
        return {"rows": sum(result.values()), "rows_by_table": result}
    return {"result": json.dumps(result, default=str)}


@dg.multi_asset(
    name="ingest",
    specs=[
        dg.AssetSpec(
            ingest_key(name),
            deps=[FETCH_KEY, *(ingest_key(a) for a in job.after)],
            group_name=STAGES["ingest"].group,
            kinds={"duckdb"},
            skippable=True,
            description=f"The raw tables of the ingest job `{name}` (`predictabase ingest {name}`).",
        )
        for name, job in JOBS.items()
    ],
    can_subset=True,
)
def ingest(context: dg.AssetExecutionContext, predictabase: PredictabaseResource):
    """The selected ingest jobs in ONE `run_ingest` (as `predictabase ingest NAMES...`): every file read and
    validated first, then all their tables replaced in one transaction, all or nothing."""
    from predictabase.ingest.datasets.registry import ordered, run_ingest

    names = ordered([k.path[-1] for k in context.selected_asset_keys])
    with predictabase.writing(context, "ingest", {"names": names}) as paths:
        counts = run_ingest(paths, names, show_progress=False)
    for name in names:
        yield dg.MaterializeResult(asset_key=ingest_key(name), metadata=_rows(counts.get(name)))


def run_step(paths, entry: ModelEntry, step: str, corpus: str | None) -> str:
    """One scoring task of a models.toml entry with its settings, through the refresh's own task runner: the
    scorers skip a complete run (keyed by model revision, corpus version and settings) and the refresh ledger
    records the run, so a later `predictabase refresh` knows this partition is scored."""
    from predictabase.refresh import ScoringTask, run_scoring_task

    return run_scoring_task(paths, ScoringTask(entry.name, step, corpus, entry), show_progress=False)


def _entry(name: str, flag: str | None = None) -> ModelEntry:
    entry = MODELS.get(name)
    if entry is None or (flag and not getattr(entry, flag)):
        raise dg.Failure(
            f"models.toml: no model {name!r}{f' with {flag} = true' if flag else ''}; reload the "
            "code location after editing it"
        )
    return entry


def upstream_jobs(step: str) -> list[dg.AssetKey]:
    """The ingest jobs that write what a model step reads (its declared `reads`), in registry order."""
    return [ingest_key(j) for j in dict.fromkeys(j for table in STEPS[step].reads for j in WRITERS.get(table, ()))]


def _asset_args(step: str, partitions, command: str) -> dict:
    s = STEPS[step]
    return dict(
        key=step_key(step),
        partitions_def=partitions,
        group_name=STAGES[step].group,
        kinds={"pytorch", "parquet"},
        deps=upstream_jobs(step),
        description=f"{s.description} (`{command}`), under parquet/{s.output}/.",
    )


def _partitions(step: ModelStep) -> dg.PartitionsDefinition:
    """model x corpus for a step run per corpus; else one per model whose models.toml entry selects the step."""
    if step.selects is None:
        return SCORING_PARTITIONS
    return dg.StaticPartitionsDefinition([m.name for m in MODELS.values() if getattr(m, step.selects)])


def _step_asset(step: ModelStep):
    """The asset of a model step's runs (`predictabase.ingest.scoring.steps`): a partition per model x corpus of
    models.toml (score), or per model whose entry has `<step> = true` (top1, cloze)."""
    per_corpus = step.selects is None
    command = f"predictabase {step.name} -m MODEL" + (" -c CORPUS" if per_corpus else "")

    @dg.asset(**_asset_args(step.name, _partitions(step), command))
    def _asset(context: dg.AssetExecutionContext, predictabase: PredictabaseResource) -> dg.MaterializeResult:
        if per_corpus:
            keys = context.partition_key.keys_by_dimension
            entry, corpus = _entry(keys["model"]), keys["corpus"]
            if corpus not in entry.corpora:
                raise dg.Failure(
                    f"models.toml: {entry.name} is kept scored on {', '.join(entry.corpora)} only, not "
                    f"{corpus}; add the corpus to its `corpora` to score it"
                )
            what = {"model": entry.name, "corpus": [corpus]}
        else:
            entry = _entry(context.partition_key, step.selects)
            [corpus] = step.tasks_for(entry)  # top1: the game's corpus; cloze: None (all of its corpora)
            what = {"model": entry.name}
        with predictabase.writing(context, step.name, what) as paths:
            done = run_step(paths, entry, step.name, corpus)
        return dg.MaterializeResult(metadata={"result": done})

    return _asset


#: one asset per model step, in step order (token_scores, top1_predictions, cloze_model_scores)
STEP_ASSETS = [_step_asset(s) for s in STEPS.values()]


def refresh_materializations(report) -> list[dg.AssetMaterialization]:
    """What a refresh rebuilt, as asset materializations (the scheduled refresh logs them, so the asset view
    is current after it): fetch, each ingest job, each scoring partition, each dbt model and seed, the snapshot."""
    out = [dg.AssetMaterialization(FETCH_KEY, metadata={"files": len(report.fetched)})] if report.fetched else []
    out += [dg.AssetMaterialization(ingest_key(j), description="re-ingested by the refresh") for j in report.ingested]
    for step, model, corpus in report.scored:
        per_corpus = STEPS[step].selects is None
        partition = dg.MultiPartitionKey({"model": model, "corpus": corpus}) if per_corpus else model
        out.append(dg.AssetMaterialization(step_key(step), partition=partition))
    out += [
        dg.AssetMaterialization(dg.AssetKey(name), description="built by the refresh's dbt build")
        for name in report.dbt_models
    ]
    if report.published:
        out.append(dg.AssetMaterialization(dg.AssetKey("marts_snapshot"), description="published by the refresh"))
    return out


@dg.asset(
    key="marts_snapshot",
    deps=mart_keys(),
    group_name=STAGES["build"].group,
    kinds={"duckdb"},
    description="marts.duckdb, the snapshot the dashboard reads: dbt source freshness, then every mart "
    "published under the publish guard (as the end of `predictabase build`).",
)
def marts_snapshot(context: dg.AssetExecutionContext, predictabase: PredictabaseResource) -> dg.MaterializeResult:
    from predictabase.warehouse.freshness import source_freshness
    from predictabase.warehouse.publish import publish, published_tables

    with predictabase.writing(context, "build", {"publish": True}) as paths:
        source_freshness(paths)
        marts = publish(paths)
    tables = published_tables(marts) or []
    return dg.MaterializeResult(metadata={"path": str(marts), "marts": len(tables)})
