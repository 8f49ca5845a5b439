// Static output types that libonnx 1.12's shape inference leaves out, for the nodes real
// exports contain: Einsum (1.12 gives its rank, not its dimensions), Gelu (opset 20) and Mish
// (opset 18), which 1.12 has no schema for, and Pad with an `axes` input (opset 18). Without
// them such a node, and everything after it, has no static shape and the import stops.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace tensat::detail {

/// Types the outputs of the covered nodes of `g` (default domain) whose inputs have static
/// types and whose outputs have none (or one without every dimension), adding or completing
/// their value_info. A node's constant inputs (Pad's pads and axes) are read from the
/// initializers. A node whose inputs contradict its operator (an Einsum label with two sizes)
/// is left untyped: the import then names it. Returns the number of outputs typed.
int infer_missing_types(onnx::GraphProto& g);

}  // namespace tensat::detail
