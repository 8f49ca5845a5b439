// The Emitter: one export of an ir::Graph into an ONNX model (exporter.cpp; its symbolic
// dimensions and the computations of shape values in emitter_symbolic.cpp). Internal to the
// exporter.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "exporter/dim_labels.h"
#include "exporter/exporter.h"
#include "lang/graph.h"

namespace tensat::detail {

void set_ints(onnx::NodeProto* p, const std::string& nm, const std::vector<int64_t>& v);
void set_int(onnx::NodeProto* p, const std::string& nm, int64_t v);

class Emitter {
 public:
  Emitter(const ir::Graph& g, const WeightStore& w, const ModelContext& ctx, WeightStore* movable,
          const ExportOptions& opts)
      : g_(g), weights_(w), ctx_(ctx), movable_(movable), opts_(opts) {}

  onnx::ModelProto run(ExportStats& stats);
  void declare_initializers_as_inputs();

 private:
  using NodeId = ir::NodeId;
  const ir::Node& node(NodeId n) const { return g_.node(n); }
  int64_t pint(NodeId n, size_t c) const { return g_.param_int(n, c); }
  const std::string& psym(NodeId n, size_t c) const { return g_.param_sym(n, c); }
  const Shape& shape(NodeId n) const { return g_.type(n).tensor.shape; }

  std::string fresh(const std::string& base);
  const std::string& name(NodeId n);  ///< tensor name of a (tensor-valued) node, emitting leaves
  onnx::NodeProto* add_node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs);
  std::string int64_initializer(const std::string& base, const std::vector<int64_t>& v);
  struct Operand {
    std::string name;
    Shape shape;
    std::optional<NodeId> node;  ///< the graph node, when the operand is one (a weight leaf is reshaped as data)
  };
  void add_binary(const char* op_type, Operand a, Operand b, const std::string& out);
  void add_reshape(const std::string& in, const Shape& to, const std::string& out);
  std::string reshaped_initializer(const std::string& base, NodeId leaf, const Shape& to);
  void add_weight_initializer(const std::string& wname);
  void emit_shape_value(const std::string& v);
  std::string input_dim(const std::string& symbol);
  std::string input_dims(const std::vector<std::string>& factors);
  std::string shape_read(const onnx::NodeProto& n, const ShapeValue::ShapeRead& read, const std::string& out);
  std::string out_name(NodeId n);      ///< the name this node's (single) output gets
  std::string apply_act(NodeId n, const std::string& y, const Act& a);
  std::string f32_scalar_initializer(const std::string& base, float v);
  void add_act_node(const Act& a, const std::string& in, const std::string& out);
  void emit_act(NodeId n);
  struct ScaleShift {
    NodeId x, scale, shift;  // x * scale + shift, scale and shift f32 weight leaves [C, 1, ..]
  };
  std::optional<ScaleShift> scale_shift(NodeId n) const;
  bool emit_batchnorm(NodeId n);
  std::string vector_initializer(const std::string& base, NodeId leaf, int64_t c);
  std::string filled_initializer(const std::string& base, int64_t c, float v);
  void emit(NodeId n);
  using EmitFn = void (Emitter::*)(NodeId);
  static const std::array<EmitFn, kNumOps>& emitters();
  void emit_nothing(NodeId n);
  void emit_leaf(NodeId n);
  void emit_computed_weight(NodeId n);
  void emit_elementwise(NodeId n);
  void emit_matmul(NodeId n);
  void emit_conv(NodeId n);
  void emit_pool(NodeId n);
  void emit_transpose(NodeId n);
  void emit_reshape(NodeId n);
  void emit_enlarge(NodeId n);
  void emit_opaque(NodeId n);
  void emit_select(NodeId n);
  void fix_output_types(const std::vector<NodeId>& outs);
  void emit_concat(NodeId n);
  void emit_split(NodeId n);
  void gather_concat(NodeId n, int64_t axis, std::vector<std::string>& ins);
  void gather_split(NodeId sp, int64_t axis, std::vector<int64_t>& sizes, std::vector<std::string>& outs);

  const ir::Graph& g_;
  const WeightStore& weights_;
  const ModelContext& ctx_;
  WeightStore* movable_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::vector<bool> leaf_;                      // parameters and weight leaves: never emitted as nodes
  std::vector<bool> gemm_b_;                    // transposed weights read as Gemm's B, transB = 1 (lang/graph.h)
  std::vector<int> uses_;                       // uses by the nodes that are no leaves (an absorbed transpose's of its weight too)
  std::vector<bool> is_output_;
  std::unordered_map<NodeId, std::string> names_;
  std::unordered_map<NodeId, std::string> preassigned_;
  std::unordered_map<NodeId, std::vector<std::string>> tuple_names_;
  std::unordered_map<NodeId, std::array<int64_t, 2>> split_parts_;  // split -> (split_0 id, split_1 id) or -1
  std::unordered_set<NodeId> inlined_;
  std::unordered_set<std::string> used_names_;
  std::unordered_set<std::string> emitted_inits_;
  std::unordered_set<std::string> identities_;
  std::unordered_map<std::string, std::string> int64_inits_;
  std::unordered_map<std::string, const onnx::TensorProto*> init_by_name_;  // emitted weight initializers
  std::unordered_set<NodeId> batchnorms_;  // ewadd nodes written as one BatchNormalization
  std::unordered_set<std::string> shape_names_;                  // written by emit_shape_value
  std::unordered_map<std::string, std::string> shape_renames_;  // its source names -> names here
  std::unordered_map<std::string, std::string> input_dims_;    // symbol -> its 1-element int64 tensor
  std::unordered_map<std::string, std::string> input_shapes_;  // graph input -> its Shape
  ExportStats* stats_ = nullptr;
  int counter_ = 0;
  const ExportOptions& opts_;
  std::optional<DimLabels> labels_;  // keep_symbolic_dims, where the source declares symbolic inputs
  void declare_symbolic_interface(const std::vector<NodeId>& outs, ExportStats& stats);
  void set_symbolic_shape(onnx::TensorShapeProto* sh, const Shape& s, const DimLabelList& labels,
                          const onnx::TensorShapeProto* declared);
};

}  // namespace tensat::detail
