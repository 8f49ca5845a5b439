// The GPU runtime seen from plain C++: device presence, a context (stream, cuDNN and cuBLAS
// handles, one shared workspace), device buffers and event timing.
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

namespace tensat::gpu {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Number of CUDA devices; 0 when cudaGetDeviceCount fails (no driver, no GPU).
int device_count();
inline bool available() { return device_count() > 0; }

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
  /// Median of `repeats` timed calls of fn (which enqueues work on the stream), each timed
  /// with a pair of CUDA events, after `warmup` untimed calls.
  double median_time_ms(const std::function<void()>& fn, int warmup, int repeats);

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

/// Synchronous copies (host memory is pageable).
void upload(Context& ctx, void* dst, const void* src, size_t bytes);
void download(Context& ctx, void* dst, const void* src, size_t bytes);
/// Enqueues a zero fill.
void fill_zero(Context& ctx, void* dst, size_t bytes);
/// Enqueues a fill with pseudo-random floats in [-1, 1) (values for measurements).
void fill_random(Context& ctx, float* dst, size_t count, uint64_t seed);

}  // namespace tensat::gpu
