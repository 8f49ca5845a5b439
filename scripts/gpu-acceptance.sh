#!/usr/bin/env bash
# The acceptance measurements of issue #14 on a GPU machine (gpu_cost/README.md): for each model,
# onnx-tensat with --measure on in three separate processes, then the independent timing of the
# original and the written model through PyTorch (tools/torch_time.py), then the table
# (tools/acceptance_table.py).
#
#   scripts/gpu-acceptance.sh [--models LIST] [--runs N] [--no-torchvision]
#                             [--models-dir DIR] [--cache FILE] [--deadline SECONDS]
#
# LIST: comma-separated names among the benchmark models (nasrnn bert resnext50 nasneta
# squeezenet vgg19 inceptionv3 resnet50) and the torchvision exports (tv_resnet50,
# tv_resnext50_32x4d, tv_vgg19, tv_googlenet, tv_inception_v3, tv_densenet121, tv_mobilenet_v2,
# tv_shufflenet_v2_x1_0, tv_squeezenet1_1); default: all of them. A long list may not fit one
# device call (10 minutes): split it, the per-model files are independent.
#
# --models-dir: models already there are used (the others are generated or exported into it);
# --cache: a cost cache or table to start from (e.g. one onnx-tensat-costs just measured), so
# the runs measure only what it lacks; --deadline: no model is started, and no step runs past,
# SECONDS after this script started (each step is capped; what finished is reported).
#
# Needs bundle/ (scripts/bundle-gpu.sh onnx-tensat onnx-tensat-gen ...) and a python3 with
# torch, torchvision and onnx (the GPU machine's). Writes to $OUT (./gpu-out elsewhere):
#   acceptance.txt         the table and the checks
#   acceptance-runs.tgz    every report and timing file (NAME.rK.json, NAME.torch.json, logs)
#   acceptance-cost-cache.json   the operator costs measured on the way (a cost table)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$(pwd)/gpu-out}
RUNS=3
MODELS=""
TORCHVISION=1
MODELS_DIR=""
START_CACHE=""
DEADLINE=""
T0=$SECONDS
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --no-torchvision) TORCHVISION=0; shift ;;
    --models-dir) MODELS_DIR=$2; shift 2 ;;
    --cache) START_CACHE=$2; shift 2 ;;
    --deadline) DEADLINE=$2; shift 2 ;;
    *) echo "gpu-acceptance: unknown argument $1" >&2; exit 2 ;;
  esac
done
BENCH="nasrnn bert resnext50 nasneta squeezenet vgg19 inceptionv3 resnet50"
TV="resnet50 resnext50_32x4d vgg19 googlenet inception_v3 densenet121 mobilenet_v2 shufflenet_v2_x1_0 squeezenet1_1"
if [ -z "$MODELS" ]; then
  MODELS=$(echo $BENCH | tr ' ' ',')
  [ $TORCHVISION = 1 ] && MODELS="$MODELS,$(for m in $TV; do printf 'tv_%s,' "$m"; done)"
fi
[ -x bundle/run ] || { echo "gpu-acceptance: no bundle/ (scripts/bundle-gpu.sh onnx-tensat onnx-tensat-gen)" >&2; exit 2; }
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/tensat-acceptance.XXXXXX)
RES="$WORK/results"
MD=${MODELS_DIR:-$WORK/models}
mkdir -p "$MD" "$RES"
LOG="$RES/acceptance.log"
CACHE="$OUT/acceptance-cost-cache.json"
if [ -n "$START_CACHE" ]; then cp "$START_CACHE" "$CACHE" || exit 2; fi
{ echo "== $(date -u)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1; cat bundle/MANIFEST; } > "$LOG"

# The seconds a step may take: at most $1, and (with --deadline) what is left before it.
cap() {
  local c=$1
  if [ -n "$DEADLINE" ]; then
    local l=$((DEADLINE - (SECONDS - T0)))
    [ "$l" -lt "$c" ] && c=$l
  fi
  [ "$c" -lt 1 ] && c=1
  echo "$c"
}
time_left() { [ -z "$DEADLINE" ] || [ $((DEADLINE - (SECONDS - T0))) -gt "$1" ]; }

bench_list=""; tv_list=""
for m in $(echo "$MODELS" | tr ',' ' '); do
  [ -f "$MD/$m.onnx" ] && continue
  case "$m" in tv_*) tv_list="$tv_list,${m#tv_}" ;; *) bench_list="$bench_list,$m" ;; esac
done
if [ -n "$bench_list" ]; then
  bundle/run onnx-tensat-gen "$MD" --only "${bench_list#,}" >> "$LOG" 2>&1 || echo "gpu-acceptance: model generation failed" | tee -a "$LOG"
fi
if [ -n "$tv_list" ]; then
  python3 tools/export_torchvision.py "$MD" --models "${tv_list#,}" >> "$LOG" 2>&1 || echo "gpu-acceptance: some torchvision exports failed (see the log)" | tee -a "$LOG"
fi

for m in $(echo "$MODELS" | tr ',' ' '); do
  if ! time_left 50; then echo "$m: not started (deadline)" | tee -a "$LOG"; continue; fi
  src="$MD/$m.onnx"
  dst="$RES/$m.opt.onnx"
  [ -f "$src" ] || { echo "$m: no model" | tee -a "$LOG"; continue; }
  for k in $(seq 1 "$RUNS"); do
    start=$SECONDS
    timeout -k 5 "$(cap 120)" bundle/run onnx-tensat "$src" "$dst" --measure on --cost-model cuda --cost-cache "$CACHE" \
      --report "$RES/$m.r$k.json" >> "$RES/$m.r$k.log" 2>&1
    rc=$?
    echo "$m run $k: exit $rc, $((SECONDS - start)) s" | tee -a "$LOG"
  done
  if [ -f "$dst" ]; then
    timeout -k 5 "$(cap 120)" python3 tools/torch_time.py "$src" "$dst" --check-ort --json "$RES/$m.torch.json" >> "$LOG" 2>&1 ||
      echo "$m: torch_time reported a problem (see the log)" | tee -a "$LOG"
    # The same with each Conv+Relu as one cuDNN call, as the executor runs it (beside, not a check).
    if time_left 30; then
      timeout -k 5 "$(cap 60)" python3 tools/torch_time.py "$src" "$dst" --fuse-conv-relu --check-ort --json "$RES/$m.torchfused.json" >> "$LOG" 2>&1 ||
        echo "$m: torch_time --fuse-conv-relu reported a problem (see the log)" | tee -a "$LOG"
    fi
  fi
  rm -f "$dst"  # the written models are large; the reports say what they hold
done

python3 tools/acceptance_table.py "$RES" --runs "$RUNS" --json "$RES/acceptance-summary.json" | tee "$OUT/acceptance.txt"
status=${PIPESTATUS[0]}
tar -C "$WORK" -czf "$OUT/acceptance-runs.tgz" results
rm -rf "$WORK"
exit "$status"
