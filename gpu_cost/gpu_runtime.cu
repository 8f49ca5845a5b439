// The GPU runtime (gpu_runtime.h): device presence, context, buffers, copies, event timing.
#include <algorithm>
#include <vector>

#include "gpu_cost/gpu_internal.cuh"

namespace tensat::gpu {

void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  // Reset the runtime's last error (a non-sticky one such as an out-of-memory cudaMalloc),
  // or the next launch check (cudaGetLastError) would report this failure again.
  cudaGetLastError();
  throw GpuError(std::string(what) + " failed: " + cudaGetErrorString(e) + " (" + file + ":" +
                 std::to_string(line) + ")");
}
void throw_cudnn(cudnnStatus_t s, const char* what, const char* file, int line) {
  throw GpuError(std::string(what) + " failed: " + cudnnGetErrorString(s) + " (" + file + ":" +
                 std::to_string(line) + ")");
}
void throw_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  throw GpuError(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(s)) +
                 " (" + file + ":" + std::to_string(line) + ")");
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void* ContextImpl::ensure_workspace(size_t bytes) {
  if (bytes <= workspace_bytes) return workspace;
  if (workspace) {
    TENSAT_CUDA(cudaStreamSynchronize(stream));
    TENSAT_CUDA(cudaFree(workspace));
    workspace = nullptr;
    workspace_bytes = 0;
  }
  TENSAT_CUDA(cudaMalloc(&workspace, bytes));
  workspace_bytes = bytes;
  return workspace;
}

void ContextImpl::release_workspace() {
  if (!workspace) return;
  TENSAT_CUDA(cudaStreamSynchronize(stream));
  TENSAT_CUDA(cudaFree(workspace));
  workspace = nullptr;
  workspace_bytes = 0;
}

Context::Context(bool allow_tf32) : impl_(std::make_unique<ContextImpl>()) {
  if (device_count() == 0) throw GpuError("no CUDA device");
  TENSAT_CUDA(cudaSetDevice(0));
  cudaDeviceProp prop{};
  TENSAT_CUDA(cudaGetDeviceProperties(&prop, 0));
  impl_->name = prop.name;
  impl_->tf32 = allow_tf32;
  TENSAT_CUDA(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  TENSAT_CUDNN(cudnnCreate(&impl_->cudnn));
  TENSAT_CUDNN(cudnnSetStream(impl_->cudnn, impl_->stream));
  TENSAT_CUBLAS(cublasCreate(&impl_->cublas));
  TENSAT_CUBLAS(cublasSetStream(impl_->cublas, impl_->stream));
  TENSAT_CUBLAS(cublasSetMathMode(impl_->cublas, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                            : CUBLAS_DEFAULT_MATH));
}

Context::~Context() {
  if (!impl_) return;
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);
  if (impl_->workspace) cudaFree(impl_->workspace);
  if (impl_->cublas) cublasDestroy(impl_->cublas);
  if (impl_->cudnn) cudnnDestroy(impl_->cudnn);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

const std::string& Context::device_name() const { return impl_->name; }
bool Context::allow_tf32() const { return impl_->tf32; }

size_t Context::free_memory() const {
  size_t free_b = 0, total_b = 0;
  TENSAT_CUDA(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

void Context::synchronize() { TENSAT_CUDA(cudaStreamSynchronize(impl_->stream)); }

double Context::median_time_ms(const std::function<void()>& fn, int warmup, int repeats) {
  repeats = std::max(repeats, 1);
  for (int i = 0; i < warmup; ++i) fn();
  cudaEvent_t start = nullptr, stop = nullptr;
  TENSAT_CUDA(cudaEventCreate(&start));
  TENSAT_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  try {
    for (int i = 0; i < repeats; ++i) {
      TENSAT_CUDA(cudaEventRecord(start, impl_->stream));
      fn();
      TENSAT_CUDA(cudaEventRecord(stop, impl_->stream));
      TENSAT_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      TENSAT_CUDA(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  return n % 2 ? times[n / 2] : 0.5 * (static_cast<double>(times[n / 2 - 1]) + times[n / 2]);
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw GpuError("cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(e));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void upload(Context& ctx, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  TENSAT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx.impl().stream));
  TENSAT_CUDA(cudaStreamSynchronize(ctx.impl().stream));
}

void download(Context& ctx, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  TENSAT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx.impl().stream));
  TENSAT_CUDA(cudaStreamSynchronize(ctx.impl().stream));
}

void fill_zero(Context& ctx, void* dst, size_t bytes) {
  if (bytes == 0) return;
  TENSAT_CUDA(cudaMemsetAsync(dst, 0, bytes, ctx.impl().stream));
}

void fill_random(Context& ctx, float* dst, size_t count, uint64_t seed) {
  launch_fill_random(ctx.impl().stream, dst, static_cast<int64_t>(count), seed);
}

}  // namespace tensat::gpu
