#!/usr/bin/env bash
# The one command line to run on a GPU machine (see gpu_cost/README.md): runs the
# GPU tests of every bundled test binary from bundle/ (made here by scripts/bundle-gpu.sh)
# and writes the logs to $OUT (default ./gpu-out).
#
#   scripts/run-gpu-tests.sh [GTEST_FILTER]     default filter: Gpu* (the GPU suites)
#
# Files written: gpu-env.log (nvidia-smi, library
# resolution), gpu-tests.log (all test output), gpu-summary.txt (one line per binary),
# gpu-cost-cache.json (the costs measured by the tests' cuda model, if any).
#
# test_gpu_models (whole benchmark models) needs onnx-tensat-gen bundled too:
#   scripts/bundle-gpu.sh test_gpu_cost test_gpu_models onnx-tensat-gen
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$(pwd)/gpu-out}
FILTER=${1:-Gpu*}
mkdir -p "$OUT"
[ -x bundle/run ] || { echo "run-gpu-tests: no bundle/ here: run scripts/bundle-gpu.sh and carry bundle" | tee "$OUT/gpu-summary.txt"; exit 2; }

{
  echo "== date"; date -u
  echo "== nvidia-smi"; nvidia-smi 2>&1 || echo "nvidia-smi failed"
  echo "== bundle"; cat bundle/MANIFEST
  echo "== libraries"; bundle/run --env 2>&1
  if [ -x bundle/bin/test_gpu_cost ]; then  # the cuBLAS the binaries open (not linked)
    echo "== cuBLAS"; bundle/run test_gpu_cost --gtest_filter='CublasLoader*' 2>&1 | grep -E 'cuBLAS|OK|FAILED'
  fi
} > "$OUT/gpu-env.log"

export TENSAT_COST_CACHE="$OUT/gpu-cost-cache.json"
# test_gpu_models reads the eight benchmark models from $TENSAT_MODELS_DIR: generate them
# (about 1.2 GB, seconds) when that binary and onnx-tensat-gen are bundled.
MODELS_TMP=""
if [ -z "${TENSAT_MODELS_DIR:-}" ] && [ -x bundle/bin/test_gpu_models ]; then
  if [ -x bundle/bin/onnx-tensat-gen ]; then
    MODELS_TMP=$(mktemp -d /tmp/tensat-models.XXXXXX)
    bundle/run onnx-tensat-gen "$MODELS_TMP" > "$MODELS_TMP/gen.log" 2>&1 ||
      echo "run-gpu-tests: onnx-tensat-gen failed: $(tail -3 "$MODELS_TMP/gen.log")" >> "$OUT/gpu-env.log"
    export TENSAT_MODELS_DIR="$MODELS_TMP"
  else
    echo "run-gpu-tests: test_gpu_models needs onnx-tensat-gen in the bundle (or TENSAT_MODELS_DIR)" >> "$OUT/gpu-env.log"
  fi
fi
trap '[ -n "$MODELS_TMP" ] && rm -rf "$MODELS_TMP"' EXIT
status=0
: > "$OUT/gpu-summary.txt"
: > "$OUT/gpu-tests.log"
for exe in bundle/bin/test_*; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  echo "===== $name --gtest_filter=$FILTER" >> "$OUT/gpu-tests.log"
  start=$(date +%s)
  bundle/run "$name" --gtest_filter="$FILTER" --gtest_color=no >> "$OUT/gpu-tests.log" 2>&1
  rc=$?
  end=$(date +%s)
  counts=$(awk -v n="$name" '/^===== /{cur=($2==n)} cur && /^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test/{printf "%s ", $0}' "$OUT/gpu-tests.log")
  echo "$name: rc=$rc, $((end - start)) s; ${counts:-no gtest summary}" >> "$OUT/gpu-summary.txt"
  [ $rc -eq 0 ] || status=1
done
cat "$OUT/gpu-summary.txt"
exit $status
