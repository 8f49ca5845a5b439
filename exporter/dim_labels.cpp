// DimLabels implementation (see dim_labels.h): the labels, the language's operators, reshapes.
// The opaque nodes' rules are in dim_labels_opaque.cpp.
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

}  // namespace

std::map<std::string, std::map<size_t, std::string>> symbolic_input_dims(const ModelContext& ctx) {
  std::map<std::string, std::map<size_t, std::string>> out;
  // A dimension without a name gets INPUT_dimAXIS, never a name another input declares (one
  // name is one size: x [?, 16] beside y ["x_dim0", 16] would tie y's batch to x's).
  std::set<std::string> taken;
  auto named = [](const onnx::TensorShapeProto::Dimension& d) { return d.has_dim_param() && !d.dim_param().empty(); };
  for (const auto& in : ctx.declared_inputs)
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
      for (const auto& d : in.type().tensor_type().shape().dim())
        if (symbolic(d) && named(d)) taken.insert(d.dim_param());
  for (const auto& in : ctx.declared_inputs) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      if (!symbolic(shape.dim(d))) continue;
      std::string nm = named(shape.dim(d)) ? shape.dim(d).dim_param() : in.name() + "_dim" + std::to_string(d);
      if (!named(shape.dim(d))) {
        while (taken.count(nm)) nm += "'";
        taken.insert(nm);
      }
      out[in.name()][static_cast<size_t>(d)] = nm;
    }
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
  register_inputs();
  labels_.resize(g.size());
  // Children come before their parents (ir::Graph is built bottom-up).
  for (ir::NodeId n = 0; n < g.size(); ++n) label_node(n);

}

DimLabels::DimLabels(const ir::Graph& g, const ModelContext& ctx, const WeightStore& weights,
                     const std::vector<ir::NodeId>& roots)
    : g_(g), ctx_(ctx), weights_(weights), inputs_(symbolic_input_dims(ctx)) {
  find_symbol_values();
  register_inputs();
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

// The inputs' symbols first: a derived label (derived()) never takes one's name.
void DimLabels::register_inputs() {
  for (const auto& [input, axes] : inputs_)
    for (const auto& [axis, symbol] : axes) fresh(symbol);
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

int DimLabels::derived(int in, const std::string& how) {
  // One label per (in, how): the same computation on the same label is the same dimension. Its
  // name is never another label's (an input may call a dimension anything, and "2*H_w1s2p2"
  // may be a window over the product 2*H or twice a window over H): a suffix where taken.
  const auto key = std::make_pair(in, how);
  if (auto it = derived_.find(key); it != derived_.end()) return it->second;
  std::string nm = (in == kStaticDim ? std::string() : name(in)) + how;
  while (by_name_.count(nm)) nm += "'";
  const int id = fresh(nm);
  derived_.emplace(key, id);
  return id;
}

int DimLabels::window(int in, int64_t span, int64_t stride, int64_t pads, bool same) {
  if (stride == 1 && (same || pads == span)) return in;
  // floor((in + pads - span - 1) / stride) + 1, or ceil(in / stride): a function of in alone.
  return derived(in, same ? "_same_s" + std::to_string(stride)
                          : "_w" + std::to_string(span) + "s" + std::to_string(stride) + "p" + std::to_string(pads));
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

// `out` (of shape os) with `bias` broadcast onto its trailing dimensions, as an Add's operand.
DimLabelList DimLabels::with_bias(ir::NodeId n, DimLabelList out, const Shape& os, ir::NodeId bias) const {
  const DimLabelList& b = of(bias);
  const Shape& bs = g_.type(bias).tensor.shape;
  if (b.size() > out.size()) stop(n, "a bias of higher rank than the product");
  const size_t off = out.size() - b.size();
  for (size_t d = 0; d < b.size(); ++d) out[d + off] = merge_dims(n, {{out[d + off], os[d + off]}, {b[d], bs[d]}});
  return out;
}

// [.., M, K] x [.., K, N]: the batch dimensions broadcast, M and N follow their operands, and
// K must be the same (fixed, or one symbol) in both.
DimLabelList DimLabels::matmul(ir::NodeId n, ir::NodeId a, ir::NodeId b, size_t rank, bool trans_a,
                               bool trans_b) const {
  DimLabelList la = of(a);
  DimLabelList lb = of(b);
  if (trans_a) std::swap(la[la.size() - 1], la[la.size() - 2]);
  if (trans_b) std::swap(lb[lb.size() - 1], lb[lb.size() - 2]);
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
      if (nd.children.size() > 3 && g_.type(nd.children[3]).kind == Kind::Tensor)
        out[0] = with_bias(n, out[0], t.tensor.shape, nd.children[3]);
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
        out[0][d] = window(in[d], k - 1, s, pad);
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
            out[0][d] = derived(kStaticDim, "concat" + std::to_string(n) + "_" + std::to_string(d));
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


}  // namespace tensat
