// GPU executor: evaluates an ir::Graph on the GPU with the kernels the cuda cost model
// measures (gpu_ops.h). Used for verification (GPU instead of the CPU reference) and for
// end-to-end timing of original vs optimized graphs.
//
// Same API as the CPU reference executor (refexec/executor.h), over the executors' shared
// types (exec/tensor.h: Tensor, RunOptions, RunResult, ExecError): inputs by name, weights from the WeightStore,
// opaque values supplied by the caller in RunOptions::provided. Only the nodes the outputs
// need are evaluated. reshape, data-free transposes and split_0/split_1 alias their operand
// (no copy). Every value stays on the GPU until the run ends (no buffer reuse: simple, and
// the benchmark models need a few hundred MB at most).
#pragma once

#include <string>
#include <unordered_map>

#include "lang/graph.h"
#include "lang/weights.h"
#include "gpu_cost/gpu_runtime.h"
#include "exec/tensor.h"

namespace tensat::gpu {

using exec::ExecError;
using exec::RunOptions;
using exec::RunResult;
using exec::Tensor;

/// Evaluates the graph on `ctx`'s GPU; throws ExecError for a missing input, weight or
/// opaque value or non-f32 data, GpuError for a failing CUDA/cuDNN/cuBLAS call.
RunResult run(Context& ctx, const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts = {});
/// As above on a fresh context (device 0, no TF32).
RunResult run(const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts = {});

/// Median end-to-end milliseconds of the graph's kernels: weights and inputs are uploaded
/// once, then the whole graph is launched `warmup` times untimed and `repeats` times timed
/// (CUDA events around each launch sequence). Host transfers are not included.
double time_ms(Context& ctx, const ir::Graph& g, const WeightStore& weights,
               const std::unordered_map<std::string, Tensor>& inputs, int warmup = 3, int repeats = 10,
               const RunOptions& opts = {});
double time_ms(const ir::Graph& g, const WeightStore& weights,
               const std::unordered_map<std::string, Tensor>& inputs, int warmup = 3, int repeats = 10,
               const RunOptions& opts = {});

}  // namespace tensat::gpu
