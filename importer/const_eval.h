// Constant evaluation of ONNX nodes on host tensors (WeightData): the shape computations that
// PyTorch exports (Shape -> Gather -> Unsqueeze -> Concat -> Reshape / Slice, Range, Where,
// ...) evaluated before lowering, so that the arguments they compute become constants.
//
// Every result is what ONNX Runtime computes: float arithmetic in the tensor's own type
// (IEEE, one operation per element, nothing reassociated), integer arithmetic with C++
// semantics (division truncates), casts as static_cast. A node the evaluator cannot compute
// exactly (an unknown input value, an element type or attribute it does not cover, a float
// that does not fit the integer it is cast to, a division by zero, a result too large) is left
// alone: evaluate() returns nullopt and says why. It never approximates.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lang/weights.h"

namespace tensat::const_eval {

/// An input of a node under evaluation: its static type, and its value where known.
struct Operand {
  TensorType type;
  const WeightData* value = nullptr;  ///< null: only the type is known (enough for Shape, Size)
};

/// A result (other than a Constant node's own value) may have at most this many elements:
/// folding computes shapes and indices; it must not turn a small ConstantOfShape or Expand
/// into a large initializer, nor copy a weight (larger computations stay nodes).
inline constexpr int64_t kMaxNewElements = int64_t{1} << 16;

/// True if evaluate() covers this op type of the default domain.
bool covers(const std::string& op_type);

/// Evaluates node `n` (default ONNX domain, operator set `opset`) on its inputs, one entry per
/// input of the node (nullopt: an absent optional input). Returns one value per output, or
/// nullopt (with the reason in `why`) when the node cannot be computed exactly. A result may
/// have up to `max_elements` elements (a range, however, up to kMaxNewElements).
std::optional<std::vector<WeightData>> evaluate(const onnx::NodeProto& n, int64_t opset,
                                                const std::vector<std::optional<Operand>>& inputs,
                                                std::string* why = nullptr, int64_t max_elements = kMaxNewElements);

}  // namespace tensat::const_eval
