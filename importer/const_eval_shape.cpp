// Constant evaluation of shapes and data movement (Shape, Reshape, Gather, Slice, Transpose,
// ...) and of Constant nodes (const_eval_support.h).
#include "importer/const_eval_support.h"
#include "importer/tensor_proto.h"

namespace tensat::const_eval::detail {

// ---- shapes and data movement ----------------------------------------------------------------

WeightData shape_of(const Node& n) {
  const Shape& s = n.type(0).shape;
  int64_t r = static_cast<int64_t>(s.size());
  int64_t start = n.opset() >= 15 ? n.attr_i("start", 0) : 0;
  int64_t end = n.opset() >= 15 ? n.attr_i("end", r) : r;
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(s[static_cast<size_t>(i)]);
  return i64_tensor(v, {static_cast<int64_t>(v.size())});
}

WeightData reshape(const Node& n) {
  const WeightData& x = n.value(0);
  std::vector<int64_t> target = ints(n.value(1), "shape");
  bool allowzero = n.opset() >= 14 && n.attr_i("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= x.type.shape.size()) skip("0 in the target shape beyond the input's rank");
      target[i] = x.type.shape[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) skip("two -1 in the target shape");
      infer = static_cast<int>(i);
    } else if (target[i] < 0) {
      skip("negative target dimension");
    } else {
      known *= target[i];
    }
  }
  int64_t total = static_cast<int64_t>(x.count());
  if (infer >= 0) {
    if (known == 0 || total % known != 0) skip("target shape does not fit");
    target[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    skip("target shape does not fit");
  }
  return reshaped(x, target);
}

WeightData unsqueeze(const Node& n) {
  const WeightData& x = n.value(0);
  auto axes = n.axes(13, 1);
  if (!axes) skip("no axes");
  int64_t r = static_cast<int64_t>(x.type.shape.size() + axes->size());
  std::vector<bool> at_axis(static_cast<size_t>(r), false);
  for (auto a : *axes) {
    int64_t k = norm_axis(a, r, "axis");
    if (at_axis[static_cast<size_t>(k)]) skip("repeated axis");
    at_axis[static_cast<size_t>(k)] = true;
  }
  Shape s;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) s.push_back(at_axis[static_cast<size_t>(i)] ? 1 : x.type.shape[j++]);
  return reshaped(x, s);
}

WeightData squeeze(const Node& n) {
  const WeightData& x = n.value(0);
  const Shape& xs = x.type.shape;
  int64_t r = static_cast<int64_t>(xs.size());
  std::vector<bool> drop(xs.size(), false);
  if (auto axes = n.axes(13, 1)) {
    for (auto a : *axes) {
      int64_t k = norm_axis(a, r, "axis");
      if (xs[static_cast<size_t>(k)] != 1) skip("squeezed axis is not 1");
      drop[static_cast<size_t>(k)] = true;
    }
  } else {
    for (size_t i = 0; i < xs.size(); ++i) drop[i] = xs[i] == 1;
  }
  Shape s;
  for (size_t i = 0; i < xs.size(); ++i)
    if (!drop[i]) s.push_back(xs[i]);
  return reshaped(x, s);
}

WeightData concat(const Node& n) {
  std::vector<const WeightData*> xs;
  for (size_t i = 0; i < n.num_inputs(); ++i)
    if (n.has(i)) xs.push_back(&n.value(i));
  if (xs.empty()) skip("no inputs");
  const Shape& s0 = xs[0]->type.shape;
  int64_t r = static_cast<int64_t>(s0.size());
  if (r == 0) skip("concat of scalars");
  size_t axis = static_cast<size_t>(norm_axis(n.attr_i("axis", 0), r, "axis"));
  Shape out = s0;
  out[axis] = 0;
  for (auto* x : xs) {
    if (x->type.dtype != xs[0]->type.dtype || x->type.shape.size() != s0.size()) skip("operands differ in type or rank");
    for (size_t d = 0; d < s0.size(); ++d)
      if (d != axis && x->type.shape[d] != s0[d]) skip("operands differ off the axis");
    out[axis] += x->type.shape[axis];
  }
  WeightData w = make(xs[0]->type.dtype, out);
  // Copy blocks: outer = product of dims before the axis.
  int64_t outer = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s0[d];
  size_t es = dtype_size(w.type.dtype);
  size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (auto* x : xs) {
      size_t block = x->count() / static_cast<size_t>(outer) * es;
      std::memcpy(w.bytes.data() + pos, x->bytes.data() + static_cast<size_t>(o) * block, block);
      pos += block;
    }
  }
  return w;
}

WeightData gather(const Node& n) {
  const WeightData &x = n.value(0), &iw = n.value(1);
  const Shape& xs = x.type.shape;
  int64_t r = static_cast<int64_t>(xs.size());
  if (r == 0) skip("gather from a scalar");
  size_t axis = static_cast<size_t>(norm_axis(n.attr_i("axis", 0), r, "axis"));
  std::vector<int64_t> idx = ints(iw, "indices");
  int64_t dim = xs[axis];
  for (auto& i : idx) {
    if (i < -dim || i >= dim) skip("index out of range");
    if (i < 0) i += dim;
  }
  Shape out(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), iw.type.shape.begin(), iw.type.shape.end());
  out.insert(out.end(), xs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, xs.end());
  WeightData w = make(x.type.dtype, out);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= xs[d];
  for (size_t d = axis + 1; d < xs.size(); ++d) inner *= xs[d];
  size_t es = dtype_size(x.type.dtype), block = static_cast<size_t>(inner) * es;
  size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (auto i : idx) {
      std::memcpy(w.bytes.data() + pos, x.bytes.data() + (static_cast<size_t>(o * dim + i)) * block, block);
      pos += block;
    }
  return w;
}

WeightData slice(const Node& n) {
  const WeightData& x = n.value(0);
  const Shape& xs = x.type.shape;
  int64_t r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.attr_ints("starts").value_or(std::vector<int64_t>{});
    ends = n.attr_ints("ends").value_or(std::vector<int64_t>{});
    axes = n.attr_ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = ints(n.value(1), "starts");
    ends = ints(n.value(2), "ends");
    if (n.has(3)) axes = ints(n.value(3), "axes");
    if (n.has(4)) steps = ints(n.value(4), "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    skip("starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(xs.size(), 0), step(xs.size(), 1);
  Shape out = xs;
  std::vector<bool> seen(xs.size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t a = static_cast<size_t>(norm_axis(axes[k], r, "axis"));
    if (seen[a]) skip("repeated axis");
    seen[a] = true;
    int64_t d = xs[a], s = starts[k], e = ends[k], st = steps[k];
    if (st == 0) skip("step 0");
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      out[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      out[a] = s > e ? (s - e - st - 1) / -st : 0;
    }
    begin[a] = s;
    step[a] = st;
  }
  WeightData w = make(x.type.dtype, out);
  size_t es = dtype_size(x.type.dtype);
  std::vector<int64_t> xst = strides_of(xs);
  int64_t cnt = num_elements(out);
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t k = 0; k < cnt; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < out.size(); ++d) src += (begin[d] + idx[d] * step[d]) * xst[d];
    std::memcpy(w.bytes.data() + static_cast<size_t>(k) * es, x.bytes.data() + static_cast<size_t>(src) * es, es);
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return w;
}

// Transpose of any element type (PyTorch's exports reverse pad lists with one, in int64).
WeightData transpose(const Node& n) {
  const WeightData& x = n.value(0);
  const Shape& xs = x.type.shape;
  const size_t r = xs.size();
  const std::optional<std::vector<int64_t>> given = n.attr_ints("perm");
  std::vector<int64_t> perm = given.value_or(std::vector<int64_t>{});
  if (!given)
    for (size_t i = r; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != r) skip("perm does not list every axis");
  std::vector<bool> seen(r, false);
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(r) || seen[static_cast<size_t>(perm[d])])
      skip("perm is not a permutation");
    seen[static_cast<size_t>(perm[d])] = true;
    out[d] = xs[static_cast<size_t>(perm[d])];
  }
  WeightData w = make(x.type.dtype, out);
  const size_t es = dtype_size(x.type.dtype);
  const std::vector<int64_t> xst = strides_of(xs);
  const int64_t cnt = num_elements(out);
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < cnt; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * xst[static_cast<size_t>(perm[d])];
    std::memcpy(w.bytes.data() + static_cast<size_t>(k) * es, x.bytes.data() + static_cast<size_t>(src) * es, es);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return w;
}

WeightData expand(const Node& n) {
  const WeightData& x = n.value(0);
  Shape target = ints(n.value(1), "shape");
  for (auto d : target)
    if (d < 0) skip("negative dimension");
  Broadcast bc({&x.type.shape, &target});
  WeightData out = make(x.type.dtype, bc.shape());
  size_t es = dtype_size(x.type.dtype);
  if (out.count() == 0) return out;
  bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
    std::memcpy(out.bytes.data() + k * es, x.bytes.data() + static_cast<size_t>(o[0]) * es, es);
  });
  return out;
}

WeightData constant_of_shape(const Node& n) {
  Shape s = ints(n.value(0), "shape");
  for (auto d : s)
    if (d < 0) skip("negative dimension");
  WeightData fill = make(DType::F32, {1});
  if (const auto* a = n.attr("value")) {
    if (!a->has_t()) skip("value is not a tensor");
    auto v = tensor_data(a->t(), "ConstantOfShape value");
    if (!v || v->count() != 1) skip("value is not a single element of a covered type");
    fill = std::move(*v);
  }
  WeightData out = make(fill.type.dtype, s);
  size_t es = dtype_size(fill.type.dtype);
  for (size_t i = 0; i < out.count(); ++i) std::memcpy(out.bytes.data() + i * es, fill.bytes.data(), es);
  return out;
}

WeightData range(const Node& n) {
  const WeightData &s = n.value(0), &l = n.value(1), &d = n.value(2);
  if (!is_int(s.type.dtype) || s.type.dtype != l.type.dtype || s.type.dtype != d.type.dtype)
    skip("only integer ranges are evaluated");
  int64_t start = scalar_int(s, "start"), limit = scalar_int(l, "limit"), delta = scalar_int(d, "delta");
  if (delta == 0) skip("delta 0");
  int64_t count = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
  if (count > kMaxNewElements) skip("range too long");
  WeightData out = make(s.type.dtype, {count});
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = start + i * delta;
    if (s.type.dtype == DType::I64) {
      put<int64_t>(out, static_cast<size_t>(i), v);
    } else {
      put<int32_t>(out, static_cast<size_t>(i), static_cast<int32_t>(v));
    }
  }
  return out;
}

WeightData constant(const Node& n, const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) skip("Constant needs exactly one attribute");
  const auto& a = node.attribute(0);
  if (a.name() == "value" && a.has_t()) {
    auto v = tensor_data(a.t(), "Constant");
    if (!v) skip("element type not covered");
    return *v;
  }
  if (a.name() == "value_float") {
    WeightData w = make(DType::F32, {});
    put<float>(w, 0, a.f());
    return w;
  }
  if (a.name() == "value_floats") {
    WeightData w = make(DType::F32, {a.floats_size()});
    for (int i = 0; i < a.floats_size(); ++i) put<float>(w, static_cast<size_t>(i), a.floats(i));
    return w;
  }
  if (a.name() == "value_int") return i64_tensor({a.i()}, {});
  if (a.name() == "value_ints") return i64_tensor({a.ints().begin(), a.ints().end()}, {a.ints_size()});
  (void)n;
  skip("Constant attribute " + a.name());
}

}  // namespace tensat::const_eval::detail
