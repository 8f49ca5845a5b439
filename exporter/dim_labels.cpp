// DimLabels implementation (see dim_labels.h).
#include "exporter/dim_labels.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

namespace tensat {

namespace {

bool symbolic(const onnx::TensorShapeProto::Dimension& d) { return !d.has_dim_value() || d.dim_value() <= 0; }

// Ops whose output has the shape of the first input (the others are scalars or per-channel
// parameters that do not broadcast it: Clip's bounds, a normalization's scale and bias).
const std::set<std::string_view>& same_shape_ops() {
  static const std::set<std::string_view> s = {
      "Abs", "Acos", "Asin", "Atan", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos",
      "Cosh", "CumSum", "DequantizeLinear", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid",
      "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization",
      "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "Mish", "Neg", "Not", "QuantizeLinear", "Reciprocal",
      "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax", "Softplus", "Softsign",
      "Sqrt", "Tan", "Tanh", "ThresholdedRelu"};
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


}  // namespace

std::map<std::string, std::map<size_t, std::string>> symbolic_input_dims(const ModelContext& ctx) {
  std::map<std::string, std::map<size_t, std::string>> out;
  for (const auto& in : ctx.declared_inputs) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d)
      if (symbolic(shape.dim(d)))
        out[in.name()][static_cast<size_t>(d)] =
            shape.dim(d).has_dim_param() && !shape.dim(d).dim_param().empty()
                ? shape.dim(d).dim_param()
                : in.name() + "_dim" + std::to_string(d);
  }
  return out;
}

std::string shape_derived_weight(const ir::Graph& g, const ModelContext& ctx) {
  if (ctx.shape_derived.empty()) return "";
  for (ir::NodeId n = 0; n < g.size(); ++n)
    if (g.node(n).op == Op::Weight)
      if (auto leaf = parse_leaf_id(g.node(g.node(n).children[0]).sym); leaf && ctx.shape_derived.count(leaf->name))
        return leaf->name;
  return "";
}

void DimLabels::find_symbol_values() {
  for (const auto& nd : g_.nodes()) {
    if (nd.op != Op::Input) continue;
    auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym);
    if (!leaf) continue;
    auto it = inputs_.find(leaf->name);
    if (it == inputs_.end()) continue;
    for (const auto& [axis, nm] : it->second)
      if (axis < leaf->type.shape.size()) symbol_fixed_.emplace(nm, leaf->type.shape[axis]);
  }
}

DimLabels::DimLabels(const ir::Graph& g, const ModelContext& ctx, const WeightStore& weights)
    : g_(g), ctx_(ctx), weights_(weights), inputs_(symbolic_input_dims(ctx)) {
  find_symbol_values();
  labels_.resize(g.size());
  // Children come before their parents (ir::Graph is built bottom-up).
  for (ir::NodeId n = 0; n < g.size(); ++n) label_node(n);

}

DimLabels::DimLabels(const ir::Graph& g, const ModelContext& ctx, const WeightStore& weights,
                     const std::vector<ir::NodeId>& roots)
    : g_(g), ctx_(ctx), weights_(weights), inputs_(symbolic_input_dims(ctx)) {
  find_symbol_values();
  labels_.resize(g.size());
  std::vector<bool> below(g.size(), false);
  std::vector<ir::NodeId> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    const ir::NodeId n = stack.back();
    stack.pop_back();
    if (below[n]) continue;
    below[n] = true;
    for (ir::NodeId c : g.node(n).children) stack.push_back(c);
  }
  for (ir::NodeId n = 0; n < g.size(); ++n)
    if (below[n]) label_node(n);
}

int DimLabels::fresh(const std::string& name) {
  auto [it, added] = by_name_.emplace(name, static_cast<int>(names_.size()));
  if (added) {
    names_.push_back(name);
    factors_.push_back({it->second});
    consts_.push_back(1);
  }
  return it->second;
}

int DimLabels::product(const std::vector<int>& labels, int64_t c) {
  std::vector<int> bases;
  for (int l : labels) {
    bases.insert(bases.end(), factors_.at(static_cast<size_t>(l)).begin(), factors_.at(static_cast<size_t>(l)).end());
    c *= consts_.at(static_cast<size_t>(l));
  }
  std::sort(bases.begin(), bases.end(),
            [&](int a, int b) { return names_[static_cast<size_t>(a)] < names_[static_cast<size_t>(b)]; });
  assert(!bases.empty() && c >= 1);
  if (bases.size() == 1 && c == 1) return bases[0];
  std::string nm = c == 1 ? "" : std::to_string(c);
  for (int b : bases) nm += (nm.empty() ? "" : "*") + names_[static_cast<size_t>(b)];
  // The same product has the same label; a name another label has (an input's symbol
  // written "N*S") gets a suffix.
  for (std::string base = nm, k = "'";; nm = base + k, k += "'") {
    auto it = by_name_.find(nm);
    if (it == by_name_.end()) break;
    if (factors_[static_cast<size_t>(it->second)] == bases && consts_[static_cast<size_t>(it->second)] == c)
      return it->second;
  }
  const int id = fresh(nm);
  factors_[static_cast<size_t>(id)] = bases;
  consts_[static_cast<size_t>(id)] = c;
  return id;
}

int64_t DimLabels::const_factor(int label) const { return consts_.at(static_cast<size_t>(label)); }

std::vector<std::string> DimLabels::factor_names(int label) const {
  std::vector<std::string> out;
  for (int b : factors_.at(static_cast<size_t>(label))) out.push_back(names_.at(static_cast<size_t>(b)));
  return out;
}

bool DimLabels::input_symbols_only(int label) const {
  for (int b : factors_.at(static_cast<size_t>(label)))
    if (!symbol_fixed_.count(names_.at(static_cast<size_t>(b)))) return false;
  return true;
}

std::optional<int64_t> DimLabels::fixed_value(int label) const {
  int64_t v = consts_.at(static_cast<size_t>(label));
  for (int b : factors_.at(static_cast<size_t>(label))) {
    auto it = symbol_fixed_.find(names_.at(static_cast<size_t>(b)));
    if (it == symbol_fixed_.end()) return std::nullopt;
    v *= it->second;
  }
  return v;
}

const std::vector<int>* DimLabels::runtime_target(ir::NodeId n) const {
  auto it = target_labels_.find(n);
  return it == target_labels_.end() ? nullptr : &it->second;
}

void DimLabels::stop(ir::NodeId n, const std::string& why) const {
  // A node of the language by its operator and output shape, an opaque one by its ONNX node.
  std::string what(op_name(g_.node(n).op));
  if (g_.type(n).kind == Kind::Tensor) what += " to " + shape_str(g_.type(n).tensor.shape);
  if (g_.node(n).op == Op::Opaque)
    if (auto id = parse_opaque_id(g_.param_sym(n, 0))) {
      const auto& on = ctx_.opaque.at(static_cast<size_t>(id->index)).node;
      what = "node '" + (on.name().empty() ? on.op_type() : on.name()) + "' (" + on.op_type() + ")";
    }
  throw DimLabelError(what + ": " + why);
}

const DimLabelList& DimLabels::of(ir::NodeId n, size_t part) const { return labels_.at(n).at(part); }

bool DimLabels::dynamic(ir::NodeId n) const {
  for (const auto& l : labels_.at(n))
    if (std::any_of(l.begin(), l.end(), [](int x) { return x != kStaticDim; })) return true;
  return false;
}

// Numpy broadcast: a dimension follows the operands that have it at the output's size; a
// fixed 1 broadcasts. A fixed dimension above 1 meeting a dynamic one, or two different
// dynamic ones, would only agree at the fixed shapes.
DimLabelList DimLabels::broadcast(ir::NodeId n, const std::vector<ir::NodeId>& operands, const Shape& out) const {
  DimLabelList r(out.size(), kStaticDim);
  for (size_t d = 0; d < out.size(); ++d) {
    std::vector<std::pair<int, int64_t>> dims;  // (label, size) of the operands that have axis d
    for (ir::NodeId c : operands) {
      const Shape& s = g_.type(c).tensor.shape;
      const size_t off = out.size() - s.size();
      if (d >= off) dims.emplace_back(of(c)[d - off], s[d - off]);
    }
    r[d] = merge_dims(n, dims);
  }
  return r;
}

int DimLabels::merge_dims(ir::NodeId n, const std::vector<std::pair<int, int64_t>>& dims) const {
  int label = kStaticDim;
  bool fixed = false;
  for (const auto& [l, size] : dims) {
    if (l == kStaticDim) {
      fixed |= size != 1;  // a fixed 1 broadcasts
    } else if (label != kStaticDim && label != l) {
      stop(n, "two different symbolic dimensions meet (" + name(label) + ", " + name(l) + ")");
    } else {
      label = l;
    }
  }
  if (label != kStaticDim && fixed)
    stop(n, "symbolic dimension " + name(label) + " meets a fixed one of the same size");
  return label;
}

// [.., M, K] x [.., K, N]: the batch dimensions broadcast, M and N follow their operands, and
// K must be the same (fixed, or one symbol) in both.
DimLabelList DimLabels::matmul(ir::NodeId n, ir::NodeId a, ir::NodeId b, size_t rank) const {
  const DimLabelList& la = of(a);
  const DimLabelList& lb = of(b);
  if (la.back() != lb[lb.size() - 2]) stop(n, "its inner dimension is symbolic in one operand only, or differs");
  DimLabelList r(rank, kStaticDim);
  for (size_t d = 0; d + 2 < rank; ++d) {
    std::vector<std::pair<int, int64_t>> dims;
    for (ir::NodeId c : {a, b}) {
      const Shape& s = g_.type(c).tensor.shape;
      const size_t off = rank - s.size();
      if (d >= off) dims.emplace_back(of(c)[d - off], s[d - off]);
    }
    r[d] = merge_dims(n, dims);
  }
  r[rank - 2] = la[la.size() - 2];
  r[rank - 1] = lb.back();
  return r;
}

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
  const ir::Node& nd = g_.node(c);
  if (const ShapeValue* sv = shape_value(c); sv && sv->values_labelled) {
    auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym);
    if (leaf && weights_.contains(leaf->name)) {
      const WeightData& w = weights_.get(leaf->name);
      assert((w.type.dtype == DType::I64 || w.type.dtype == DType::I32) && "labelled elements are integers");
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
  if (nd.op == Op::Weight) {
    auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym);
    if (leaf && weights_.contains(leaf->name)) {
      const WeightData& w = weights_.get(leaf->name);
      std::vector<int64_t> v(w.count());
      if (w.type.dtype == DType::I64) {
        std::memcpy(v.data(), w.bytes.data(), v.size() * sizeof(int64_t));
        return v;
      }
      if (w.type.dtype == DType::I32) {
        for (size_t i = 0; i < v.size(); ++i) {
          int32_t x = 0;
          std::memcpy(&x, w.bytes.data() + i * sizeof(int32_t), sizeof x);
          v[i] = x;
        }
        return v;
      }
    }
  }
  stop(n, "an integer operand (axes, a shape) that is not a constant");
}

void DimLabels::label_node(ir::NodeId n) {
  const ir::Node& nd = g_.node(n);
  const ValueType& t = g_.type(n);
  auto& out = labels_[n];
  if (t.kind == Kind::Tuple) {
    for (const auto& p : t.tuple) out.emplace_back(p.shape.size(), kStaticDim);
  } else {
    out.emplace_back(t.kind == Kind::Tensor ? t.tensor.shape.size() : 0, kStaticDim);
  }
  auto kid = [&](size_t i) -> const DimLabelList& { return of(nd.children[i]); };
  switch (nd.op) {
    case Op::Weight:
      if (auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym); leaf && ctx_.shape_derived.count(leaf->name))
        stop(n, "'" + leaf->name + "' is a constant the import computed from the input shapes (Shape, Size), at "
                "their fixed values");
      return;
    case Op::Zeros:
    case Op::Enlarge:
    case Op::Merge:  // weights' shapes: fixed
      for (ir::NodeId c : nd.children)
        if (dynamic(c)) stop(n, "an operand with a symbolic dimension");
      return;
    case Op::Num:
    case Op::Sym:
    case Op::Noop:
      return;
    case Op::Input: {
      auto leaf = parse_leaf_id(g_.node(nd.children[0]).sym);
      if (!leaf) return;
      if (auto sv = ctx_.shape_values.find(leaf->name); sv != ctx_.shape_values.end()) {
        // A constant computed from the input shapes, written as its computation: the labels
        // label_shape_values found for it (pipeline/shape_values.h).
        if (!sv->second.labelled)
          stop(n, "'" + leaf->name + "' is a constant the import computed from the input shapes (Shape, Size)" +
                      (sv->second.why_not.empty() ? std::string() : ": " + sv->second.why_not));
        if (sv->second.labels.size() != out[0].size())
          stop(n, "internal: a label per dimension of '" + leaf->name + "'");
        for (size_t d = 0; d < out[0].size(); ++d) {
          std::vector<int> factors;
          for (const std::string& f : sv->second.labels[d]) factors.push_back(fresh(f));
          if (!factors.empty()) out[0][d] = product(factors);
        }
        return;
      }
      auto it = inputs_.find(leaf->name);
      if (it == inputs_.end()) return;
      for (const auto& [axis, nm] : it->second)
        if (axis < out[0].size()) out[0][axis] = fresh(nm);
      // The declaration is written back: its fixed dimensions must be the ones optimized for.
      for (const auto& d : ctx_.declared_inputs) {
        if (d.name() != leaf->name) continue;
        const auto& shape = d.type().tensor_type().shape();
        for (int a = 0; a < shape.dim_size(); ++a)
          if (shape.dim(a).has_dim_value() && shape.dim(a).dim_value() > 0 &&
              (static_cast<size_t>(a) >= t.tensor.shape.size() ||
               shape.dim(a).dim_value() != t.tensor.shape[static_cast<size_t>(a)]))
            throw DimLabelError("input '" + leaf->name + "': --input-shape " + shape_str(t.tensor.shape) +
                                " changes its fixed dimension " + std::to_string(a) + " (declared " +
                                std::to_string(shape.dim(a).dim_value()) + ")");
      }
      return;
    }
    case Op::Ewadd:
    case Op::Ewmul:
      // Before opset 7 a broadcast is written with broadcast=1 and a Reshape of the smaller
      // operand to its core (exporter.cpp add_binary): a fixed shape.
      if (ctx_.default_opset < 7 && g_.type(nd.children[0]).tensor.shape != g_.type(nd.children[1]).tensor.shape &&
          (dynamic(nd.children[0]) || dynamic(nd.children[1])))
        stop(n, "a broadcast before opset 7 of an operand with a symbolic dimension");
      out[0] = broadcast(n, {nd.children[0], nd.children[1]}, t.tensor.shape);
      return;
    case Op::Relu:
    case Op::Tanh:
    case Op::Sigmoid:
      out[0] = kid(0);
      return;
    case Op::Act:
      out[0] = kid(1);
      return;
    case Op::Matmul: {
      out[0] = matmul(n, nd.children[1], nd.children[2], t.tensor.shape.size());
      const size_t rank = t.tensor.shape.size();
      if (nd.children.size() > 3 && g_.type(nd.children[3]).kind == Kind::Tensor) {
        // The bias broadcasts onto the product.
        const DimLabelList& bias = kid(3);
        const Shape& bs = g_.type(nd.children[3]).tensor.shape;
        const size_t off = rank - bias.size();
        for (size_t d = 0; d < bias.size(); ++d)
          out[0][d + off] = merge_dims(n, {{out[0][d + off], t.tensor.shape[d + off]}, {bias[d], bs[d]}});
      }
      return;
    }
    case Op::Conv:
    case Op::Poolmax:
    case Op::Poolavg: {
      const size_t x = nd.op == Op::Conv ? 4 : nd.op == Op::Poolmax ? 5 : 6;
      const DimLabelList& in = kid(x);
      const Shape& xs = g_.type(nd.children[x]).tensor.shape;
      out[0][0] = in[0];
      if (nd.op != Op::Conv) out[0][1] = in[1];
      if (nd.op == Op::Conv && in[1] != kStaticDim) stop(n, "symbolic input channels");
      const int64_t kh = nd.op == Op::Conv ? g_.type(nd.children[5]).tensor.shape[2] : g_.param_int(n, 0);
      const int64_t kw = nd.op == Op::Conv ? g_.type(nd.children[5]).tensor.shape[3] : g_.param_int(n, 1);
      const int64_t sh = g_.param_int(n, nd.op == Op::Conv ? 0 : 2), sw = g_.param_int(n, nd.op == Op::Conv ? 1 : 3);
      const auto pads = resolve_pads(g_.param_sym(n, nd.op == Op::Conv ? 2 : 4), kh, kw);
      if (!pads) stop(n, "its padding");
      // The exporter writes an average pool over the whole input as GlobalAveragePool.
      const bool global = nd.op == Op::Poolavg && kh == xs[2] && kw == xs[3] && *pads == Pads{};
      for (size_t d : {size_t{2}, size_t{3}}) {
        if (in[d] == kStaticDim || global) continue;
        const int64_t k = d == 2 ? kh : kw, s = d == 2 ? sh : sw;
        const int64_t pad = d == 2 ? pads->top + pads->bottom : pads->left + pads->right;
        // Stride 1 and padding k - 1 keep the size; any other window computes a new one.
        const std::string derived = name(in[d]) + "_" + std::string(op_name(nd.op)) + std::to_string(n);
        out[0][d] = s == 1 && pad == k - 1 ? in[d] : fresh(derived);
      }
      return;
    }
    case Op::Transpose: {
      auto perm = parse_dims(g_.type(nd.children[0]));
      for (size_t d = 0; perm && d < perm->size(); ++d) out[0][d] = kid(1)[static_cast<size_t>((*perm)[d])];
      return;
    }
    case Op::Reshape:
      label_reshape(n);
      return;
    case Op::Concat: {
      const auto axis = static_cast<size_t>(g_.param_int(n, 0));
      const DimLabelList& a = kid(1);
      const DimLabelList& b = kid(2);
      for (size_t d = 0; d < a.size(); ++d) {
        if (d == axis) {
          if (a[d] != kStaticDim || b[d] != kStaticDim)
            out[0][d] = fresh("concat" + std::to_string(n) + "_" + std::to_string(d));
        } else if (a[d] != b[d]) {
          stop(n, "its operands' symbolic dimensions differ off the concatenated axis");
        } else {
          out[0][d] = a[d];
        }
      }
      return;
    }
    case Op::Split: {
      const auto axis = static_cast<size_t>(g_.param_int(n, 0));
      const DimLabelList& x = kid(2);
      if (x[axis] != kStaticDim) stop(n, "it splits a symbolic dimension at a fixed position");
      for (auto& p : out) p = x;
      return;
    }
    case Op::Split0:
    case Op::Split1:
      out[0] = of(nd.children[0], nd.op == Op::Split0 ? 0 : 1);
      return;
    case Op::Select:
      out[0] = of(nd.children[1], static_cast<size_t>(g_.param_int(n, 0)));
      return;
    case Op::Opaque:
      label_opaque(n);
      return;
  }
}

// A reshape keeps a symbolic dimension where the dimensions before it hold as many elements
// in the target as in the input, and the target has it there: written as 0 (copy) at the
// same axis, else as the one -1. Anything else (a symbolic dimension folded into a product or
// split up) is only right at the fixed shape.
void DimLabels::label_reshape(ir::NodeId n) {
  const ir::Node& nd = g_.node(n);
  const Shape& s = g_.type(nd.children[1]).tensor.shape;
  const Shape& to = g_.type(n).tensor.shape;
  const DimLabelList& in = of(nd.children[1]);
  // A product of symbols (batch*seq after a flatten) may split again: by groups.
  for (int l : in)
    if (l != kStaticDim && (factors_.at(static_cast<size_t>(l)).size() > 1 || consts_.at(static_cast<size_t>(l)) != 1))
      return label_reshape_groups(n);
  std::vector<int64_t> target(to.begin(), to.end());
  bool inferred = false;
  int64_t before_in = 1;
  for (size_t i = 0; i < s.size(); before_in *= s[i], ++i) {
    if (in[i] == kStaticDim) continue;
    // The target axes whose dimensions before them hold as many elements, of its size: the
    // same axis if it is one of them, else the first.
    std::optional<size_t> at;
    int64_t before_out = 1;
    for (size_t j = 0; j < to.size() && before_out <= before_in; before_out *= to[j], ++j)
      if (before_out == before_in && to[j] == s[i] && labels_[n][0][j] == kStaticDim) {
        if (!at || j == i) at = j;
        if (j == i) break;
      }
    if (!at) return label_reshape_groups(n);
    labels_[n][0][*at] = in[i];
    if (*at == i) {
      target[*at] = 0;
    } else {
      if (inferred) return label_reshape_groups(n);
      inferred = true;
      target[*at] = -1;
    }
  }
  targets_[n] = std::move(target);
}

// A reshape that merges or splits symbolic dimensions ([1, S, 768] -> [S, 768] at batch 1,
// [S, 2304] -> [1, S, 2304]): the input and output axes fall into groups of equal size
// (products of consecutive dimensions), and each group's symbolic factors go to its output
// axes so that every axis has its fixed size, where exactly one such assignment labels the
// most axes with one symbol each. (At a symbol fixed at 1 the sizes alone cannot tell where it
// goes; the pipeline's check at other sizes catches a wrong guess.) The target is then written
// from the input dimensions where a 0 or one -1 cannot say it (runtime_target).
void DimLabels::label_reshape_groups(ir::NodeId n) {
  const ir::Node& nd = g_.node(n);
  const Shape& s = g_.type(nd.children[1]).tensor.shape;
  const Shape& to = g_.type(n).tensor.shape;
  const DimLabelList in = of(nd.children[1]);
  DimLabelList& out = labels_[n][0];
  std::fill(out.begin(), out.end(), kStaticDim);
  size_t i = 0, j = 0;
  while (i < s.size() || j < to.size()) {
    // The next group: the fewest axes on both sides with the same number of elements, and the
    // size-1 axes after it.
    const size_t i0 = i, j0 = j;
    int64_t pi = 1, po = 1;
    if (i < s.size()) pi *= s[i++];
    if (j < to.size()) po *= to[j++];
    while (pi != po) {
      if (pi < po && i < s.size()) pi *= s[i++];
      else if (po < pi && j < to.size()) po *= to[j++];
      else stop(n, "internal: a reshape to a different number of elements");
    }
    while (i < s.size() && s[i] == 1 && (j == to.size() || to[j] != 1)) ++i;
    while (j < to.size() && to[j] == 1 && (i == s.size() || s[i] != 1)) ++j;
    std::vector<int> bases;
    int64_t fixed_in = 1;  // the group's fixed sizes and fixed factors
    for (size_t a = i0; a < i; ++a) {
      if (in[a] == kStaticDim) {
        fixed_in *= s[a];
        continue;
      }
      for (int b : factors_.at(static_cast<size_t>(in[a]))) bases.push_back(b);
      fixed_in *= consts_.at(static_cast<size_t>(in[a]));
    }
    if (bases.empty()) continue;
    // Every assignment of the symbolic factors to the group's output axes (few of each).
    const size_t k = bases.size(), m = j - j0;
    if (k > 4 || m > 6) stop(n, "it regroups too many symbolic dimensions to follow");
    std::vector<int64_t> sizes(bases.size());
    for (size_t b = 0; b < k; ++b) {
      auto v = fixed_value(bases[b]);
      if (!v) stop(n, "it regroups symbolic dimension " + name(bases[b]) + ", which is not an input's");
      sizes[b] = *v;
    }
    std::optional<std::vector<size_t>> best;
    int best_score = -1;
    bool tie = false;
    std::vector<size_t> where(k, 0);
    size_t total = 1;
    for (size_t b = 0; b < k; ++b) total *= m;
    for (size_t code = 0; code < total; ++code) {
      size_t c = code;
      for (size_t b = 0; b < k; ++b, c /= m) where[b] = c % m;
      std::vector<int64_t> prod(m, 1);
      std::vector<int> count(m, 0);
      for (size_t b = 0; b < k; ++b) {
        prod[where[b]] *= sizes[b];
        count[where[b]]++;
      }
      bool ok = true;
      int64_t fixed_out = 1;
      int score = 0;  // an axis of one symbol counts most, then a product without a fixed factor
      for (size_t a = 0; a < m && ok; ++a) {
        if (count[a] == 0) {
          fixed_out *= to[j0 + a];
        } else {
          ok = to[j0 + a] % prod[a] == 0;  // a fixed factor beside the symbolic ones
          if (!ok) break;
          const int64_t c = to[j0 + a] / prod[a];
          fixed_out *= c;
          score += count[a] == 1 && c == 1 ? 3 : c == 1 ? 2 : 1;
        }
      }
      if (!ok || fixed_out != fixed_in) continue;
      if (score > best_score) {
        best_score = score;
        best = where;
        tie = false;
      } else if (score == best_score) {
        tie = true;
      }
    }
    if (!best) {
      std::string syms;
      for (int b : bases) syms += (syms.empty() ? "" : ", ") + name(b);
      stop(n, "it folds symbolic dimension " + syms + " into a product of dimensions that does not divide");
    }
    if (tie) stop(n, "where its symbolic dimensions go is ambiguous at the fixed shapes");
    for (size_t a = 0; a < m; ++a) {
      std::vector<int> mine;
      int64_t p = 1;
      for (size_t b = 0; b < k; ++b)
        if ((*best)[b] == a) {
          mine.push_back(bases[b]);
          p *= sizes[b];
        }
      if (!mine.empty()) out[j0 + a] = product(mine, to[j0 + a] / p);
    }
  }
  // The target: fixed sizes, 0 where the input's axis has the same label, -1 for one other
  // symbolic axis; more than one: written from the input dimensions.
  std::vector<int64_t> target(to.begin(), to.end());
  std::vector<size_t> other;
  for (size_t a = 0; a < to.size(); ++a) {
    if (out[a] == kStaticDim) continue;
    if (a < in.size() && in[a] == out[a]) {
      target[a] = 0;
    } else {
      other.push_back(a);
    }
  }
  if (other.size() == 1) target[other[0]] = -1;
  if (other.size() > 1) {
    // Shape, Slice, Concat and Mul of int64 tensors: opset 6.
    if (ctx_.default_opset < 6) stop(n, "a target computed at run time needs opset 6");
    for (size_t a = 0; a < out.size(); ++a)
      if (out[a] != kStaticDim && !input_symbols_only(out[a]))
        stop(n, "its dimension " + name(out[a]) + " is not a product of input dimensions");
    target_labels_[n] = out;
  }
  targets_[n] = std::move(target);
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
  if (!node.domain().empty() && node.domain() != "ai.onnx") stop(n, "an operator of domain '" + node.domain() + "'");
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
        p[d] = d < 2 || x[d] == kStaticDim ? x[d] : fresh(name(x[d]) + "_" + op + std::to_string(n));
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
        out[0][d] = fresh(name(x[d]) + (total > 0 ? "+" : "") + std::to_string(total));
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
    if (along) out[0][axis] = fresh("concat" + std::to_string(n) + "_" + std::to_string(axis));
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

}  // namespace tensat
