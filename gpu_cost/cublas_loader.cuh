// cuBLAS opened at run time (dlopen, on first use) instead of linked.
//
// Linking libcublas costs every process about 0.11 s at start on a machine with the CUDA
// toolkit, GPU or not: the dynamic loader relocates libcublasLt's tables (26 000 page faults;
// an empty program linked with -lcublas, 2-core development machine, 2026-11-27), while only
// a GPU context calls cuBLAS. The tool, the tools and every test process linking this part
// paid it; now only a process that creates a gpu::Context does.
//
// The library is libcublas.so.<CUBLAS_VER_MAJOR> of the headers this was compiled with (the
// soname the linker would have recorded), found as the dynamic linker finds libraries
// (LD_LIBRARY_PATH, the cache, ...: the GPU bundle's env.sh points at the cuBLAS wheel).
// Seen by .cu files only (it includes cublas_v2.h).
#pragma once

#include <cublas_v2.h>

#include <string>

namespace tensat::gpu {

/// The cuBLAS functions the executor calls. cublas_v2.h maps cublasCreate, cublasSgemm, ... to
/// their _v2 symbols; the loader looks up the names after that mapping.
struct CublasApi {
  decltype(&::cublasCreate) create = nullptr;
  decltype(&::cublasDestroy) destroy = nullptr;
  decltype(&::cublasSetStream) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasSetWorkspace) set_workspace = nullptr;
  decltype(&::cublasSgemm) sgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  std::string path;  ///< the file the dynamic linker opened
};

/// Opens cuBLAS and resolves every function of CublasApi, once per process (thread-safe; a
/// failure is retried on the next call). Throws GpuError naming the library and dlerror()'s
/// message when it cannot be opened or lacks a function. Needs no device.
const CublasApi& cublas_api();

}  // namespace tensat::gpu
