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
# Test and benchmark tooling only (the tool itself does not use Python).
PIP_PACKAGES=(onnx onnxruntime numpy)

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

if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "install-deps: the CUDA toolkit (nvcc, cuDNN, cuBLAS) is expected at /usr/local/cuda" >&2
  exit 1
fi

PY=python3
pip_missing=()
for p in "${PIP_PACKAGES[@]}"; do
  if ! $PY -c "import $p" >/dev/null 2>&1; then pip_missing+=("$p"); fi
done
if [ "${#pip_missing[@]}" -gt 0 ]; then
  echo "install-deps: pip install ${pip_missing[*]}"
  $PY -m pip install -q --disable-pip-version-check "${pip_missing[@]}" 2>&1 | grep -v -i 'running pip as the' || true
  for p in "${pip_missing[@]}"; do
    $PY -c "import $p" || { echo "install-deps: python package $p failed to install" >&2; exit 1; }
  done
fi
