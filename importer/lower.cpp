// Lowering of covered ONNX operators onto the tensor language (see importer.h).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include "importer/importer_impl.h"
#include "importer/onnx_graph.h"
#include "importer/tensor_proto.h"

namespace tensat::detail {

namespace {

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_i(const onnx::NodeProto& n, const std::string& name, int64_t def) {
  const auto* a = attr(n, name);
  return a ? a->i() : def;
}
float attr_f(const onnx::NodeProto& n, const std::string& name, float def) {
  const auto* a = attr(n, name);
  return a ? a->f() : def;
}
std::string attr_s(const onnx::NodeProto& n, const std::string& name, const std::string& def) {
  const auto* a = attr(n, name);
  return a ? a->s() : def;
}
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

[[noreturn]] void cannot(const std::string& why) { throw NotLowerable{why}; }
[[noreturn]] void invalid(const std::string& why) { throw InvalidNode{why}; }

Shape tensor_shape(Importer& im, ir::NodeId id) {
  const ValueType& t = im.type_of(id);
  if (t.kind != Kind::Tensor) cannot("operand is not a tensor");
  return t.tensor.shape;
}

void require_f32(Importer& im, ir::NodeId id) {
  const ValueType& t = im.type_of(id);
  if (t.kind != Kind::Tensor || t.tensor.dtype != DType::F32) cannot("operand is not float32");
}

std::vector<int64_t> int_values(const WeightData& w) {
  auto v = integer_values(w);
  if (!v) cannot("integer tensor expected");
  return *v;
}

std::vector<float> f32_values(const WeightData& w) {
  if (w.type.dtype != DType::F32) cannot("float32 constant expected");
  return std::vector<float>(w.f32(), w.f32() + w.count());
}

ir::NodeId act_sym(Importer& im, Act a) { return im.g().sym(std::string(act_name(a))); }

// Window attributes of Conv / pooling, resolved to explicit pads.
struct Window {
  int64_t kh, kw, sh, sw;
  Pads pads;
};

Window window_attrs(Importer& im, const onnx::NodeProto& n, ir::NodeId xid, const Shape& x, int64_t kh,
                    int64_t kw) {
  Window w{kh, kw, 1, 1, {}};
  auto strides = attr_ints(n, "strides");
  if (!strides.empty()) {
    if (strides.size() != 2) cannot("strides must have 2 values");
    w.sh = strides[0];
    w.sw = strides[1];
  }
  for (auto d : attr_ints(n, "dilations"))
    if (d != 1) cannot("dilation != 1");
  std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    auto pads = attr_ints(n, "pads");
    if (!pads.empty()) {
      if (pads.size() != 4) cannot("pads must have 4 values");
      w.pads = Pads{pads[0], pads[1], pads[2], pads[3]};
    }
  } else if (auto_pad == "VALID") {
    w.pads = Pads{};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto same = [&](int64_t in, int64_t k, int64_t s, int64_t& lo, int64_t& hi) {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
      lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    };
    same(x[2], kh, w.sh, w.pads.top, w.pads.bottom);
    same(x[3], kw, w.sw, w.pads.left, w.pads.right);
    // With a stride the padding depends on the size (its remainder), fixed here.
    if (w.sh > 1) im.fixed_dim_use(xid, 2, n, auto_pad + " padding with stride " + std::to_string(w.sh));
    if (w.sw > 1) im.fixed_dim_use(xid, 3, n, auto_pad + " padding with stride " + std::to_string(w.sw));
  } else {
    cannot("auto_pad " + auto_pad);
  }
  return w;
}

// ---- operators --------------------------------------------------------------------------

void lower_conv(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0), w = im.value(n, 1);
  require_f32(im, x);
  require_f32(im, w);
  const Shape xs = tensor_shape(im, x);
  const Shape ws = tensor_shape(im, w);
  if (xs.size() != 4 || ws.size() != 4) cannot("only 2-D convolution (4-D tensors) is covered");
  auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != ws[2] || ks[1] != ws[3])) invalid("kernel_shape " + shape_str(Shape(ks.begin(), ks.end())) + " differs from the weight's " + shape_str(Shape{ws[2], ws[3]}));
  int64_t group = attr_i(n, "group", 1);
  if (group <= 0 || ws[1] * group != xs[1])
    invalid("group " + std::to_string(group) + " does not fit input channels " + std::to_string(xs[1]) +
            " and weight " + shape_str(ws) + " (weight dimension 1 must be channels / group)");
  Window win = window_attrs(im, n, x, xs, ws[2], ws[3]);
  ir::NodeId bias = im.g().sym("none");
  if (im.has_input(n, 2)) {
    bias = im.value(n, 2);
    require_f32(im, bias);
  }
  ir::NodeId y = im.add(Op::Conv, {im.g().num(win.sh), im.g().num(win.sw),
                                   im.g().sym(pad_symbol(win.pads, ws[2], ws[3])), act_sym(im, Act::None), x, w,
                                   bias});
  im.bind(n.output(0), y);
}

void lower_batchnorm(Importer& im, const onnx::NodeProto& n) {
  if (n.output_size() > 1) {
    for (int i = 1; i < n.output_size(); ++i)
      if (!n.output(i).empty() && im.consumers(n.output(i)) > 0) cannot("training-mode outputs");
  }
  if (attr_i(n, "training_mode", 0) != 0) cannot("training_mode");
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  const WeightData* scale = im.constant(n, 1);
  const WeightData* bias = im.constant(n, 2);
  const WeightData* mean = im.constant(n, 3);
  const WeightData* var = im.constant(n, 4);
  if (!scale || !bias || !mean || !var) cannot("scale/bias/mean/var are not constants");
  float eps = attr_f(n, "epsilon", 1e-5f);
  const Shape xs = tensor_shape(im, x);
  if (xs.size() < 2) cannot("input rank < 2");
  int64_t c = xs[1];
  for (const WeightData* p : {scale, bias, mean, var})
    if (p->type.shape != Shape{c}) cannot("parameter shape is not [C]");
  auto sc = f32_values(*scale), bi = f32_values(*bias), mu = f32_values(*mean), va = f32_values(*var);
  std::vector<float> s(static_cast<size_t>(c)), t(static_cast<size_t>(c));
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = sc[i] / std::sqrt(va[i] + eps);
    t[i] = bi[i] - mu[i] * s[i];
  }
  std::string base = n.name().empty() ? n.output(0) : n.name();

  // Fold into a preceding plain convolution that only this node reads.
  const ir::Node xn = im.g().node(x);  // copy: adding nodes below may reallocate
  if (xn.op == Op::Conv && im.is_plain_conv(x) && im.consumers(n.input(0)) == 1 &&
      im.g().node(xn.children[3]).sym == "none") {
    ir::NodeId w = xn.children[5], b = xn.children[6];
    const ir::Node wn = im.g().node(w);
    bool w_const = wn.op == Op::Weight;
    bool b_ok = im.g().node(b).op == Op::Weight || im.g().node(b).op == Op::Sym;
    if (w_const && b_ok) {
      auto wleaf = parse_leaf_id(im.g().node(wn.children[0]).sym);
      const WeightData& wd = im.weights().get(wleaf->name);
      std::vector<float> wv = f32_values(wd);
      size_t per = wv.size() / static_cast<size_t>(c);
      for (size_t o = 0; o < static_cast<size_t>(c); ++o)
        for (size_t k = 0; k < per; ++k) wv[o * per + k] *= s[o];
      std::vector<float> bv(static_cast<size_t>(c), 0.0f);
      if (im.g().node(b).op == Op::Weight) {
        auto bleaf = parse_leaf_id(im.g().node(im.g().node(b).children[0]).sym);
        bv = f32_values(im.weights().get(bleaf->name));
      }
      for (size_t o = 0; o < bv.size(); ++o) bv[o] = bv[o] * s[o] + t[o];
      ir::NodeId nw = im.new_weight(base + ".folded_weight", wd.type.shape, std::move(wv));
      ir::NodeId nb = im.new_weight(base + ".folded_bias", {c}, std::move(bv));
      std::vector<ir::NodeId> kids = xn.children;
      kids[5] = nw;
      kids[6] = nb;
      im.bind(n.output(0), im.add(Op::Conv, kids));
      im.stats().folded_batchnorms++;
      return;
    }
  }
  Shape bshape{c};
  for (size_t i = 2; i < xs.size(); ++i) bshape.push_back(1);
  ir::NodeId sw = im.new_weight(base + ".scale", bshape, s);
  ir::NodeId tw = im.new_weight(base + ".shift", bshape, t);
  im.bind(n.output(0), im.add(Op::Ewadd, {im.add(Op::Ewmul, {x, sw}), tw}));
}

ir::NodeId transpose2d(Importer& im, ir::NodeId x) { return im.add(Op::Transpose, {im.g().sym("1_0"), x}); }

void lower_gemm(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId a = im.value(n, 0), b = im.value(n, 1);
  require_f32(im, a);
  require_f32(im, b);
  if (tensor_shape(im, a).size() != 2 || tensor_shape(im, b).size() != 2) cannot("Gemm operands must be 2-D");
  float alpha = attr_f(n, "alpha", 1.0f), beta = attr_f(n, "beta", 1.0f);
  bool ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
  std::string base = n.name().empty() ? n.output(0) : n.name();
  if (alpha != 1.0f) {
    const WeightData* bw = im.constant(n, 1);
    if (!bw) cannot("alpha != 1 with a non-constant B");
    auto v = f32_values(*bw);
    for (auto& e : v) e *= alpha;
    b = im.new_weight(base + ".B_scaled", bw->type.shape, std::move(v));
  }
  if (ta) a = transpose2d(im, a);
  if (tb) b = transpose2d(im, b);
  int64_t ncols = tensor_shape(im, b)[1];
  ir::NodeId bias = im.g().sym("none");
  std::optional<ir::NodeId> add_after;
  if (im.has_input(n, 2)) {
    const WeightData* cw = im.constant(n, 2);
    if (cw) {
      auto v = f32_values(*cw);
      if (beta != 1.0f)
        for (auto& e : v) e *= beta;
      const Shape& cs = cw->type.shape;
      if (cs == Shape{ncols} || cs == Shape{1, ncols}) {
        bias = beta == 1.0f && cs == Shape{ncols} ? im.value(n, 2) : im.new_weight(base + ".C", {ncols}, std::move(v));
      } else {
        add_after = beta == 1.0f ? im.value(n, 2) : im.new_weight(base + ".C", cs, std::move(v));
      }
    } else {
      if (beta != 1.0f) cannot("beta != 1 with a non-constant C");
      add_after = im.value(n, 2);
      require_f32(im, *add_after);
    }
  }
  ir::NodeId y = im.add(Op::Matmul, {act_sym(im, Act::None), a, b, bias});
  if (add_after) y = im.add(Op::Ewadd, {y, *add_after});
  im.bind(n.output(0), y);
}

void lower_matmul(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId a = im.value(n, 0), b = im.value(n, 1);
  require_f32(im, a);
  require_f32(im, b);
  if (tensor_shape(im, a).size() < 2 || tensor_shape(im, b).size() < 2) cannot("1-D MatMul operand");
  im.bind(n.output(0), im.add(Op::Matmul, {act_sym(im, Act::None), a, b, im.g().sym("none")}));
}

// MatMul + Add of a vector of length N = the product's last dimension (nn.Linear as PyTorch
// exports it for inputs of rank > 2, Q/K/V projections): the matmul's bias, so that merges of
// products sharing an input keep their biases (matmul-merge-bias). `m` is the product, `b`
// the other operand of the Add; the bias is [N] or [1, .., 1, N] of a rank not above the
// product's (so broadcasting does not change the sum's shape).
std::optional<ir::NodeId> matmul_with_bias(Importer& im, const onnx::NodeProto& n, int mi) {
  ir::NodeId m = im.value(n, mi), b = im.value(n, 1 - mi);
  const ir::Node mn = im.g().node(m);  // copy: adding nodes may reallocate
  if (mn.op != Op::Matmul || im.consumers(n.input(mi)) != 1) return std::nullopt;
  if (im.g().node(mn.children[0]).sym != "none" || im.g().node(mn.children[3]).op != Op::Sym) return std::nullopt;
  const Shape out = tensor_shape(im, m);
  const Shape bs = tensor_shape(im, b);
  const int64_t cols = out.back();
  if (bs.empty() || bs.size() > out.size() || bs.back() != cols || num_elements(bs) != cols) return std::nullopt;
  ir::NodeId bias = b;
  if (bs.size() != 1) {
    const WeightData* bw = im.constant(n, 1 - mi);
    if (!bw) return std::nullopt;
    bias = im.new_weight((n.name().empty() ? n.output(0) : n.name()) + ".bias", {cols}, f32_values(*bw));
  }
  std::vector<ir::NodeId> kids = mn.children;
  kids[3] = bias;
  return im.add(Op::Matmul, kids);
}

// Before opset 7, Add and Mul broadcast only with broadcast=1, one way (b onto a), and with an
// `axis` b's dimensions start at that axis of a, not at the end (numpy's rule, which the
// language's element-wise ops follow): b [C] with axis=1 on [N,C,H,W] is per channel. Such a b
// is reshaped to a's rank ([C,1,1]); anything else that numpy would read differently stays
// opaque (kept verbatim).
ir::NodeId legacy_broadcast_operand(Importer& im, const onnx::NodeProto& n, ir::NodeId a, ir::NodeId b) {
  const Shape as = tensor_shape(im, a), bs = tensor_shape(im, b);
  if (attr_i(n, "broadcast", 0) == 0) {
    if (as != bs) cannot("shapes differ without broadcast=1 (opset < 7)");
    return b;
  }
  if (bs.size() > as.size()) cannot("broadcast=1 with b of a higher rank than a");
  const auto ra = static_cast<int64_t>(as.size()), rb = static_cast<int64_t>(bs.size());
  int64_t axis = attr(n, "axis") ? attr_i(n, "axis", 0) : ra - rb;
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra) cannot("broadcast axis out of range");
  // b's dimensions match a's from the axis on; 1s only at b's ends (a 1 inside facing a larger
  // dimension is not legacy broadcasting, and the exporter could not write it back).
  const auto [lead, end] = inner_dims(bs);
  for (size_t d = lead; d < end; ++d)
    if (bs[d] != as[static_cast<size_t>(axis) + d]) cannot("broadcast=1: b's dimensions do not match a's from the axis");
  if (axis == ra - rb) return b;  // numpy's alignment
  Shape aligned(static_cast<size_t>(ra), 1);
  for (int64_t d = 0; d < rb; ++d) aligned[static_cast<size_t>(axis + d)] = bs[static_cast<size_t>(d)];
  ir::NodeId s = aligned.size() == 1 ? im.g().num(aligned[0]) : im.g().sym(dims_to_sym(aligned));
  return im.add(Op::Reshape, {s, b});
}

void lower_binary(Importer& im, const onnx::NodeProto& n, Op op) {
  ir::NodeId a = im.value(n, 0), b = im.value(n, 1);
  require_f32(im, a);
  require_f32(im, b);
  const ir::NodeId b_read = b;
  if (im.opset() < 7) b = legacy_broadcast_operand(im, n, a, b);
  // (matmul_with_bias reads the node's inputs as numpy aligns them: not where the legacy axis
  // moved b.)
  if (op == Op::Ewadd && b == b_read) {
    for (int mi : {0, 1}) {
      if (auto y = matmul_with_bias(im, n, mi)) {
        im.bind(n.output(0), *y);
        return;
      }
    }
  }
  im.bind(n.output(0), im.add(op, {a, b}));
}

// Sum of one or more tensors: a chain of element-wise adds (the residual add of old exports,
// PyTorch's of 2017-2018 and the Caffe2 model zoo's). Before opset 8 every input has the same
// shape; from 8 on they broadcast as Add does.
void lower_sum(Importer& im, const onnx::NodeProto& n) {
  if (n.input_size() < 1) cannot("no inputs");
  ir::NodeId acc = im.value(n, 0);
  require_f32(im, acc);
  for (int i = 1; i < n.input_size(); ++i) {
    ir::NodeId x = im.value(n, i);
    require_f32(im, x);
    if (im.opset() < 8 && tensor_shape(im, x) != tensor_shape(im, acc)) cannot("shapes differ (opset < 8)");
    acc = im.add(Op::Ewadd, {acc, x});
  }
  im.bind(n.output(0), acc);
}

// Clip with constant bounds and LeakyRelu: the parameterized activations (lang/op.h Act), as
// the unary `act` node that conv/matmul fusion rules absorb.
void lower_clip(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (im.opset() < 11) {
    lo = attr_f(n, "min", lo);
    hi = attr_f(n, "max", hi);
  } else {
    for (int i : {1, 2}) {
      if (!im.has_input(n, i)) continue;
      const WeightData* c = im.constant(n, i);
      if (!c) cannot(std::string(i == 1 ? "min" : "max") + " is not a constant");
      if (c->type.dtype != DType::F32 || c->count() != 1) cannot("bound is not a float32 scalar");
      (i == 1 ? lo : hi) = c->f32()[0];
    }
  }
  if (std::isnan(lo) || std::isnan(hi)) cannot("NaN bound");
  im.bind(n.output(0), im.add(Op::Act, {im.g().sym(act_name(Act::clip(lo, hi))), x}));
}

void lower_leaky_relu(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  float alpha = attr_f(n, "alpha", 0.01f);
  if (std::isnan(alpha)) cannot("NaN alpha");
  im.bind(n.output(0), im.add(Op::Act, {im.g().sym(act_name(Act::leaky(alpha))), x}));
}

void lower_unary(Importer& im, const onnx::NodeProto& n, Op op) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  im.bind(n.output(0), im.add(op, {x}));
}

void lower_pool(Importer& im, const onnx::NodeProto& n, Op op) {
  if (n.output_size() > 1 && !n.output(1).empty() && im.consumers(n.output(1)) > 0) cannot("MaxPool Indices output");
  if (attr_i(n, "ceil_mode", 0) != 0) cannot("ceil_mode");
  if (attr_i(n, "storage_order", 0) != 0) cannot("storage_order");
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  const Shape xs = tensor_shape(im, x);
  if (xs.size() != 4) cannot("only 2-D pooling is covered");
  auto ks = attr_ints(n, "kernel_shape");
  if (ks.size() != 2) cannot("kernel_shape must have 2 values");
  Window w = window_attrs(im, n, x, xs, ks[0], ks[1]);
  auto& g = im.g();
  std::vector<ir::NodeId> kids = {g.num(w.kh), g.num(w.kw), g.num(w.sh), g.num(w.sw),
                                  g.sym(pad_symbol(w.pads, w.kh, w.kw))};
  if (op == Op::Poolavg) kids.push_back(g.num(attr_i(n, "count_include_pad", 0) != 0 ? 1 : 0));
  kids.push_back(x);
  im.bind(n.output(0), im.add(op, kids));
}

void lower_global_avg(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  const Shape xs = tensor_shape(im, x);
  if (xs.size() != 4) cannot("only 4-D GlobalAveragePool is covered");
  auto& g = im.g();
  im.bind(n.output(0), im.add(Op::Poolavg, {g.num(xs[2]), g.num(xs[3]), g.num(1), g.num(1), g.sym("valid"),
                                            g.num(0), x}));
}

int64_t norm_axis(int64_t axis, size_t rank) {
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) cannot("axis out of range");
  return axis;
}

void lower_concat(Importer& im, const onnx::NodeProto& n) {
  std::vector<ir::NodeId> xs;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) continue;
    ir::NodeId v = im.value(n, i);
    require_f32(im, v);
    xs.push_back(v);
  }
  if (xs.empty()) cannot("no inputs");
  int64_t axis = norm_axis(attr_i(n, "axis", 0), tensor_shape(im, xs[0]).size());
  ir::NodeId acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    if (tensor_shape(im, xs[i])[static_cast<size_t>(axis)] == 0) cannot("empty operand");
    acc = im.add(Op::Concat, {im.g().num(axis), acc, xs[i]});
  }
  im.bind(n.output(0), acc);
}

void lower_split(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  const Shape xs = tensor_shape(im, x);
  int64_t axis = norm_axis(attr_i(n, "axis", 0), xs.size());
  int64_t dim = xs[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes = attr_ints(n, "split");
  if (im.has_input(n, 1)) {
    const WeightData* s = im.size_constant(n, 1);
    if (!s) cannot("split sizes are not constant");
    sizes = int_values(*s);
  }
  int outs = n.output_size();
  if (sizes.empty()) {
    int64_t parts = attr_i(n, "num_outputs", outs);
    if (parts != outs || parts <= 0) cannot("num_outputs differs from the number of outputs");
    auto chunks = split_chunks(dim, parts);
    if (!chunks) cannot("a negative last split part");
    sizes = *chunks;
  }
  if (static_cast<int>(sizes.size()) != outs) cannot("split sizes do not match the outputs");
  int64_t total = 0;
  for (auto s : sizes) {
    if (s <= 0) cannot("empty split part");
    total += s;
  }
  if (total != dim)
    invalid("split sizes sum to " + std::to_string(total) + ", the axis has length " + std::to_string(dim));
  ir::NodeId cur = x;
  auto& g = im.g();
  for (int i = 0; i + 1 < outs; ++i) {
    ir::NodeId sp = im.add(Op::Split, {g.num(axis), g.num(sizes[static_cast<size_t>(i)]), cur});
    if (!n.output(i).empty()) im.bind(n.output(i), im.add(Op::Split0, {sp}));
    cur = im.add(Op::Split1, {sp});
  }
  if (!n.output(outs - 1).empty()) im.bind(n.output(outs - 1), cur);
}

// Slice with constant arguments and unit steps: parts of binary splits (a chunk of a tensor,
// as PyTorch exports chunk / narrow / x[:, a:b]). An axis cut at both ends is split twice.
void lower_slice(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  require_f32(im, x);
  const Shape xs = tensor_shape(im, x);
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    starts = attr_ints(n, "starts");
    ends = attr_ints(n, "ends");
    axes = attr_ints(n, "axes");
  } else {
    auto get = [&](int i, std::vector<int64_t>& v) {
      if (!im.has_input(n, i)) return;
      const WeightData* c = im.size_constant(n, i);
      if (!c) cannot("slice arguments are not constant");
      v = int_values(*c);
    };
    get(1, starts);
    get(2, ends);
    get(3, axes);
    get(4, steps);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    invalid("starts, ends, axes and steps differ in length");
  std::vector<bool> seen(xs.size(), false);
  ir::NodeId cur = x;
  auto& g = im.g();
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = norm_axis(axes[k], xs.size());
    if (seen[static_cast<size_t>(axis)]) invalid("axis " + std::to_string(axes[k]) + " repeated");
    seen[static_cast<size_t>(axis)] = true;
    if (steps[k] != 1) cannot("step != 1");
    int64_t d = xs[static_cast<size_t>(axis)], s = starts[k], e = ends[k];
    // Covering the axis whatever its size: from 0 (or -infinity) to +infinity, as exporters
    // write x[:, a:]. Any other bounds that cover it at this size may not at another.
    constexpr int64_t kAnySize = int64_t{1} << 31;
    const bool every_size = (s == 0 || s <= -kAnySize) && e >= kAnySize - 1;
    if (s < 0) s += d;
    if (e < 0) e += d;
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    if (e <= s) cannot("empty slice");
    if (s == 0 && e == d && !every_size)
      im.fixed_dim_use(cur, static_cast<size_t>(axis), n,
                       "a Slice [" + std::to_string(starts[k]) + ", " + std::to_string(ends[k]) + ") covers axis " +
                           std::to_string(axis) + " at its fixed size " + std::to_string(d));
    if (s > 0) {
      cur = im.add(Op::Split1, {im.add(Op::Split, {g.num(axis), g.num(s), cur})});
      e -= s;
      d -= s;
    }
    if (e < d) cur = im.add(Op::Split0, {im.add(Op::Split, {g.num(axis), g.num(e), cur})});
  }
  im.bind(n.output(0), cur);
}

void lower_reshape_to(Importer& im, const onnx::NodeProto& n, ir::NodeId x, const Shape& target) {
  if (target == tensor_shape(im, x)) {
    im.bind(n.output(0), x);
    return;
  }
  ir::NodeId s = target.size() == 1 ? im.g().num(target[0]) : im.g().sym(dims_to_sym(target));
  im.bind(n.output(0), im.add(Op::Reshape, {s, x}));
}

void lower_reshape(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  const Shape xs = tensor_shape(im, x);
  if (im.type_of(x).tensor.dtype != DType::F32) cannot("operand is not float32");
  const WeightData* sw = im.size_constant(n, 1, true);
  if (!sw) cannot("target shape is not constant");
  auto target = int_values(*sw);
  bool allowzero = attr_i(n, "allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= xs.size()) cannot("0 in target shape beyond input rank");
      target[i] = xs[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) invalid("two -1 in the target shape");
      infer = static_cast<int>(i);
    } else if (target[i] <= 0) {
      cannot("zero-size target dimension");
    } else {
      known *= target[i];
    }
  }
  int64_t total = num_elements(xs);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      invalid("target shape " + shape_str(target) + " cannot hold the input's " + std::to_string(total) + " elements");
    target[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    invalid("target shape " + shape_str(target) + " has " + std::to_string(known) + " elements, the input " +
            std::to_string(total));
  }
  if (target.empty()) cannot("reshape to a scalar");
  lower_reshape_to(im, n, x, target);
}

void lower_flatten(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  if (im.type_of(x).tensor.dtype != DType::F32) cannot("operand is not float32");
  const Shape xs = tensor_shape(im, x);
  int64_t axis = attr_i(n, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(xs.size());
  if (axis < 0 || axis > static_cast<int64_t>(xs.size())) cannot("axis out of range");
  int64_t a = 1, b = 1;
  for (size_t i = 0; i < xs.size(); ++i) (static_cast<int64_t>(i) < axis ? a : b) *= xs[i];
  lower_reshape_to(im, n, x, {a, b});
}

void lower_transpose(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  if (im.type_of(x).tensor.dtype != DType::F32) cannot("operand is not float32");
  const Shape xs = tensor_shape(im, x);
  auto perm = attr_ints(n, "perm");
  if (perm.empty())
    for (size_t i = xs.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity && perm.size() == xs.size()) {
    im.bind(n.output(0), x);
    return;
  }
  ir::NodeId p = perm.size() == 1 ? im.g().num(perm[0]) : im.g().sym(dims_to_sym(perm));
  im.bind(n.output(0), im.add(Op::Transpose, {p, x}));
}

void lower_identity(Importer& im, const onnx::NodeProto& n) { im.bind(n.output(0), im.value(n, 0)); }

void lower_dropout(Importer& im, const onnx::NodeProto& n) {
  // An optional output that is named but read by nothing is as good as absent.
  if (n.output_size() > 1 && !n.output(1).empty() && im.consumers(n.output(1)) > 0) cannot("mask output is used");
  if (im.has_input(n, 2)) {
    const WeightData* t = im.constant(n, 2);
    if (!t || t->bytes.empty() || t->bytes[0] != 0) cannot("training_mode input may be true");
  }
  lower_identity(im, n);
}

void lower_constant(Importer& im, const onnx::NodeProto& n) {
  const onnx::AttributeProto* a = nullptr;
  for (const auto& at : n.attribute()) a = &at;
  if (n.attribute_size() != 1 || !a) cannot("Constant needs exactly one attribute");
  std::string base = n.output(0);
  auto& ws = im.weights();
  std::string name = ws.fresh_name(base);
  WeightData w;
  if (a->name() == "value" && a->has_t()) {
    onnx::TensorProto t = a->t();
    t.set_name(name);
    // Reuse the initializer conversion through a temporary model-less path.
    const auto dt = t.data_type();
    if (dt != onnx::TensorProto::FLOAT && dt != onnx::TensorProto::INT64 && dt != onnx::TensorProto::INT32)
      cannot("Constant of element type " + std::to_string(dt));
    w.type.dtype = dt == onnx::TensorProto::FLOAT ? DType::F32 : dt == onnx::TensorProto::INT64 ? DType::I64 : DType::I32;
    for (auto d : t.dims()) w.type.shape.push_back(d);
    size_t cnt = static_cast<size_t>(num_elements(w.type.shape)), es = dtype_size(w.type.dtype);
    if (t.has_raw_data()) {
      w.bytes = t.raw_data();
    } else if (w.type.dtype == DType::F32 && static_cast<size_t>(t.float_data_size()) == cnt) {
      w.bytes.resize(cnt * 4);
      if (cnt) std::memcpy(w.bytes.data(), t.float_data().data(), cnt * 4);
    } else if (w.type.dtype == DType::I64 && static_cast<size_t>(t.int64_data_size()) == cnt) {
      w.bytes.resize(cnt * 8);
      if (cnt) std::memcpy(w.bytes.data(), t.int64_data().data(), cnt * 8);
    } else if (w.type.dtype == DType::I32 && static_cast<size_t>(t.int32_data_size()) == cnt) {
      w.bytes.resize(cnt * 4);
      if (cnt) std::memcpy(w.bytes.data(), t.int32_data().data(), cnt * 4);
    }
    if (w.bytes.size() != cnt * es) cannot("Constant data size does not match its shape");
  } else if (a->name() == "value_float") {
    w.type = TensorType{DType::F32, {}};
    float f = a->f();
    w.bytes.assign(reinterpret_cast<const char*>(&f), 4);
  } else if (a->name() == "value_floats") {
    w.type = TensorType{DType::F32, {a->floats_size()}};
    w.bytes.assign(reinterpret_cast<const char*>(a->floats().data()), static_cast<size_t>(a->floats_size()) * 4);
  } else if (a->name() == "value_int") {
    w.type = TensorType{DType::I64, {}};
    int64_t v = a->i();
    w.bytes.assign(reinterpret_cast<const char*>(&v), 8);
  } else if (a->name() == "value_ints") {
    w.type = TensorType{DType::I64, {a->ints_size()}};
    w.bytes.assign(reinterpret_cast<const char*>(a->ints().data()), static_cast<size_t>(a->ints_size()) * 8);
  } else {
    cannot("Constant attribute " + a->name());
  }
  for (auto d : w.type.shape)
    if (d <= 0) cannot("Constant with an empty dimension");
  TensorType type = w.type;
  ws.put(name, std::move(w));
  im.bind(n.output(0), im.g().weight(name, type));
}

// Shape of a tensor: shapes are static, so it is a constant (an int64 weight), which lets a
// following Reshape (or any reader of the shape) see a constant.
void lower_shape(Importer& im, const onnx::NodeProto& n) {
  ir::NodeId x = im.value(n, 0);
  const ValueType& t = im.type_of(x);
  if (t.kind != Kind::Tensor) cannot("operand is not a tensor");
  const Shape& xs = t.tensor.shape;
  int64_t r = static_cast<int64_t>(xs.size());
  int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  if (end <= start) cannot("empty shape slice");
  std::vector<int64_t> v(xs.begin() + start, xs.begin() + end);
  WeightData w;
  w.type = TensorType{DType::I64, {static_cast<int64_t>(v.size())}};
  w.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
  std::string name = im.weights().fresh_name(n.output(0));
  TensorType type = w.type;
  im.weights().put(name, std::move(w));
  im.bind(n.output(0), im.g().weight(name, type));
}

}  // namespace

bool lower_node(Importer& im, const onnx::NodeProto& n) {
  static const std::unordered_map<std::string, std::function<void(Importer&, const onnx::NodeProto&)>> table = {
      {"Conv", lower_conv},
      {"BatchNormalization", lower_batchnorm},
      {"Gemm", lower_gemm},
      {"MatMul", lower_matmul},
      {"Add", [](Importer& i, const onnx::NodeProto& n) { lower_binary(i, n, Op::Ewadd); }},
      {"Mul", [](Importer& i, const onnx::NodeProto& n) { lower_binary(i, n, Op::Ewmul); }},
      {"Sum", lower_sum},
      {"Relu", [](Importer& i, const onnx::NodeProto& n) { lower_unary(i, n, Op::Relu); }},
      {"Tanh", [](Importer& i, const onnx::NodeProto& n) { lower_unary(i, n, Op::Tanh); }},
      {"Sigmoid", [](Importer& i, const onnx::NodeProto& n) { lower_unary(i, n, Op::Sigmoid); }},
      {"Clip", lower_clip},
      {"LeakyRelu", lower_leaky_relu},
      {"Slice", lower_slice},
      {"MaxPool", [](Importer& i, const onnx::NodeProto& n) { lower_pool(i, n, Op::Poolmax); }},
      {"AveragePool", [](Importer& i, const onnx::NodeProto& n) { lower_pool(i, n, Op::Poolavg); }},
      {"GlobalAveragePool", lower_global_avg},
      {"Concat", lower_concat},
      {"Split", lower_split},
      {"Reshape", lower_reshape},
      {"Flatten", lower_flatten},
      {"Transpose", lower_transpose},
      {"Identity", lower_identity},
      {"Dropout", lower_dropout},
      {"Constant", lower_constant},
      {"Shape", lower_shape},
  };
  auto it = table.find(n.op_type());
  if (it == table.end()) return false;
  if (n.output_size() == 0) cannot("no outputs");
  it->second(im, n);
  return true;
}

}  // namespace tensat::detail
