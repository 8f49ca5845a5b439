// The element-wise functions of the opaque operators, written once for the CPU reference
// executor, the host evaluation of constants and the GPU kernels (the functions are
// __host__ __device__ when nvcc compiles this header), so both executors compute exactly the
// same formula.
#pragma once

#include <math.h>  // erff, expf, ... in the global namespace, as device code needs them

#include <cstdint>

#if defined(__CUDACC__)
#define TENSAT_HD __host__ __device__
#else
#define TENSAT_HD
#endif

namespace tensat::exec::opaque {

enum class UnaryFn : uint8_t {
  Identity, Sqrt, Erf, Exp, Log, Neg, Abs, Reciprocal, Floor, Ceil, Relu, Sigmoid, Tanh,
  Softplus, Clip,        // Clip: a = min, b = max
  LeakyRelu,             // a = alpha
  Elu,                   // a = alpha
  HardSigmoid,           // a = alpha, b = beta
  HardSwish, Gelu, GeluTanh,
};

enum class BinaryFn : uint8_t { Add, Sub, Mul, Div, Pow, Max, Min };

enum class PadMode : uint8_t { Constant, Reflect, Edge };

/// The input coordinate that output coordinate `o` of a padded dim reads (the dim has `n`
/// input elements and `begin` leading pads, negative to crop), or -1 for the constant value.
TENSAT_HD inline int64_t pad_source(PadMode mode, int64_t o, int64_t begin, int64_t n) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::Constant || n <= 0) return -1;
  if (mode == PadMode::Edge) return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);  // reflect: ... 2 1 [0 1 2 3] 2 1 0 1 ...
  i = ((i % period) + period) % period;
  return i < n ? i : period - i;
}

TENSAT_HD inline float unary_apply(UnaryFn fn, float x, float a, float b) {
  switch (fn) {
    case UnaryFn::Identity: return x;
    case UnaryFn::Sqrt: return sqrtf(x);
    case UnaryFn::Erf: return erff(x);
    case UnaryFn::Exp: return expf(x);
    case UnaryFn::Log: return logf(x);
    case UnaryFn::Neg: return -x;
    case UnaryFn::Abs: return fabsf(x);
    case UnaryFn::Reciprocal: return 1.0f / x;
    case UnaryFn::Floor: return floorf(x);
    case UnaryFn::Ceil: return ceilf(x);
    case UnaryFn::Relu: return x > 0.0f ? x : 0.0f;
    case UnaryFn::Sigmoid: return 1.0f / (1.0f + expf(-x));
    case UnaryFn::Tanh: return tanhf(x);
    case UnaryFn::Softplus: return x > 20.0f ? x : log1pf(expf(x));
    case UnaryFn::Clip: return x < a ? a : (x > b ? b : x);
    case UnaryFn::LeakyRelu: return x >= 0.0f ? x : a * x;
    case UnaryFn::Elu: return x >= 0.0f ? x : a * (expf(x) - 1.0f);
    case UnaryFn::HardSigmoid: {
      float v = a * x + b;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case UnaryFn::HardSwish: {
      float v = x / 6.0f + 0.5f;
      return x * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
    }
    case UnaryFn::Gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case UnaryFn::GeluTanh: {
      float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + tanhf(inner));
    }
  }
  return x;
}

/// Integer division truncates toward zero (C++, as ONNX Runtime does); Pow on integers is
/// computed in double and truncated.
template <typename T>
TENSAT_HD inline T binary_apply(BinaryFn fn, T x, T y) {
  switch (fn) {
    case BinaryFn::Add: return x + y;
    case BinaryFn::Sub: return x - y;
    case BinaryFn::Mul: return x * y;
    case BinaryFn::Div: return x / y;
    case BinaryFn::Pow: return static_cast<T>(pow(static_cast<double>(x), static_cast<double>(y)));
    case BinaryFn::Max: return x > y ? x : y;
    case BinaryFn::Min: return x < y ? x : y;
  }
  return x;
}

template <>
TENSAT_HD inline float binary_apply<float>(BinaryFn fn, float x, float y) {
  switch (fn) {
    case BinaryFn::Add: return x + y;
    case BinaryFn::Sub: return x - y;
    case BinaryFn::Mul: return x * y;
    case BinaryFn::Div: return x / y;
    case BinaryFn::Pow: return powf(x, y);
    case BinaryFn::Max: return fmaxf(x, y);
    case BinaryFn::Min: return fminf(x, y);
  }
  return x;
}

}  // namespace tensat::exec::opaque
