#!/usr/bin/env bash
# Bundles the built binaries with the non-CUDA shared libraries they need into bundle/ (an
# ignored folder), so they run on a GPU machine that has CUDA, cuDNN and cuBLAS
# (as Python wheels) but none of our Debian packages and no network.
#
#   scripts/bundle-gpu.sh [-b BUILD_DIR] [NAME...]
#
# NAME: executables to take (file names, e.g. test_gpu_cost onnx-tensat); default: every
# test_* executable under BUILD_DIR/tests and every executable under BUILD_DIR/tools and
# BUILD_DIR/testdata. BUILD_DIR defaults to $BUILD_DIR or build.
#
# Layout:
#   bundle/bin/NAME      the executables, debug info stripped (the tree that travels to the
#                        GPU machine is limited to 64 MiB)
#   bundle/lib/          every library ldd lists except the C runtime (libc, libm, libstdc++,
#                        libgcc_s, ld-linux, ...) and CUDA's own (cudart, cublas, cudnn,
#                        ...), which come from the GPU machine
#   bundle/env.sh        sourced: sets LD_LIBRARY_PATH to bundle/lib, then the folders of the
#                        cuDNN/cuBLAS/CUDA-runtime wheels found there, then /usr/local/cuda
#   bundle/run NAME ...  runs bundle/bin/NAME with that environment
#   bundle/MANIFEST      what was bundled, from which build
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${1:-}" = "-b" ]; then
  BUILD_DIR=$2
  shift 2
fi
[ -d "$BUILD_DIR" ] || { echo "bundle-gpu: no build folder $BUILD_DIR (build first: scripts/build.sh)" >&2; exit 2; }

is_elf_exe() { [ -f "$1" ] && [ -x "$1" ] && head -c 4 "$1" | grep -q 'ELF'; }

exes=()
if [ $# -gt 0 ]; then
  for name in "$@"; do
    found=$(find "$BUILD_DIR" -path '*/CMakeFiles' -prune -o -type f -name "$name" -print | head -1)
    [ -n "$found" ] && is_elf_exe "$found" || { echo "bundle-gpu: no executable $name under $BUILD_DIR" >&2; exit 2; }
    exes+=("$found")
  done
else
  while IFS= read -r f; do
    is_elf_exe "$f" && exes+=("$f")
  done < <( { find "$BUILD_DIR/tests" -path '*/CMakeFiles' -prune -o -type f -name 'test_*' -print 2>/dev/null
              find "$BUILD_DIR/tools" "$BUILD_DIR/testdata" -path '*/CMakeFiles' -prune -o -type f -print 2>/dev/null; } | sort)
fi
[ ${#exes[@]} -gt 0 ] || { echo "bundle-gpu: no executables found under $BUILD_DIR" >&2; exit 2; }

# Libraries the GPU machine provides itself: the C/C++ runtime (its own is newer than ours
# and cuDNN needs it) and CUDA's libraries (the wheels there match its driver).
skip_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libutil\.so|libresolv\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas|libcublasLt|libcudnn|libnvrtc|libnvJitLink|libcufft|libcurand|libcusparse|libcusolver|libnvidia)'

rm -rf bundle
mkdir -p bundle/bin bundle/lib
declare -A seen=()
for exe in "${exes[@]}"; do
  cp "$exe" bundle/bin/
  strip --strip-debug "bundle/bin/$(basename "$exe")" 2>/dev/null || true
  while read -r name _ path _; do
    [ -n "${path:-}" ] && [ "${path:0:1}" = "/" ] || continue
    [[ "$name" =~ $skip_re ]] && continue
    [ -n "${seen[$name]:-}" ] && continue
    seen[$name]=1
    cp -L "$path" "bundle/lib/$name"
    strip --strip-debug "bundle/lib/$name" 2>/dev/null || true
  done < <(ldd "$exe" | grep '=>')
  if ldd "$exe" | grep -q 'not found'; then
    echo "bundle-gpu: warning: $exe has unresolved libraries here:" >&2
    ldd "$exe" | grep 'not found' >&2
  fi
done

cat > bundle/env.sh <<'ENV'
# Sourced by bundle/run: the bundled libraries first, then CUDA's from the GPU machine.
_bundle_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_cuda_dirs=""
_add_dir() {
  case ":$_cuda_dirs:" in *":$1:"*) return 0 ;; esac
  if [ -d "$1" ]; then _cuda_dirs="$_cuda_dirs:$1"; fi
  return 0
}
if command -v python3 >/dev/null 2>&1; then
  # Folders of the nvidia.* wheels (cuDNN, cuBLAS, CUDA runtime), by import and by search.
  while IFS= read -r d; do _add_dir "$d"; done < <(python3 - 2>/dev/null <<'PY'
import importlib, os, site
for mod in ("nvidia.cudnn", "nvidia.cublas", "nvidia.cuda_runtime", "nvidia.cu13"):
    try:
        m = importlib.import_module(mod)
    except Exception:
        continue
    for p in list(getattr(m, "__path__", [])):
        print(os.path.join(p, "lib"))
roots = [r for r in set(site.getsitepackages() + [site.getusersitepackages()]) if os.path.isdir(r)]
for r in roots:
    nv = os.path.join(r, "nvidia")
    for base, _, files in os.walk(nv if os.path.isdir(nv) else r):
        if any(f.startswith(("libcudnn.so", "libcublas.so", "libcudart.so")) for f in files):
            print(base)
PY
)
fi
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do _add_dir "$d"; done
export LD_LIBRARY_PATH="$_bundle_dir/lib$_cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TENSAT_BUNDLE_DIR="$_bundle_dir"
unset -f _add_dir
ENV

cat > bundle/run <<'RUN'
#!/usr/bin/env bash
# bundle/run NAME [ARGS...]: runs bundle/bin/NAME with the bundled and the GPU machine's
# libraries. bundle/run --env prints LD_LIBRARY_PATH and what each binary resolves.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
if [ "${1:-}" = "--env" ]; then
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for b in "$here"/bin/*; do echo "== $(basename "$b")"; ldd "$b" | grep -E 'cud|cublas|not found' || true; done
  # cuBLAS is not linked but opened when a GPU context is created (gpu_cost/cublas_loader.cuh).
  # The binaries open libcublas.so.<major of the headers they were built with> (13 for CUDA 13).
  echo "== cuBLAS (opened at run time) on LD_LIBRARY_PATH: $( (IFS=:; for d in $LD_LIBRARY_PATH; do ls "$d"/libcublas.so.[0-9]* 2>/dev/null; done) | tr '\n' ' ' || true)"
  exit 0
fi
[ $# -ge 1 ] || { echo "usage: bundle/run NAME [ARGS...] (NAME in bundle/bin)" >&2; exit 2; }
exe="$here/bin/$1"
shift
[ -x "$exe" ] || { echo "bundle/run: no executable $(basename "$exe") in $here/bin" >&2; exit 2; }
exec "$exe" "$@"
RUN
chmod +x bundle/run

{
  echo "built from: $(pwd) ($BUILD_DIR), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "binaries:"; for e in "${exes[@]}"; do echo "  $(basename "$e")  ($e)"; done
  echo "libraries:"; for l in bundle/lib/*; do [ -e "$l" ] && echo "  $(basename "$l")"; done
} > bundle/MANIFEST
echo "bundle-gpu: $(ls bundle/bin | wc -l) binaries, $(ls bundle/lib | wc -l) libraries, $(du -sh bundle | cut -f1) in bundle/"
size_kb=$(du -sk bundle | cut -f1)
if [ "$size_kb" -gt 60000 ]; then
  echo "bundle-gpu: warning: bundle/ is ${size_kb} KiB; the tree sent to the GPU machine must stay under 64 MiB:" >&2
  echo "  name only the binaries you need, e.g. scripts/bundle-gpu.sh test_gpu_cost" >&2
fi
