// Static output types that libonnx 1.12's shape inference leaves out or gets wrong, for the
// nodes real exports contain: Einsum (1.12 gives its rank, not its dimensions), Gelu (opset 20)
// and Mish (opset 18), which 1.12 has no schema for, and the operators whose opset 18-20
// versions changed their shape rules (Split, Pad, the reductions, the pools), which 1.12 would
// infer by their opset 17 rules. Without them such a node, and everything after it, has no
// static shape (the import stops) or a wrong one. Also some of ONNX Runtime's fused operators
// (domain com.microsoft), which its graph optimizations write and ONNX has no schema for.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tensat::detail {

/// True for a node libonnx 1.12 must not infer: an operator version above its opset 17 whose
/// shape rules changed, which it would infer by the older version's rules, giving wrong shapes
/// (Pad-18's axes, ReduceMean-18's axes input) or crashing (Split-18's num_outputs). `opset`:
/// the model's default-domain opset. infer_missing_types types those it can (Split, Pad,
/// the reductions, AveragePool-19 and LpPool-18 without ceil_mode); the others (Resize-18,
/// GridSample-20, DFT-20) keep only what the exporter declared.
bool hidden_from_libonnx(const onnx::NodeProto& n, int64_t opset);

/// The nodes (indices into the graph's nodes) to hide from one libonnx 1.12 inference pass:
/// those of hidden_from_libonnx, and every node reading a value that it cannot type in this
/// pass (an output of a hidden node, or of a node it has no schema for, without a static type
/// declared). Its data propagation dereferences such an input's missing type: a Shape of a
/// Gelu-20 output crashed the tool. Hiding them loses nothing: their outputs would stay
/// untyped; the next round, with shape_fallback's types, goes on.
std::vector<int> nodes_hidden_from_libonnx(const onnx::ModelProto& m);

/// Types the outputs of the covered nodes of `g` (default domain, opset `opset`) whose inputs
/// have static types and whose outputs have none (or one without every dimension), adding or
/// completing their value_info. A node's constant inputs (pads, axes, split sizes) are read
/// from the initializers. A node whose inputs contradict its operator (an Einsum label with two
/// sizes) is left untyped: the import then names it. Returns the number of outputs typed.
/// Also types some of ONNX Runtime's fused operators (domain com.microsoft; contrib_ops_typed()
/// names them), which its graph optimizations write and libonnx has no schema for.
int infer_missing_types(onnx::GraphProto& g, int64_t opset);

/// The com.microsoft operators infer_missing_types covers, for messages.
std::string contrib_ops_typed();

}  // namespace tensat::detail
