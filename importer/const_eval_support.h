// Internals of the constant evaluator (const_eval.h) shared by its parts: the tensor helpers,
// a node's operands and attributes (Node), numpy broadcasting, and the evaluators of each
// family of operators: const_eval_numeric.cpp (arithmetic, comparisons, rounding, reductions,
// Cast) and const_eval_shape.cpp (shapes and data movement, Constant). An evaluator returns
// the exact result or calls skip() with the reason it cannot be exact.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "importer/const_eval.h"
#include "importer/tensor_proto.h"

namespace tensat::const_eval::detail {

// Raised inside an evaluation that cannot be exact: evaluate() returns nullopt with the reason.
struct Skip {
  std::string why;
};
[[noreturn]] inline void skip(const std::string& why) { throw Skip{why}; }

// ---- tensors ------------------------------------------------------------------------------

inline WeightData make(DType d, Shape s) {
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

inline bool is_int(DType d) { return d == DType::I64 || d == DType::I32; }

// Integer values of an int64 / int32 tensor.
inline std::vector<int64_t> ints(const WeightData& w, const char* what) {
  auto v = integer_values(w);
  if (!v) skip(std::string(what) + " is not an integer tensor");
  return *v;
}

inline WeightData i64_tensor(const std::vector<int64_t>& v, Shape s) {
  WeightData w = make(DType::I64, std::move(s));
  if (!v.empty()) std::memcpy(w.bytes.data(), v.data(), v.size() * 8);
  return w;
}

inline int64_t scalar_int(const WeightData& w, const char* what) {
  if (w.count() != 1) skip(std::string(what) + " is not a single value");
  return ints(w, what)[0];
}

// Row-major strides (in elements).
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

inline int64_t norm_axis(int64_t axis, int64_t rank, const char* what) {
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


inline WeightData reshaped(const WeightData& x, Shape s) {
  WeightData out = x;
  out.type.shape = std::move(s);
  return out;
}

// ---- the evaluators ----------------------------------------------------------------------------

// const_eval_numeric.cpp
WeightData arithmetic(const Node& n, char op);
WeightData power(const Node& n);
WeightData compare(const Node& n, const std::string& op);
WeightData logical(const Node& n, const std::string& op);
WeightData neg(const Node& n);
WeightData unary(const Node& n, const std::string& op);
WeightData trilu(const Node& n);
WeightData where(const Node& n);
WeightData reduce(const Node& n, const std::string& op);
WeightData cast(const Node& n, bool like = false);

// const_eval_shape.cpp
WeightData shape_of(const Node& n);
WeightData reshape(const Node& n);
WeightData unsqueeze(const Node& n);
WeightData squeeze(const Node& n);
WeightData concat(const Node& n);
WeightData gather(const Node& n);
WeightData slice(const Node& n);
WeightData transpose(const Node& n);
WeightData expand(const Node& n);
WeightData constant_of_shape(const Node& n);
WeightData range(const Node& n);
WeightData constant(const Node& n, const onnx::NodeProto& node);

}  // namespace tensat::const_eval::detail
