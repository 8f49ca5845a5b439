// Host (CPU) evaluation of opaque nodes that only move elements or compute on small
// constants: the shape computations real exports carry (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape), evaluated once when a plan is built, by both executors.
//
// The element movement here is generic over the element size, so the CPU reference executor
// also uses it for float32 data at run time (refexec/opaque.cpp), and the GPU executor uses
// strided_map() to drive its gather kernel: one definition of each index mapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/opaque_decode.h"

namespace tensat::exec::opaque {

/// Output element i (row-major over out_dims) reads input element base + sum(idx[d] *
/// in_strides[d]), in elements. Transpose, Slice (negative steps give negative strides),
/// Expand (broadcast dims have stride 0) and View are all of this form.
struct StridedMap {
  Shape out_dims;
  std::vector<int64_t> in_strides;
  int64_t base = 0;
};
/// The map of a Transpose, Slice, Expand or View description; nullopt for others.
std::optional<StridedMap> strided_map(const Desc& d, const Shape& view_shape = {});

/// Row-major strides of a shape, in elements.
std::vector<int64_t> strides_of(const Shape& s);

/// Performs a data-movement description (is_data_movement) on elements of `elem_size` bytes.
/// inputs: one pointer per data operand (Decoded::data order); out: the output's elements.
/// `out_shape` is the output's static shape (needed by View).
void move_elements(const Desc& d, const std::vector<const void*>& inputs, size_t elem_size, const Shape& out_shape,
                   void* out);

/// out = a (fn) b with numpy broadcasting (a, b, out shapes as in Binary).
template <typename T>
void binary_broadcast(BinaryFn fn, const T* a, const Shape& sa, const T* b, const Shape& sb, T* out, const Shape& so) {
  const auto n = static_cast<size_t>(num_elements(so));
  const size_t r = so.size();
  std::vector<int64_t> st_a(r, 0), st_b(r, 0);
  auto fill = [&](const Shape& s, std::vector<int64_t>& st) {
    auto own = strides_of(s);
    size_t lead = r - s.size();
    for (size_t d = 0; d < s.size(); ++d) st[lead + d] = s[d] == 1 ? 0 : own[d];
  };
  fill(sa, st_a);
  fill(sb, st_b);
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = binary_apply<T>(fn, a[oa], b[ob]);
    for (size_t d = r; d-- > 0;) {  // odometer step
      if (++idx[d] < so[d]) {
        oa += st_a[d];
        ob += st_b[d];
        break;
      }
      oa -= st_a[d] * (so[d] - 1);
      ob -= st_b[d] * (so[d] - 1);
      idx[d] = 0;
    }
  }
}

/// Evaluates an opaque node from constant inputs on the host: data movement of any element
/// type, Binary on f32/f64/i64/i32, Unary on f32, and the Host descriptions (Shape, Size,
/// ConstantOfShape, Cast). consts: per child of the node, its value (nullptr where not
/// constant; every data child must be constant). nullopt with `why` set when it cannot.
std::optional<WeightData> eval_host(const OpaqueOp& op, const Decoded& d, const std::vector<const ValueType*>& kids,
                                    const TensorType& out, const std::vector<const WeightData*>& consts,
                                    std::string* why);

}  // namespace tensat::exec::opaque
