// Constant evaluation of arithmetic, comparisons, logic, rounding, reductions and Cast
// (const_eval_support.h).
#include <cmath>

#include "importer/const_eval_support.h"

namespace tensat::const_eval::detail {

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

// Pow of a float base: exponents 2 and 3 as ONNX Runtime computes them (x*x, x*x*x), any other
// only where the power is exact in the base's type (DINOv2's sqrt(256) = 256^0.5 = 16): a
// rounded power is whatever the runtime's libm gives, which folding must not guess.
WeightData power(const Node& n) {
  if (n.num_inputs() != 2) skip("not two operands");
  const WeightData &a = n.value(0), &b = n.value(1);
  if (a.type.dtype != DType::F32 && a.type.dtype != DType::F64) skip("Pow of a non-float base");
  if (n.opset() < 7 && a.type.shape != b.type.shape) skip("shapes differ (opset < 7)");
  Broadcast bc({&a.type.shape, &b.type.shape});
  WeightData out = make(a.type.dtype, bc.shape());
  with_numeric(a.type.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      bc.for_each([&](size_t k, const std::vector<int64_t>& o) {
        const T x = at<T>(a, static_cast<size_t>(o[0]));
        double y = 0;
        with_numeric(b.type.dtype,
                     [&](auto e) { y = static_cast<double>(at<decltype(e)>(b, static_cast<size_t>(o[1]))); });
        T r;
        if (y == 2) {
          r = x * x;
        } else if (y == 3) {
          r = x * x * x;
        } else {
          const double p = std::pow(static_cast<double>(x), y);
          if (!std::isfinite(p) || static_cast<double>(static_cast<T>(p)) != p) skip("a power that is not exact");
          r = static_cast<T>(p);
        }
        put<T>(out, k, r);
      });
    }
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
WeightData cast(const Node& n, bool like) {
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

}  // namespace tensat::const_eval::detail
