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
#include "gpu_cost/cublas_loader.cuh"
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
  uint64_t workspace_generation = 0;  ///< bumped on every reallocation or release
  /// cuBLAS's workspace, set with cublasSetWorkspace at creation so that cuBLAS never
  /// allocates inside a CUDA-graph capture.
  void* cublas_workspace = nullptr;

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

// ---- launch helpers of our kernels (gpu_kernels.cu, gpu_opaque.cu) -------------------------

constexpr int kThreads = 256;

/// Blocks for n elements at kThreads per block; grid-stride loops cover the rest.
inline unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b > 65535LL * 32) b = 65535LL * 32;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

#define GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

/// A failed call of cuDNN/cuBLAS internals (e.g. an out-of-memory trial in cudnnFind) can
/// leave a non-sticky error behind; clear it before a launch so check_launch reports only the
/// launch's own error (a sticky error, a broken context, is reported again anyway).
inline void clear_stale_error() { (void)cudaGetLastError(); }

inline void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw_cuda(e, what, __FILE__, __LINE__);
}

// ---- our kernels (gpu_kernels.cu); all enqueue on `s` and check the launch ----------------

constexpr int kMaxDims = 8;

/// Strided index description for broadcasting / transposition: out has `rank` dims `out_dims`;
/// an input element of output index i is at sum(idx[d] * in_strides[d]).
struct IndexMap {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
};

#ifdef __CUDACC__
/// The input offset of output element i under m.
__device__ __forceinline__ int64_t map_index(int64_t i, const IndexMap& m) {
  int64_t off = 0;
  for (int d = m.rank - 1; d >= 0; --d) {
    int64_t dim = m.out_dims[d];
    off += (i % dim) * m.in_strides[d];
    i /= dim;
  }
  return off;
}
#endif

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
/// ph_total/pw_total: the padded extent h + pt + pb (w + pl + pr) that count_include_pad
/// divides by, clipped per window (ONNX Runtime); -1: the extent the windows cover (floor mode).
void launch_pool(cudaStream_t s, bool max, bool count_include_pad, const float* in, int64_t nc,
                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 int64_t pt, int64_t pl, float* out, int64_t oh, int64_t ow, int64_t ph_total = -1,
                 int64_t pw_total = -1);
void launch_fill_random(cudaStream_t s, float* out, int64_t n, uint64_t seed);
/// An empty kernel (one thread, no work): the unit of launch overhead.
void launch_empty(cudaStream_t s);
/// Copies `rows` rows of `width` bytes between pitched buffers (one cudaMemcpyAsync when
/// contiguous, else cudaMemcpy2DAsync); nothing for an empty copy.
void copy_rows(cudaStream_t s, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows);
/// Two-part concatenation / split of `outer` rows in one kernel, elements of `elem_size`
/// bytes (1, 2, 4 or 8): concat writes out row o = [a row o (wa elements), b row o (wb)];
/// split writes x's rows to out0 [outer, wa] and out1 [outer, wb]. The kernel moves the rows
/// as the widest elements (up to 16 bytes) that divide both rows' bytes and align every pointer.
void launch_concat2(cudaStream_t s, const void* a, int64_t wa, const void* b, int64_t wb, void* out, int64_t outer,
                    int elem_size);
void launch_split2(cudaStream_t s, const void* x, int64_t wa, int64_t wb, void* out0, void* out1, int64_t outer,
                   int elem_size);

}  // namespace tensat::gpu
