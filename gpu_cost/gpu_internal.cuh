// Internals shared by the .cu files of gpu_cost: the context's CUDA state, error checks and
// the launchers of our own kernels (gpu_kernels.cu). Never included by plain C++ files.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lang/op.h"
#include "gpu_cost/gpu_runtime.h"

namespace tensat::gpu {

struct ContextImpl {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  std::string name;
  bool tf32 = false;
  void* workspace = nullptr;  ///< shared by all kernels of this context (one stream)
  size_t workspace_bytes = 0;

  /// Convolution algorithm choices by geometry, so a graph with repeated shapes runs
  /// cudnnFindConvolutionForwardAlgorithm once per shape: key -> (algo, math type).
  std::map<std::vector<int64_t>, std::pair<int, int>> conv_algos;

  /// Grows the shared workspace to at least `bytes` (synchronizes before freeing).
  void* ensure_workspace(size_t bytes);
  /// Frees the shared workspace (synchronizes first).
  void release_workspace();
};

[[noreturn]] void throw_cuda(cudaError_t e, const char* what, const char* file, int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t s, const char* what, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* what, const char* file, int line);

#define TENSAT_CUDA(x)                                                     \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) ::tensat::gpu::throw_cuda(e_, #x, __FILE__, __LINE__); \
  } while (0)
#define TENSAT_CUDNN(x)                                                    \
  do {                                                                     \
    cudnnStatus_t s_ = (x);                                                \
    if (s_ != CUDNN_STATUS_SUCCESS) ::tensat::gpu::throw_cudnn(s_, #x, __FILE__, __LINE__); \
  } while (0)
#define TENSAT_CUBLAS(x)                                                   \
  do {                                                                     \
    cublasStatus_t s_ = (x);                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) ::tensat::gpu::throw_cublas(s_, #x, __FILE__, __LINE__); \
  } while (0)

// ---- our kernels (gpu_kernels.cu); all enqueue on `s` and check the launch ----------------

constexpr int kMaxDims = 8;

/// Strided index description for broadcasting / transposition: out has `rank` dims `out_dims`;
/// an input element of output index i is at sum(idx[d] * in_strides[d]).
struct IndexMap {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
};

/// out[i] = a[map_a(i)] (+|*) b[map_b(i)], then act.
void launch_binary(cudaStream_t s, bool mul, const float* a, const IndexMap& ma, const float* b,
                   const IndexMap& mb, float* out, int64_t n, Act act);
/// out[i] = act(in[i] + (bias ? bias[(i / inner) % channels] : 0)); in may equal out.
void launch_bias_act(cudaStream_t s, const float* in, const float* bias, int64_t channels,
                     int64_t inner, float* out, int64_t n, Act act);
/// out[i] = in[map(i)] for elements of `elem_size` bytes (1, 2, 4 or 8).
void launch_gather(cudaStream_t s, const void* in, const IndexMap& m, void* out, int64_t n,
                   int elem_size);
/// TASO's enlarge: zero-pad each [kh, kw] kernel, centred, to [dh, dw].
void launch_enlarge(cudaStream_t s, const float* w, int64_t outer, int64_t kh, int64_t kw,
                    float* out, int64_t dh, int64_t dw);
/// TASO's merge_gconv: out [cout, cin_hw * count] zero except the block of src row o at
/// position o / (cout / count).
void launch_merge(cudaStream_t s, const float* w, int64_t cout, int64_t cin_hw, int64_t count,
                  float* out);
/// Zero-pad the spatial dims of an NCHW tensor: out [n*c, h+t+b, w+l+r].
void launch_pad(cudaStream_t s, const float* in, int64_t nc, int64_t h, int64_t w, int64_t t,
                int64_t l, int64_t b, int64_t r, float* out);
/// Direct pooling (any pads): max ignores padding, avg divides by the window area inside
/// the padded input (count_include_pad) or inside the input.
void launch_pool(cudaStream_t s, bool max, bool count_include_pad, const float* in, int64_t nc,
                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 int64_t pt, int64_t pl, float* out, int64_t oh, int64_t ow);
void launch_fill_random(cudaStream_t s, float* out, int64_t n, uint64_t seed);

}  // namespace tensat::gpu
