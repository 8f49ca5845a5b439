#!/usr/bin/env bash
# One GPU-machine call that does what a short device lease allows, in order of value: the GPU
# unit tests, a cost table of the benchmark models (onnx-tensat-costs, k_multi 2), the
# whole-model GPU tests (three-process repeatability, costs that add up), then #14's acceptance
# runs (onnx-tensat --measure on x3 + tools/torch_time.py) model by model until the deadline.
# Every step has a time cap inside DEADLINE seconds (default 520); the results are packed into
# $OUT as at most four files (summary.txt, acceptance.txt, h100-v2.json, all.tgz), which fits a
# transfer that returns few files.
#
#   on the build machine:  scripts/bundle-gpu.sh test_gpu_cost test_gpu_models onnx-tensat-gen \
#                              onnx-tensat onnx-tensat-costs && tar -cJf BUNDLE.tar.xz bundle
#   on the GPU machine:    BUNDLE=BUNDLE.tar.xz DEADLINE=520 scripts/gpu-session.sh
#
# Used on 2026-11-25 (issue #14's note): 250 s for the list below on an H100.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
T0=$SECONDS
DEADLINE=${DEADLINE:-520}
OUT=${OUT:-$(pwd)/gpu-out}; mkdir -p "$OUT"
left() { echo $((DEADLINE - (SECONDS - T0))); }
cap() { local c=$1 l; l=$(( $(left) - 25 )); [ "$l" -lt "$c" ] && c=$l; [ "$c" -lt 5 ] && c=0; echo "$c"; }
W=${TMPDIR:-/tmp}/tensat-gpu-session; rm -rf "$W"; mkdir -p "$W/models" "$W/res" "$W/logs"
S="$W/summary.txt"
say() { echo "[$((SECONDS - T0))s] $*" | tee -a "$S"; }
step() { # name cap cmd...
  local name=$1 c; c=$(cap "$2"); shift 2
  if [ "$c" = 0 ]; then say "$name: SKIPPED (no time left)"; return 99; fi
  local s=$SECONDS
  timeout -k 5 "$c" "$@" > "$W/logs/$name.log" 2>&1; local rc=$?
  say "$name: rc=$rc $((SECONDS - s))s (cap ${c}s)"; return $rc
}
pack() {
  cp "$W/summary.txt" "$OUT/summary.txt" 2>/dev/null
  [ -f "$W/h100-v2.json" ] && cp "$W/h100-v2.json" "$OUT/h100-v2.json"
  [ -f "$W/res/acceptance.txt" ] && cp "$W/res/acceptance.txt" "$OUT/acceptance.txt"
  tar -C "$(dirname "$W")" -czf "$OUT/all.tgz" --exclude="$(basename "$W")/models" --exclude='*.opt.onnx' "$(basename "$W")"
}
trap pack EXIT

[ -n "${BUNDLE:-}" ] && { tar -xJf "$BUNDLE" || { say "bundle unpack failed"; exit 2; }; }
[ -x bundle/run ] || { say "no bundle/ (see the top of this script)"; exit 2; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$W/logs/env.log" 2>&1
say "env: $(tail -1 "$W/logs/env.log")"
BENCH="nasrnn bert squeezenet inceptionv3 nasneta resnext50 vgg19 resnet50"
TV="densenet121 resnet50 mobilenet_v2 googlenet"
( bundle/run onnx-tensat-gen "$W/models" > "$W/logs/gen.log" 2>&1; echo "gen rc=$?" >> "$W/logs/gen.log"
  python3 tools/export_torchvision.py "$W/models" --models "$(echo $TV | tr ' ' ',')" > "$W/logs/tvexport.log" 2>&1
  echo "tvexport rc=$?" >> "$W/logs/tvexport.log" ) &
BG=$!
export TENSAT_COST_CACHE="$W/unit-cache.json"
step unit 60 bundle/run test_gpu_cost --gtest_filter='Gpu*' --gtest_color=no
grep -E '^\[  (PASSED|FAILED) |^\[  FAILED  \]' "$W/logs/unit.log" | head -20 >> "$S"
while ! grep -q "gen rc" "$W/logs/gen.log" 2>/dev/null && [ "$(left)" -gt 100 ]; do sleep 1; done
bm=(); for m in $BENCH; do bm+=("$W/models/$m.onnx"); done
step costs_bench 80 bundle/run onnx-tensat-costs "${bm[@]}" --out "$W/h100-v2.json" --k-multi 2
tail -9 "$W/logs/costs_bench.log" >> "$S"
cp "$W/h100-v2.json" "$W/models-cache.json" 2>/dev/null
export TENSAT_COST_CACHE="$W/models-cache.json" TENSAT_MODELS_DIR="$W/models"
step models 80 bundle/run test_gpu_models --gtest_filter='Gpu/GpuModels.TimingRepeats*:Gpu/GpuModels.OperatorCosts*' --gtest_color=no
grep -E 'graph-mode medians|sum of operator costs .* ratio|^\[  (PASSED|FAILED) ' "$W/logs/models.log" | head -30 >> "$S"
CACHE="$W/acc-cache.json"; cp "$W/models-cache.json" "$CACHE" 2>/dev/null
acc() { local m=$1 src="$W/models/$1.onnx" dst="$W/res/$1.opt.onnx"
  [ -f "$src" ] || { say "$m: no model"; return; }
  for k in 1 2 3; do
    step "$m.r$k" 30 bundle/run onnx-tensat "$src" "$dst" --measure on --cost-model cuda --cost-cache "$CACHE" \
      --report "$W/res/$m.r$k.json" || true
  done
  [ -f "$dst" ] && step "$m.torch" 30 python3 tools/torch_time.py "$src" "$dst" --check-ort --json "$W/res/$m.torch.json"
  grep -E "graph .* ms" "$W/logs/$m.torch.log" >> "$S" 2>/dev/null; tail -2 "$W/logs/$m.torch.log" | grep -i error >> "$S"
  rm -f "$dst"
}
say "$(tail -1 "$W/logs/tvexport.log" 2>/dev/null)"
for m in nasrnn resnet50 bert squeezenet tv_densenet121 inceptionv3 tv_resnet50; do [ "$(left)" -gt 40 ] && acc "$m"; done
python3 tools/acceptance_table.py "$W/res" --runs 3 --json "$W/res/acceptance-summary.json" > "$W/res/acceptance.txt" 2>&1
cat "$W/res/acceptance.txt" >> "$S"
[ "$(left)" -gt 40 ] && step costs_tv 60 bundle/run onnx-tensat-costs "$W/models/tv_mobilenet_v2.onnx" --out "$W/mb-check.json"
tail -2 "$W/logs/costs_tv.log" >> "$S" 2>/dev/null
say "done"
