#!/usr/bin/env bash
# Quick start: install what is missing, build, generate the paper's benchmark models and
# optimize one of them (SqueezeNet 1.1), printing onnx-tensat's before/after table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
MODEL=${MODEL:-squeezenet}
mkdir -p build/models
build/testdata/onnx-tensat-gen build/models --only "$MODEL"
build/tools/onnx-tensat "build/models/$MODEL.onnx" "build/models/$MODEL.opt.onnx" --report "build/models/$MODEL.report.json"
echo "optimized model: build/models/$MODEL.opt.onnx (report: build/models/$MODEL.report.json)"
