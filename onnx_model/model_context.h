// ModelContext: what the exporter needs from the original ONNX model besides the term graph:
// the model header (IR version, opsets, metadata), the graph interface (inputs and outputs
// with their names, order and types) and the opaque nodes, kept verbatim.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tensat {

struct OpaqueNode {
  onnx::NodeProto node;  ///< the original node, inputs and outputs as in the source model
  /// Names of the node's (explicit) inputs that are children of the opaque e-node, in child
  /// order (children 1..n of `(opaque ID ...)`); empty names (missing optional inputs) are
  /// not children.
  std::vector<std::string> child_inputs;
  /// Outer-scope tensors read implicitly by subgraph attributes (If/Loop/Scan): they are
  /// children too (after child_inputs) and must keep their names in the exported model.
  std::vector<std::string> implicit_inputs;
  /// Type and shape of its outputs as the source model (or shape inference) gave them; the
  /// exporter writes them as value_info so the exported model is as self-describing.
  std::vector<onnx::ValueInfoProto> output_info;
};

/// A constant the import computed from the input shapes (`ModelContext::shape_derived`) that
/// the graph reads as data (a range of positions, a mask): in the graph it is an input leaf of
/// its name whose value is in the weight store, and an output with symbolic dimensions writes
/// its computation instead of the value (pipeline/shape_values.h).
struct ShapeValue {
  /// The source model's nodes that compute it, in topological order, the last one writing it.
  /// A Shape (or Size) among them whose input is computed at run time reads `shape_reads`.
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;  ///< the source's constants they read
  struct ShapeRead {
    std::vector<int64_t> fixed;       ///< its shape at the fixed input shapes
    /// Per dimension: the input symbols it is the product of (one, or more: "batch*seq"), or
    /// none (fixed).
    std::vector<std::vector<std::string>> labels;
  };
  /// Tensor computed at run time whose shape the nodes read -> its shape. The labels are set
  /// by label_shape_values (pipeline/shape_values.h).
  std::unordered_map<std::string, ShapeRead> shape_reads;
  /// Per dimension of the value: the input symbols it is the product of, or none (fixed).
  std::vector<std::vector<std::string>> labels;
  bool labelled = false;            ///< labels set; else `why_not` says why they cannot be
  /// A small integer value (a shape, a length): per element, the input symbol it is or ""
  /// (fixed), where every element is one of these (values_labelled).
  std::vector<std::string> value_labels;
  bool values_labelled = false;
  /// Its computation selects by the input shapes (Min, Max, Clip, Where, a comparison, Mod or
  /// Div of values that change with them): labels drawn at some sizes may not hold at others
  /// (Max(S, 50) is 50 at every S drawn below 50), so no size is taken from it. `selects` from
  /// the values drawn (label_shape_values); `may_select` from the computation alone (such an
  /// operator on anything a Shape or Size of a tensor computed at run time reaches).
  bool selects = false;
  bool may_select = false;
  std::string why_not;
};

struct ModelContext {
  std::string source_path;
  /// The original model without graph nodes, initializers and value_info (header, opsets,
  /// metadata, graph name/doc, inputs/outputs ValueInfos).
  onnx::ModelProto header;
  std::vector<OpaqueNode> opaque;
  /// Initializers that are also graph inputs (IR >= 4): they stay overridable inputs and
  /// their default values are re-emitted verbatim.
  std::vector<onnx::TensorProto> overridable_initializers;
  /// IR < 4, where every initializer must also be declared a graph input: those declarations
  /// are not inputs (the initializers are constants, as ONNX Runtime takes them: it lists only
  /// the other inputs); `header` has the rest, and the exporter declares every initializer it
  /// writes as an input again, so the output keeps the source's IR version and form.
  bool initializers_as_inputs = false;
  /// Initializers of element types the language does not model (int16, bfloat16, string,
  /// ...): only opaque nodes read them; they are re-emitted verbatim.
  std::unordered_map<std::string, onnx::TensorProto> raw_initializers;
  /// Graph input and output names, in order.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  int64_t default_opset = 0;  ///< opset version of the default ("" / "ai.onnx") domain
  /// The graph inputs and outputs as the source declares them, before --input-shape fixed
  /// symbolic dimensions and shape inference refined them (`header` has the fixed ones): the
  /// exporter writes these back when it keeps the symbolic dimensions (exporter/dim_labels.h).
  std::vector<onnx::ValueInfoProto> declared_inputs, declared_outputs;
  /// Values the import folded from the shape of a tensor computed at run time (Shape, Size)
  /// and what was computed from them (importer/const_fold.h): constants only at the fixed
  /// input shapes. A weight of one of these names keeps the output at the fixed shapes.
  std::unordered_set<std::string> shape_derived;
  /// Those of them the graph reads as data, as input leaves (ImportOptions::
  /// shape_values_at_run_time): name -> how to compute it.
  std::unordered_map<std::string, ShapeValue> shape_values;
  /// Canonical paths of the external data files the model was read from (external_data.h):
  /// an output must never overwrite one of them.
  std::vector<std::string> external_data_files;
};

}  // namespace tensat
