// DimLabels: the rules for opaque ONNX nodes, and the shape values and constants they read
// as shapes (see dim_labels.h).
#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include "exporter/dim_labels.h"
#include "onnx_model/window_attrs.h"

namespace tensat {

namespace {

// Ops whose output has the shape of the first input (the others are scalars or per-channel
// parameters that do not broadcast it: Clip's bounds, a normalization's scale and bias).
const std::set<std::string_view>& same_shape_ops() {
  static const std::set<std::string_view> s = {
      "Abs", "Acos", "Asin", "Atan", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos",
      "Cosh", "CumSum", "DequantizeLinear", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid",
      "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization",
      "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "Mish", "Neg", "Not", "QuantizeLinear", "Reciprocal",
      "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax", "Softplus", "Softsign",
      "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
      "SimplifiedLayerNormalization"};  // (ONNX Runtime's, in the ONNX domain: an RMS normalization)
  return s;
}

// Ops whose output is the numpy broadcast of all their inputs.
const std::set<std::string_view>& broadcast_ops() {
  static const std::set<std::string_view> s = {"Add", "And", "BitShift", "Div", "Equal", "Greater", "GreaterOrEqual",
                                               "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or",
                                               "PRelu", "Pow", "Sub", "Sum", "Where", "Xor"};
  return s;
}

const std::set<std::string_view>& reduce_ops() {
  static const std::set<std::string_view> s = {"ArgMax", "ArgMin", "ReduceL1", "ReduceL2", "ReduceLogSum",
                                               "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
                                               "ReduceProd", "ReduceSum", "ReduceSumSquare"};
  return s;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// An int64 or int32 tensor's elements.
std::optional<std::vector<int64_t>> ints_of(const WeightData& w) {
  if (w.type.dtype != DType::I64 && w.type.dtype != DType::I32) return std::nullopt;
  std::vector<int64_t> v(w.count());
  for (size_t i = 0; i < v.size(); ++i) {
    if (w.type.dtype == DType::I64) {
      std::memcpy(&v[i], w.bytes.data() + i * sizeof(int64_t), sizeof(int64_t));
    } else {
      int32_t x = 0;
      std::memcpy(&x, w.bytes.data() + i * sizeof(int32_t), sizeof x);
      v[i] = x;
    }
  }
  return v;
}

}  // namespace

const ShapeValue* DimLabels::shape_value(ir::NodeId c) const {
  const ir::Node& nd = g_.node(c);
  if (nd.op != Op::Input) return nullptr;
  auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym);
  if (!leaf) return nullptr;
  auto it = ctx_.shape_values.find(leaf->name);
  return it == ctx_.shape_values.end() ? nullptr : &it->second;
}

bool DimLabels::symbolic_values(ir::NodeId c) const {
  const ShapeValue* sv = shape_value(c);
  if (!sv) return false;
  return !sv->values_labelled ||
         std::any_of(sv->value_labels.begin(), sv->value_labels.end(), [](const std::string& l) { return !l.empty(); });
}

std::vector<int64_t> DimLabels::value_ints(ir::NodeId n, ir::NodeId c) const {
  if (const ShapeValue* sv = shape_value(c); sv && sv->values_labelled) {
    auto leaf = parse_leaf_id(g_.node(g_.node(c).children[0]).sym);
    if (leaf && weights_.contains(leaf->name))
      if (auto v = ints_of(weights_.get(leaf->name))) return *v;
    assert(false && "a shape value with labelled elements is an integer tensor in the store");
  }
  return constant_ints(n, c);
}

std::vector<int> DimLabels::value_labels(ir::NodeId n, ir::NodeId c) {
  const std::vector<int64_t> v = value_ints(n, c);  // stops unless its elements are known
  std::vector<int> l(v.size(), kStaticDim);
  if (const ShapeValue* sv = shape_value(c)) {
    if (sv->value_labels.size() != v.size()) stop(n, "internal: a label per element of a shape value");
    for (size_t i = 0; i < v.size(); ++i)
      if (!sv->value_labels[i].empty()) l[i] = fresh(sv->value_labels[i]);
  }
  return l;
}

// Opaque operators whose output shape is an operand's value (a Reshape target, an Expand or
// ConstantOfShape shape, a Range's bounds): that operand a constant or a shape value whose
// elements are labelled (label_shape_values).
void DimLabels::label_by_values(ir::NodeId n, const onnx::NodeProto& node,
                                const std::vector<std::optional<ir::NodeId>>& input) {
  const std::string& op = node.op_type();
  auto& out = labels_[n][0];
  const Shape& os = g_.type(n).tensor.shape;
  auto operand = [&](size_t i) {
    if (i >= input.size() || !input[i]) stop(n, "a missing input");
    return *input[i];
  };
  if (op == "ConstantOfShape") {
    const std::vector<int> l = value_labels(n, operand(0));
    if (l.size() != os.size()) stop(n, "internal: its shape's length is not its rank");
    out = l;
    return;
  }
  if (op == "Range") {
    // [start, limit) by delta: with start 0 and delta 1 fixed, as many elements as limit.
    for (size_t i = 0; i < 3; ++i)
      if (dynamic(operand(i))) stop(n, "an operand with a symbolic dimension");
    const std::vector<int> limit = value_labels(n, operand(1));
    if (value_labels(n, operand(0)) != std::vector<int>{kStaticDim} ||
        value_labels(n, operand(2)) != std::vector<int>{kStaticDim} ||
        value_ints(n, operand(0)) != std::vector<int64_t>{0} ||
        value_ints(n, operand(2)) != std::vector<int64_t>{1} || limit.size() != 1)
      stop(n, "a range that does not start at a fixed 0 by a fixed 1");
    out.assign(1, limit[0]);
    return;
  }
  const ir::NodeId x = operand(0);
  if (dynamic(operand(1))) stop(n, "its shape operand has a symbolic dimension");
  const std::vector<int> target = value_labels(n, operand(1));
  const std::vector<int64_t> fixed = value_ints(n, operand(1));
  const DimLabelList& in = of(x);
  const Shape& is = g_.type(x).tensor.shape;
  if (op == "Expand") {
    // Numpy broadcast of the operand's dimensions and the shape's elements.
    if (target.size() > os.size() || in.size() > os.size()) stop(n, "internal: rank of an Expand");
    for (size_t d = 0; d < os.size(); ++d) {
      std::vector<std::pair<int, int64_t>> dims;
      const size_t off_in = os.size() - in.size(), off_t = os.size() - target.size();
      if (d >= off_in) dims.emplace_back(in[d - off_in], is[d - off_in]);
      if (d >= off_t) dims.emplace_back(target[d - off_t], fixed[d - off_t]);
      out[d] = merge_dims(n, dims);
    }
    return;
  }
  // Reshape: a labelled element is that dimension, 0 copies the input's (allowzero 0), -1 is
  // what is left: the one symbolic dimension of the input no other element has, where the
  // fixed dimensions on both sides hold as many elements.
  bool allowzero = false;
  for (const auto& a : node.attribute())
    if (a.name() == "allowzero") allowzero = a.i() != 0;
  if (target.size() != os.size()) stop(n, "internal: its target's length is not its rank");
  std::optional<size_t> inferred;
  std::multiset<int> left;  // the input's symbolic factors not yet placed
  int64_t fixed_in = 1, fixed_out = 1;  // fixed sizes and the fixed factors of products
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != kStaticDim) {
      for (int b : factors_.at(static_cast<size_t>(in[d]))) left.insert(b);
      fixed_in *= consts_.at(static_cast<size_t>(in[d]));
    } else {
      fixed_in *= is[d];
    }
  }
  for (size_t d = 0; d < os.size(); ++d) {
    int l = target[d];
    if (l == kStaticDim && fixed[d] == 0 && !allowzero) {
      if (d >= in.size()) stop(n, "a 0 in its target past the input's rank");
      l = in[d];
      if (l == kStaticDim) fixed_out *= is[d];
    } else if (l == kStaticDim && fixed[d] == -1) {
      inferred = d;
      continue;
    } else if (l == kStaticDim) {
      fixed_out *= os[d];
    }
    if (l != kStaticDim) {
      for (int b : factors_.at(static_cast<size_t>(l))) {
        auto it = left.find(b);
        if (it == left.end()) stop(n, "its target has symbolic dimension " + name(b) + " the input does not have");
        left.erase(it);
      }
      fixed_out *= consts_.at(static_cast<size_t>(l));
    }
    out[d] = l;
  }
  if (inferred) {
    if (!left.empty()) {
      if (fixed_out <= 0 || fixed_in % fixed_out != 0)
        stop(n, "it folds symbolic dimension " + name(*left.begin()) + " into a fraction of fixed dimensions");
      out[*inferred] = product(std::vector<int>(left.begin(), left.end()), fixed_in / fixed_out);
    }
  } else if (!left.empty()) {
    stop(n, "it drops symbolic dimension " + name(*left.begin()));
  }
}

std::vector<int64_t> DimLabels::constant_ints(ir::NodeId n, ir::NodeId c) const {
  const ir::Node& nd = g_.node(c);
  if (nd.op == Op::Weight)
    if (auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym); leaf && weights_.contains(leaf->name))
      if (auto v = ints_of(weights_.get(leaf->name))) return *v;
  stop(n, "an integer operand (axes, a shape) that is not a constant");
}

void DimLabels::label_opaque(ir::NodeId n) {
  const ir::Node& nd = g_.node(n);
  auto id = parse_opaque_id(g_.param_sym(n, 0));
  assert(id && "an opaque node's identifier parses (the graph type-checked it)");
  const OpaqueNode& on = ctx_.opaque.at(static_cast<size_t>(id->index));
  const onnx::NodeProto& node = on.node;
  const std::string& op = node.op_type();
  // The tensor children in the node's input order (missing optional inputs are not children).
  std::vector<std::optional<ir::NodeId>> input(static_cast<size_t>(node.input_size()));
  {
    size_t child = 1;
    for (int i = 0; i < node.input_size(); ++i)
      if (!node.input(i).empty()) input[static_cast<size_t>(i)] = nd.children[child++];
  }
  auto& out = labels_[n];
  bool any_in = false, values = false;
  for (size_t c = 1; c < nd.children.size(); ++c) {
    any_in |= dynamic(nd.children[c]);
    values |= symbolic_values(nd.children[c]);
  }
  // Nothing symbolic reaches it, neither in its operands' dimensions nor in the values of a
  // shape it reads: its outputs are fixed too.
  if (!any_in && !values) return;
  const bool contrib = node.domain() == "com.microsoft";  // ONNX Runtime's fused operators
  if (!node.domain().empty() && node.domain() != "ai.onnx" && !contrib)
    stop(n, "an operator of domain '" + node.domain() + "'");
  if (!on.implicit_inputs.empty()) stop(n, "a subgraph reads symbolic tensors");
  auto in_labels = [&](size_t i) -> const DimLabelList& {
    if (i >= input.size() || !input[i]) stop(n, "a missing input");
    return of(*input[i]);
  };
  auto in_shape = [&](size_t i) -> const Shape& { return g_.type(*input[i]).tensor.shape; };
  auto others_fixed = [&](size_t from) {
    for (size_t i = from; i < input.size(); ++i)
      if (input[i] && dynamic(*input[i])) stop(n, "input " + std::to_string(i) + " has a symbolic dimension");
  };
  // An axis of a rank-`rank` tensor, negative ones counted from the end; out of range: stop.
  auto axis_of = [&](int64_t axis, size_t rank) {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) stop(n, "axis " + std::to_string(axis) + " outside rank " + std::to_string(rank));
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
  };
  auto int_attr = [&](std::string_view a, int64_t def) {
    const onnx::AttributeProto* p = attribute(node, a);
    return p ? p->i() : def;
  };
  auto ints_attr_or_input = [&](std::string_view a, size_t input_index) -> std::optional<std::vector<int64_t>> {
    if (const onnx::AttributeProto* p = attribute(node, a))
      return std::vector<int64_t>(p->ints().begin(), p->ints().end());
    if (input_index < input.size() && input[input_index]) return constant_ints(n, *input[input_index]);
    return std::nullopt;
  };
  if (contrib) {
    label_contrib(n, node, input);
    return;
  }
  if (op == "Reshape" || op == "Expand" || op == "ConstantOfShape" || op == "Range") {
    label_by_values(n, node, input);
    return;
  }
  if (same_shape_ops().count(op)) {
    others_fixed(1);
    if (out.size() > 1 && op != "Dropout") stop(n, "its further outputs (statistics) have other shapes");
    for (auto& p : out) p = in_labels(0);  // Dropout's mask has the input's shape
    return;
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    // (Opaque: ceil_mode, dilations, an index output.) Batch and channels pass; a window over
    // a symbolic spatial dimension computes a new one.
    const DimLabelList& x = in_labels(0);
    for (auto& p : out)
      for (size_t d = 0; d < x.size() && d < p.size(); ++d)
        p[d] = d < 2 || x[d] == kStaticDim ? x[d] : derived(x[d], "_" + op + std::to_string(n));
    return;
  }
  if (out.size() != 1) stop(n, "a multi-output operator without a rule for symbolic dimensions");
  const Shape& os = g_.type(n).kind == Kind::Tensor ? g_.type(n).tensor.shape : Shape{};
  if (broadcast_ops().count(op)) {
    std::vector<ir::NodeId> kids;
    for (const auto& i : input)
      if (i) kids.push_back(*i);
    out[0] = broadcast(n, kids, os);
    return;
  }
  if (reduce_ops().count(op)) {
    others_fixed(1);
    const DimLabelList& x = in_labels(0);
    const bool arg = op == "ArgMax" || op == "ArgMin";
    const bool keep = int_attr("keepdims", 1) != 0;
    std::vector<int64_t> axes;
    if (arg) {
      axes = {int_attr("axis", 0)};
    } else if (auto a = ints_attr_or_input("axes", 1)) {
      axes = *a;
    }
    if (axes.empty() && !arg) {
      if (int_attr("noop_with_empty_axes", 0)) stop(n, "a reduction over no axes");
      return;  // over every axis: a fixed shape
    }
    std::set<size_t> reduced;
    for (int64_t a : axes) reduced.insert(axis_of(a, x.size()));
    size_t o = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      if (reduced.count(d)) {
        if (keep) ++o;
        continue;
      }
      out[0].at(o++) = x[d];
    }
    return;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
    out[0][0] = in_labels(0)[0];
    out[0][1] = in_labels(0)[1];
    return;
  }
  if (op == "Transpose") {
    const DimLabelList& x = in_labels(0);
    const onnx::AttributeProto* p = attribute(node, "perm");
    if (p && p->ints_size() != static_cast<int>(x.size())) stop(n, "a perm of another rank");
    for (size_t d = 0; d < x.size(); ++d)
      out[0][d] = x[p ? axis_of(p->ints(static_cast<int>(d)), x.size()) : x.size() - 1 - d];
    return;
  }
  if (op == "Flatten") {
    const DimLabelList& x = in_labels(0);
    const Shape& xs = in_shape(0);
    const int64_t flatten_axis = int_attr("axis", 1);  // in [-rank, rank]
    const size_t axis = flatten_axis == static_cast<int64_t>(x.size()) ? x.size() : axis_of(flatten_axis, x.size());
    for (size_t side = 0; side < 2; ++side) {
      // A side of one symbolic dimension and fixed 1s is that dimension; else a product.
      const size_t lo = side == 0 ? 0 : axis, hi = side == 0 ? axis : x.size();
      std::vector<int> labels;
      int64_t fixed_size = 1;
      for (size_t d = lo; d < hi; ++d) {
        if (x[d] != kStaticDim) labels.push_back(x[d]);
        else fixed_size *= xs[d];
      }
      out[0][side] = labels.empty() ? kStaticDim : product(labels, fixed_size);
    }
    return;
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    const DimLabelList& x = in_labels(0);
    auto axes = ints_attr_or_input("axes", 1);
    if (!axes) stop(n, "no axes");
    std::set<size_t> at;
    const size_t rank = op == "Squeeze" ? x.size() : os.size();
    for (int64_t a : *axes) at.insert(axis_of(a, rank));
    if (op == "Squeeze") {
      size_t o = 0;
      for (size_t d = 0; d < x.size(); ++d) {
        if (at.count(d)) {
          if (x[d] != kStaticDim) stop(n, "it squeezes symbolic dimension " + name(x[d]));
          continue;
        }
        out[0].at(o++) = x[d];
      }
    } else {
      size_t i = 0;
      for (size_t d = 0; d < os.size(); ++d) out[0][d] = at.count(d) ? kStaticDim : x.at(i++);
    }
    return;
  }
  if (op == "Gather") {
    others_fixed(2);
    const DimLabelList& data = in_labels(0);
    const DimLabelList& idx = in_labels(1);
    const size_t axis = axis_of(int_attr("axis", 0), data.size());
    size_t o = 0;
    for (size_t d = 0; d < axis; ++d) out[0].at(o++) = data[d];
    for (int l : idx) out[0].at(o++) = l;
    for (size_t d = axis + 1; d < data.size(); ++d) out[0].at(o++) = data[d];
    return;
  }
  if (op == "Pad" || op == "Tile") {
    // Fixed amounts (attributes, or constant operands): a padded symbolic dimension is a new
    // one ("S+2"), a tiled one the product with the repeats ("2*S").
    const DimLabelList& x = in_labels(0);
    auto fixed_ints = [&](size_t i) {
      if (i >= input.size() || !input[i]) stop(n, "a missing input");
      const std::vector<int> l = value_labels(n, *input[i]);
      if (std::any_of(l.begin(), l.end(), [](int v) { return v != kStaticDim; }))
        stop(n, "amounts that follow a symbolic dimension");
      return value_ints(n, *input[i]);
    };
    out[0] = x;
    if (op == "Tile") {
      const std::vector<int64_t> reps = fixed_ints(1);
      if (reps.size() != x.size()) stop(n, "repeats of another rank");
      if (std::any_of(reps.begin(), reps.end(), [](int64_t r) { return r < 1; })) stop(n, "a repeat below 1");
      for (size_t d = 0; d < x.size(); ++d)
        if (x[d] != kStaticDim && reps[d] != 1) out[0][d] = product({x[d]}, reps[d]);
      return;
    }
    std::vector<int64_t> pads;
    if (const onnx::AttributeProto* p = attribute(node, ctx_.default_opset < 2 ? "paddings" : "pads")) {
      pads.assign(p->ints().begin(), p->ints().end());
    } else {
      pads = fixed_ints(1);
    }
    std::vector<size_t> axes;
    if (input.size() > 3 && input[3]) {
      for (int64_t a : fixed_ints(3)) axes.push_back(axis_of(a, x.size()));
    } else {
      for (size_t d = 0; d < x.size(); ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size()) stop(n, "pads of another rank");
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t total = pads[k] + pads[k + axes.size()];
      const size_t d = axes[k];
      if (x[d] != kStaticDim && total != 0)
        out[0][d] = derived(x[d], (total > 0 ? "+" : "") + std::to_string(total));
    }
    return;
  }
  if (op == "Slice" && ctx_.default_opset >= 10) {
    // Constant bounds (or bounds that are shape values): an axis not sliced, or a symbolic one
    // taken whole at every size ([0, end of the axis) by 1), keeps its label; a fixed axis sliced
    // by fixed bounds stays fixed; anything else stops.
    const DimLabelList& x = in_labels(0);
    auto ints = [&](size_t i) -> std::pair<std::vector<int64_t>, std::vector<int>> {
      if (i >= input.size() || !input[i]) return {};
      return {value_ints(n, *input[i]), value_labels(n, *input[i])};
    };
    const auto [starts, start_l] = ints(1);
    const auto [ends, end_l] = ints(2);
    auto [axes_v, axes_l] = ints(3);
    auto [steps, steps_l] = ints(4);
    if (axes_v.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes_v.push_back(static_cast<int64_t>(k));
    if (steps.empty()) steps.assign(starts.size(), 1);
    for (const auto* l : {&axes_l, &steps_l})
      if (std::any_of(l->begin(), l->end(), [](int v) { return v != kStaticDim; }))
        stop(n, "axes or steps that follow a symbolic dimension");
    if (ends.size() != starts.size() || axes_v.size() != starts.size() || steps.size() != starts.size())
      stop(n, "bounds of different lengths");
    out[0] = x;
    constexpr int64_t kAnySize = int64_t{1} << 31;
    for (size_t k = 0; k < starts.size(); ++k) {
      const size_t d = axis_of(axes_v[k], x.size());
      const bool symbolic_bound = start_l[k] != kStaticDim || end_l[k] != kStaticDim;
      if (x[d] == kStaticDim) {
        if (symbolic_bound) stop(n, "bounds that follow a symbolic dimension on a fixed axis");
        continue;  // the fixed size the graph has
      }
      const bool from_start = start_l[k] == kStaticDim && (starts[k] == 0 || starts[k] <= -kAnySize);
      const bool to_end = (end_l[k] == kStaticDim && ends[k] >= kAnySize - 1) || end_l[k] == x[d];
      if (!(from_start && to_end && steps[k] == 1)) stop(n, "it slices symbolic dimension " + name(x[d]));
    }
    return;
  }
  if (op == "GatherElements") {  // the indices' shape
    out[0] = in_labels(1);
    return;
  }
  if (op == "Concat") {
    const size_t axis = axis_of(int_attr("axis", 0), os.size());
    bool along = false;
    for (size_t d = 0; d < os.size(); ++d) {
      int label = kStaticDim;
      bool first = true;
      for (const auto& i : input) {
        if (!i) continue;
        const int l = of(*i)[d];
        if (d == axis) {
          along |= l != kStaticDim;
        } else if (!first && l != label) {
          stop(n, "its operands' symbolic dimensions differ off the concatenated axis");
        }
        label = l;
        first = false;
      }
      out[0][d] = d == axis ? kStaticDim : label;
    }
    if (along) out[0][axis] = derived(kStaticDim, "concat" + std::to_string(n) + "_" + std::to_string(axis));
    return;
  }
  if (op == "Conv") {  // (an opaque one: 1-D or 3-D, say; a 2-D one is TASO's conv)
    label_conv(n, node, input);
    return;
  }
  if (op == "MatMul") {
    in_labels(0);  // both present (else it stops)
    in_labels(1);
    if (in_shape(0).size() < 2 || in_shape(1).size() < 2) stop(n, "a MatMul of vectors");
    out[0] = matmul(n, *input[0], *input[1], os.size());
    return;
  }
  stop(n, "no rule says how its output follows symbolic input dimensions");
}

// ONNX Runtime's fused operators that importer/shape_fallback.h types: the element-wise ones
// and SkipLayerNormalization have their first input's dimensions, which the others (a bias, a
// scale, a skip) must broadcast to; FusedMatMul follows MatMul with its transposes, FusedGemm
// Gemm (C broadcast onto the product), FusedConv Conv (label_conv). EmbedLayerNormalization
// keeps the fixed shapes.
void DimLabels::label_contrib(ir::NodeId n, const onnx::NodeProto& node,
                              const std::vector<std::optional<ir::NodeId>>& input) {
  const std::string& op = node.op_type();
  auto& out = labels_[n];
  auto int_attr = [&](std::string_view a) {
    const onnx::AttributeProto* p = attribute(node, a);
    return p ? p->i() : 0;
  };
  if (!input.empty() && input[0] &&
      (op == "Gelu" || op == "QuickGelu" || op == "FastGelu" || op == "BiasGelu" || op == "SkipLayerNormalization" ||
       op == "SkipSimplifiedLayerNormalization")) {
    // The other inputs (a bias, a skip, a scale) broadcast against the first, as an Add's
    // operands would: a fixed dimension other than 1 meeting a symbolic one stops.
    const Shape& xs = g_.type(*input[0]).tensor.shape;
    std::vector<ir::NodeId> operands;
    for (const auto& i : input) {
      if (!i) continue;
      if (g_.type(*i).tensor.shape.size() > xs.size()) stop(n, "an input of higher rank than the first");
      operands.push_back(*i);
    }
    const DimLabelList x = broadcast(n, operands, xs);
    if (x != of(*input[0])) stop(n, "another input has symbolic dimensions the first has not");
    for (auto& p : out) p = x;  // SkipLayerNormalization: the output and the input + skip sum
    return;
  }
  if (op == "FusedConv") {  // Conv, plus its input Z, then an activation
    label_conv(n, node, input);
    return;
  }
  if (op == "FusedGemm" && input.size() >= 2 && input[0] && input[1] && out.size() == 1 &&
      g_.type(*input[0]).tensor.shape.size() == 2 && g_.type(*input[1]).tensor.shape.size() == 2) {
    // Gemm, then an activation: [M, K] x [K, N] (either transposed), C broadcast onto it.
    out[0] = matmul(n, *input[0], *input[1], 2, int_attr("transA") != 0, int_attr("transB") != 0);
    if (input.size() > 2 && input[2]) out[0] = with_bias(n, out[0], g_.type(n).tensor.shape, *input[2]);
    return;
  }
  if (op == "FusedMatMul" && input.size() == 2 && input[0] && input[1] && out.size() == 1 &&
      int_attr("transBatchA") == 0 && int_attr("transBatchB") == 0 && g_.type(*input[0]).tensor.shape.size() >= 2 &&
      g_.type(*input[1]).tensor.shape.size() >= 2) {
    out[0] = matmul(n, *input[0], *input[1], g_.type(n).tensor.shape.size(), int_attr("transA") != 0,
                    int_attr("transB") != 0);
    return;
  }
  stop(n, "an operator of domain 'com.microsoft' without a rule for symbolic dimensions");
}

// A convolution (ONNX's Conv, ONNX Runtime's FusedConv): X [N, C, D1...], W [M, C/group, K1...],
// B [M], FusedConv's Z (added before the activation) of the output's shape. The batch passes;
// the output channels are W's (fixed); a symbolic spatial dimension keeps its label where the
// window keeps the size (stride 1, and padding dilation * (K - 1) or auto_pad SAME_*), else a
// new one is derived. Symbolic input channels or weights stop; so does a Z whose labels are not
// the output's.
void DimLabels::label_conv(ir::NodeId n, const onnx::NodeProto& node,
                           const std::vector<std::optional<ir::NodeId>>& input) {
  auto& out = labels_[n];
  if (out.size() != 1 || input.size() < 2 || !input[0] || !input[1]) stop(n, "a convolution without X and W");
  const DimLabelList& x = of(*input[0]);
  const Shape& ws = g_.type(*input[1]).tensor.shape;
  if (x.size() < 3 || ws.size() != x.size() || out[0].size() != x.size()) stop(n, "a convolution of another rank");
  if (dynamic(*input[1]) || (input.size() > 2 && input[2] && dynamic(*input[2])))
    stop(n, "weights with symbolic dimensions");
  if (x[1] != kStaticDim) stop(n, "symbolic input channels");
  const size_t spatial = x.size() - 2;
  std::string why;
  const auto attrs = window_attrs(node, spatial, &why);
  if (!attrs) stop(n, why);
  out[0][0] = x[0];
  out[0][1] = kStaticDim;
  for (size_t d = 0; d < spatial; ++d) {
    const int in = x[2 + d];
    if (in == kStaticDim) {
      out[0][2 + d] = kStaticDim;
      continue;
    }
    const int64_t span = attrs->dilations[d] * (ws[2 + d] - 1);  // the window's extent minus 1
    const bool pads = attrs->auto_pad == WindowAttrs::AutoPad::NotSet;
    out[0][2 + d] = window(in, span, attrs->strides[d], pads ? attrs->pads[d] + attrs->pads[spatial + d] : 0,
                           attrs->same());
  }
  if (input.size() > 3 && input[3] && of(*input[3]) != out[0])
    stop(n, "its summand Z has other symbolic dimensions than its output");
}

}  // namespace tensat
