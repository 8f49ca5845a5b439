// The executor's float32 kernels, one function per operator of the tensor language.
//
// Internal to refexec (the executor and the tests call them). Every kernel reads its
// operands through a View (shape + pointer, so weights and caller-owned tensors are used in
// place, never copied) and returns a fresh Tensor. Kernels assume their operands are
// well-typed (ir::Graph only holds nodes that passed types.cpp's inference) and assert it;
// the output shapes are exactly those types.cpp infers.
#pragma once

#include <cstdint>
#include <utility>

#include "exec/opaque_decode.h"
#include "lang/op.h"
#include "lang/types.h"
#include "refexec/executor.h"

namespace tensat::refexec {

/// A read-only float32 tensor that someone else owns.
struct View {
  Shape shape;
  const float* data = nullptr;

  View() = default;
  View(Shape s, const float* d) : shape(std::move(s)), data(d) {}
  View(const Tensor& t) : shape(t.shape), data(t.data.data()) {}  // NOLINT: implicit on purpose
  size_t size() const { return static_cast<size_t>(num_elements(shape)); }
};

// ---- elementwise.cpp --------------------------------------------------------------------
enum class BinOp : uint8_t { Add, Mul };
/// a (op) b with numpy broadcasting.
Tensor binary(BinOp op, const View& a, const View& b);
/// In-place activation of n values.
void apply_act(float* data, size_t n, Act act);
/// act(x) as a new tensor (the relu/tanh/sigmoid operators).
Tensor unary(const View& x, Act act);
/// In-place: x[..., c, inner] = act(x + bias[c]) for `outer` blocks of [channels, inner]
/// (conv: outer = N, inner = H*W; matmul: outer = rows, inner = 1). bias may be null.
void bias_act(float* x, int64_t outer, int64_t channels, int64_t inner, const float* bias,
              Act act);

// ---- matmul.cpp -------------------------------------------------------------------------
/// act(a @ b + bias): a [..., M, K], b [..., K, N], batch dims broadcast; bias [N] or null.
Tensor matmul(const View& a, const View& b, const float* bias, Act act);
/// act(a @ bt^T + bias) for a matrix bt [N, K] (a (transpose 1_0 W) read in place: Gemm's
/// transB), a [..., M, K].
Tensor matmul_transposed_b(const View& a, const View& bt, const float* bias, Act act);

// ---- conv.cpp ---------------------------------------------------------------------------
/// Default bound on the im2col column band, in floats (16 MiB).
inline constexpr int64_t kConvColumnBudget = int64_t{1} << 22;
/// 2-D convolution, NCHW. x [N, Cin, H, W], w [Cout, Cin/groups, kh, kw] with
/// groups = Cin / w[1]; bias [Cout] or null; then act. The column matrix is built for as
/// many output rows at a time as fit in `col_budget` floats (at least one row).
Tensor conv2d(const View& x, const View& w, const float* bias, int64_t sh, int64_t sw,
              const Pads& pads, Act act, int64_t col_budget = kConvColumnBudget);

// ---- pool.cpp ---------------------------------------------------------------------------
/// Max pooling; padded positions are ignored (as if -inf).
Tensor pool_max(const View& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const Pads& p);
/// Average pooling (ONNX): count_include_pad divides by kh*kw, else by the number of
/// non-padding elements in the window.
Tensor pool_avg(const View& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, const Pads& p,
                bool count_include_pad);

// ---- layout.cpp -------------------------------------------------------------------------
/// out.shape[i] = x.shape[perm[i]].
Tensor transpose(const View& x, const std::vector<int64_t>& perm);
/// Same data, new shape (element counts must agree).
Tensor reshape(const View& x, const Shape& shape);
/// Zero-pads kernel w [O, I, kh0, kw0] to [O, I, kh, kw], centred.
Tensor enlarge(const View& w, int64_t kh, int64_t kw);
/// Concatenation along axis.
Tensor concat(int64_t axis, const View& a, const View& b);
/// (x[.., :pos, ..], x[.., pos:, ..]) along axis.
std::pair<Tensor, Tensor> split(int64_t axis, int64_t pos, const View& x);
/// TASO merge_gconv: w [O, I, kh, kw] -> [O, I*count, kh, kw], zero except
/// out[o, s*I + i] = w[o, i] with s = o / (O / count).
Tensor merge(int64_t count, const View& w);

// ---- opaque.cpp --------------------------------------------------------------------------
/// An opaque ONNX operator on float32 data (a decoded description, exec/opaque_decode.h):
/// data holds its run-time operands in Decoded::data order; the result has out_shape.
Tensor opaque_kernel(const exec::opaque::Decoded& d, const std::vector<View>& data, const Shape& out_shape);

}  // namespace tensat::refexec
