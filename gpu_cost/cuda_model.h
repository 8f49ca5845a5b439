// The cuda cost model: each new signature is measured on this machine's GPU with the same
// cuDNN/cuBLAS kernels the GPU executor runs (gpu_ops.h): warm-up, timed repeats with CUDA
// events, the median. Results go to a CostCache keyed by the device name, loaded at start
// and saved atomically every 64 new measurements, on flush() and on destruction, so a second
// run measures nothing new. A measurement that fails (e.g. out of memory) is not cached: it
// logs a warning naming the signature and uses the roofline model of the nearest profile.
#pragma once

#include <memory>
#include <string>

#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/roofline.h"

namespace tensat::gpu {
class Context;
}

namespace tensat::cost {

class CudaCostModel : public CostModel {
 public:
  /// The measurement method of the costs this model writes (cost_cache.h).
  static constexpr const char* kMethod = kMethodSingleLaunch;

  /// Throws gpu::GpuError if there is no usable GPU.
  explicit CudaCostModel(const CostOptions& opts);
  ~CudaCostModel() override;

  std::string name() const override { return "cuda:" + device_; }
  const std::string& device() const { return device_; }
  void flush() override;

  size_t measured() const { return measured_; }      ///< new measurements this run
  size_t cache_hits() const { return cache_hits_; }
  size_t failures() const { return failures_; }
  const CostCache& cache() const { return cache_; }

 protected:
  double kernel_cost(Op op, const Children& c, const std::string& sig) override;

 private:
  std::unique_ptr<gpu::Context> ctx_;
  std::string device_;
  CostCache cache_;
  RooflineModel fallback_;
  int warmup_, repeats_;
  size_t measured_ = 0, cache_hits_ = 0, failures_ = 0, unsaved_ = 0;
};

}  // namespace tensat::cost
