#!/usr/bin/env bash
# The GPU benchmark of the scorer, one shot, on the device machine (an H100 or H200; no network there):
#
#   bash bench/gpu_score.sh            # from the repository root, as the device tool's command
#
# Runs with that machine's own python3 (PyTorch with CUDA, transformers 5); the repository's .venv does not
# travel (a CPU build of torch, ~3 GB). What the bench needs beyond the repository arrives under .gpu/ (see
# bench/gpu_stage.sh, run first on a development machine): .gpu/base.tar.gz (texts, the pure-Python `gguf`
# package, the SmolLM2 / Gemma 3 twins' config and tokenizer files) and, over earlier calls, .gpu/parts/ (the
# GGUF files in parts). A pretrained model whose parts all arrived and match their sha256 is benchmarked
# with its real weights; otherwise its twin (the same config and tokenizer, seeded random weights).
#
# Prints everything to stdout: the GPU, the versions, per model the pair-by-pair scorer vs bare-forward
# throughput, MFU, the fp32-vs-bf16 and fp32-vs-fp16 log-probability differences, and the summary table.
# Models: SmolLM2-135M, Gemma 3 270M, config-1b (~1.07B, for the >= 1B MFU goal) and config-7b (the largest
# that fits in time and memory beside its float32 reference: ~27 GB fp32 + 13.5 GB bf16 on an 80 GB H100).
# 236 s on an H100 on 2026-11-27 (bench/gpu_score_h100.log): setup (unpacking, GGUF conversion, ~15 s),
# then the bench, stopped after 400 s (BENCH_TIMEOUT) with the table of the models finished by then.
# 264 s on an H200 on 2026-11-28 (bench/gpu_score_h200.log); BIG_MODELS="" for the two small models only (142 s).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BASE=/tmp/gpu-bench-base
export PREDICTABASE_MODEL_CACHE=/tmp/gpu-bench-models HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s)

echo "== bench/gpu_score.sh $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader || true
rm -rf "$BASE" && mkdir -p "$BASE" "$PREDICTABASE_MODEL_CACHE"
if [ -f .gpu/base.tar.gz ]; then
  tar -C "$BASE" -xzf .gpu/base.tar.gz
else
  echo "no .gpu/base.tar.gz: run bash bench/gpu_stage.sh on a development machine and carry it" >&2
  exit 2
fi
export PYTHONPATH="$PWD:$BASE/site${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import sys, torch, transformers; print('python', sys.version.split()[0], '| torch', torch.__version__, \
'| CUDA', torch.version.cuda, '| transformers', transformers.__version__, '|', \
torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" || exit 3

# the pretrained models whose parts all arrived; else the twins
models=()
for key in smollm2-135m gemma3-270m; do
  spec="twin:$BASE/twin-$key"
  if ls .gpu/parts/"$key".gguf.part* >/dev/null 2>&1; then
    cat .gpu/parts/"$key".gguf.part* > "$BASE/$key.gguf"
    if (cd "$BASE" && grep " $key.gguf\$" ggufs.sha256 | sha256sum -c --quiet -); then
      # convert once (GGUF -> float32 safetensors in the model cache); a failure falls back to the twin
      if "$PY" -c "import sys; from predictabase.core.config import paths; from predictabase.ingest.scoring.models import load_model
load_model(sys.argv[1], paths(), 'cpu', 'float32')" "$BASE/$key.gguf" > "$BASE/$key.log" 2>&1; then
        spec="$BASE/$key.gguf"
      else
        echo "$key: the GGUF did not load, its twin instead:"; grep -v Converting "$BASE/$key.log" | tail -3
      fi
    else
      echo "$key: parts incomplete or corrupt (sha256 mismatch): its twin instead"
    fi
  fi
  models+=("$spec")
done
models+=(${BIG_MODELS-config-1b config-7b})
echo "models: ${models[*]}  (setup $(( $(date +%s) - T0 )) s)"

# 200k tokens per pass (the texts repeated), 60k for config-7b (its float32 reference pass is slow)
# (arguments to this script are appended: e.g. --pairs 5; BIG_MODELS="config-1b" leaves out config-7b)
timeout -k 20 "${BENCH_TIMEOUT:-400}" "$PY" bench/score.py --device "${DEVICE:-cuda}" --models "${models[@]}" \
  --mirror "$BASE/data" --tokenizer "$BASE/twin-smollm2-135m" --pairs 3 --ucl 205 --stories 10 \
  --min-tokens 200000 --max-tokens config-7b=60000 --no-minicons "$@"
rc=$?
echo "== bench exit $rc; total $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=memory.used,temperature.gpu,clocks.sm --format=csv,noheader || true
exit $rc
