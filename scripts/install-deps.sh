#!/usr/bin/env bash
# Installs what onnx-tensat needs on Debian (as root, or with sudo), only what is missing.
# Idempotent: a second run installs nothing. Used by both README commands and CI.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libgtest-dev
  coinor-libcbc-dev
  nlohmann-json3-dev libcli11-dev
  libopenblas-dev
  python3 python3-pip
)
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CUDA is optional: with the toolkit (nvcc, cuDNN, cuBLAS; e.g. at /usr/local/cuda) the build
# includes the GPU executor and the cuda cost model; without it, everything else.
if [ -x /usr/local/cuda/bin/nvcc ] || { p=$(command -v nvcc 2>/dev/null) && [ -x "$p" ]; }; then
  echo "install-deps: CUDA toolkit found: the GPU executor will be built"
else
  echo "install-deps: no CUDA toolkit: building without the GPU executor (table/roofline cost models, CPU verification)"
fi

# Test and benchmark tooling only (the tool itself does not use Python): exact versions from
# requirements.txt. pip does nothing when they are already installed. Debian's own python3
# refuses pip installs into it unless told (PEP 668); this is a build machine, so tell it.
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
REQ="$(cd "$(dirname "$0")/.." && pwd)/requirements.txt"
if ! python3 - "$REQ" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, want = line.split("==")
        if version(name) != want:
            sys.exit(1)
PY
then
  echo "install-deps: pip install -r requirements.txt"
  python3 -m pip install -q -r "$REQ"
fi
