"""The Ray engine's cost against the local engine on the same machine: Natural Stories scored with one model,
pair by pair (local, then Ray), each in a fresh warehouse.

    python bench/ray_score.py [--model smollm2-135m] [--pairs 2] [--workers 2] [--part-tokens 2048]

local = `score_corpora` in this process (torch's threads: all cores); ray = `score_corpora_ray` on a local Ray
instance started for the run (`--workers` replicas of one core each, loaded in parallel), timed from the call to
the written `_run.json`, so Ray's start, the replicas' model loads and the probe are in it. Both runs use the
same plan (--part-tokens) and must write the same rows, which is checked. The table shows each pair's seconds,
tokens/s and the ratio ray / local; the median ratio is the cost (or gain) of the Ray engine on this machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from predictabase.core.config import paths as make_paths  # noqa: E402
from predictabase.ingest.scoring import ScoreSettings, score_corpora, store  # noqa: E402
from predictabase.ingest.scoring.distributed import RayOptions  # noqa: E402
from predictabase.ingest.scoring.pipeline import score_corpora_ray  # noqa: E402
from tests.scoring_helpers import natural_stories, write_documents  # noqa: E402

MIRROR = Path(os.environ.get("PREDICTABASE_MIRROR", ROOT.parent / "shared" / "data"))


def rows(paths, run) -> list:
    d = store.run_dir(paths.token_scores, run["model_key"], run["corpus"], run["run_id"])
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.concat_tables([pq.read_table(p, partitioning=None) for p in store.part_files(d)])
    return sorted(t.to_pylist(), key=lambda r: (int(r["doc_id"]), r["token_index"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--part-tokens", type=int, default=2048)
    args = ap.parse_args()
    texts = list(natural_stories(MIRROR).values())
    settings = ScoreSettings(part_tokens=args.part_tokens, device="cpu")
    base = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    models = make_paths(base / "models-cache")  # one GGUF conversion before the pairs, copied into every run
    from predictabase.ingest.scoring.models import load_model

    load_model(args.model, models, "cpu", None)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; model {args.model}; "
        f"Natural Stories ({len(texts)} stories); Ray: {args.workers} workers x 1 core; "
        f"part tokens {args.part_tokens}"
    )
    print(f"{'pair':>4} {'local s':>8} {'ray s':>8} {'local tok/s':>12} {'ray tok/s':>10} {'ray/local':>9} same rows")
    ratios = []
    try:
        for i in range(args.pairs):
            out = {}
            for engine in ("local", "ray"):
                p = make_paths(base / f"{engine}-{i}")
                write_documents(p, "natural_stories", texts)
                if models.models.exists():
                    shutil.copytree(models.models, p.models, dirs_exist_ok=True)
                t0 = time.perf_counter()
                if engine == "local":
                    [run] = score_corpora(p, args.model, ["natural_stories"], settings, show_progress=False)
                else:
                    [run] = score_corpora_ray(
                        p,
                        args.model,
                        ["natural_stories"],
                        settings,
                        RayOptions(workers=args.workers),
                        show_progress=False,
                    )
                out[engine] = (time.perf_counter() - t0, run, p)
            (tl, run, pl), (tr, _, pr) = out["local"], out["ray"]
            same = rows(pl, run) == rows(pr, run)
            n = run["n_tokens"]
            ratios.append(tr / tl)
            print(f"{i + 1:>4} {tl:>8.1f} {tr:>8.1f} {n / tl:>12.0f} {n / tr:>10.0f} {tr / tl:>9.2f} {same}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"median ray/local time: {statistics.median(ratios):.2f} ({n} tokens per run)")


if __name__ == "__main__":
    main()
