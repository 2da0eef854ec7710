"""The Ray engine (`--engine ray`): the model steps (score, top1, cloze) on a Ray cluster.

One model replica per worker (an actor: one GPU each on a GPU cluster, else `cpus` CPU cores each);
the driver plans the work exactly as the local engine does and hands it out unit by unit, largest
first, to whichever replica is free (longest-processing-time-first over length-balanced units):

- score: the run plan's groups of documents (`pipeline.plan_run`); a worker scores group g and writes
  it as part file g of the run directory itself, through fsspec, so the token-score root may be a local
  folder the workers share or an object-store URL. The driver writes `_run.json` after the last part:
  the run is complete only then. A resumed run (the driver killed and started again) skips the groups
  whose part files exist;
- top1 and cloze: the packs of document windows the word search forms (`WordPredictor.plan_documents`);
  a worker returns a pack's results and the driver writes the run's one Parquet file as the local engine
  does (these outputs are small).

Same run id, same windows, same BOS, same batches, float32 log-softmax: the rows are identical to the
local engine's, column by column (tests/test_ray_engine.py). On a CPU, token scoring is identical at any
thread count (1 and 2 threads: the same bits); the word search of top1 and cloze (a tree-shaped attention
mask over a KV cache) only at the same thread count: give the workers the local run's (`--worker-cpus`).

A worker that dies mid-unit is restarted by Ray (`max_restarts`) and its unit retried (`max_task_retries`);
a part file is written whole under its final name only, so a retried unit replaces nothing but itself.

The workers import this package: on a cluster of several machines install it (and the model) on every
node (docs/guides/scale.md). Ray's usage statistics stay off (`RAY_USAGE_STATS_ENABLED=0`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from predictabase.core.errors import OptionError, PredictabaseError, ScoringError

RESTARTS = 3  # a replica killed this many times in one run ends the run with an error
MAX_WORKERS = 1024  # --workers: replicas of one run (each loads the model)
MAX_WORKER_CPUS = 256  # --worker-cpus: torch threads of one replica


@dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # an existing cluster ("ray://host:10001", "auto"); None: a local instance
    workers: int | None = None  # model replicas; None: one per GPU (device cuda), else one per `cpus` cores
    cpus: int = 1  # CPU cores per replica (its torch threads)

    def check(self) -> None:
        if self.workers is not None and not 1 <= self.workers <= MAX_WORKERS:
            raise OptionError("--workers", f"{self.workers} is not allowed; an integer from 1 to {MAX_WORKERS}")
        if not 1 <= self.cpus <= MAX_WORKER_CPUS:
            raise OptionError("--worker-cpus", f"{self.cpus} is not allowed; an integer from 1 to {MAX_WORKER_CPUS}")


def _ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the engine calls nothing outside
    try:
        import ray
    except ImportError:
        raise OptionError("--engine", "ray is not installed; pip install 'predictabase[ray]'") from None
    return ray


@dataclass
class Loaded:
    """What a worker holds: the model, its tokenizer profile, and per-step objects built once (`cache`)."""

    lm: Any
    profile: Any
    cache: dict


class Worker:
    """A Ray actor holding one model replica (loaded on first use, again after a restart)."""

    def __init__(self, model_spec: str, paths, device: str | None, dtype: str | None, threads: int) -> None:
        self.args = (model_spec, paths, device, dtype)
        self.threads = threads
        self.held: Loaded | None = None

    def _loaded(self) -> Loaded:
        if self.held is None:
            import torch

            from predictabase.ingest.scoring.models import load_model
            from predictabase.ingest.scoring.profile import TokenizerProfile

            torch.set_num_threads(self.threads)
            spec, paths, device, dtype = self.args
            lm = load_model(spec, paths, device, dtype)
            self.held = Loaded(lm, TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, spec), {})
        return self.held

    def call(self, fn: Callable, *args):
        """`fn(loaded, *args)` on this replica (fn: a module-level function, pickled by reference)."""
        return fn(self._loaded(), *args)


class RayPool:
    """The replicas of one model on the cluster."""

    def __init__(self, ray, actors: list) -> None:
        self.ray = ray
        self.actors = actors

    def call_one(self, fn: Callable, *args):
        return self._get(self.actors[0].call.remote(fn, *args))

    def call_all(self, fn: Callable, *args) -> list:
        return [self._get(ref) for ref in [a.call.remote(fn, *args) for a in self.actors]]

    def model(self):
        """(the LoadedModel without its weights, the TokenizerProfile) of the replicas: what a driver needs
        to name, plan and record a run."""
        return self.call_one(_model_facts)

    def map_unordered(
        self, fn: Callable, units: Iterable[tuple[Any, tuple]], size: Callable[[Any], int]
    ) -> Iterator[tuple[Any, Any]]:
        """(key, fn(loaded, *args)) for every (key, args) of `units`, as the replicas finish them; the
        largest units (by `size(key)`) go out first, each to the next free replica."""
        queue = sorted(units, key=lambda u: size(u[0]))  # pop() from the end: largest first
        free = list(self.actors)
        running: dict = {}
        while queue or running:
            while free and queue:
                key, args = queue.pop()
                actor = free.pop()
                running[actor.call.remote(fn, *args)] = (key, actor)
            [ref], _ = self.ray.wait(list(running), num_returns=1)
            key, actor = running.pop(ref)
            free.append(actor)
            yield key, self._get(ref)

    def _get(self, ref):
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, PredictabaseError):  # a worker's own one-line error, as the local engine's
                raise cause from None
            raise ScoringError(None, f"a Ray worker failed: {type(cause).__name__}: {cause}") from None
        except ray.exceptions.RayError as exc:
            raise ScoringError(
                None,
                f"a Ray worker was lost and could not be restarted ({type(exc).__name__}; "
                f"{RESTARTS} restarts allowed per replica)",
            ) from None


def _cluster_device(ray, device: str | None) -> str:
    if device:
        return device
    return "cuda" if ray.cluster_resources().get("GPU", 0) >= 1 else "cpu"


@contextmanager
def ray_pool(model_spec: str, paths, device: str | None, dtype: str | None, options: RayOptions) -> Iterator[RayPool]:
    """Start (or join) a Ray cluster and one replica of the model per worker; every replica loads the
    model before this yields, so a model that does not load fails here with its own one-line error."""
    options.check()
    ray = _ray()
    own = not ray.is_initialized()
    if own and not options.address:  # a cluster of this machine: its workers read this machine's files
        from predictabase.ingest.scoring.models import check_spec

        check_spec(model_spec)
    if own:
        kwargs: dict = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        if options.address:
            ray.init(address=options.address, **kwargs)
        else:
            n = options.workers * options.cpus if options.workers else None
            ray.init(num_cpus=max(n or 0, os.cpu_count() or 1), **kwargs)
    try:
        dev = _cluster_device(ray, device)
        gpus = 1 if dev.startswith("cuda") else 0
        if options.workers:
            workers = options.workers
        elif gpus:
            workers = int(ray.cluster_resources().get("GPU", 0))
        else:
            workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // options.cpus)
        remote = ray.remote(num_cpus=options.cpus, num_gpus=gpus, max_restarts=RESTARTS, max_task_retries=RESTARTS)(
            Worker
        )
        actors = [remote.remote(model_spec, paths, dev if gpus else "cpu", dtype, options.cpus) for _ in range(workers)]
        pool = RayPool(ray, actors)
        pool.call_all(_describe)  # load every replica now
        yield pool
    finally:
        if own:
            ray.shutdown()


def _model_facts(loaded: Loaded):
    from dataclasses import replace

    return replace(loaded.lm, model=None), loaded.profile


@contextmanager
def model_steps(model_spec: str, paths, device: str | None, dtype: str | None, options: RayOptions | None):
    """(lm, profile, pool) for a model step: the local engine loads the model here (pool None); the Ray
    engine loads one replica per worker and yields the model's facts without its weights."""
    from predictabase.ingest.scoring.model_identity import record_source

    if options is None:
        from predictabase.ingest.scoring.models import load_model
        from predictabase.ingest.scoring.profile import TokenizerProfile

        lm = load_model(model_spec, paths, device, dtype)
        record_source(paths, model_spec)
        yield lm, TokenizerProfile.build(lm.tokenizer, lm.model_type, lm.vocab_size, model_spec), None
        return
    with ray_pool(model_spec, paths, device, dtype, options) as pool:
        lm, profile = pool.model()
        record_source(paths, model_spec)
        yield lm, profile, pool


def _describe(loaded: Loaded) -> dict:
    return {"pid": os.getpid(), "device": str(loaded.lm.device), "vocab_size": loaded.lm.vocab_size}
