// The GPU runtime (gpu_runtime.h): device presence, context, buffers, copies, event timing.
#include <algorithm>
#include <optional>
#include <vector>

#include "gpu_cost/gpu_internal.cuh"
#include "gpu_cost/timing_stats.h"

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
  ++workspace_generation;
  return workspace;
}

void ContextImpl::release_workspace() {
  if (!workspace) return;
  TENSAT_CUDA(cudaStreamSynchronize(stream));
  TENSAT_CUDA(cudaFree(workspace));
  workspace = nullptr;
  workspace_bytes = 0;
  ++workspace_generation;
}

Context::Context(bool allow_tf32) : impl_(std::make_unique<ContextImpl>()) {
  if (device_count() == 0) throw GpuError("no CUDA device");
  cublas_api();  // opened first: if it cannot be, nothing has been created yet
  TENSAT_CUDA(cudaSetDevice(0));
  cudaDeviceProp prop{};
  TENSAT_CUDA(cudaGetDeviceProperties(&prop, 0));
  impl_->name = prop.name;
  impl_->tf32 = allow_tf32;
  TENSAT_CUDA(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  TENSAT_CUDNN(cudnnCreate(&impl_->cudnn));
  TENSAT_CUDNN(cudnnSetStream(impl_->cudnn, impl_->stream));
  TENSAT_CUBLAS(cublas_api().create(&impl_->cublas));
  TENSAT_CUBLAS(cublas_api().set_stream(impl_->cublas, impl_->stream));
  TENSAT_CUBLAS(cublas_api().set_math_mode(impl_->cublas, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                      : CUBLAS_DEFAULT_MATH));
  // cuBLAS's own workspace, fixed now so that no cuBLAS call allocates during a CUDA-graph
  // capture (NVIDIA recommends 32 MiB on Hopper, 4 MiB elsewhere; 32 MiB covers both).
  constexpr size_t kCublasWorkspace = size_t{32} << 20;
  TENSAT_CUDA(cudaMalloc(&impl_->cublas_workspace, kCublasWorkspace));
  TENSAT_CUBLAS(cublas_api().set_workspace(impl_->cublas, impl_->cublas_workspace, kCublasWorkspace));
}

Context::~Context() {
  if (!impl_) return;
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);
  if (impl_->workspace) cudaFree(impl_->workspace);
  if (impl_->cublas) cublas_api().destroy(impl_->cublas);
  if (impl_->cublas_workspace) cudaFree(impl_->cublas_workspace);
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

uint64_t Context::workspace_generation() const { return impl_->workspace_generation; }

namespace {

// Owns a set of CUDA events (destroyed on every exit path).
class Events {
 public:
  explicit Events(size_t n) : ev_(n, nullptr) {
    for (auto& e : ev_) TENSAT_CUDA(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : ev_)
      if (e) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return ev_[i]; }
  double elapsed_ms(size_t a, size_t b) const {
    float ms = 0;
    TENSAT_CUDA(cudaEventElapsedTime(&ms, ev_[a], ev_[b]));
    return ms;
  }

 private:
  std::vector<cudaEvent_t> ev_;
};

double median_of(std::vector<double> v) { return summarize(std::move(v)).median_ms; }

}  // namespace

double Context::median_time_ms(const std::function<void()>& fn, int warmup, int repeats) {
  return median_of(latency_samples_ms(fn, warmup, repeats));
}

std::vector<double> Context::latency_samples_ms(const std::function<void()>& fn, int warmup, int repeats) {
  repeats = std::max(repeats, 1);
  for (int i = 0; i < warmup; ++i) fn();
  TENSAT_CUDA(cudaStreamSynchronize(impl_->stream));
  Events ev(2);
  std::vector<double> times;
  times.reserve(static_cast<size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    TENSAT_CUDA(cudaEventRecord(ev[0], impl_->stream));
    fn();
    TENSAT_CUDA(cudaEventRecord(ev[1], impl_->stream));
    TENSAT_CUDA(cudaEventSynchronize(ev[1]));
    times.push_back(ev.elapsed_ms(0, 1));
  }
  return times;
}

std::vector<double> Context::back_to_back_samples_ms(const std::function<void()>& fn, int warmup, int repeats) {
  repeats = std::max(repeats, 1);
  for (int i = 0; i < warmup; ++i) fn();
  TENSAT_CUDA(cudaStreamSynchronize(impl_->stream));
  const auto n = static_cast<size_t>(repeats);
  Events ev(n + 1);
  // One call first, so the GPU is busy (and the host ahead of it) when the first event runs.
  fn();
  for (size_t i = 0; i < n; ++i) {
    TENSAT_CUDA(cudaEventRecord(ev[i], impl_->stream));
    fn();
  }
  TENSAT_CUDA(cudaEventRecord(ev[n], impl_->stream));
  TENSAT_CUDA(cudaEventSynchronize(ev[n]));
  std::vector<double> times;
  times.reserve(n);
  for (size_t i = 0; i < n; ++i) times.push_back(ev.elapsed_ms(i, i + 1));
  return times;
}

// ---- CUDA graphs ----------------------------------------------------------------------------

struct CudaGraph::Impl {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool relaxed = false;
  ~Impl() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

namespace {

// Captures enqueue() on `stream` in `mode`; on failure returns the error text (and leaves the
// stream out of capture, the runtime's last error cleared).
std::string try_capture(cudaStream_t stream, cudaStreamCaptureMode mode, const std::function<void()>& enqueue,
                        cudaGraph_t* out) {
  *out = nullptr;
  cudaError_t e = cudaStreamBeginCapture(stream, mode);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(e);
  }
  std::string failure;
  try {
    enqueue();
  } catch (const std::exception& ex) {
    failure = ex.what();
  }
  cudaGraph_t g = nullptr;
  e = cudaStreamEndCapture(stream, &g);
  if (failure.empty() && e != cudaSuccess) failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(e);
  if (!failure.empty()) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    return failure;
  }
  *out = g;
  return {};
}

}  // namespace

CudaGraph::CudaGraph(Context& ctx, const std::function<void()>& enqueue) : ctx_(ctx), impl_(std::make_unique<Impl>()) {
  cudaStream_t stream = ctx.impl().stream;
  TENSAT_CUDA(cudaStreamSynchronize(stream));
  std::string first = try_capture(stream, cudaStreamCaptureModeThreadLocal, enqueue, &impl_->graph);
  if (!impl_->graph) {
    std::string second = try_capture(stream, cudaStreamCaptureModeRelaxed, enqueue, &impl_->graph);
    if (!impl_->graph) throw GpuError("CUDA graph capture failed: " + first + "; in relaxed mode: " + second);
    impl_->relaxed = true;
  }
  TENSAT_CUDA(cudaGraphInstantiateWithFlags(&impl_->exec, impl_->graph, 0));
  TENSAT_CUDA(cudaGraphUpload(impl_->exec, stream));
  TENSAT_CUDA(cudaStreamSynchronize(stream));
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::launch() { TENSAT_CUDA(cudaGraphLaunch(impl_->exec, ctx_.impl().stream)); }

size_t CudaGraph::nodes() const {
  size_t n = 0;
  TENSAT_CUDA(cudaGraphGetNodes(impl_->graph, nullptr, &n));
  return n;
}

bool CudaGraph::relaxed() const { return impl_->relaxed; }

std::vector<std::vector<double>> Context::step_samples_ms(int steps, const std::function<void(int)>& step, int warmup,
                                                          int repeats, bool graph, std::string* why) {
  steps = std::max(steps, 0);
  repeats = std::max(repeats, 1);
  cudaStream_t stream = impl_->stream;
  const auto n = static_cast<size_t>(steps);
  Events ev(n + 1);
  auto enqueue = [&](unsigned flags) {
    TENSAT_CUDA(cudaEventRecordWithFlags(ev[0], stream, flags));
    for (int i = 0; i < steps; ++i) {
      step(i);
      TENSAT_CUDA(cudaEventRecordWithFlags(ev[static_cast<size_t>(i) + 1], stream, flags));
    }
  };
  // Once eagerly first (lazy loading, first-call choices), then the graph if asked for.
  enqueue(cudaEventRecordDefault);
  TENSAT_CUDA(cudaStreamSynchronize(stream));
  std::optional<CudaGraph> g;
  if (graph) {
    try {
      g.emplace(*this, [&] { enqueue(cudaEventRecordExternal); });
    } catch (const GpuError& e) {
      if (why) *why = std::string("graph capture with events failed, eager instead: ") + e.what();
    }
  }
  std::vector<std::vector<double>> samples(n);
  for (int r = -warmup; r < repeats; ++r) {
    if (g)
      g->launch();
    else
      enqueue(cudaEventRecordDefault);
    TENSAT_CUDA(cudaStreamSynchronize(stream));
    if (r < 0) continue;
    for (size_t i = 0; i < n; ++i) samples[i].push_back(ev.elapsed_ms(i, i + 1));
  }
  return samples;
}

LaunchOverhead measure_launch_overhead(Context& ctx, int launches, int repeats) {
  launches = std::max(launches, 1);
  cudaStream_t s = ctx.impl().stream;
  auto many = [&] {
    for (int i = 0; i < launches; ++i) launch_empty(s);
  };
  LaunchOverhead o;
  CudaGraph g(ctx, many);
  o.graph_ms = median_of(ctx.back_to_back_samples_ms([&] { g.launch(); }, 3, repeats)) / launches;
  o.eager_ms = median_of(ctx.latency_samples_ms(many, 3, repeats)) / launches;
  return o;
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
