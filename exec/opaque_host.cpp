// Host evaluation of opaque nodes (see opaque_host.h).
#include "exec/opaque_host.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <type_traits>

namespace tensat::exec::opaque {

namespace {

// Reads element i of a typed buffer as a double (the modelled numeric types).
double read_as_double(const WeightData& w, size_t i) {
  const char* p = w.bytes.data();
  switch (w.type.dtype) {
    case DType::F32: { float v; std::memcpy(&v, p + i * 4, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, p + i * 8, 8); return v; }
    case DType::I64: { int64_t v; std::memcpy(&v, p + i * 8, 8); return static_cast<double>(v); }
    case DType::I32: { int32_t v; std::memcpy(&v, p + i * 4, 4); return v; }
    case DType::I8: return static_cast<int8_t>(p[i]);
    case DType::U8: return static_cast<uint8_t>(p[i]);
    case DType::Bool: return p[i] != 0 ? 1.0 : 0.0;
    default: return 0.0;
  }
}

template <typename T>
void store(WeightData& w, size_t i, T v) {
  std::memcpy(w.bytes.data() + i * sizeof(T), &v, sizeof(T));
}

bool write_from_double(WeightData& w, size_t i, double v) {
  switch (w.type.dtype) {
    case DType::F32: store(w, i, static_cast<float>(v)); return true;
    case DType::F64: store(w, i, v); return true;
    case DType::I64: store(w, i, static_cast<int64_t>(v)); return true;
    case DType::I32: store(w, i, static_cast<int32_t>(v)); return true;
    case DType::I8: store(w, i, static_cast<int8_t>(v)); return true;
    case DType::U8: store(w, i, static_cast<uint8_t>(v)); return true;
    case DType::Bool: store(w, i, static_cast<uint8_t>(v != 0.0)); return true;
    default: return false;
  }
}

WeightData blank(const TensorType& t) {
  WeightData w;
  w.type = t;
  w.bytes.assign(static_cast<size_t>(num_elements(t.shape)) * dtype_size(t.dtype), '\0');
  return w;
}

template <typename T>
bool binary_typed(BinaryFn fn, const WeightData& a, const WeightData& b, WeightData& out) {
  std::vector<T> va(a.count()), vb(b.count()), vo(out.count());
  if (!va.empty()) std::memcpy(va.data(), a.bytes.data(), va.size() * sizeof(T));
  if (!vb.empty()) std::memcpy(vb.data(), b.bytes.data(), vb.size() * sizeof(T));
  if constexpr (std::is_integral_v<T>) {
    if (fn == BinaryFn::Div)
      for (T v : vb)
        if (v == 0) return false;  // integer division by zero: leave it to the run time
  }
  binary_broadcast<T>(fn, va.data(), a.type.shape, vb.data(), b.type.shape, vo.data(), out.type.shape);
  if (!vo.empty()) std::memcpy(out.bytes.data(), vo.data(), vo.size() * sizeof(T));
  return true;
}

}  // namespace

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

std::optional<StridedMap> strided_map(const Desc& d, const Shape& view_shape) {
  StridedMap m;
  if (const auto* t = std::get_if<Transpose>(&d)) {
    auto st = strides_of(t->in);
    for (int64_t p : t->perm) {
      m.out_dims.push_back(t->in[static_cast<size_t>(p)]);
      m.in_strides.push_back(st[static_cast<size_t>(p)]);
    }
    return m;
  }
  if (const auto* s = std::get_if<Slice>(&d)) {
    auto st = strides_of(s->in);
    m.out_dims = s->out;
    for (size_t k = 0; k < st.size(); ++k) {
      m.in_strides.push_back(st[k] * s->step[k]);
      m.base += st[k] * s->start[k];
    }
    return m;
  }
  if (const auto* e = std::get_if<Expand>(&d)) {
    auto st = strides_of(e->in);
    m.out_dims = e->out;
    const size_t lead = e->out.size() - e->in.size();
    m.in_strides.assign(e->out.size(), 0);
    for (size_t k = 0; k < e->in.size(); ++k) m.in_strides[lead + k] = e->in[k] == 1 ? 0 : st[k];
    return m;
  }
  if (std::holds_alternative<View>(d)) {
    m.out_dims = view_shape;
    m.in_strides = strides_of(view_shape);
    return m;
  }
  return std::nullopt;
}

void move_elements(const Desc& d, const std::vector<const void*>& inputs, size_t es, const Shape& out_shape, void* out) {
  auto* o = static_cast<char*>(out);
  if (std::holds_alternative<View>(d)) {
    std::memcpy(o, inputs.at(0), static_cast<size_t>(num_elements(out_shape)) * es);
    return;
  }
  if (const auto* g = std::get_if<Gather>(&d)) {
    const auto* in = static_cast<const char*>(inputs.at(0));
    const size_t row = static_cast<size_t>(g->inner) * es;
    for (int64_t a = 0; a < g->outer; ++a)
      for (size_t j = 0; j < g->indices.size(); ++j, o += row)
        std::memcpy(o, in + (static_cast<size_t>(a * g->axis_len + g->indices[j])) * row, row);
    return;
  }
  if (const auto* c = std::get_if<Concat>(&d)) {
    const auto axis = static_cast<size_t>(c->axis);
    int64_t outer = 1;
    for (size_t k = 0; k < axis; ++k) outer *= c->out[k];
    std::vector<size_t> rows;
    for (const Shape& s : c->ins) {
      int64_t inner = 1;
      for (size_t k = axis; k < s.size(); ++k) inner *= s[k];
      rows.push_back(static_cast<size_t>(inner) * es);
    }
    for (int64_t a = 0; a < outer; ++a) {
      for (size_t i = 0; i < rows.size(); ++i) {
        std::memcpy(o, static_cast<const char*>(inputs.at(i)) + static_cast<size_t>(a) * rows[i], rows[i]);
        o += rows[i];
      }
    }
    return;
  }
  auto m = strided_map(d, out_shape);
  assert(m && "move_elements: not a data-movement description");
  const auto* in = static_cast<const char*>(inputs.at(0));
  const size_t r = m->out_dims.size();
  const auto n = static_cast<size_t>(num_elements(m->out_dims));
  std::vector<int64_t> idx(r, 0);
  int64_t off = m->base;
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(o + i * es, in + off * static_cast<int64_t>(es), es);
    for (size_t k = r; k-- > 0;) {  // odometer step over the output dims
      if (++idx[k] < m->out_dims[k]) {
        off += m->in_strides[k];
        break;
      }
      off -= m->in_strides[k] * (m->out_dims[k] - 1);
      idx[k] = 0;
    }
  }
}

std::optional<WeightData> eval_host(const OpaqueOp& op, const Decoded& d, const std::vector<const ValueType*>& kids,
                                    const TensorType& out, const std::vector<const WeightData*>& consts,
                                    std::string* why) {
  auto fail = [&](const std::string& m) -> std::optional<WeightData> {
    if (why) *why = op.op_type + ": " + m;
    return std::nullopt;
  };
  for (size_t k : d.data)
    if (!consts.at(k)) return fail("an input is not constant");
  WeightData w = blank(out);
  if (is_data_movement(d.desc)) {
    std::vector<const void*> ins;
    for (size_t k : d.data) ins.push_back(consts[k]->bytes.data());
    move_elements(d.desc, ins, dtype_size(out.dtype), out.shape, w.bytes.data());
    return w;
  }
  if (const auto* b = std::get_if<Binary>(&d.desc)) {
    const WeightData &x = *consts[d.data[0]], &y = *consts[d.data[1]];
    bool ok = false;
    switch (out.dtype) {
      case DType::F32: ok = binary_typed<float>(b->fn, x, y, w); break;
      case DType::F64: ok = binary_typed<double>(b->fn, x, y, w); break;
      case DType::I64: ok = binary_typed<int64_t>(b->fn, x, y, w); break;
      case DType::I32: ok = binary_typed<int32_t>(b->fn, x, y, w); break;
      default: return fail("element type " + std::string(dtype_name(out.dtype)));
    }
    if (!ok) return fail("integer division by zero");
    return w;
  }
  if (const auto* u = std::get_if<Unary>(&d.desc)) {
    if (!d.f32) return fail("non-float32 data");
    const WeightData& x = *consts[d.data[0]];
    for (size_t i = 0; i < w.count(); ++i) w.f32_mut()[i] = unary_apply(u->fn, x.f32()[i], u->a, u->b);
    return w;
  }
  if (!std::holds_alternative<Host>(d.desc)) return fail("computed at run time");
  if (op.op_type == "Shape" || op.op_type == "Size") {
    if (kids.empty() || kids[0]->kind != Kind::Tensor) return fail("input is not a tensor");
    const Shape& s = kids[0]->tensor.shape;
    std::vector<int64_t> v;
    if (op.op_type == "Size") {
      v.push_back(num_elements(s));
    } else {
      const auto r = static_cast<int64_t>(s.size());
      int64_t start = op.attr_i("start", 0), end = op.attr_i("end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, 0, r);
      for (int64_t k = start; k < end; ++k) v.push_back(s[static_cast<size_t>(k)]);
    }
    if (out.dtype != DType::I64 || static_cast<int64_t>(v.size()) != num_elements(out.shape))
      return fail("output type does not match");
    if (!v.empty()) std::memcpy(w.bytes.data(), v.data(), v.size() * 8);
    return w;
  }
  if (op.op_type == "ConstantOfShape") {
    double value = 0;
    auto it = op.attrs.find("value");
    if (it != op.attrs.end() && it->second.t) {
      const WeightData& v = *it->second.t;
      if (v.count() != 1 || v.type.dtype != out.dtype) return fail("value does not match the output type");
      value = read_as_double(v, 0);
    }
    for (size_t i = 0; i < w.count(); ++i)
      if (!write_from_double(w, i, value)) return fail("element type " + std::string(dtype_name(out.dtype)));
    return w;
  }
  if (op.op_type == "Cast") {
    const WeightData& x = *consts[d.data.at(0)];
    if (x.count() != w.count()) return fail("element count changes");
    for (size_t i = 0; i < w.count(); ++i) {
      if (x.type.dtype == DType::F16 || x.type.dtype == DType::Other || !write_from_double(w, i, read_as_double(x, i)))
        return fail("cast between unsupported element types");
    }
    return w;
  }
  return fail("no host evaluation");
}

}  // namespace tensat::exec::opaque
