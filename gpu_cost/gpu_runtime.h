// The GPU runtime seen from plain C++: device presence, a context (stream, cuDNN and cuBLAS
// handles, one shared workspace), device buffers, event timing, CUDA graphs (capture once,
// replay many times) and the per-launch overheads of a device.
//
// No CUDA header is included here, so the rest of the project (and the GPU executor) uses
// the GPU without being compiled by nvcc. Everything works on device 0. Errors (a CUDA,
// cuDNN or cuBLAS call failing, out of memory) throw GpuError naming the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensat::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Number of CUDA devices; 0 when cudaGetDeviceCount fails (no driver, no GPU).
int device_count();
inline bool available() { return device_count() > 0; }
/// The cuBLAS library file, opened (on first call) and checked for every function the
/// executor calls; cuBLAS is loaded at run time, not linked (cublas_loader.cuh). Throws
/// GpuError saying what is missing. Needs no device.
std::string cublas_library();

struct ContextImpl;  // defined in gpu_internal.cuh, visible to .cu files only

class Context {
 public:
  /// Creates the stream and handles on device 0. allow_tf32: let cuDNN/cuBLAS use TF32
  /// tensor cores (faster on Ampere and later, about 1e-3 relative error); off by default
  /// so results match the CPU reference to float32 tolerance.
  explicit Context(bool allow_tf32 = false);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const std::string& device_name() const;
  size_t free_memory() const;
  bool allow_tf32() const;
  /// Waits for all work queued on the context's stream.
  void synchronize();
  /// Changes whenever the shared workspace is reallocated or freed: a CUDA graph captured
  /// before holds the old address and must be captured again.
  uint64_t workspace_generation() const;
  /// Median of `repeats` timed calls of fn (which enqueues work on the stream), each timed
  /// with a pair of CUDA events, after `warmup` untimed calls.
  double median_time_ms(const std::function<void()>& fn, int warmup, int repeats);
  /// Latency samples (ms): `warmup` untimed calls, then `repeats` calls of fn, each between two
  /// events and followed by a synchronization, so each starts on an idle GPU and includes the
  /// host's launch costs (how eager execution of one inference is timed).
  std::vector<double> latency_samples_ms(const std::function<void()>& fn, int warmup, int repeats);
  /// Back-to-back samples (ms): `warmup` calls, then `repeats` calls enqueued one after the
  /// other with an event between consecutive calls and one synchronization at the end; sample
  /// i is the GPU time between events i and i+1 (how CUDA-graph replays are timed: the host
  /// stays ahead of the GPU, so its launch latency is not counted).
  std::vector<double> back_to_back_samples_ms(const std::function<void()>& fn, int warmup, int repeats);
  /// Per-step samples (ms) of a sequence of `steps` calls (step(i) enqueues step i): samples[i]
  /// holds `repeats` GPU times between events recorded before and after step i. In graph mode
  /// the sequence is captured once as a CUDA graph with an event node between steps
  /// (cudaEventRecordExternal) and replayed, synchronized after each replay; otherwise it is
  /// enqueued eagerly. Where the capture fails, eager is used and *why says so (graph mode
  /// only). The steps run back to back, so a step's time is what it takes inside the model.
  std::vector<std::vector<double>> step_samples_ms(int steps, const std::function<void(int)>& step, int warmup,
                                                   int repeats, bool graph, std::string* why = nullptr);

  ContextImpl& impl() { return *impl_; }

 private:
  std::unique_ptr<ContextImpl> impl_;
};

/// Device memory, freed on destruction (no pool: each measurement takes what it needs).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// A CUDA graph captured from the work `enqueue` puts on the context's stream, instantiated and
/// uploaded, replayed by launch(). Capture runs in thread-local mode (an allocation or a
/// synchronization inside `enqueue` fails the capture: GpuError) and is retried once in
/// relaxed mode if that fails; the mode used is reported by relaxed(). Everything enqueue
/// touches (buffers, descriptors, algorithm choices, workspaces) must exist before capture.
class CudaGraph {
 public:
  CudaGraph(Context& ctx, const std::function<void()>& enqueue);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  /// Enqueues one replay on the context's stream.
  void launch();
  size_t nodes() const;
  bool relaxed() const;

  struct Impl;  // defined in gpu_runtime.cu

 private:
  Context& ctx_;
  std::unique_ptr<Impl> impl_;
};

/// Per-kernel launch overheads of this device (ms), measured once and kept apart from the
/// operators' costs (gpu_cost/README.md, "Costs that add up"):
///   graph  the time one extra kernel node adds to a CUDA-graph replay: an empty kernel
///          captured `launches` times, replayed back to back, median per kernel
///   eager  the time one extra kernel adds when launched from the host one after the other:
///          `launches` empty kernels per sample, synchronized after each sample, median per
///          kernel (at least the host's launch cost)
struct LaunchOverhead {
  double graph_ms = 0;
  double eager_ms = 0;
};
LaunchOverhead measure_launch_overhead(Context& ctx, int launches = 200, int repeats = 21);

/// Synchronous copies (host memory is pageable).
void upload(Context& ctx, void* dst, const void* src, size_t bytes);
void download(Context& ctx, void* dst, const void* src, size_t bytes);
/// Enqueues a zero fill.
void fill_zero(Context& ctx, void* dst, size_t bytes);
/// Enqueues a fill with pseudo-random floats in [-1, 1) (values for measurements).
void fill_random(Context& ctx, float* dst, size_t count, uint64_t seed);

}  // namespace tensat::gpu
