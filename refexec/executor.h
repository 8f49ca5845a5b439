// CPU reference executor: evaluates an ir::Graph on float32 tensors.
//
// The reference for verification (original vs optimized graph) and for the rules'
// numeric soundness tests. Convolution and matmul use im2col + OpenBLAS sgemm, so the
// benchmark models run in seconds. Opaque nodes cannot be executed here: their values
// must be supplied by the caller (verification treats them as region boundaries).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/tensor.h"
#include "lang/graph.h"
#include "lang/weights.h"

namespace tensat::refexec {

// The shared executor types (exec/tensor.h), under this executor's name as well.
using exec::ExecError;
using exec::random_tensor;
using exec::RunOptions;
using exec::RunResult;
using exec::Tensor;

/// Evaluates the graph. `inputs` maps input names (the part of the identifier before '@')
/// to tensors of the declared shape; weights are read from `weights` by name. Only the
/// nodes the outputs need are evaluated, and a node in `opts.provided` takes that value
/// without evaluating what lies below it. Throws ExecError naming the node or tensor for a
/// missing or mis-shaped input/weight/provided value, a non-f32 leaf that must be computed
/// with, or an opaque node without a provided value.
RunResult run(const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts = {});

}  // namespace tensat::refexec
