// Value types of the tensor language and shape inference for every operator.
//
// The same `infer_type` serves the term graph (ir::Graph), the e-class analysis and the
// rule checks, so a shape rule lives in exactly one place. Parameters are values too: the
// type of a Num leaf carries its integer, a Sym leaf its string, so inference reads them
// from the children's types.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "lang/op.h"

namespace tensat {

enum class DType : uint8_t { F32, F16, F64, I64, I32, I8, U8, Bool, Other };
std::string_view dtype_name(DType d);             ///< "f32", "i64", ...
std::optional<DType> dtype_from_name(std::string_view s);

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);            ///< "[1,3,224,224]"
int64_t num_elements(const Shape& s);

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

enum class Kind : uint8_t { Tensor, Int, Sym, Tuple };

/// The type of an e-class / graph node.
struct ValueType {
  Kind kind = Kind::Tensor;
  TensorType tensor;               ///< Kind::Tensor
  std::vector<TensorType> tuple;   ///< Kind::Tuple (split: 2 parts; opaque: its outputs)
  int64_t num = 0;                 ///< Kind::Int
  std::string sym;                 ///< Kind::Sym
  /// Every field equal (as the defaulted comparison), the cheap and telling ones first and the
  /// shape without a library call: the applier compares types for every rewrite it plans.
  friend bool operator==(const ValueType& a, const ValueType& b) {
    if (a.kind != b.kind || a.num != b.num || a.tensor.dtype != b.tensor.dtype) return false;
    const Shape &sa = a.tensor.shape, &sb = b.tensor.shape;
    if (sa.size() != sb.size()) return false;
    for (size_t i = 0; i < sa.size(); ++i)
      if (sa[i] != sb[i]) return false;
    return a.tuple == b.tuple && a.sym == b.sym;
  }

  static ValueType of_tensor(TensorType t);
  static ValueType of_int(int64_t v);
  static ValueType of_sym(std::string s);
  bool is_tensor() const { return kind == Kind::Tensor; }
  const Shape& shape() const { return tensor.shape; }
  std::string str() const;
};

/// Result of shape inference: a type, or the reason the node is ill-typed.
struct InferResult {
  std::optional<ValueType> type;
  std::string error;
  explicit operator bool() const { return type.has_value(); }
};

/// Type of a node with operator `op`, leaf value (num/sym, for Num/Sym only) and the types
/// of its children. Never throws; an ill-typed node gives an error message.
InferResult infer_type(Op op, int64_t num, std::string_view sym,
                       const std::vector<const ValueType*>& children);

// ---- parameter encodings ----------------------------------------------------------------

/// "name@1_3_224_224" (f32) or "name@4:i64"; rank 0 is "name@".
std::string make_leaf_id(std::string_view name, const TensorType& t);
struct LeafId {
  std::string name;
  TensorType type;
};
std::optional<LeafId> parse_leaf_id(std::string_view id);

/// Dimension lists (reshape target, transpose permutation) as a parameter: a Num for rank 1,
/// else a Sym "a_b_c". parse_dims accepts both.
std::string dims_to_sym(const std::vector<int64_t>& d);
std::optional<std::vector<int64_t>> parse_dims(const ValueType& v);

/// Explicit padding of a 2-D window.
struct Pads {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  bool operator==(const Pads&) const = default;
};
/// Canonical pad symbol for a kernel: "same" if symmetric (k-1)/2 with odd kernel in both
/// dimensions, "valid" if all zero, else "pT_L_B_R".
std::string pad_symbol(const Pads& p, int64_t kh, int64_t kw);
/// Pads that a pad symbol means for a kernel; nullopt if malformed or "same" on an even kernel.
std::optional<Pads> resolve_pads(std::string_view sym, int64_t kh, int64_t kw);

/// Output spatial size of a window op; nullopt if non-positive.
std::optional<int64_t> window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo,
                                  int64_t pad_hi);

/// Numpy broadcast of two shapes; nullopt if incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
/// [lead, end): the dimensions of s without its leading and trailing 1s. Before opset 7 ONNX
/// broadcast b onto a with b's dimensions placed on a's from an axis on (legacy broadcasting):
/// the importer reads it and the exporter writes it with this part of b only.
std::pair<size_t, size_t> inner_dims(const Shape& s);

/// Opaque identifier: "k|f32[1,3]|i64[2]" -> node index k and output types.
struct OpaqueId {
  int64_t index = 0;
  std::vector<TensorType> outputs;
};
std::string make_opaque_id(int64_t index, const std::vector<TensorType>& outputs);
std::optional<OpaqueId> parse_opaque_id(std::string_view id);

}  // namespace tensat
