// Decoding an opaque ONNX node into one of a few kernel descriptions, shared by both
// executors (refexec/opaque.cpp on the CPU, gpu_cost/gpu_opaque.cu on the GPU) and by the
// host evaluation of constant shape computations (opaque_host.h).
//
// decode() reads the node's attributes, the static types of its children and outputs, and the
// host values of its constant children (weights and constants computed before it), and
// returns the description with every parameter resolved (axes normalized, pads and slice
// bounds clamped as ONNX specifies), or the reason it cannot (an op type or attribute no
// executor implements, a parameter input that is not constant). Supported:
//
//   View       Reshape, Flatten, Squeeze, Unsqueeze, Identity, Cast to the same type: the
//              same bytes under the output's static shape
//   Unary      Sqrt Erf Exp Log Neg Abs Reciprocal Floor Ceil Relu Sigmoid Tanh Softplus Elu
//              Clip (any bounds: attributes before opset 11, constant inputs after)
//              LeakyRelu HardSigmoid HardSwish Gelu
//   Binary     Add Sub Mul Div Pow Max Min (two inputs, numpy broadcasting)
//   Softmax    Softmax, LogSoftmax (the 2-D coercion before opset 13, one axis after)
//   Reduce     ReduceMean ReduceSum ReduceMax (axes as attribute or constant input),
//              GlobalAveragePool GlobalMaxPool (any rank)
//   Affine     BatchNormalization, inference mode with constant scale/bias/mean/var
//   Pad        Pad, modes constant / reflect / edge (pads, value and axes as attributes or
//              constant inputs; negative pads crop)
//   Pool       MaxPool, AveragePool on 4-D tensors: any pads, auto_pad, ceil_mode,
//              count_include_pad (no dilations, no Indices output)
//   Gather     Gather with constant indices
//   Slice      Slice (attributes before opset 10, constant inputs after; any steps)
//   Concat     Concat (n inputs)
//   Expand     Expand to the static output shape
//   Transpose  Transpose
//   Host       Shape, Size, ConstantOfShape, Cast between types: evaluated on the host only
//              (their inputs must be constants: opaque_host.h)
//
// The run-time kernels handle float32 data; data movement (View, Gather, Slice, Concat,
// Expand, Transpose) and Binary also run on the host for constants of any modelled type.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "exec/opaque_math.h"
#include "exec/opaque_op.h"
#include "lang/types.h"
#include "lang/weights.h"

namespace tensat::exec::opaque {

struct View {};
struct Unary {
  UnaryFn fn = UnaryFn::Identity;
  float a = 0, b = 0;
};
struct Binary {
  BinaryFn fn = BinaryFn::Add;
  Shape a, b, out;
};
/// Softmax over n elements at stride `inner`, for each of outer*inner rows.
struct Softmax {
  int64_t outer = 1, n = 1, inner = 1;
  bool log = false;
};
enum class ReduceKind : uint8_t { Sum, Mean, Max };
/// Reduces the dims with reduced[d]; the output holds the kept dims in order (keepdims only
/// changes the output's shape, not its data).
struct Reduce {
  ReduceKind kind = ReduceKind::Mean;
  Shape in;
  std::vector<bool> reduced;
};
/// y = x * scale[c] + shift[c], x viewed as [outer, channels, inner].
struct Affine {
  int64_t outer = 1, channels = 1, inner = 1;
  std::vector<float> scale, shift;
};
/// out[o] = in[o - begin] per dim, outside the input by mode.
struct Pad {
  PadMode mode = PadMode::Constant;
  Shape in, out;
  std::vector<int64_t> begin;
  float value = 0;
};
/// 2-D pooling of [n, c, h, w]; windows start at o*s - pt; the padded extent is
/// [-pt, h + pb) (count_include_pad divides by the window clipped to it; ceil mode's last
/// windows may reach past it).
struct Pool {
  bool max = true;
  bool count_include_pad = false;
  int64_t n = 0, c = 0, h = 0, w = 0, kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
};
/// out[o, j, i] = in[o, indices[j], i], in viewed as [outer, axis_len, inner].
struct Gather {
  int64_t outer = 1, axis_len = 1, inner = 1;
  std::vector<int64_t> indices;  ///< normalized to [0, axis_len)
};
/// out[idx] = in[start + idx * step] per dim (steps may be negative).
struct Slice {
  Shape in, out;
  std::vector<int64_t> start, step;
};
struct Concat {
  int64_t axis = 0;
  std::vector<Shape> ins;
  Shape out;
};
struct Expand {
  Shape in, out;
};
struct Transpose {
  Shape in;
  std::vector<int64_t> perm;
};
/// Shape, Size, ConstantOfShape, Cast between types: only opaque_host.h evaluates them.
struct Host {};

using Desc = std::variant<View, Unary, Binary, Softmax, Reduce, Affine, Pad, Pool, Gather, Slice, Concat, Expand,
                          Transpose, Host>;

struct Decoded {
  Desc desc;
  /// The children read as data at run time, in the kernel's operand order (parameter
  /// inputs such as Reshape's shape or Pad's pads are not among them).
  std::vector<size_t> data;
  /// Every data child and the output are float32, so the run-time kernels apply.
  bool f32 = false;
};

struct DecodeResult {
  std::optional<Decoded> decoded;
  std::string why;  ///< when not decoded: what is missing, e.g. "Pad mode 'wrap'"
};

/// kids: the types of the opaque node's children (after its identifier); outs: its output
/// types; consts: per child, its host value if it is a constant (nullptr otherwise).
DecodeResult decode(const OpaqueOp& op, const std::vector<const ValueType*>& kids, const std::vector<TensorType>& outs,
                    const std::vector<const WeightData*>& consts);

/// True for the descriptions that only move elements (View, Gather, Slice, Concat, Expand,
/// Transpose): they work on any element type.
bool is_data_movement(const Desc& d);

/// Values of an integer (i64/i32) constant; nullopt for other element types.
std::optional<std::vector<int64_t>> int_values(const WeightData& w);
/// The single value of a float constant (f32/f64, one element); nullopt otherwise.
std::optional<float> scalar_f32(const WeightData& w);

}  // namespace tensat::exec::opaque
