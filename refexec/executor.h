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

#include "egraph/graph.h"
#include "egraph/weights.h"

namespace tensat::refexec {

struct Tensor {
  Shape shape;
  std::vector<float> data;  ///< row-major, num_elements(shape) values

  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), data(static_cast<size_t>(num_elements(shape)), 0.0f) {}
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  size_t size() const { return data.size(); }
};

/// Thrown when the graph cannot be evaluated (missing input/weight/opaque value, non-f32
/// data where f32 is needed). The message names the node or tensor.
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

/// Evaluates the graph. `inputs` maps input names (the part of the identifier before '@')
/// to tensors of the declared shape; weights are read from `weights` by name. Only the
/// nodes the outputs need are evaluated, and a node in `opts.provided` takes that value
/// without evaluating what lies below it. Throws ExecError naming the node or tensor for a
/// missing or mis-shaped input/weight/provided value, a non-f32 leaf that must be computed
/// with, or an opaque node without a provided value.
RunResult run(const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts = {});

/// Deterministic pseudo-random tensor (uniform in [lo, hi)) for tests and verification.
Tensor random_tensor(const Shape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace tensat::refexec
