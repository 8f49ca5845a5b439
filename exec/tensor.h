// The executors' shared interface: host tensors, run options and results, and the error an
// executor throws. The CPU reference executor (refexec/) and the GPU executor (gpu_cost/)
// take and return these types, so verification and tests can run either one.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/opaque_op.h"
#include "lang/graph.h"

namespace tensat::exec {

/// A float32 tensor in host memory, row-major.
struct Tensor {
  Shape shape;
  std::vector<float> data;  ///< num_elements(shape) values

  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), data(static_cast<size_t>(num_elements(shape)), 0.0f) {}
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  size_t size() const { return data.size(); }
};

/// Thrown when a graph cannot be evaluated (missing input/weight/opaque value, non-f32 data
/// where f32 is needed, an operator the executor has no kernel for). The message names the
/// node or tensor.
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunOptions {
  /// Values supplied by the caller, by node id (e.g. the outputs of opaque nodes: for an
  /// opaque node with several outputs, supply its `select` nodes instead).
  std::unordered_map<ir::NodeId, Tensor> provided;
  /// Keep every node's value (for debugging / region checks); otherwise values are freed
  /// as soon as their last consumer has run.
  bool keep_all = false;
  /// Descriptions of the graph's opaque nodes, by opaque index (exec/opaque_op.h). With them,
  /// opaque nodes that an executor has a kernel for are computed (exec/opaque_plan.h), the
  /// others still need a provided value; without them (nullptr) every opaque node does.
  const OpaqueOps* opaque = nullptr;
};

struct RunResult {
  std::vector<Tensor> outputs;                      ///< one per g.outputs(), in order
  /// If keep_all: the value of every evaluated tensor node (leaves and provided values
  /// included; tuple-valued nodes such as split are absent, their split_0/split_1 present).
  std::unordered_map<ir::NodeId, Tensor> values;
  /// The most bytes of computed values held at once (inputs, weights and provided values
  /// are read in place and not counted, nor is kernel scratch such as im2col columns).
  size_t peak_bytes = 0;
};

/// Inputs by name (the part of the leaf identifier before '@').
using Inputs = std::unordered_map<std::string, Tensor>;

/// Deterministic pseudo-random tensor, uniform in [lo, hi): element i depends only on
/// (seed, i) (SplitMix64), so the same seed gives the same values on every machine.
Tensor random_tensor(const Shape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace tensat::exec
