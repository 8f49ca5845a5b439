// Exporter implementation: node emission (see exporter.h for what it guarantees). The Emitter
// class is in emitter.h; its symbolic dimensions and shape values in emitter_symbolic.cpp.
#include "exporter/exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>
#include <optional>
#include <unordered_set>

#include "exporter/emit.h"
#include "exporter/emitter.h"
#include "onnx_model/dtype.h"
#include "onnx_model/shape_op.h"

namespace tensat {

namespace detail {

std::string Emitter::fresh(const std::string& base) {
  std::string n;
  do {
    n = "tensat_" + base + "_" + std::to_string(counter_++);
  } while (used_names_.count(n));
  used_names_.insert(n);
  return n;
}

onnx::NodeProto* Emitter::add_node(const std::string& op, std::vector<std::string> inputs,
                                   std::vector<std::string> outputs) {
  onnx::NodeProto* p = graph_->add_node();
  p->set_op_type(op);
  p->set_name(fresh(op));
  for (auto& i : inputs) p->add_input(i);
  for (auto& o : outputs) p->add_output(o);
  return p;
}

std::string Emitter::int64_initializer(const std::string& base, const std::vector<int64_t>& v) {
  std::string key = base + ":";
  for (auto x : v) key += std::to_string(x) + ",";
  auto it = int64_inits_.find(key);
  if (it != int64_inits_.end()) return it->second;
  std::string nm = fresh(base);
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
  int64_inits_[key] = nm;
  return nm;
}

void Emitter::add_weight_initializer(const std::string& wname) {
  if (!emitted_inits_.insert(wname).second) return;
  onnx::TensorProto* t = graph_->add_initializer();
  init_by_name_[wname] = t;
  if (auto it = ctx_.raw_initializers.find(wname); it != ctx_.raw_initializers.end()) {
    *t = it->second;  // a data type the language does not model: kept verbatim
    return;
  }
  t->set_name(wname);
  if (movable_ && movable_->contains(wname)) {
    WeightData& wd = movable_->get_mut(wname);
    t->set_data_type(onnx_dtype(wd.type.dtype));
    for (auto d : wd.type.shape) t->add_dims(d);
    t->mutable_raw_data()->swap(wd.bytes);  // moved back after writing
    return;
  }
  const WeightData& wd = weights_.get(wname);
  t->set_data_type(onnx_dtype(wd.type.dtype));
  for (auto d : wd.type.shape) t->add_dims(d);
  t->set_raw_data(wd.bytes);
}

const std::string& Emitter::name(NodeId n) {
  auto it = names_.find(n);
  if (it != names_.end()) return it->second;
  const ir::Node& nd = node(n);
  if (nd.op == Op::Input || nd.op == Op::Weight) {
    auto leaf = parse_leaf_id(psym(n, 0));
    assert(leaf);
    if (nd.op == Op::Weight) add_weight_initializer(leaf->name);
    if (nd.op == Op::Input && ctx_.shape_values.count(leaf->name)) {
      // A constant computed from the input shapes: its computation where the dimensions stay
      // symbolic (the labels say it follows them), else its value at the fixed shapes.
      if (labels_) {
        emit_shape_value(leaf->name);
      } else {
        add_weight_initializer(leaf->name);
      }
    }
    names_[n] = leaf->name;
    return names_[n];
  }
  throw ExportError("internal: node %" + std::to_string(n) + " (" + std::string(op_name(nd.op)) +
                    ") used before it was emitted");
}

std::string Emitter::out_name(NodeId n) {
  auto it = preassigned_.find(n);
  if (it != preassigned_.end()) return it->second;
  return fresh(std::string(op_name(node(n).op)));
}

std::string Emitter::f32_scalar_initializer(const std::string& base, float v) {
  std::string key = base + ":f32:" + std::to_string(std::bit_cast<uint32_t>(v));
  auto it = int64_inits_.find(key);
  if (it != int64_inits_.end()) return it->second;
  std::string nm = fresh(base);
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), sizeof(float)));
  int64_inits_[key] = nm;
  return nm;
}

// One ONNX node computing activation a (not None) of `in` into `out`.
void Emitter::add_act_node(const Act& a, const std::string& in, const std::string& out) {
  switch (a.kind) {
    case Act::Relu: add_node("Relu", {in}, {out}); return;
    case Act::Sigmoid: add_node("Sigmoid", {in}, {out}); return;
    case Act::Tanh: add_node("Tanh", {in}, {out}); return;
    case Act::Clip:
      if (ctx_.default_opset >= 11) {
        add_node("Clip", {in, f32_scalar_initializer("clip_min", a.lo), f32_scalar_initializer("clip_max", a.hi)},
                 {out});
      } else {  // Clip-6: bounds as attributes
        auto* p = add_node("Clip", {in}, {out});
        for (auto [nm, v] : {std::pair{"min", a.lo}, std::pair{"max", a.hi}}) {
          auto* at = p->add_attribute();
          at->set_name(nm);
          at->set_type(onnx::AttributeProto::FLOAT);
          at->set_f(v);
        }
      }
      return;
    case Act::Leaky: {
      auto* p = add_node("LeakyRelu", {in}, {out});
      auto* at = p->add_attribute();
      at->set_name("alpha");
      at->set_type(onnx::AttributeProto::FLOAT);
      at->set_f(a.alpha);
      return;
    }
    case Act::None: break;
  }
  throw ExportError("internal: activation none has no ONNX node");
}

std::string Emitter::apply_act(NodeId n, const std::string& y, const Act& a) {
  // y is an intermediate; the activation produces the node's real output.
  std::string out = out_name(n);
  add_act_node(a, y, out);
  return out;
}

void Emitter::emit_act(NodeId n) {
  std::string out = out_name(n);
  add_act_node(*act_from_name(psym(n, 0)), name(node(n).children[1]), out);
  names_[n] = out;
}

void Emitter::gather_concat(NodeId n, int64_t axis, std::vector<std::string>& ins) {
  for (size_t k = 1; k <= 2; ++k) {
    NodeId c = node(n).children[k];
    if (inlined_.count(c) && node(c).op == Op::Concat && pint(c, 0) == axis) {
      gather_concat(c, axis, ins);
    } else {
      ins.push_back(name(c));
    }
  }
}

void Emitter::emit_concat(NodeId n) {
  int64_t axis = pint(n, 0);
  std::vector<std::string> ins;
  gather_concat(n, axis, ins);
  std::string out = out_name(n);
  auto* p = add_node("Concat", ins, {out});
  auto* a = p->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
  names_[n] = out;
}

void Emitter::gather_split(NodeId sp, int64_t axis, std::vector<int64_t>& sizes, std::vector<std::string>& outs) {
  const auto& parts = split_parts_[sp];
  const auto& tt = g_.type(sp).tuple;
  for (size_t k = 0; k < 2; ++k) {
    int64_t p = parts[k];
    if (p >= 0) {
      // Is this part consumed by exactly one split on the same axis (inlined)?
      NodeId pid = static_cast<NodeId>(p);
      bool expanded = false;
      for (const auto& [child_split, dummy] : split_parts_) {
        (void)dummy;
        if (node(child_split).children[2] == pid && inlined_.count(pid) && pint(child_split, 0) == axis) {
          gather_split(child_split, axis, sizes, outs);
          expanded = true;
          break;
        }
      }
      if (expanded) continue;
      std::string nm = out_name(pid);
      names_[pid] = nm;
      outs.push_back(nm);
    } else {
      outs.push_back(fresh("unused"));
    }
    sizes.push_back(tt[k].shape[static_cast<size_t>(axis)]);
  }
}

void Emitter::emit_split(NodeId n) {
  int64_t axis = pint(n, 0);
  std::vector<int64_t> sizes;
  std::vector<std::string> outs;
  gather_split(n, axis, sizes, outs);
  NodeId x = node(n).children[2];
  std::vector<std::string> ins = {name(x)};
  onnx::NodeProto* p = nullptr;
  if (ctx_.default_opset >= 13) {
    ins.push_back(int64_initializer("split_sizes", sizes));
    p = add_node("Split", ins, outs);
  } else {
    p = add_node("Split", ins, outs);
    auto* a = p->add_attribute();
    a->set_name("split");
    a->set_type(onnx::AttributeProto::INTS);
    for (auto s : sizes) a->add_ints(s);
  }
  auto* a = p->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
}

void set_ints(onnx::NodeProto* p, const std::string& nm, const std::vector<int64_t>& v) {
  auto* a = p->add_attribute();
  a->set_name(nm);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void set_int(onnx::NodeProto* p, const std::string& nm, int64_t v) {
  auto* a = p->add_attribute();
  a->set_name(nm);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// ---- one emitter per operator -------------------------------------------------------------

void Emitter::emit_nothing(NodeId) {}  // parameters, the root, split parts (named by their split)

void Emitter::emit_leaf(NodeId n) { (void)name(n); }

void Emitter::emit_computed_weight(NodeId n) {
  throw ExportError("internal: " + std::string(op_name(node(n).op)) + " of computed values has no ONNX form");
}

// A per-channel scale and shift, (ewadd (ewmul x S) T) in either operand order with S and T
// f32 weights of shape [C, 1, .., 1] (rank of x minus one, C = x's dimension 1): what the
// importer makes of a BatchNormalization it cannot fold into a convolution.
std::optional<Emitter::ScaleShift> Emitter::scale_shift(NodeId n) const {
  const ir::Node& nd = node(n);
  if (nd.op != Op::Ewadd || ctx_.default_opset < 7) return std::nullopt;
  auto per_channel = [&](NodeId w, const Shape& xs) {
    if (node(w).op != Op::Weight || g_.type(w).tensor.dtype != DType::F32) return false;
    const Shape& ws = shape(w);
    if (xs.size() < 2 || ws.size() != xs.size() - 1 || ws[0] != xs[1]) return false;
    for (size_t i = 1; i < ws.size(); ++i)
      if (ws[i] != 1) return false;
    return true;
  };
  for (size_t k = 0; k < 2; ++k) {
    NodeId m = nd.children[k], t = nd.children[1 - k];
    if (node(m).op != Op::Ewmul || uses_[m] != 1 || is_output_[m]) continue;
    for (size_t j = 0; j < 2; ++j) {
      NodeId x = node(m).children[j], sc = node(m).children[1 - j];
      if (leaf_[x] || g_.type(x).tensor.dtype != DType::F32) continue;
      const Shape& xs = shape(x);
      if (per_channel(sc, xs) && per_channel(t, xs) && shape(n) == xs) return ScaleShift{x, sc, t};
    }
  }
  return std::nullopt;
}

// The bytes of weight leaf `leaf` as a fresh [c] initializer (the store's bytes may already
// have moved into the leaf's own initializer).
std::string Emitter::vector_initializer(const std::string& base, NodeId leaf, int64_t c) {
  return reshaped_initializer(base, leaf, {c});
}

// A float weight leaf's data as a new initializer of another shape (as many elements).
std::string Emitter::reshaped_initializer(const std::string& base, NodeId leaf, const Shape& to) {
  std::string wname = parse_leaf_id(psym(leaf, 0))->name;
  const std::string* bytes = &weights_.get(wname).bytes;
  if (bytes->empty())
    if (auto it = init_by_name_.find(wname); it != init_by_name_.end()) bytes = &it->second->raw_data();
  std::string nm = fresh(base);
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : to) t->add_dims(d);
  t->set_raw_data(*bytes);
  return nm;
}

std::string Emitter::filled_initializer(const std::string& base, int64_t c, float v) {
  std::string nm = fresh(base);
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(c);
  std::vector<float> vals(static_cast<size_t>(c), v);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(vals.data()), vals.size() * sizeof(float)));
  return nm;
}

// x * S + T as one BatchNormalization node, as the source model had it: one kernel that reads
// x once, where Mul + Add are two kernels and twice the memory traffic. The statistics make
// the normalization the identity exactly: mean 0, var 1 - 2^-16, epsilon 2^-16 (var + epsilon
// is 1 in float, and epsilon is above cuDNN's minimum of 1e-5).
bool Emitter::emit_batchnorm(NodeId n) {
  if (!batchnorms_.count(n)) return false;
  ScaleShift ss = *scale_shift(n);
  const int64_t c = shape(ss.x)[1];
  constexpr float kEps = 1.0f / 65536.0f;
  std::vector<std::string> ins = {name(ss.x), vector_initializer("bn_scale", ss.scale, c),
                                  vector_initializer("bn_shift", ss.shift, c), filled_initializer("bn_mean", c, 0.0f),
                                  filled_initializer("bn_var", c, 1.0f - kEps)};
  std::string out = out_name(n);
  auto* p = add_node("BatchNormalization", ins, {out});
  auto* a = p->add_attribute();
  a->set_name("epsilon");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(kEps);
  names_[n] = out;
  return true;
}

// Add or Mul of a and b, broadcast numpy's way (the language's rule). Before opset 7 an Add of
// equal shapes is written as Sum (ONNX Runtime implements Add only from 7), and broadcasting
// needs broadcast=1, with b broadcast onto a from `axis` on, its shape a contiguous run of a's:
// the operand of the result's shape goes first, and the other one's leading and trailing 1s go
// (a reshaped initializer for a weight, else a Reshape). A broadcast that form cannot write (a 1
// inside the smaller operand facing a larger dimension, one that enlarges both operands; the
// importer lowers no such legacy broadcast, lower.cpp) is refused.
void Emitter::add_binary(const char* op_type, Operand a, Operand b, const std::string& out) {
  if (ctx_.default_opset >= 7) {
    add_node(op_type, {a.name, b.name}, {out});
    return;
  }
  if (a.shape == b.shape) {
    add_node(std::string(op_type) == "Add" ? "Sum" : op_type, {a.name, b.name}, {out});
    return;
  }
  auto refuse = [&](const std::string& why) {
    return ExportError(std::string(op_type) + " at opset " + std::to_string(ctx_.default_opset) + ": " + why);
  };
  const auto out_shape = broadcast_shapes(a.shape, b.shape);
  if (!out_shape) throw refuse("the operands do not broadcast");
  if (b.shape == *out_shape) std::swap(a, b);
  if (a.shape != *out_shape) throw refuse("a broadcast that enlarges both operands cannot be written");
  const Shape& as = a.shape;
  const Shape& bs = b.shape;
  const auto [lead, end] = inner_dims(bs);
  const Shape core(bs.begin() + static_cast<std::ptrdiff_t>(lead), bs.begin() + static_cast<std::ptrdiff_t>(end));
  const size_t axis = as.size() - bs.size() + lead;
  for (size_t d = 0; d < core.size(); ++d)
    if (core[d] != as[axis + d]) throw refuse("a dimension of 1 inside the smaller operand cannot be written");
  std::string bb = b.name;
  if (core != bs) {
    if (b.node && node(*b.node).op == Op::Weight && g_.type(*b.node).tensor.dtype == DType::F32) {
      bb = reshaped_initializer("legacy_broadcast", *b.node, core);
    } else {
      if (labels_ && b.node && labels_->dynamic(*b.node))  // DimLabels stops such a graph before
        throw ExportError("internal: a legacy broadcast of an operand with symbolic dimensions");
      bb = fresh("legacy_broadcast");
      add_reshape(b.name, core, bb);
    }
  }
  auto* p = add_node(op_type, {a.name, bb}, {out});
  set_int(p, "broadcast", 1);
  if (!core.empty()) set_int(p, "axis", static_cast<int64_t>(axis));  // (a scalar needs none)
}

// Reshape to a static shape: from opset 5 the shape is an input, before it an attribute.
void Emitter::add_reshape(const std::string& in, const Shape& to, const std::string& out) {
  if (ctx_.default_opset >= 5) {
    add_node("Reshape", {in, int64_initializer("shape", to)}, {out});
  } else {
    set_ints(add_node("Reshape", {in}, {out}), "shape", to);
  }
}

void Emitter::emit_elementwise(NodeId n) {
  if (emit_batchnorm(n)) return;
  static const std::unordered_map<Op, const char*> kOnnx = {
      {Op::Ewadd, "Add"}, {Op::Ewmul, "Mul"}, {Op::Relu, "Relu"}, {Op::Tanh, "Tanh"}, {Op::Sigmoid, "Sigmoid"}};
  const ir::Node& nd = node(n);
  std::string out = out_name(n);
  if (nd.op == Op::Ewadd || nd.op == Op::Ewmul) {
    const NodeId x = nd.children[0], y = nd.children[1];
    add_binary(kOnnx.at(nd.op), {name(x), shape(x), x}, {name(y), shape(y), y}, out);
  } else {
    std::vector<std::string> ins;
    for (NodeId c : nd.children) ins.push_back(name(c));
    add_node(kOnnx.at(nd.op), ins, {out});
  }
  names_[n] = out;
}

void Emitter::emit_matmul(NodeId n) {
  const ir::Node& nd = node(n);
  Act act = *act_from_name(psym(n, 0));
  NodeId a = nd.children[1], b = nd.children[2], bias = nd.children[3];
  bool has_bias = node(bias).op != Op::Sym;
  std::string y = act == Act::None ? out_name(n) : fresh("matmul");
  if (gemm_b_[b]) {
    // B = (transpose 1_0 W), A 2-D: Gemm over W with transB = 1, as the source wrote it.
    const NodeId w = node(b).children[1];
    std::vector<std::string> ins = {name(a), name(w)};
    const Shape mn = {shape(a)[0], shape(b)[1]};
    bool broadcast = false;
    if (has_bias) {
      ins.push_back(name(bias));
      broadcast = shape(bias) != mn;
    } else if (ctx_.default_opset < 11) {  // C is optional from Gemm-11 on
      ins.push_back(filled_initializer("gemm_zero_bias", mn[1], 0.0f));
      broadcast = true;
    }
    auto* p = add_node("Gemm", ins, {y});
    set_int(p, "transB", 1);
    // Before opset 7 a C smaller than [M, N] needs broadcast=1 (numpy's rule, one way).
    if (ctx_.default_opset < 7 && broadcast) set_int(p, "broadcast", 1);
  } else if (has_bias && shape(a).size() == 2 && shape(b).size() == 2) {
    auto* p = add_node("Gemm", {name(a), name(b), name(bias)}, {y});
    // Before opset 7 a C smaller than [M, N] needs broadcast=1 (numpy's rule, one way).
    if (ctx_.default_opset < 7 && shape(bias) != Shape{shape(a)[0], shape(b)[1]}) set_int(p, "broadcast", 1);
  } else if (has_bias) {
    std::string t = fresh("matmul");
    add_node("MatMul", {name(a), name(b)}, {t});
    add_binary("Add", {t, shape(n), std::nullopt}, {name(bias), shape(bias), bias}, y);
  } else {
    add_node("MatMul", {name(a), name(b)}, {y});
  }
  names_[n] = act == Act::None ? y : apply_act(n, y, act);
}

void Emitter::emit_conv(NodeId n) {
  const ir::Node& nd = node(n);
  Act act = *act_from_name(psym(n, 3));
  NodeId x = nd.children[4], w = nd.children[5], bias = nd.children[6];
  const Shape& ws = shape(w);
  auto pads = resolve_pads(psym(n, 2), ws[2], ws[3]);
  std::vector<std::string> ins = {name(x), name(w)};
  if (node(bias).op != Op::Sym) ins.push_back(name(bias));
  std::string y = act == Act::None ? out_name(n) : fresh("conv");
  auto* p = add_node("Conv", ins, {y});
  set_ints(p, "kernel_shape", {ws[2], ws[3]});
  set_ints(p, "strides", {pint(n, 0), pint(n, 1)});
  set_ints(p, "pads", {pads->top, pads->left, pads->bottom, pads->right});
  set_int(p, "group", shape(x)[1] / ws[1]);
  names_[n] = act == Act::None ? y : apply_act(n, y, act);
}

void Emitter::emit_pool(NodeId n) {
  const ir::Node& nd = node(n);
  int64_t kh = pint(n, 0), kw = pint(n, 1);
  auto pads = resolve_pads(psym(n, 4), kh, kw);
  NodeId x = nd.children[nd.op == Op::Poolavg ? 6 : 5];
  std::string out = out_name(n);
  const Shape& xs = shape(x);
  if (nd.op == Op::Poolavg && kh == xs[2] && kw == xs[3] && *pads == Pads{}) {
    add_node("GlobalAveragePool", {name(x)}, {out});
  } else {
    auto* p = add_node(nd.op == Op::Poolmax ? "MaxPool" : "AveragePool", {name(x)}, {out});
    set_ints(p, "kernel_shape", {kh, kw});
    set_ints(p, "strides", {pint(n, 2), pint(n, 3)});
    set_ints(p, "pads", {pads->top, pads->left, pads->bottom, pads->right});
    if (nd.op == Op::Poolavg && pint(n, 5) == 1) set_int(p, "count_include_pad", 1);
  }
  names_[n] = out;
}

void Emitter::emit_transpose(NodeId n) {
  const ir::Node& nd = node(n);
  auto perm = parse_dims(g_.type(nd.children[0]));
  std::string out = out_name(n);
  auto* p = add_node("Transpose", {name(nd.children[1])}, {out});
  set_ints(p, "perm", *perm);
  names_[n] = out;
}

void Emitter::emit_reshape(NodeId n) {
  std::string out = out_name(n);
  if (const std::vector<int>* rt = labels_ ? labels_->runtime_target(n) : nullptr) {
    // A target computed from the input dimensions (dim_labels.h): fixed sizes, the product of
    // input dimensions each labelled axis is.
    const std::vector<int64_t>& fixed = labels_->reshape_target(n);
    std::vector<std::string> pieces;
    std::vector<int64_t> run;
    for (size_t a = 0; a < rt->size(); ++a) {
      if ((*rt)[a] == kStaticDim) {
        run.push_back(fixed[a]);
        continue;
      }
      if (!run.empty()) pieces.push_back(int64_initializer("fixed_dims", run));
      run.clear();
      std::string dim = input_dims(labels_->factor_names((*rt)[a]));
      if (const int64_t c = labels_->const_factor((*rt)[a]); c != 1) {
        const std::string scaled = fresh("dims");
        add_node("Mul", {dim, int64_initializer("factor", {c})}, {scaled});
        dim = scaled;
      }
      pieces.push_back(dim);
    }
    if (!run.empty()) pieces.push_back(int64_initializer("fixed_dims", run));
    const std::string target = fresh("target");
    set_int(add_node("Concat", pieces, {target}), "axis", 0);
    add_node("Reshape", {name(node(n).children[1]), target}, {out});
    names_[n] = out;
    return;
  }
  add_reshape(name(node(n).children[1]), labels_ ? labels_->reshape_target(n) : shape(n), out);
  names_[n] = out;
}

void Emitter::emit_enlarge(NodeId n) {
  const ir::Node& nd = node(n);
  const Shape& ws = shape(nd.children[0]);
  const Shape& rs = shape(nd.children[1]);
  int64_t ph = (rs[2] - ws[2]) / 2, pw = (rs[3] - ws[3]) / 2;
  const std::vector<int64_t> pads = {0, 0, ph, pw, 0, 0, ph, pw};
  std::string out = out_name(n);
  if (ctx_.default_opset >= 11) {
    add_node("Pad", {name(nd.children[0]), int64_initializer("pads", pads)}, {out});
  } else {  // Pad-2 (Pad-1): the pads as an attribute (zero padding is its default mode and value)
    set_ints(add_node("Pad", {name(nd.children[0])}, {out}), ctx_.default_opset >= 2 ? "pads" : "paddings", pads);
  }
  names_[n] = out;
}

void Emitter::emit_opaque(NodeId n) {
  const ir::Node& nd = node(n);
  auto id = parse_opaque_id(psym(n, 0));
  const OpaqueNode& on = ctx_.opaque.at(static_cast<size_t>(id->index));
  size_t child = 1;
  std::vector<std::string> ins;
  for (int i = 0; i < on.node.input_size(); ++i)
    ins.push_back(on.node.input(i).empty() ? std::string() : name(nd.children[child++]));
  for (const auto& imp : on.implicit_inputs) {
    // A subgraph reads this tensor by its original name: make sure that name exists.
    const std::string have = name(nd.children[child++]);
    if (have != imp && identities_.insert(imp).second) add_node("Identity", {have}, {imp});
  }
  onnx::NodeProto* p = graph_->add_node();
  *p = on.node;
  for (const auto& vi : on.output_info) {
    if (std::count(ctx_.output_names.begin(), ctx_.output_names.end(), vi.name())) continue;
    onnx::ValueInfoProto* v = graph_->add_value_info();
    *v = vi;
    if (!labels_ || !v->type().has_tensor_type()) continue;
    // The output's part: its position among the node's outputs.
    const auto at = std::find(on.node.output().begin(), on.node.output().end(), vi.name());
    const auto part = static_cast<size_t>(at - on.node.output().begin());
    const ValueType& t = g_.type(n);
    const Shape& s = t.kind == Kind::Tuple ? t.tuple.at(part).shape : t.tensor.shape;
    if (v->type().tensor_type().has_shape() && v->type().tensor_type().shape().dim_size() == static_cast<int>(s.size()))
      set_symbolic_shape(v->mutable_type()->mutable_tensor_type()->mutable_shape(), s,
                         labels_->of(n, t.kind == Kind::Tuple ? part : 0), nullptr);
  }
  for (int i = 0; i < on.node.input_size(); ++i) p->set_input(i, ins[static_cast<size_t>(i)]);
  if (on.node.output_size() == 1) {
    names_[n] = on.node.output(0);
  } else {
    tuple_names_[n] = {on.node.output().begin(), on.node.output().end()};
  }
}

void Emitter::emit_select(NodeId n) {
  names_[n] = tuple_names_.at(node(n).children[1]).at(static_cast<size_t>(pint(n, 0)));
}

// The emitter of each operator, like the importer's table of lowerings.
const std::array<Emitter::EmitFn, kNumOps>& Emitter::emitters() {
  static const std::array<EmitFn, kNumOps> table = [] {
    std::array<EmitFn, kNumOps> t{};
    auto set = [&](std::initializer_list<Op> ops, EmitFn f) {
      for (Op op : ops) t[static_cast<size_t>(op)] = f;
    };
    set({Op::Num, Op::Sym, Op::Noop, Op::Split0, Op::Split1}, &Emitter::emit_nothing);
    set({Op::Input, Op::Weight}, &Emitter::emit_leaf);
    set({Op::Zeros, Op::Merge}, &Emitter::emit_computed_weight);
    set({Op::Ewadd, Op::Ewmul, Op::Relu, Op::Tanh, Op::Sigmoid}, &Emitter::emit_elementwise);
    set({Op::Act}, &Emitter::emit_act);
    set({Op::Matmul}, &Emitter::emit_matmul);
    set({Op::Conv}, &Emitter::emit_conv);
    set({Op::Poolmax, Op::Poolavg}, &Emitter::emit_pool);
    set({Op::Transpose}, &Emitter::emit_transpose);
    set({Op::Reshape}, &Emitter::emit_reshape);
    set({Op::Enlarge}, &Emitter::emit_enlarge);
    set({Op::Concat}, &Emitter::emit_concat);
    set({Op::Split}, &Emitter::emit_split);
    set({Op::Opaque}, &Emitter::emit_opaque);
    set({Op::Select}, &Emitter::emit_select);
    for (int i = 0; i < kNumOps; ++i) assert(t[static_cast<size_t>(i)] && "an operator without an emitter");
    return t;
  }();
  return table;
}

void Emitter::emit(NodeId n) { (this->*emitters()[static_cast<size_t>(node(n).op)])(n); }

// A graph output declared without a shape or element type (the checker requires both), or
// with a fixed dimension that disagrees with the static shape (after --input-shape), gets
// the type the graph computes. Symbolic dimensions of the right rank are kept.
void Emitter::fix_output_types(const std::vector<NodeId>& outs) {
  for (int i = 0; i < graph_->output_size() && i < static_cast<int>(outs.size()); ++i) {
    const ValueType& vt = g_.type(outs[static_cast<size_t>(i)]);
    if (vt.kind != Kind::Tensor) continue;
    auto* tp = graph_->mutable_output(i)->mutable_type();
    if (tp->value_case() != onnx::TypeProto::kTensorType && tp->value_case() != onnx::TypeProto::VALUE_NOT_SET)
      continue;
    auto* tt = tp->mutable_tensor_type();
    if (tt->elem_type() == 0 && vt.tensor.dtype != DType::Other) tt->set_elem_type(onnx_dtype(vt.tensor.dtype));
    const Shape& s = vt.tensor.shape;
    bool ok = tt->has_shape() && tt->shape().dim_size() == static_cast<int>(s.size());
    for (int d = 0; ok && d < tt->shape().dim_size(); ++d) {
      const auto& dim = tt->shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() != s[static_cast<size_t>(d)]) ok = false;
    }
    if (ok) continue;
    tt->clear_shape();
    auto* sh = tt->mutable_shape();
    for (auto d : s) sh->add_dim()->set_dim_value(d);
  }
}

// IR < 4 (ModelContext::initializers_as_inputs): every initializer is declared a graph input as
// well, after the real inputs, as the ONNX checker requires of that IR version.
void Emitter::declare_initializers_as_inputs() {
  std::unordered_set<std::string> declared;
  for (const auto& i : graph_->input()) declared.insert(i.name());
  for (const auto& t : graph_->initializer()) {
    if (!declared.insert(t.name()).second) continue;
    auto* vi = graph_->add_input();
    vi->set_name(t.name());
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    auto* sh = tt->mutable_shape();
    for (auto d : t.dims()) sh->add_dim()->set_dim_value(d);
  }
}

onnx::ModelProto Emitter::run(ExportStats& stats) {
  stats_ = &stats;
  // Header: everything of the source model but its graph content.
  model_ = ctx_.header;
  graph_ = model_.mutable_graph();
  graph_->clear_node();
  graph_->clear_initializer();
  graph_->clear_value_info();
  graph_->clear_sparse_initializer();
  for (const auto& t : ctx_.overridable_initializers) *graph_->add_initializer() = t;

  // Reserve every name that must not be reused.
  for (const auto& i : graph_->input()) used_names_.insert(i.name());
  for (const auto& o : ctx_.output_names) used_names_.insert(o);
  for (const auto& on : ctx_.opaque)
    for (const auto& o : on.node.output()) used_names_.insert(o);
  for (const auto& nm : weights_.names()) used_names_.insert(nm);
  for (const auto& [nm, t] : ctx_.raw_initializers) used_names_.insert(nm);

  size_t N = g_.size();
  // The exporter only writes: weight-only computation was folded into weights before
  // (pipeline/weight_folding.h). What remains weight-only is parameters and weight leaves.
  // (Except the transposed weight matrices a Gemm reads with transB = 1: lang/graph.h,
  // transposed_weights_read_as_b.)
  const std::vector<bool> wo = weight_only_nodes(g_);
  gemm_b_ = ir::transposed_weights_read_as_b(g_, /*matrix_a=*/true);
  leaf_.assign(N, false);
  for (NodeId i = 0; i < N; ++i) {
    const Op op = node(i).op;
    leaf_[i] = is_param_leaf(op) || op == Op::Weight;
    if (gemm_b_[i]) inlined_.insert(i);
    if (wo[i] && !leaf_[i] && !gemm_b_[i])
      throw ExportError("internal: node %" + std::to_string(i) + " (" + std::string(op_name(op)) +
                        ") computes weights only; fold_weights (pipeline/weight_folding.h) must run before export");
  }
  uses_.assign(N, 0);
  is_output_.assign(N, false);
  for (NodeId i = 0; i < N; ++i) {
    const ir::Node& nd = node(i);
    if (leaf_[i]) continue;
    for (auto c : nd.children) uses_[c]++;
    if (nd.op == Op::Split0 || nd.op == Op::Split1) {
      auto& parts = split_parts_.try_emplace(nd.children[0], std::array<int64_t, 2>{-1, -1}).first->second;
      parts[nd.op == Op::Split0 ? 0 : 1] = i;
    }
    if (nd.op == Op::Split) split_parts_.try_emplace(i, std::array<int64_t, 2>{-1, -1});
  }
  std::vector<NodeId> outs = g_.outputs();
  if (outs.size() != ctx_.output_names.size())
    throw ExportError("internal: graph has " + std::to_string(outs.size()) + " outputs, the model declares " +
                      std::to_string(ctx_.output_names.size()));
  for (auto o : outs) is_output_[o] = true;
  fix_output_types(outs);
  if (opts_.keep_symbolic_dims && !symbolic_input_dims(ctx_).empty()) {
    labels_.emplace(g_, ctx_, weights_);
    declare_symbolic_interface(outs, stats);
  }

  // Per-channel scale + shift pairs are written as one BatchNormalization (their ewmul inlined).
  for (NodeId i = 0; i < N; ++i) {
    if (leaf_[i] || node(i).op != Op::Ewadd) continue;
    if (auto ss = scale_shift(i)) {
      batchnorms_.insert(i);
      for (NodeId c : node(i).children)
        if (c != ss->shift) inlined_.insert(c);  // the ewmul
    }
  }

  // Inline nested concats / chained splits on the same axis with a single consumer.
  for (NodeId i = 0; i < N; ++i) {
    const ir::Node& nd = node(i);
    if (leaf_[i]) continue;
    if (nd.op == Op::Concat) {
      for (size_t k = 1; k <= 2; ++k) {
        NodeId c = nd.children[k];
        if (node(c).op == Op::Concat && pint(c, 0) == pint(i, 0) && uses_[c] == 1 &&
            !is_output_[c])
          inlined_.insert(c);
      }
    }
    if (nd.op == Op::Split) {
      NodeId x = nd.children[2];
      const ir::Node& xn = node(x);
      if ((xn.op == Op::Split0 || xn.op == Op::Split1) && uses_[x] == 1 && !is_output_[x] &&
          pint(xn.children[0], 0) == pint(i, 0))
        inlined_.insert(x);
    }
  }

  // Graph outputs take their names directly where the node is ours and not shared.
  std::vector<bool> needs_identity(outs.size(), false);
  for (size_t i = 0; i < outs.size(); ++i) {
    NodeId o = outs[i];
    Op op = node(o).op;
    bool ours = op != Op::Input && op != Op::Weight && op != Op::Opaque && op != Op::Select;
    if (ours && !preassigned_.count(o)) {
      preassigned_[o] = ctx_.output_names[i];
    } else {
      needs_identity[i] = true;
    }
  }

  for (NodeId i = 0; i < N; ++i) {
    if (leaf_[i] || inlined_.count(i)) continue;
    // A split of an inlined part is emitted as part of its root split.
    if (node(i).op == Op::Split && inlined_.count(node(i).children[2])) continue;
    emit(i);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!needs_identity[i]) continue;
    const std::string& have = name(outs[i]);
    if (have == ctx_.output_names[i]) continue;
    add_node("Identity", {have}, {ctx_.output_names[i]});
  }
  if (ctx_.initializers_as_inputs) declare_initializers_as_inputs();
  for (const auto& n : graph_->node()) stats.op_counts[n.op_type()]++;
  return std::move(model_);
}

onnx::ModelProto emit_model(const ir::Graph& g, const WeightStore& weights, const ModelContext& ctx,
                            WeightStore* movable, const ExportOptions& opts, ExportStats& stats) {
  Emitter e(g, weights, ctx, movable, opts);
  return e.run(stats);
}

}  // namespace detail

onnx::ModelProto export_model(const ir::Graph& g, const WeightStore& weights, const ModelContext& ctx,
                              const ExportOptions& opts, ExportStats* stats) {
  ExportStats local;
  ExportStats& st = stats ? *stats : local;
  onnx::ModelProto m = detail::emit_model(g, weights, ctx, nullptr, opts, st);
  if (opts.run_checker) {
    st.checker_skipped_reason = check_model(m);
    st.checker_ran = st.checker_skipped_reason.empty();
  }
  return m;
}

}  // namespace tensat
