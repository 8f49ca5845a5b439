// DimLabels: the symbolic dimensions of a model's inputs, followed through a graph typed at
// fixed input shapes, so that the exporter can write the optimized model back with the
// symbolic dimensions its inputs declare (a dynamic batch stays dynamic).
//
// The graph was imported with --input-shape fixing every symbolic input dimension (the
// language's shapes are static). A label names one symbolic dimension: an input's ("N"), or
// one computed from labelled ones (a concat along a dynamic axis, a strided window over one).
// Each operator of the language has a rule; opaque nodes have rules for the ONNX operators
// whose output dimensions follow their operands' (elementwise, normalizations, softmax,
// reductions, Gather(Elements), Flatten, Squeeze/Unsqueeze, Transpose, Concat, MatMul, Conv;
// Pad, Tile and Slice with constant amounts; Reshape, Expand, ConstantOfShape and Range whose
// shape operand is a constant or a labelled shape value; of ONNX Runtime's fused operators, the
// element-wise ones, SkipLayerNormalization, FusedMatMul, FusedGemm and FusedConv). A label may be a product of
// others and a fixed factor ("batch*seq", "4*N"). Where a rule cannot say (a reshape whose symbolic factors
// fit its axes in no way or in several, a split along a symbolic dimension, a fixed dimension
// meeting a dynamic one, an opaque operator without a rule) the analysis stops with
// DimLabelError naming the node, and the model is written at the fixed shapes.
//
// Nothing here is trusted on its own: the pipeline verifies a model written with symbolic
// dimensions at other values of them too (pipeline.cpp, "symbolic dimensions").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lang/graph.h"
#include "lang/weights.h"
#include "onnx_model/model_context.h"

namespace tensat {

class DimLabelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kStaticDim = -1;
/// Per dimension of a tensor: kStaticDim, or the index of its label.
using DimLabelList = std::vector<int>;

/// The symbolic dimensions of the graph inputs: for each input fixed by --input-shape whose
/// declaration has symbolic dimensions, the axis -> name of each ("N"; an unnamed one gets
/// "INPUT_dimAXIS"). Empty when the model declares none (nothing to keep).
std::map<std::string, std::map<size_t, std::string>> symbolic_input_dims(const ModelContext& ctx);

/// The first weight of g that the import computed from input shapes (ModelContext::
/// shape_derived), or "" if none: a graph with one keeps the fixed shapes (run this on the
/// graph before fold_weights, which gives the weights it computes new names).
std::string shape_derived_weight(const ir::Graph& g, const ModelContext& ctx);

class DimLabels {
 public:
  /// Labels every tensor of g. Throws DimLabelError (naming the node) where no rule applies.
  DimLabels(const ir::Graph& g, const ModelContext& ctx, const WeightStore& weights);
  /// Labels only the tensors `roots` are computed from (of() of any other node is an error).
  DimLabels(const ir::Graph& g, const ModelContext& ctx, const WeightStore& weights,
            const std::vector<ir::NodeId>& roots);

  /// The labels of node n's tensor, or of part `part` of its tuple (split, multi-output opaque).
  const DimLabelList& of(ir::NodeId n, size_t part = 0) const;
  bool dynamic(ir::NodeId n) const;  ///< any labelled dimension (in any part)
  const std::string& name(int label) const { return names_.at(static_cast<size_t>(label)); }
  /// The target reshape node n writes: its static dimensions, 0 where it copies a dynamic
  /// dimension of its input at the same axis, -1 for the one it infers.
  const std::vector<int64_t>& reshape_target(ir::NodeId n) const { return targets_.at(n); }
  /// Where reshape n's target must be computed from the input dimensions (it splits a product
  /// of them into several axes): the label of each target axis (kStaticDim: reshape_target's
  /// value there); else null.
  const std::vector<int>* runtime_target(ir::NodeId n) const;
  /// The input symbols a label is the product of (itself for one that is not a product).
  std::vector<std::string> factor_names(int label) const;
  /// Every factor of the label is a symbolic dimension of an input.
  bool input_symbols_only(int label) const;
  /// The fixed factor of a product label (1 for a symbol).
  int64_t const_factor(int label) const;

 private:
  /// The label of that name (an input's symbol, a factor of a shape value); a new one if none.
  int fresh(const std::string& name);
  void register_inputs();
  /// The label of a dimension computed from label `in` (kStaticDim: from nothing) as `how`
  /// says ("+2", a window's arithmetic, a node's own "concat12_1"): one per (in, how), named
  /// name(in) + how, with a suffix where another label has that name.
  int derived(int in, const std::string& how);
  /// A sliding window's output dimension over symbolic input dimension `in`: `span` the
  /// window's extent minus 1 (dilation * (K - 1)), `pads` the padding at both ends; `same`:
  /// ONNX's auto_pad SAME_* (ceil(in / stride)). `in` where the size stays, else derived() by
  /// the arithmetic, so that equal windows over one dimension give one label.
  int window(int in, int64_t span, int64_t stride, int64_t pads, bool same = false);
  /// The label of a product of labels and a fixed factor ("batch*seq", "12*batch").
  int product(const std::vector<int>& labels, int64_t c = 1);
  std::optional<int64_t> fixed_value(int label) const;  ///< at the fixed shapes, if a product of input symbols
  void find_symbol_values();
  void label_reshape_groups(ir::NodeId n);
  [[noreturn]] void stop(ir::NodeId n, const std::string& why) const;
  // The label of one axis several operands share (numpy broadcast: a fixed 1 broadcasts).
  int merge_dims(ir::NodeId n, const std::vector<std::pair<int, int64_t>>& dims) const;
  // (trans_a / trans_b: the operand's last two dimensions swapped first, as FusedMatMul's.)
  DimLabelList matmul(ir::NodeId n, ir::NodeId a, ir::NodeId b, size_t rank, bool trans_a = false,
                      bool trans_b = false) const;
  DimLabelList broadcast(ir::NodeId n, const std::vector<ir::NodeId>& operands, const Shape& out) const;
  DimLabelList with_bias(ir::NodeId n, DimLabelList out, const Shape& os, ir::NodeId bias) const;
  void label_node(ir::NodeId n);
  void label_opaque(ir::NodeId n);
  void label_contrib(ir::NodeId n, const onnx::NodeProto& node, const std::vector<std::optional<ir::NodeId>>& input);
  void label_conv(ir::NodeId n, const onnx::NodeProto& node, const std::vector<std::optional<ir::NodeId>>& input);
  void label_reshape(ir::NodeId n);
  std::vector<int64_t> constant_ints(ir::NodeId n, ir::NodeId c) const;  ///< n's integer constant input c, or stop
  /// A shape value leaf (ModelContext::shape_values), or null.
  const ShapeValue* shape_value(ir::NodeId c) const;
  /// c is a shape value whose elements are symbolic, or not known.
  bool symbolic_values(ir::NodeId c) const;
  /// n's integer input c at the fixed shapes: a constant, or a shape value with labelled
  /// elements (else stop); and per element its label.
  std::vector<int64_t> value_ints(ir::NodeId n, ir::NodeId c) const;
  std::vector<int> value_labels(ir::NodeId n, ir::NodeId c);
  void label_by_values(ir::NodeId n, const onnx::NodeProto& node, const std::vector<std::optional<ir::NodeId>>& input);

  const ir::Graph& g_;
  const ModelContext& ctx_;
  const WeightStore& weights_;
  std::map<std::string, std::map<size_t, std::string>> inputs_;
  std::vector<std::string> names_;
  std::map<std::string, int> by_name_;
  std::vector<std::vector<DimLabelList>> labels_;  // node -> parts (one for a tensor)
  std::map<ir::NodeId, std::vector<int64_t>> targets_;
  std::map<ir::NodeId, std::vector<int>> target_labels_;
  std::vector<std::vector<int>> factors_;        // label -> the labels it is the product of
  std::vector<int64_t> consts_;                  // label -> its fixed factor
  std::map<std::string, int64_t> symbol_fixed_;  // input symbol -> its fixed value
  std::map<std::pair<int, std::string>, int> derived_;  // derived()'s labels
};

}  // namespace tensat
