// Weight matrices written as Gemm's transposed B (see gemm_weights.h).
#include "exporter/gemm_weights.h"

namespace tensat {

std::vector<bool> transposed_gemm_weights(const ir::Graph& g) {
  const size_t n = g.size();
  std::vector<bool> absorbed(n, false);
  for (ir::NodeId i = 0; i < n; ++i) {
    const ir::Node& nd = g.node(i);
    if (nd.op != Op::Transpose) continue;
    const ir::NodeId w = nd.children[1];
    const ValueType& wt = g.type(w);
    if (g.node(w).op != Op::Weight || wt.kind != Kind::Tensor || wt.tensor.dtype != DType::F32 ||
        wt.tensor.shape.size() != 2)
      continue;
    const auto perm = parse_dims(g.type(nd.children[0]));
    absorbed[i] = perm && *perm == std::vector<int64_t>{1, 0};
  }
  // (matmul ACT A B C): B is child 2.
  for (ir::NodeId i = 0; i < n; ++i) {
    const ir::Node& nd = g.node(i);
    for (size_t k = 0; k < nd.children.size(); ++k) {
      const ir::NodeId c = nd.children[k];
      if (!absorbed[c]) continue;
      // (Whether it is a matmul reading it as B first: another reader may have one child.)
      const bool gemm_b = nd.op == Op::Matmul && k == 2 && g.type(nd.children[1]).kind == Kind::Tensor &&
                          g.type(nd.children[1]).tensor.shape.size() == 2;
      if (!gemm_b) absorbed[c] = false;
    }
  }
  if (g.has_root())
    for (ir::NodeId o : g.outputs()) absorbed[o] = false;
  return absorbed;
}

}  // namespace tensat
