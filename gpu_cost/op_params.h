// Decoded operator parameters for the cost models and the GPU kernels.
//
// An operator signature is an Op plus the ValueTypes of its children (parameters first,
// tensors last, lang/op.h). The roofline model, the CUDA measurements and the GPU
// executor all need the same numbers out of it (conv geometry, pool windows, matmul
// batch shapes), so they are decoded here once. Plain C++: also included by .cu files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lang/op.h"
#include "lang/types.h"

namespace tensat::cost {

using Children = std::vector<const ValueType*>;

/// (conv SH SW PAD ACT x w BIAS): x [N,Cin,H,W], w [Cout,Cin/groups,KH,KW].
struct ConvDesc {
  int64_t n = 0, cin = 0, h = 0, w = 0;
  int64_t cout = 0, cin_per_group = 0, kh = 0, kw = 0, groups = 1;
  int64_t sh = 1, sw = 1;
  Pads pads;
  int64_t oh = 0, ow = 0;
  Act act = Act::None;
  bool has_bias = false;
  bool symmetric_pads() const { return pads.top == pads.bottom && pads.left == pads.right; }
};

/// (poolmax KH KW SH SW PAD x) / (poolavg KH KW SH SW PAD CIP x).
struct PoolDesc {
  bool max = true;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  Pads pads;
  int64_t oh = 0, ow = 0;
  bool count_include_pad = false;
  bool symmetric_pads() const { return pads.top == pads.bottom && pads.left == pads.right; }
};

/// (matmul ACT a b BIAS): a [..,M,K] @ b [..,K,N] with numpy-broadcast batch dimensions.
struct MatmulDesc {
  Shape a_batch, b_batch, out_batch;  ///< batch dims (out_batch = broadcast)
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;                  ///< product of out_batch
  Act act = Act::None;
  bool has_bias = false;
};

std::optional<ConvDesc> conv_desc(const Children& c);
std::optional<PoolDesc> pool_desc(Op op, const Children& c);
std::optional<MatmulDesc> matmul_desc(const Children& c);

/// Output type of a well-typed node (infer_type); nullopt if ill-typed.
std::optional<ValueType> output_type(Op op, const Children& c);

/// Bytes of a tensor / every tensor of a value (tuple: all parts; params: 0).
int64_t tensor_bytes(const TensorType& t);
int64_t value_bytes(const ValueType& v);

/// Whether transposing `shape` by `perm` moves data in memory (false when only size-1
/// dimensions move, e.g. [1,C,1,1] -> [C,1,1,1]: then it is a reshape and costs nothing).
bool transpose_moves_data(const std::vector<int64_t>& perm, const Shape& shape);

/// True when the node costs nothing at run time and runs no kernel: a free operator
/// (OpInfo::free: leaves, parameters, reshape, tuple parts, the root) or a transpose that
/// moves no data. Opaque nodes are not free (they run, outside the language).
bool is_free_node(Op op, const Children& c);

/// Row-major strides of a shape, in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

}  // namespace tensat::cost
