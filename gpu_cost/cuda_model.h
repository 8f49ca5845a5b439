// The cuda cost model: each new signature is measured on this machine's GPU with the same
// cuDNN/cuBLAS kernels the GPU executor runs, so that the costs of a graph add up to the time
// the executor measures for it (gpu_cost/README.md, "Costs that add up"):
//
//   method "graph-replay-v3" (kMethod; v1 chose convolution algorithms by timing them, v2 by
//   cuDNN's heuristic, as the executor does since 2026-11-26; v3 also reads conv's and
//   matmul's weights from memory, as inside a model: gpu_ops.h cold_weights, gpu_cost/README.md)
//   per device, once:  launch_ms = {"graph": L_g, "eager": L_e}, the time one kernel launch
//                      adds in each mode (gpu_runtime.h measure_launch_overhead)
//   per signature:     t = the operator's time per call when `copies` calls are captured in a
//                      CUDA graph and replayed back to back (gpu_ops.h time_op);
//                      cost = max(0, t - kernels * L_g), kernels = roofline.h op_work's count
//   op_cost(signature) = cost + kernels * L_g          (what the operator adds to a graph replay)
//   a graph's time in mode M = sum of cost + sum of kernels * launch_ms[M]
//
// Results go to a CostCache keyed by the device name (the costs without launch overhead, and
// launch_ms), loaded at start and saved atomically every 64 new measurements, on flush() and
// on destruction, so a second run measures nothing. Costs of another method in the cache are
// dropped and measured again. A measurement that fails (e.g. out of memory) is not cached: it
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

/// The method this model measures by (cost_cache.h: a device's costs of another method are
/// not mixed with these).
inline constexpr const char* kMethodGraphReplay = "graph-replay-v3";

class CudaCostModel : public CostModel {
 public:
  static constexpr const char* kMethod = kMethodGraphReplay;

  /// Throws gpu::GpuError if there is no usable GPU.
  explicit CudaCostModel(const CostOptions& opts);
  ~CudaCostModel() override;

  std::string name() const override { return "cuda:" + device_; }
  const std::string& device() const { return device_; }
  void flush() override;

  size_t measured() const { return measured_; }      ///< new measurements this run
  size_t cache_hits() const { return cache_hits_; }
  size_t failures() const { return failures_; }
  size_t eager_fallbacks() const { return eager_fallbacks_; }  ///< signatures timed without a graph
  const CostCache& cache() const { return cache_; }
  /// The per-launch overhead of a mode ("graph" or "eager"), ms.
  double launch_ms(const std::string& mode) const { return mode == "eager" ? launch_eager_ : launch_graph_; }
  /// The operator's cost without its launch overheads (what the cache stores); op_cost() adds
  /// kernels * launch_ms("graph").
  double bare_cost(Op op, const Children& c);

 protected:
  double kernel_cost(Op op, const Children& c, const std::string& sig) override;

 private:
  double measure(Op op, const Children& c, const std::string& sig, int kernels);

  std::unique_ptr<gpu::Context> ctx_;
  std::string device_;
  std::string method_;  ///< kMethod + gpu::measurement_variant() (gpu_ops.h)
  CostCache cache_;
  RooflineModel fallback_;
  int warmup_, repeats_;
  double launch_graph_ = 0, launch_eager_ = 0;
  size_t measured_ = 0, cache_hits_ = 0, failures_ = 0, unsaved_ = 0, eager_fallbacks_ = 0;
};

}  // namespace tensat::cost
