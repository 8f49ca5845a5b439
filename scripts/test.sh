#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit, rule tables,
# inline ONNX models, ONNX Runtime cross-checks). GPU tests print "skipped: no GPU" here.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 1500 "$@"
