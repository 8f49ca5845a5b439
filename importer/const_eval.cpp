// Constant evaluation of ONNX nodes (see const_eval.h).
#include "importer/const_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "importer/import_error.h"
#include "importer/tensor_proto.h"

namespace tensat::const_eval {

namespace {

// Raised inside an evaluation that cannot be exact: evaluate() returns nullopt with the reason.
struct Skip {
  std::string why;
};
[[noreturn]] void skip(const std::string& why) { throw Skip{why}; }

// ---- tensors ------------------------------------------------------------------------------

WeightData make(DType d, Shape s) {
  WeightData w;
  w.type = TensorType{d, std::move(s)};
  w.bytes.assign(w.count() * dtype_size(d), '\0');
  return w;
}

template <class T>
T at(const WeightData& w, size_t i) {
  T v;
  std::memcpy(&v, w.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void put(WeightData& w, size_t i, T v) {
  std::memcpy(w.bytes.data() + i * sizeof(T), &v, sizeof(T));
}

bool is_int(DType d) { return d == DType::I64 || d == DType::I32; }

// Integer values of an int64 / int32 tensor.
std::vector<int64_t> ints(const WeightData& w, const char* what) {
  std::vector<int64_t> v(w.count());
  if (w.type.dtype == DType::I64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = at<int64_t>(w, i);
  } else if (w.type.dtype == DType::I32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = at<int32_t>(w, i);
  } else {
    skip(std::string(what) + " is not an integer tensor");
  }
  return v;
}

WeightData i64_tensor(const std::vector<int64_t>& v, Shape s) {
  WeightData w = make(DType::I64, std::move(s));
  if (!v.empty()) std::memcpy(w.bytes.data(), v.data(), v.size() * 8);
  return w;
}

int64_t scalar_int(const WeightData& w, const char* what) {
  if (w.count() != 1) skip(std::string(what) + " is not a single value");
  return ints(w, what)[0];
}

// Row-major strides (in elements).
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

int64_t norm_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) skip(std::string(what) + " out of range");
  return axis < 0 ? axis + rank : axis;
}

// ---- node access ---------------------------------------------------------------------------

class Node {
 public:
  Node(const onnx::NodeProto& n, int64_t opset, const std::vector<std::optional<Operand>>& in)
      : n_(n), opset_(opset), in_(in) {}

  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && in_[i].has_value(); }
  const TensorType& type(size_t i) const {
    if (!has(i)) skip("input " + std::to_string(i) + " is missing");
    return in_[i]->type;
  }
  const WeightData& value(size_t i) const {
    if (!has(i) || !in_[i]->value) skip("input " + std::to_string(i) + " is not a constant");
    return *in_[i]->value;
  }
  const onnx::AttributeProto* attr(const std::string& name) const {
    for (const auto& a : n_.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t attr_i(const std::string& name, int64_t def) const {
    const auto* a = attr(name);
    return a ? a->i() : def;
  }
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const {
    const auto* a = attr(name);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  /// Axes given as an attribute (before `input_opset`) or as optional input `i` (from it on).
  std::optional<std::vector<int64_t>> axes(int64_t input_opset, size_t i) const {
    if (opset_ < input_opset) return attr_ints("axes");
    if (!has(i)) return std::nullopt;
    return ints(value(i), "axes");
  }

 private:
  const onnx::NodeProto& n_;
  int64_t opset_;
  const std::vector<std::optional<Operand>>& in_;
};

// ---- broadcasting ----------------------------------------------------------------------------

// Numpy broadcasting of several shapes; offsets() walks the output in row-major order.
class Broadcast {
 public:
  explicit Broadcast(const std::vector<const Shape*>& shapes) {
    size_t rank = 0;
    for (auto* s : shapes) rank = std::max(rank, s->size());
    out_.assign(rank, 1);
    for (auto* s : shapes) {
      for (size_t i = 0; i < s->size(); ++i) {
        int64_t d = (*s)[i];
        int64_t& o = out_[rank - s->size() + i];
        if (d == o || d == 1) continue;
        if (o != 1) skip("shapes do not broadcast");
        o = d;
      }
    }
    for (auto* s : shapes) {
      std::vector<int64_t> st(rank, 0), own = strides_of(*s);
      for (size_t i = 0; i < s->size(); ++i)
        if ((*s)[i] != 1) st[rank - s->size() + i] = own[i];
      strides_.push_back(std::move(st));
    }
  }
  const Shape& shape() const { return out_; }
  /// Calls f(k, offsets) for every output element k, offsets[j] being operand j's element.
  template <class F>
  void for_each(F f) const {
    int64_t n = num_elements(out_);
    std::vector<int64_t> idx(out_.size(), 0), off(strides_.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      f(static_cast<size_t>(k), off);
      for (size_t d = out_.size(); d-- > 0;) {
        ++idx[d];
        for (size_t j = 0; j < off.size(); ++j) off[j] += strides_[j][d];
        if (idx[d] < out_[d]) break;
        for (size_t j = 0; j < off.size(); ++j) off[j] -= strides_[j][d] * idx[d];
        idx[d] = 0;
      }
    }
  }

 private:
  Shape out_;
  std::vector<std::vector<int64_t>> strides_;
};

// Calls f(T{}) with T the C++ type of an arithmetic element type.
template <class F>
void with_numeric(DType d, F f) {
  switch (d) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::I32: f(int32_t{}); return;
    default: skip("element type " + std::string(dtype_name(d)) + " is not evaluated");
  }
}

// Wrapping integer arithmetic (what ONNX Runtime's kernels do in practice), exact float ops.
template <class T>
T wrap(T a, T b, char op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    U x = static_cast<U>(a), y = static_cast<U>(b);
    U r = op == '+' ? U(x + y) : op == '-' ? U(x - y) : U(x * y);
    return static_cast<T>(r);
  } else {
    return op == '+' ? a + b : op == '-' ? a - b : a * b;
  }
}

// op: + - * / (Add, Sub, Mul, Div), % (Mod, its fmod attribute), M / m (Max / Min of two).
WeightData arithmetic(const Node& n, char op) {
  if (n.num_inputs() != 2) skip("not two operands");
  const WeightData &a = n.value(0), &b = n.value(1);
  if (a.type.dtype != b.type.dtype) skip("operand types differ");
  if (op == 'M' || op == 'm') {  // (Max / Min: no broadcasting before opset 8, no integers before 12)
    if (n.opset() < 8 && a.type.shape != b.type.shape) skip("shapes differ (opset < 8)");
    if (n.opset() < 12 && a.type.dtype != DType::F32 && a.type.dtype != DType::F64) skip("integers (opset < 12)");
  }
  const bool fmod = op == '%' && n.attr_i("fmod", 0) != 0;
  Broadcast bc({&a.type.shape, &b.type.shape});
  WeightData out = make(a.type.dtype, bc.shape());
  with_numeric(a.type.dtype, [&](auto t) {
    using T = decltype(t);
    bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
      T x = at<T>(a, static_cast<size_t>(o[0])), y = at<T>(b, static_cast<size_t>(o[1]));
      T r;
      if (op == '/') {
        if constexpr (std::is_integral_v<T>) {
          if (y == 0) skip("integer division by zero");
          if (x == std::numeric_limits<T>::min() && y == T(-1)) skip("integer division overflows");
        }
        r = x / y;
      } else if (op == '%') {
        if constexpr (std::is_integral_v<T>) {
          if (y == 0) skip("integer modulo by zero");
          if constexpr (std::is_signed_v<T>)
            if (x == std::numeric_limits<T>::min() && y == T(-1)) skip("integer modulo overflows");
          r = static_cast<T>(x % y);  // fmod=1: the sign of the dividend, as C's
          if constexpr (std::is_signed_v<T>)
            if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);  // fmod=0: the divisor's
        } else {
          if (!fmod) skip("floating-point Mod needs fmod=1");
          r = static_cast<T>(std::fmod(x, y));
        }
      } else if (op == 'M' || op == 'm') {
        if constexpr (!std::is_integral_v<T>) {
          if (std::isnan(static_cast<double>(x)) || std::isnan(static_cast<double>(y))) skip("NaN operand");
          // Which of +0 and -0 ONNX Runtime returns depends on its broadcast path.
          if (x == y && std::signbit(static_cast<double>(x)) != std::signbit(static_cast<double>(y)))
            skip("zeros of both signs");
        }
        r = op == 'M' ? std::max(x, y) : std::min(x, y);
      } else {
        r = wrap(x, y, op);
      }
      put(out, k, r);
    });
  });
  return out;
}

WeightData compare(const Node& n, const std::string& op) {
  const WeightData &a = n.value(0), &b = n.value(1);
  if (a.type.dtype != b.type.dtype) skip("operand types differ");
  Broadcast bc({&a.type.shape, &b.type.shape});
  WeightData out = make(DType::Bool, bc.shape());
  auto run = [&](auto t) {
    using T = decltype(t);
    bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
      T x = at<T>(a, static_cast<size_t>(o[0])), y = at<T>(b, static_cast<size_t>(o[1]));
      bool r = op == "Equal"       ? x == y
               : op == "Less"        ? x < y
               : op == "Greater"     ? x > y
               : op == "LessOrEqual" ? x <= y
                                     : x >= y;  // GreaterOrEqual
      put<uint8_t>(out, k, r ? 1 : 0);
    });
  };
  if (a.type.dtype == DType::Bool) {
    if (op != "Equal") skip(op + " of booleans");
    run(uint8_t{});
  } else {
    with_numeric(a.type.dtype, run);
  }
  return out;
}

WeightData logical(const Node& n, const std::string& op) {
  const WeightData& a = n.value(0);
  if (a.type.dtype != DType::Bool) skip(op + " of a non-boolean tensor");
  if (op == "Not") {
    WeightData out = make(DType::Bool, a.type.shape);
    for (size_t i = 0; i < a.count(); ++i) put<uint8_t>(out, i, at<uint8_t>(a, i) ? 0 : 1);
    return out;
  }
  const WeightData& b = n.value(1);
  if (b.type.dtype != DType::Bool) skip(op + " of a non-boolean tensor");
  Broadcast bc({&a.type.shape, &b.type.shape});
  WeightData out = make(DType::Bool, bc.shape());
  bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
    bool x = at<uint8_t>(a, static_cast<size_t>(o[0])) != 0, y = at<uint8_t>(b, static_cast<size_t>(o[1])) != 0;
    put<uint8_t>(out, k, (op == "And" ? (x && y) : (x || y)) ? 1 : 0);
  });
  return out;
}

WeightData neg(const Node& n) {
  const WeightData& a = n.value(0);
  WeightData out = make(a.type.dtype, a.type.shape);
  with_numeric(a.type.dtype, [&](auto t) {
    using T = decltype(t);
    for (size_t i = 0; i < a.count(); ++i) put<T>(out, i, wrap<T>(T(0), at<T>(a, i), '-'));
  });
  return out;
}

// Round's half to even, whatever the floating-point rounding mode.
template <class T>
T round_half_even(T x) {
  const T f = std::floor(x), d = x - f;
  const T r = d < T(0.5) ? f : d > T(0.5) ? f + T(1) : std::fmod(f, T(2)) == T(0) ? f : f + T(1);
  return r == T(0) ? std::copysign(T(0), x) : r;  // -0.4 rounds to -0, as ONNX Runtime's
}

// Ceil, Floor, Round (half to even), Sqrt (correctly rounded): one IEEE result each, so the
// folded value is what ONNX Runtime computes; floats only (MobileViT computes its patch counts
// with Ceil). Abs: float and int32/int64, refusing the one integer it cannot negate.
WeightData unary(const Node& n, const std::string& op) {
  const WeightData& a = n.value(0);
  WeightData out = make(a.type.dtype, a.type.shape);
  with_numeric(a.type.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) {
      if (op != "Abs") skip(op + " of integers");
      if (n.opset() < 6) skip("Abs of integers (opset < 6)");
      for (size_t i = 0; i < a.count(); ++i) {
        const T x = at<T>(a, i);
        if (x == std::numeric_limits<T>::min()) skip("Abs of the smallest integer overflows");
        put<T>(out, i, x < 0 ? static_cast<T>(-x) : x);
      }
    } else {
      for (size_t i = 0; i < a.count(); ++i) {
        const T x = at<T>(a, i);
        const T r = op == "Ceil"    ? std::ceil(x)
                    : op == "Floor" ? std::floor(x)
                    : op == "Round" ? round_half_even(x)
                    : op == "Sqrt"  ? std::sqrt(x)
                                    : std::fabs(x);
        put<T>(out, i, r);
      }
    }
  });
  return out;
}

// Trilu: the upper (default) or lower triangle of the last two dimensions, from diagonal k
// (optional input 1); the rest zero.
WeightData trilu(const Node& n) {
  const WeightData& x = n.value(0);
  const Shape& s = x.type.shape;
  if (s.size() < 2) skip("rank below 2");
  int64_t k = 0;
  if (n.has(1)) {
    const WeightData& kv = n.value(1);
    if (kv.type.dtype != DType::I64 || kv.count() != 1 || kv.type.shape.size() > 1) skip("k is not one int64");
    k = at<int64_t>(kv, 0);
  }
  const bool upper = n.attr_i("upper", 1) != 0;
  const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  WeightData out = make(x.type.dtype, s);  // zeros
  const size_t es = dtype_size(x.type.dtype);
  for (size_t e = 0; e < x.count(); ++e) {
    const auto j = static_cast<int64_t>(e % static_cast<size_t>(cols));
    const auto i = static_cast<int64_t>((e / static_cast<size_t>(cols)) % static_cast<size_t>(rows));
    if (upper ? j - i >= k : j - i <= k) std::memcpy(out.bytes.data() + e * es, x.bytes.data() + e * es, es);
  }
  return out;
}

WeightData where(const Node& n) {
  const WeightData &c = n.value(0), &x = n.value(1), &y = n.value(2);
  if (c.type.dtype != DType::Bool) skip("condition is not boolean");
  if (x.type.dtype != y.type.dtype) skip("operand types differ");
  Broadcast bc({&c.type.shape, &x.type.shape, &y.type.shape});
  WeightData out = make(x.type.dtype, bc.shape());
  size_t es = dtype_size(x.type.dtype);
  bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
    const WeightData& src = at<uint8_t>(c, static_cast<size_t>(o[0])) ? x : y;
    size_t from = static_cast<size_t>(&src == &x ? o[1] : o[2]);
    std::memcpy(out.bytes.data() + k * es, src.bytes.data() + from * es, es);
  });
  return out;
}

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

WeightData reshaped(const WeightData& x, Shape s) {
  WeightData out = x;
  out.type.shape = std::move(s);
  return out;
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

// ReduceMax / ReduceMin of any number type, ReduceSum / ReduceProd of integers (a float sum
// depends on the order of additions): exact, so the folded value is ONNX Runtime's. torchvision's
// detection transform takes the largest image size with ReduceMax over a constant.
WeightData reduce(const Node& n, const std::string& op) {
  const WeightData& x = n.value(0);
  const Shape& xs = x.type.shape;
  const auto r = static_cast<int64_t>(xs.size());
  // Axes became an input with opset 13 for ReduceSum, 18 for the others.
  const int64_t axes_input_opset = op == "ReduceSum" ? 13 : 18;
  const std::optional<std::vector<int64_t>> given = n.axes(axes_input_opset, 1);
  const bool keep = n.attr_i("keepdims", 1) != 0;
  std::vector<bool> reduced(xs.size(), false);
  if (!given || given->empty()) {
    // With axes as an input, noop_with_empty_axes makes empty or absent axes the identity.
    if (n.opset() >= axes_input_opset && n.attr_i("noop_with_empty_axes", 0) != 0) return x;
    reduced.assign(xs.size(), true);
  } else {
    for (int64_t a : *given) {
      const auto ua = static_cast<size_t>(norm_axis(a, r, "axis"));
      if (reduced[ua]) skip("repeated axis");
      reduced[ua] = true;
    }
  }
  Shape out, kept;  // kept: the output with the reduced dimensions as 1
  for (size_t d = 0; d < xs.size(); ++d) {
    kept.push_back(reduced[d] ? 1 : xs[d]);
    if (!reduced[d] || keep) out.push_back(reduced[d] ? 1 : xs[d]);
  }
  if (x.count() == 0) skip("reduction over no elements");
  WeightData w = make(x.type.dtype, kept);
  const std::vector<int64_t> kst = strides_of(kept);
  with_numeric(x.type.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (!std::is_integral_v<T>) {
      if (op == "ReduceSum" || op == "ReduceProd") skip(op + " of floats depends on the order of operations");
    }
    std::vector<bool> started(w.count(), false);
    std::vector<int64_t> idx(xs.size(), 0);
    for (size_t k = 0; k < x.count(); ++k) {
      size_t o = 0;
      for (size_t d = 0; d < xs.size(); ++d) o += static_cast<size_t>((reduced[d] ? 0 : idx[d]) * kst[d]);
      const T v = at<T>(x, k);
      if constexpr (!std::is_integral_v<T>) {
        if (std::isnan(static_cast<double>(v))) skip("NaN operand");
        // Which of +0 and -0 is the extreme depends on the order the runtime visits them.
        if (started[o] && v == at<T>(w, o) &&
            std::signbit(static_cast<double>(v)) != std::signbit(static_cast<double>(at<T>(w, o))))
          skip("zeros of both signs");
      }
      if (!started[o]) {
        put<T>(w, o, v);
        started[o] = true;
      } else {
        const T acc = at<T>(w, o);
        put<T>(w, o,
               op == "ReduceMax"   ? std::max(acc, v)
               : op == "ReduceMin" ? std::min(acc, v)
               : op == "ReduceSum" ? wrap(acc, v, '+')
                                   : wrap(acc, v, '*'));
      }
      for (size_t d = xs.size(); d-- > 0;) {
        if (++idx[d] < xs[d]) break;
        idx[d] = 0;
      }
    }
  });
  return reshaped(w, out);
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

// One element converted exactly, or Skip (NaN or out of range for an integer target).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v >= static_cast<From>(std::numeric_limits<To>::min()) &&
          v < -static_cast<From>(std::numeric_limits<To>::min())))
      skip("float value does not fit the integer type");
    return static_cast<To>(v);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(v));  // wraps, as ORT
  } else {
    return static_cast<To>(v);
  }
}

template <class F>
void with_castable(DType d, F f) {
  if (d == DType::Bool) {
    f(bool{});
    return;
  }
  with_numeric(d, f);
}

// Cast, or CastLike (the element type of input 1, whose value is not needed).
WeightData cast(const Node& n, bool like = false) {
  const WeightData& x = n.value(0);
  DType target;
  if (like) {
    if (const auto* sat = n.attr("saturate"); sat && sat->i() == 0) skip("saturate=0 (float 8 targets only)");
    target = n.type(1).dtype;
    if (target != DType::F32 && target != DType::F64 && target != DType::I64 && target != DType::I32 &&
        target != DType::Bool)
      skip("cast to an element type not evaluated");
  } else {
    const auto* to = n.attr("to");
    if (!to) skip("no 'to' attribute");
    switch (to->i()) {
      case onnx::TensorProto::FLOAT: target = DType::F32; break;
      case onnx::TensorProto::DOUBLE: target = DType::F64; break;
      case onnx::TensorProto::INT64: target = DType::I64; break;
      case onnx::TensorProto::INT32: target = DType::I32; break;
      case onnx::TensorProto::BOOL: target = DType::Bool; break;
      default: skip("cast to element type " + std::to_string(to->i()));
    }
  }
  WeightData out = make(target, x.type.shape);
  with_castable(x.type.dtype, [&](auto from) {
    using From = decltype(from);
    with_castable(target, [&](auto to_v) {
      using To = decltype(to_v);
      for (size_t i = 0; i < x.count(); ++i) {
        From v;
        if constexpr (std::is_same_v<From, bool>) {
          v = at<uint8_t>(x, i) != 0;
        } else {
          v = at<From>(x, i);
        }
        To r = convert<To>(v);
        if constexpr (std::is_same_v<To, bool>) {
          put<uint8_t>(out, i, r ? 1 : 0);
        } else {
          put<To>(out, i, r);
        }
      }
    });
  });
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

using EvalFn = std::function<WeightData(const Node&, const onnx::NodeProto&)>;

const std::unordered_map<std::string, EvalFn>& table() {
  static const std::unordered_map<std::string, EvalFn> t = {
      {"Constant", [](const Node& n, const onnx::NodeProto& p) { return constant(n, p); }},
      {"Identity", [](const Node& n, const onnx::NodeProto&) { return n.value(0); }},
      {"Shape", [](const Node& n, const onnx::NodeProto&) { return shape_of(n); }},
      {"Size", [](const Node& n, const onnx::NodeProto&) {
         return i64_tensor({num_elements(n.type(0).shape)}, {});
       }},
      {"Reshape", [](const Node& n, const onnx::NodeProto&) { return reshape(n); }},
      {"Unsqueeze", [](const Node& n, const onnx::NodeProto&) { return unsqueeze(n); }},
      {"Squeeze", [](const Node& n, const onnx::NodeProto&) { return squeeze(n); }},
      {"Concat", [](const Node& n, const onnx::NodeProto&) { return concat(n); }},
      {"Gather", [](const Node& n, const onnx::NodeProto&) { return gather(n); }},
      {"Slice", [](const Node& n, const onnx::NodeProto&) { return slice(n); }},
      {"Transpose", [](const Node& n, const onnx::NodeProto&) { return transpose(n); }},
      {"Expand", [](const Node& n, const onnx::NodeProto&) { return expand(n); }},
      {"ConstantOfShape", [](const Node& n, const onnx::NodeProto&) { return constant_of_shape(n); }},
      {"Range", [](const Node& n, const onnx::NodeProto&) { return range(n); }},
      {"Cast", [](const Node& n, const onnx::NodeProto&) { return cast(n); }},
      {"Add", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '+'); }},
      {"Sub", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '-'); }},
      {"Mul", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '*'); }},
      {"Div", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '/'); }},
      {"Mod", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '%'); }},
      {"Max", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, 'M'); }},
      {"Min", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, 'm'); }},
      {"Neg", [](const Node& n, const onnx::NodeProto&) { return neg(n); }},
      {"Abs", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Abs"); }},
      {"ReduceMax", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceMax"); }},
      {"ReduceMin", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceMin"); }},
      {"ReduceSum", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceSum"); }},
      {"ReduceProd", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceProd"); }},
      {"Ceil", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Ceil"); }},
      {"Floor", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Floor"); }},
      {"Round", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Round"); }},
      {"Sqrt", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Sqrt"); }},
      {"Equal", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Equal"); }},
      {"Less", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Less"); }},
      {"Greater", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Greater"); }},
      {"LessOrEqual", [](const Node& n, const onnx::NodeProto&) { return compare(n, "LessOrEqual"); }},
      {"GreaterOrEqual", [](const Node& n, const onnx::NodeProto&) { return compare(n, "GreaterOrEqual"); }},
      {"CastLike", [](const Node& n, const onnx::NodeProto&) { return cast(n, true); }},
      {"Trilu", [](const Node& n, const onnx::NodeProto&) { return trilu(n); }},
      {"Not", [](const Node& n, const onnx::NodeProto&) { return logical(n, "Not"); }},
      {"And", [](const Node& n, const onnx::NodeProto&) { return logical(n, "And"); }},
      {"Or", [](const Node& n, const onnx::NodeProto&) { return logical(n, "Or"); }},
      {"Where", [](const Node& n, const onnx::NodeProto&) { return where(n); }},
  };
  return t;
}

}  // namespace

bool covers(const std::string& op_type) { return table().count(op_type) != 0; }

std::optional<std::vector<WeightData>> evaluate(const onnx::NodeProto& n, int64_t opset,
                                                const std::vector<std::optional<Operand>>& inputs,
                                                std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<std::vector<WeightData>> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!(n.domain().empty() || n.domain() == "ai.onnx")) return fail("domain '" + n.domain() + "'");
  auto it = table().find(n.op_type());
  if (it == table().end()) return fail("op type not evaluated");
  // An op used before its opset introduced it is not what the model means (runtimes refuse it).
  static const std::unordered_map<std::string, int64_t> kSince = {
      {"Mod", 10}, {"Round", 11}, {"LessOrEqual", 12}, {"GreaterOrEqual", 12}, {"Trilu", 14}, {"CastLike", 15}};
  if (auto s = kSince.find(n.op_type()); s != kSince.end() && opset < s->second)
    return fail(n.op_type() + " before opset " + std::to_string(s->second));
  if (n.output_size() != 1) return fail("not a single-output node");
  // Before opset 7 the element-wise ops broadcast only with broadcast=1, and then from their
  // `axis` on, not numpy's way (lower.cpp, legacy_broadcast_operand): operands of different
  // shapes are left to the node.
  if (opset < 7)
    for (const auto& a : n.attribute())
      if (a.name() == "broadcast")
        for (const auto& in : inputs)
          if (in && inputs[0] && in->type.shape != inputs[0]->type.shape)
            return fail("legacy broadcasting (opset < 7)");
  try {
    Node node(n, opset, inputs);
    WeightData out = it->second(node, n);
    if (out.type.dtype == DType::Other) return fail("result type not covered");
    if (n.op_type() != "Constant" && static_cast<int64_t>(out.count()) > kMaxNewElements)
      return fail("result of " + std::to_string(out.count()) + " elements is too large to fold");
    std::vector<WeightData> res;
    res.push_back(std::move(out));
    return res;
  } catch (const Skip& s) {
    return fail(s.why);
  } catch (const ImportError& e) {
    return fail(e.what());
  }
}

}  // namespace tensat::const_eval
