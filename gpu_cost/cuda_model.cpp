// The cuda cost model (see cuda_model.h).
#include "gpu_cost/cuda_model.h"

#include <spdlog/spdlog.h>

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
  cache_.set_method(device_, kMethod);
  const auto* e = cache_.entries(device_);
  spdlog::info("cost model cuda on {}: {} cached costs{}", device_, e ? e->size() : 0,
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

double CudaCostModel::kernel_cost(Op op, const Children& c, const std::string& sig) {
  if (auto ms = cache_.get(device_, sig)) {
    ++cache_hits_;
    return *ms;
  }
  double ms = 0;
  try {
    ms = gpu::measure_op(*ctx_, op, c, warmup_, repeats_);
  } catch (const gpu::GpuError& e) {
    ++failures_;
    ms = fallback_.op_cost(op, c);
    spdlog::warn("cost model cuda: measuring {} failed ({}); using roofline {}: {:.4f} ms", sig, e.what(),
                 fallback_.profile().name, ms);
    return ms;
  }
  ++measured_;
  spdlog::debug("measured {} = {:.4f} ms", sig, ms);
  cache_.put(device_, sig, ms);
  if (++unsaved_ >= kSaveEvery) flush();
  return ms;
}

}  // namespace tensat::cost
