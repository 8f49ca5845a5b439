// Decoding opaque ONNX nodes into kernel descriptions (see opaque_decode.h). The ONNX
// operator specification (onnx.ai/onnx/operators) is the reference for every default and
// normalization here.
#include "exec/opaque_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace tensat::exec::opaque {

namespace {

struct Unsupported {
  std::string why;
};
[[noreturn]] void fail(const std::string& why) { throw Unsupported{why}; }

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to && d < s.size(); ++d) p *= s[d];
  return p;
}

int64_t norm_axis(int64_t axis, size_t rank, const char* what) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) fail(std::string(what) + " out of range");
  return axis;
}

// The view of one node's inputs: ONNX slots -> children, types and constant values.
struct Node {
  const OpaqueOp& op;
  const std::vector<const ValueType*>& kids;
  const std::vector<TensorType>& outs;
  const std::vector<const WeightData*>& consts;

  bool given(int slot) const { return op.child_of_slot(slot) >= 0; }
  size_t child(int slot) const {
    int k = op.child_of_slot(slot);
    if (k < 0) fail("input " + std::to_string(slot) + " is missing");
    return static_cast<size_t>(k);
  }
  const TensorType& in(int slot) const {
    const ValueType* v = kids.at(child(slot));
    if (v->kind != Kind::Tensor) fail("input " + std::to_string(slot) + " is not a tensor");
    return v->tensor;
  }
  const TensorType& out() const { return outs.at(0); }
  const WeightData& constant(int slot, const char* what) const {
    const WeightData* w = consts.at(child(slot));
    if (!w) fail(std::string(what) + " is not a constant");
    return *w;
  }
  std::vector<int64_t> ints(int slot, const char* what) const {
    auto v = int_values(constant(slot, what));
    if (!v) fail(std::string(what) + " is not an integer tensor");
    return *v;
  }
  float scalar(int slot, const char* what) const {
    auto v = scalar_f32(constant(slot, what));
    if (!v) fail(std::string(what) + " is not a float scalar");
    return *v;
  }
  std::vector<float> floats(int slot, const char* what) const {
    const WeightData& w = constant(slot, what);
    if (w.type.dtype != DType::F32) fail(std::string(what) + " is not float32");
    return std::vector<float>(w.f32(), w.f32() + w.count());
  }
};

Decoded with_data(Desc d, std::vector<size_t> data) { return Decoded{std::move(d), std::move(data), false}; }

Decoded decode_view(const Node& n) {
  const TensorType& x = n.in(0);
  if (x.dtype != n.out().dtype) fail("element type changes");
  if (num_elements(x.shape) != num_elements(n.out().shape)) fail("element count changes");
  return with_data(View{}, {n.child(0)});
}

Decoded decode_unary(const Node& n, UnaryFn fn) {
  Unary u{fn, 0, 0};
  const std::string& t = n.op.op_type;
  if (t == "Clip") {
    u.a = std::numeric_limits<float>::lowest();
    u.b = std::numeric_limits<float>::max();
    if (n.op.opset < 11) {
      u.a = n.op.attr_f("min", u.a);
      u.b = n.op.attr_f("max", u.b);
    } else {
      if (n.given(1)) u.a = n.scalar(1, "Clip min");
      if (n.given(2)) u.b = n.scalar(2, "Clip max");
    }
  } else if (t == "LeakyRelu") {
    u.a = n.op.attr_f("alpha", 0.01f);
  } else if (t == "Elu") {
    u.a = n.op.attr_f("alpha", 1.0f);
  } else if (t == "HardSigmoid") {
    u.a = n.op.attr_f("alpha", 0.2f);
    u.b = n.op.attr_f("beta", 0.5f);
  } else if (t == "Gelu") {
    std::string approx = n.op.attr_s("approximate", "none");
    if (approx == "tanh") u.fn = UnaryFn::GeluTanh;
    else if (approx != "none") fail("Gelu approximate '" + approx + "'");
  }
  if (n.in(0).shape != n.out().shape || n.in(0).dtype != n.out().dtype) fail("output type differs from the input's");
  return with_data(u, {n.child(0)});
}

Decoded decode_binary(const Node& n, BinaryFn fn) {
  if (n.kids.size() != 2) fail("expects two inputs");
  const TensorType &a = n.in(0), &b = n.in(1);
  if (a.dtype != b.dtype || a.dtype != n.out().dtype) fail("mixed element types");
  // Before opset 7 a broadcast places b from its `axis` on, not numpy's way.
  if (n.op.opset < 7 && a.shape != b.shape) fail("legacy broadcasting (opset < 7)");
  auto s = broadcast_shapes(a.shape, b.shape);
  if (!s || *s != n.out().shape) fail("the shapes do not broadcast to the output's");
  return with_data(Binary{fn, a.shape, b.shape, n.out().shape}, {n.child(0), n.child(1)});
}

Decoded decode_softmax(const Node& n, bool log) {
  const Shape& s = n.in(0).shape;
  if (s.empty()) fail("scalar input");
  Softmax d;
  d.log = log;
  if (n.op.opset < 13) {
    auto axis = static_cast<size_t>(norm_axis(n.op.attr_i("axis", 1), s.size(), "axis"));
    d.outer = product(s, 0, axis);
    d.n = product(s, axis, s.size());
    d.inner = 1;
  } else {
    auto axis = static_cast<size_t>(norm_axis(n.op.attr_i("axis", -1), s.size(), "axis"));
    d.outer = product(s, 0, axis);
    d.n = s[axis];
    d.inner = product(s, axis + 1, s.size());
  }
  return with_data(d, {n.child(0)});
}

Decoded decode_reduce(const Node& n, ReduceKind kind, std::optional<std::vector<int64_t>> axes, bool noop_empty) {
  const Shape& s = n.in(0).shape;
  Reduce r{kind, s, std::vector<bool>(s.size(), false)};
  if (!axes || axes->empty()) {
    if (noop_empty) return decode_view(n);
    std::fill(r.reduced.begin(), r.reduced.end(), true);
  } else {
    for (int64_t a : *axes) {
      auto d = static_cast<size_t>(norm_axis(a, s.size(), "reduce axis"));
      if (r.reduced[d]) fail("repeated reduce axis");
      r.reduced[d] = true;
    }
  }
  int64_t kept = 1;
  for (size_t d = 0; d < s.size(); ++d)
    if (!r.reduced[d]) kept *= s[d];
  if (kept != num_elements(n.out().shape)) fail("output shape does not match the reduction");
  return with_data(r, {n.child(0)});
}

Decoded decode_reduce_op(const Node& n, ReduceKind kind, int64_t input_axes_from) {
  std::optional<std::vector<int64_t>> axes;
  bool noop = false;
  if (n.op.opset >= input_axes_from) {
    if (n.given(1)) axes = n.ints(1, "reduce axes");
    noop = n.op.attr_i("noop_with_empty_axes", 0) != 0;
  } else {
    axes = n.op.attr_ints("axes");
  }
  return decode_reduce(n, kind, axes, noop);
}

Decoded decode_global_pool(const Node& n, ReduceKind kind) {
  const Shape& s = n.in(0).shape;
  if (s.size() < 3) fail("global pooling of a tensor of rank < 3");
  std::vector<int64_t> axes;
  for (size_t d = 2; d < s.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  return decode_reduce(n, kind, axes, false);
}

Decoded decode_batchnorm(const Node& n) {
  if (n.op.attr_i("training_mode", 0) != 0) fail("training mode");
  if (n.op.attr_i("spatial", 1) != 1) fail("spatial = 0");
  const Shape& s = n.in(0).shape;
  if (s.size() < 2) fail("input rank < 2");
  Affine a;
  a.outer = s[0];
  a.channels = s[1];
  a.inner = product(s, 2, s.size());
  auto scale = n.floats(1, "scale"), bias = n.floats(2, "bias"), mean = n.floats(3, "mean"), var = n.floats(4, "var");
  const auto c = static_cast<size_t>(a.channels);
  if (scale.size() != c || bias.size() != c || mean.size() != c || var.size() != c) fail("parameters are not [C]");
  const float eps = n.op.attr_f("epsilon", 1e-5f);
  a.scale.resize(c);
  a.shift.resize(c);
  for (size_t i = 0; i < c; ++i) {
    a.scale[i] = scale[i] / std::sqrt(var[i] + eps);
    a.shift[i] = bias[i] - mean[i] * a.scale[i];
  }
  return with_data(a, {n.child(0)});
}

Decoded decode_pad(const Node& n) {
  Pad p;
  std::string mode = n.op.attr_s("mode", "constant");
  if (mode == "constant") p.mode = PadMode::Constant;
  else if (mode == "reflect") p.mode = PadMode::Reflect;
  else if (mode == "edge") p.mode = PadMode::Edge;
  else fail("Pad mode '" + mode + "'");
  p.in = n.in(0).shape;
  p.out = n.out().shape;
  const size_t r = p.in.size();
  std::vector<int64_t> pads, axes;
  if (n.op.opset < 11) {
    auto a = n.op.attr_ints(n.op.has("pads") ? "pads" : "paddings");
    if (!a) fail("no pads");
    pads = *a;
    p.value = n.op.attr_f("value", 0.0f);
  } else {
    pads = n.ints(1, "pads");
    if (n.given(2)) p.value = n.scalar(2, "constant_value");
    if (n.given(3)) axes = n.ints(3, "axes");
  }
  if (axes.empty())
    for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
  if (pads.size() != 2 * axes.size()) fail("pads do not match the axes");
  p.begin.assign(r, 0);
  std::vector<int64_t> end(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto d = static_cast<size_t>(norm_axis(axes[i], r, "pad axis"));
    p.begin[d] = pads[i];
    end[d] = pads[i + axes.size()];
  }
  for (size_t d = 0; d < r; ++d) {
    if (p.in[d] + p.begin[d] + end[d] != p.out[d]) fail("padded shape does not match the output");
    if (p.mode != PadMode::Constant && p.in[d] == 0 && p.out[d] > 0) fail("padding an empty dimension");
  }
  return with_data(p, {n.child(0)});
}

Decoded decode_pool(const Node& n, bool max) {
  const Shape& x = n.in(0).shape;
  const Shape& y = n.out().shape;
  if (x.size() != 4 || y.size() != 4) fail("only 2-D pooling (4-D tensors)");
  auto ks = n.op.attr_ints("kernel_shape");
  if (!ks || ks->size() != 2) fail("kernel_shape must have 2 values");
  if (auto dil = n.op.attr_ints("dilations"))
    for (int64_t d : *dil)
      if (d != 1) fail("dilations != 1");
  auto strides = n.op.attr_ints("strides").value_or(std::vector<int64_t>{1, 1});
  if (strides.size() != 2) fail("strides must have 2 values");
  Pool p;
  p.max = max;
  p.count_include_pad = !max && n.op.attr_i("count_include_pad", 0) != 0;
  p.n = x[0], p.c = x[1], p.h = x[2], p.w = x[3];
  p.kh = (*ks)[0], p.kw = (*ks)[1], p.sh = strides[0], p.sw = strides[1];
  p.oh = y[2], p.ow = y[3];
  if (y[0] != x[0] || y[1] != x[1] || p.kh <= 0 || p.kw <= 0 || p.sh <= 0 || p.sw <= 0) fail("invalid pooling geometry");
  std::string auto_pad = n.op.attr_s("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    auto pads = n.op.attr_ints("pads").value_or(std::vector<int64_t>{0, 0, 0, 0});
    if (pads.size() != 4) fail("pads must have 4 values");
    p.pt = pads[0], p.pl = pads[1], p.pb = pads[2], p.pr = pads[3];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto split = [&](int64_t in, int64_t k, int64_t s, int64_t* lo, int64_t* hi) {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + k - in);
      *lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      *hi = total - *lo;
    };
    split(p.h, p.kh, p.sh, &p.pt, &p.pb);
    split(p.w, p.kw, p.sw, &p.pl, &p.pr);
  } else if (auto_pad != "VALID") {
    fail("auto_pad " + auto_pad);
  }
  return with_data(p, {n.child(0)});
}

Decoded decode_gather(const Node& n) {
  const Shape& s = n.in(0).shape;
  if (s.empty()) fail("gather from a scalar");
  auto axis = static_cast<size_t>(norm_axis(n.op.attr_i("axis", 0), s.size(), "axis"));
  Gather g;
  g.outer = product(s, 0, axis);
  g.axis_len = s[axis];
  g.inner = product(s, axis + 1, s.size());
  g.indices = n.ints(1, "indices");
  for (int64_t& i : g.indices) {
    if (i < 0) i += g.axis_len;
    if (i < 0 || i >= g.axis_len) fail("index out of range");
  }
  if (g.outer * static_cast<int64_t>(g.indices.size()) * g.inner != num_elements(n.out().shape))
    fail("output shape does not match the indices");
  return with_data(g, {n.child(0)});
}

Decoded decode_slice(const Node& n) {
  Slice sl;
  sl.in = n.in(0).shape;
  const size_t r = sl.in.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.op.opset < 10) {
    auto s = n.op.attr_ints("starts"), e = n.op.attr_ints("ends");
    if (!s || !e) fail("no starts/ends");
    starts = *s, ends = *e;
    axes = n.op.attr_ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = n.ints(1, "starts");
    ends = n.ints(2, "ends");
    if (n.given(3)) axes = n.ints(3, "axes");
    if (n.given(4)) steps = n.ints(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail("starts, ends, axes and steps differ in length");
  sl.out = sl.in;
  sl.start.assign(r, 0);
  sl.step.assign(r, 1);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto d = static_cast<size_t>(norm_axis(axes[i], r, "slice axis"));
    if (seen[d]) fail("repeated slice axis");
    seen[d] = true;
    const int64_t dim = sl.in[d], st = steps[i];
    if (st == 0) fail("slice step 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t len = 0;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      len = s > e ? (s - e - st - 1) / -st : 0;
    }
    sl.start[d] = s;
    sl.step[d] = st;
    sl.out[d] = len;
  }
  if (sl.out != n.out().shape) fail("sliced shape " + shape_str(sl.out) + " differs from the output's " + shape_str(n.out().shape));
  return with_data(sl, {n.child(0)});
}

Decoded decode_concat(const Node& n) {
  Concat c;
  c.out = n.out().shape;
  std::vector<size_t> data;
  for (size_t k = 0; k < n.kids.size(); ++k) {
    const ValueType* v = n.kids[k];
    if (v->kind != Kind::Tensor || v->tensor.dtype != n.out().dtype) fail("input types differ");
    c.ins.push_back(v->tensor.shape);
    data.push_back(k);
  }
  if (c.ins.empty()) fail("no inputs");
  c.axis = norm_axis(n.op.attr_i("axis", 0), c.out.size(), "axis");
  int64_t total = 0;
  for (const Shape& s : c.ins) {
    if (s.size() != c.out.size()) fail("input ranks differ");
    total += s[static_cast<size_t>(c.axis)];
  }
  if (total != c.out[static_cast<size_t>(c.axis)]) fail("output shape does not match the inputs");
  return with_data(c, data);
}

Decoded decode_expand(const Node& n) {
  const TensorType& x = n.in(0);
  auto s = broadcast_shapes(x.shape, n.out().shape);
  if (!s || *s != n.out().shape || x.dtype != n.out().dtype) fail("input does not broadcast to the output");
  return with_data(Expand{x.shape, n.out().shape}, {n.child(0)});
}

Decoded decode_transpose(const Node& n) {
  const TensorType& x = n.in(0);
  Transpose t{x.shape, {}};
  if (auto p = n.op.attr_ints("perm")) {
    t.perm = *p;
  } else {
    for (size_t d = x.shape.size(); d-- > 0;) t.perm.push_back(static_cast<int64_t>(d));
  }
  if (t.perm.size() != x.shape.size()) fail("perm does not match the rank");
  std::vector<bool> seen(t.perm.size(), false);
  Shape out;
  for (int64_t& p : t.perm) {
    p = norm_axis(p, x.shape.size(), "perm entry");
    if (seen[static_cast<size_t>(p)]) fail("perm repeats an axis");
    seen[static_cast<size_t>(p)] = true;
    out.push_back(x.shape[static_cast<size_t>(p)]);
  }
  if (out != n.out().shape || x.dtype != n.out().dtype) fail("output type does not match the permutation");
  return with_data(t, {n.child(0)});
}

Decoded decode_cast(const Node& n) {
  const TensorType& x = n.in(0);
  if (x.dtype == n.out().dtype) return decode_view(n);
  return with_data(Host{}, {n.child(0)});
}

using Decoder = std::function<Decoded(const Node&)>;

const std::map<std::string, Decoder>& decoders() {
  static const std::map<std::string, Decoder> m = [] {
    std::map<std::string, Decoder> d;
    for (const char* v : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) d[v] = decode_view;
    const std::pair<const char*, UnaryFn> unary[] = {
        {"Sqrt", UnaryFn::Sqrt},     {"Erf", UnaryFn::Erf},         {"Exp", UnaryFn::Exp},
        {"Log", UnaryFn::Log},       {"Neg", UnaryFn::Neg},         {"Abs", UnaryFn::Abs},
        {"Reciprocal", UnaryFn::Reciprocal}, {"Floor", UnaryFn::Floor}, {"Ceil", UnaryFn::Ceil},
        {"Relu", UnaryFn::Relu},     {"Sigmoid", UnaryFn::Sigmoid}, {"Tanh", UnaryFn::Tanh},
        {"Softplus", UnaryFn::Softplus}, {"Clip", UnaryFn::Clip},   {"LeakyRelu", UnaryFn::LeakyRelu},
        {"Elu", UnaryFn::Elu},       {"HardSigmoid", UnaryFn::HardSigmoid}, {"HardSwish", UnaryFn::HardSwish},
        {"Gelu", UnaryFn::Gelu}};
    for (const auto& [name, fn] : unary) d[name] = [fn = fn](const Node& n) { return decode_unary(n, fn); };
    const std::pair<const char*, BinaryFn> binary[] = {{"Add", BinaryFn::Add}, {"Sub", BinaryFn::Sub},
                                                       {"Mul", BinaryFn::Mul}, {"Div", BinaryFn::Div},
                                                       {"Pow", BinaryFn::Pow}, {"Max", BinaryFn::Max},
                                                       {"Min", BinaryFn::Min}};
    for (const auto& [name, fn] : binary) d[name] = [fn = fn](const Node& n) { return decode_binary(n, fn); };
    d["Softmax"] = [](const Node& n) { return decode_softmax(n, false); };
    d["LogSoftmax"] = [](const Node& n) { return decode_softmax(n, true); };
    d["ReduceMean"] = [](const Node& n) { return decode_reduce_op(n, ReduceKind::Mean, 18); };
    d["ReduceMax"] = [](const Node& n) { return decode_reduce_op(n, ReduceKind::Max, 18); };
    d["ReduceSum"] = [](const Node& n) { return decode_reduce_op(n, ReduceKind::Sum, 13); };
    d["GlobalAveragePool"] = [](const Node& n) { return decode_global_pool(n, ReduceKind::Mean); };
    d["GlobalMaxPool"] = [](const Node& n) { return decode_global_pool(n, ReduceKind::Max); };
    d["BatchNormalization"] = decode_batchnorm;
    d["Pad"] = decode_pad;
    d["MaxPool"] = [](const Node& n) { return decode_pool(n, true); };
    d["AveragePool"] = [](const Node& n) { return decode_pool(n, false); };
    d["Gather"] = decode_gather;
    d["Slice"] = decode_slice;
    d["Concat"] = decode_concat;
    d["Expand"] = decode_expand;
    d["Transpose"] = decode_transpose;
    d["Cast"] = decode_cast;
    for (const char* v : {"Shape", "Size", "ConstantOfShape"}) d[v] = [](const Node&) { return with_data(Host{}, {}); };
    return d;
  }();
  return m;
}

}  // namespace

std::optional<std::vector<int64_t>> int_values(const WeightData& w) {
  std::vector<int64_t> v(w.count());
  if (w.type.dtype == DType::I64 && w.bytes.size() == v.size() * 8) {
    if (!v.empty()) std::memcpy(v.data(), w.bytes.data(), v.size() * 8);
    return v;
  }
  if (w.type.dtype == DType::I32 && w.bytes.size() == v.size() * 4) {
    for (size_t i = 0; i < v.size(); ++i) {
      int32_t x;
      std::memcpy(&x, w.bytes.data() + i * 4, 4);
      v[i] = x;
    }
    return v;
  }
  return std::nullopt;
}

std::optional<float> scalar_f32(const WeightData& w) {
  if (w.count() != 1) return std::nullopt;
  if (w.type.dtype == DType::F32 && w.bytes.size() == 4) return *w.f32();
  if (w.type.dtype == DType::F64 && w.bytes.size() == 8) {
    double d;
    std::memcpy(&d, w.bytes.data(), 8);
    return static_cast<float>(d);
  }
  return std::nullopt;
}

bool is_data_movement(const Desc& d) {
  return std::holds_alternative<View>(d) || std::holds_alternative<Gather>(d) || std::holds_alternative<Slice>(d) ||
         std::holds_alternative<Concat>(d) || std::holds_alternative<Expand>(d) || std::holds_alternative<Transpose>(d);
}

DecodeResult decode(const OpaqueOp& op, const std::vector<const ValueType*>& kids, const std::vector<TensorType>& outs,
                    const std::vector<const WeightData*>& consts) {
  DecodeResult r;
  if (!op.domain.empty() && op.domain != "ai.onnx") {
    r.why = op.op_type + " of domain '" + op.domain + "'";
    return r;
  }
  auto it = decoders().find(op.op_type);
  if (it == decoders().end()) {
    r.why = op.op_type + ": no kernel";
    return r;
  }
  if (outs.size() != 1) {
    r.why = op.op_type + ": more than one output";
    return r;
  }
  if (consts.size() != kids.size() || op.slots.size() != kids.size()) {
    r.why = op.op_type + ": inputs do not match its description";
    return r;
  }
  try {
    Decoded d = it->second(Node{op, kids, outs, consts});
    d.f32 = !std::holds_alternative<Host>(d.desc) && outs[0].dtype == DType::F32;
    for (size_t k : d.data)
      if (kids[k]->kind != Kind::Tensor || kids[k]->tensor.dtype != DType::F32) d.f32 = false;
    r.decoded = std::move(d);
  } catch (const Unsupported& u) {
    r.why = op.op_type + ": " + u.why;
  }
  return r;
}

}  // namespace tensat::exec::opaque
