// The operators of the tensor language (TENSAT Table 2, extended for real ONNX models).
//
// Argument order, fixed once for the whole project: parameters first, tensor operands last.
//
//   (input  ID)                         ID = "name@d1_d2_..." (":i64" etc. suffix for non-f32)
//   (weight ID)                         same identifier form; data lives in the WeightStore
//   (zeros N)                           a constant zero vector of length N
//   (ewadd a b) (ewmul a b)             numpy broadcasting
//   (matmul ACT a b BIAS)               act(a @ b + bias); a [..,M,K], b [..,K,N], bias [N]
//   (conv SH SW PAD ACT x w BIAS)       NCHW, w [Cout, Cin/groups, kh, kw], groups = Cin / w[1]
//   (relu x) (tanh x) (sigmoid x)
//   (act ACT x)                         ACT applied alone; only the parameterized ones (clip, leaky)
//   (poolmax KH KW SH SW PAD x)
//   (poolavg KH KW SH SW PAD CIP x)     CIP: count_include_pad (0/1)
//   (transpose PERM x)                  PERM = "1_0_2" (or a Num for rank 1)
//   (reshape SHAPE x)                   SHAPE = "64_16_64" (or a Num for rank 1), fully static
//   (enlarge w ref)                     zero-pad kernel w (centred) to ref's kh, kw
//   (concat AXIS a b)                   binary; n-ary ONNX Concat becomes a left-deep tree
//   (split AXIS POS x)                  a tuple (x[..:POS..], x[..POS:..]) along AXIS
//   (split_0 t) (split_1 t)
//   (merge COUNT w)                     TASO's merge_gconv weight transform
//   (noop x1 ... xn)                    joins the graph outputs into one root
//   (opaque ID x1 ... xn)               an ONNX node we do not model; ID = "k|f32[1,3]|i64[2]"
//   (select K t)                        the K-th output of a multi-output opaque node
//
// ACT is a symbol: none | relu | sigmoid | tanh | relu6 | clip_LO_HI | leaky_ALPHA (see Act below).
// BIAS is the symbol none, or an f32 tensor [N] / [Cout] added before the activation.
// PAD is a symbol: same (symmetric (k-1)/2, odd kernels) | valid (all zero) | pT_L_B_R.
// Num and Sym are the parameter leaves: integer and string constants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tensat {

enum class Op : uint8_t {
  Num,
  Sym,
  Input,
  Weight,
  Zeros,
  Ewadd,
  Ewmul,
  Matmul,
  Conv,
  Relu,
  Tanh,
  Sigmoid,
  Act,
  Poolmax,
  Poolavg,
  Transpose,
  Reshape,
  Enlarge,
  Concat,
  Split,
  Split0,
  Split1,
  Merge,
  Noop,
  Opaque,
  Select,
};

inline constexpr int kNumOps = static_cast<int>(Op::Select) + 1;

/// Static facts about an operator: the one place that says what each operator is. Adding an
/// operator: lang/README.md has the checklist.
struct OpInfo {
  std::string_view name;
  int min_arity;  ///< number of children (min == max unless variadic)
  int max_arity;  ///< -1: unbounded
  int num_params; ///< leading children that are parameters (Num/Sym), not tensors
  /// Computable ahead of time when every child is (weight_only below): false for the
  /// operators whose value depends on the model's inputs or on what the language does not
  /// model (input, opaque, select) and for the noop root.
  bool foldable = true;
  /// Costs nothing at run time, whatever its operands: parameters and leaves, the root,
  /// views of a tuple part, and reshape (a view of the same bytes). A transpose that moves no
  /// data is free too, but that depends on its shape (the cost models decide).
  bool free = false;
  /// Index of the ACT parameter child (an activation fused into the operator), or -1.
  int act_param = -1;
};

const OpInfo& op_info(Op op);
std::string_view op_name(Op op);
std::optional<Op> op_from_name(std::string_view name);

/// True for Num and Sym.
inline bool is_param_leaf(Op op) { return op == Op::Num || op == Op::Sym; }

/// The weight-only predicate, the one definition every part uses: a node is weight-only
/// (computable once, ahead of time: TENSAT charges it nothing, the exporter writes its value as
/// an initializer) when its operator is foldable and every child is weight-only. Leaves without
/// tensor children (num, sym, weight, zeros) are therefore weight-only; input never is.
inline bool is_weight_only(Op op, bool all_children_weight_only) {
  return op_info(op).foldable && all_children_weight_only;
}

/// Activation functions: the ACT parameter of conv and matmul (fused into the operator) and of
/// the `act` operator (applied alone). The parameterized ones are exact functions of float32
/// parameters, which their symbols write exactly (shortest round-trip decimal form):
///   clip: min(hi, max(lo, x)), symbol `relu6` for clip(0, 6), else `clip_LO_HI`
///         (ONNX Clip with constant bounds; a missing bound is float's lowest / max);
///   leaky: x >= 0 ? x : alpha * x, symbol `leaky_ALPHA` (ONNX LeakyRelu).
/// Each activation has exactly one symbol (act_from_name accepts only the canonical spelling,
/// so that equal activations hash-cons to the same e-class parameter).
struct Act {
  enum Kind : uint8_t { None, Relu, Sigmoid, Tanh, Clip, Leaky };
  Kind kind = None;
  float lo = 0.0f, hi = 0.0f;  ///< Clip bounds
  float alpha = 0.0f;          ///< Leaky slope
  constexpr Act(Kind k = None) : kind(k) {}  // NOLINT: Act::Relu converts implicitly
  static Act clip(float lo, float hi);
  static Act leaky(float alpha);
  /// Clip and Leaky: the activations that exist only as ACT parameters (no operator of
  /// their own), applied alone by the `act` operator.
  bool parameterized() const { return kind == Clip || kind == Leaky; }
  friend bool operator==(const Act&, const Act&) = default;
};
/// The canonical symbol; nullopt never: every Act has one (NaN parameters are not Acts).
std::string act_name(const Act& a);
/// The activation a symbol names, if it is a canonical activation symbol.
std::optional<Act> act_from_name(std::string_view s);
/// The activation's value at v: the definition the CPU executor follows (the GPU kernels
/// spell out the same expressions). clip is min(hi, max(lo, v)) with std::min/std::max.
inline float act_value(const Act& a, float v) {
  switch (a.kind) {
    case Act::None: return v;
    case Act::Relu: return v > 0.0f ? v : 0.0f;
    case Act::Sigmoid: return 1.0f / (1.0f + std::exp(-v));
    case Act::Tanh: return std::tanh(v);
    case Act::Clip: return std::min(a.hi, std::max(a.lo, v));
    case Act::Leaky: return v >= 0.0f ? v : a.alpha * v;
  }
  return v;
}

}  // namespace tensat
