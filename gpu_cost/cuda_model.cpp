// The cuda cost model (see cuda_model.h).
#include "gpu_cost/cuda_model.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/gpu_runtime.h"

namespace tensat::cost {

namespace {
constexpr size_t kSaveEvery = 64;
}

CudaCostModel::CudaCostModel(const CostOptions& opts)
    : ctx_(std::make_unique<gpu::Context>(opts.allow_tf32)),
      device_(ctx_->device_name() + (opts.allow_tf32 ? " tf32" : "")),
      cache_(opts.cache_path),
      fallback_(profile_for_device(ctx_->device_name())),
      warmup_(opts.warmup),
      repeats_(opts.repeats) {
  // Costs measured another way are not mixed with ours: they are dropped (and re-measured).
  method_ = std::string(kMethod) + gpu::measurement_variant();
  cache_.set_method(device_, method_);
  auto g = cache_.launch_ms(device_, "graph"), e = cache_.launch_ms(device_, "eager");
  if (g && e) {
    launch_graph_ = *g;
    launch_eager_ = *e;
  } else {
    gpu::LaunchOverhead o = gpu::measure_launch_overhead(*ctx_);
    launch_graph_ = o.graph_ms;
    launch_eager_ = o.eager_ms;
    cache_.set_launch_ms(device_, "graph", launch_graph_);
    cache_.set_launch_ms(device_, "eager", launch_eager_);
    spdlog::info("cost model cuda on {}: launch overhead {:.4f} ms per kernel in a graph, {:.4f} ms eager", device_,
                 launch_graph_, launch_eager_);
  }
  const auto* entries = cache_.entries(device_);
  spdlog::info("cost model cuda on {}: {} cached costs{}", device_, entries ? entries->size() : 0,
               cache_.path().empty() ? " (no cache file)" : " from " + cache_.path());
}

CudaCostModel::~CudaCostModel() {
  try {
    flush();
  } catch (...) {
    // never throw from a destructor; save() already warns
  }
}

void CudaCostModel::flush() {
  if (cache_.save()) unsaved_ = 0;
}

double CudaCostModel::measure(Op op, const Children& c, const std::string& sig, int kernels) {
  gpu::OpTiming t = gpu::time_op(*ctx_, op, c, warmup_, repeats_);
  if (!t.graph) {
    ++eager_fallbacks_;
    spdlog::warn("cost model cuda: {} could not be captured in a CUDA graph ({}); timed eagerly", sig,
                 t.capture_error);
  }
  const double bare = std::max(0.0, t.per_launch_ms - kernels * launch_graph_);
  ++measured_;
  spdlog::debug("measured {} = {:.4f} ms per call ({} calls per replay), {:.4f} ms without launches", sig,
                t.per_launch_ms, t.copies, bare);
  cache_.put(device_, sig, bare);
  if (++unsaved_ >= kSaveEvery) flush();
  return bare;
}

double CudaCostModel::bare_cost(Op op, const Children& c) {
  if (structural_cost(op, c)) return 0.0;
  const std::string sig = signature(op, c);
  if (auto ms = cache_.get(device_, sig)) return *ms;
  return measure(op, c, sig, op_work(op, c).kernels);
}

double CudaCostModel::kernel_cost(Op op, const Children& c, const std::string& sig) {
  const int kernels = op_work(op, c).kernels;
  if (auto ms = cache_.get(device_, sig)) {
    ++cache_hits_;
    return *ms + kernels * launch_graph_;
  }
  try {
    return measure(op, c, sig, kernels) + kernels * launch_graph_;
  } catch (const gpu::GpuError& e) {
    ++failures_;
    const double ms = fallback_.op_cost(op, c);
    spdlog::warn("cost model cuda: measuring {} failed ({}); using roofline {}: {:.4f} ms", sig, e.what(),
                 fallback_.profile().name, ms);
    return ms;
  }
}

}  // namespace tensat::cost
