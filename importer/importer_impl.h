// Internal state of one import, shared by importer.cpp (model walk) and lower.cpp (per-op
// lowering). Not part of the public API.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importer/importer.h"

namespace tensat::detail {

/// Raised by a lowering that cannot represent a node exactly: the node becomes opaque.
struct NotLowerable {
  std::string reason;
};

/// Raised by a lowering for a node that breaks the ONNX operator spec (ONNX Runtime refuses
/// such a model too): an input error naming the node, not an opaque pass-through.
struct InvalidNode {
  std::string reason;
};

class Importer {
 public:
  Importer(ImportResult& out, std::string source) : out_(out), g_(out.graph), source_(std::move(source)) {}

  void run(onnx::ModelProto& model, const ImportOptions& opts);

  // ---- used by lowerings -------------------------------------------------------------
  ir::Graph& g() { return g_; }
  WeightStore& weights() { return out_.weights; }
  /// The value of a node input (throws ImportError for an undefined name).
  ir::NodeId value(const onnx::NodeProto& n, int i) const;
  bool has_input(const onnx::NodeProto& n, int i) const {
    return i < n.input_size() && !n.input(i).empty();
  }
  const ValueType& type_of(ir::NodeId id) const { return g_.type(id); }
  /// Constant data behind an input, if it is a weight (initializer or Constant). One computed
  /// from the input shapes (ModelContext::shape_derived) is recorded as a FixedDimUse: what
  /// lowering builds from it holds at the fixed shapes only.
  const WeightData* constant(const onnx::NodeProto& n, int i);
  /// The same for a shape argument (a Reshape target, Split sizes, Slice bounds), which the
  /// lowered graph keeps as shapes the exporter's labels follow: not recorded.
  const WeightData* shape_constant(const onnx::NodeProto& n, int i) const;
  /// A Slice's bounds, axes or steps, Split sizes, a Reshape target: a shape argument whose fixed
  /// value sets the output's size, so one computed from the input shapes is recorded
  /// (FixedDimUse::value; `may_follow`: its elements may be input symbols, as a Reshape target's).
  const WeightData* size_constant(const onnx::NodeProto& n, int i, bool may_follow = false);
  /// Records that lowering resolved dimension `axis` of `x` at its fixed size.
  void fixed_dim_use(ir::NodeId x, size_t axis, const onnx::NodeProto& n, const std::string& what) {
    out_.fixed_dim_uses.push_back({x, axis, where(n) + ": " + what, "", false});
  }
  /// Binds an output name of the current node to a value.
  void bind(const std::string& name, ir::NodeId id) { env_[name] = id; }
  /// Number of readers of a tensor (graph outputs count as readers).
  int consumers(const std::string& name) const;
  /// The node that produced a value by lowering a Conv with activation none, if any.
  bool is_plain_conv(ir::NodeId id) const;
  /// Adds a new f32 weight with a fresh name derived from `base`; returns its leaf.
  ir::NodeId new_weight(const std::string& base, Shape shape, std::vector<float> data);
  ir::NodeId add(Op op, std::vector<ir::NodeId> kids);  ///< throws NotLowerable on type errors
  std::string where(const onnx::NodeProto& n) const;
  int64_t opset() const { return out_.ctx.default_opset; }
  ImportStats& stats() { return out_.stats; }

 private:
  void load_initializers(onnx::GraphProto& graph, const ImportOptions& opts);
  void take_ir3_initializers_as_constants(onnx::ModelProto& model);
  static void empty_initializers_to_constants(onnx::GraphProto& graph);
  void load_inputs(onnx::GraphProto& graph, const ImportOptions& opts);
  void collect_value_types(const onnx::GraphProto& graph);
  void resolve_symbolic_value_info(onnx::GraphProto& graph) const;
  void check_names(const onnx::GraphProto& graph) const;
  void infer_shapes(onnx::ModelProto& model);
  /// Constant folding (with shape inference, to a fixpoint), CSE and DCE on the ONNX graph.
  void simplify(onnx::ModelProto& model);
  static void drop_incomplete_value_info(onnx::GraphProto& graph);
  std::vector<int> topo_order(const onnx::GraphProto& graph) const;
  void import_node(const onnx::NodeProto& n);
  void make_opaque(const onnx::NodeProto& n, const std::string& reason);
  std::optional<TensorType> value_type(const std::string& name) const;
  void collect_shape_values(const onnx::GraphProto& graph);

  ImportResult& out_;
  ir::Graph& g_;
  std::string source_;
  std::unordered_map<std::string, ir::NodeId> env_;
  std::unordered_map<std::string, TensorType> value_types_;  // from shape inference / outputs
  std::unordered_map<std::string, onnx::ValueInfoProto> value_infos_;  // the same, verbatim
  std::unordered_map<std::string, int> consumers_;
  std::unordered_set<std::string> weight_names_;               // names bound to weights
  std::unordered_set<std::string> ir3_initializer_inputs_;      // IR < 4: declarations dropped (run())
  std::unordered_set<ir::NodeId> plain_convs_;
  // ImportOptions::shape_values_at_run_time: the source's nodes before simplify(), and the
  // folded Shape/Size outputs that read a tensor computed at run time.
  bool shape_values_at_run_time_ = false;
  std::vector<onnx::NodeProto> snapshot_;
  std::unordered_set<std::string> shapes_of_run_time_;
};

/// Lowers one node onto the language, binding its outputs; returns false if the op type is
/// not covered at all (→ opaque). Throws NotLowerable for a covered op with attributes the
/// language cannot represent exactly.
bool lower_node(Importer& im, const onnx::NodeProto& n);

}  // namespace tensat::detail
