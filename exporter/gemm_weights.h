// Weight matrices written as Gemm's transposed B (transB = 1), not folded.
//
// The importer reads Gemm(A, W, C, transB = 1), how PyTorch writes every nn.Linear on a
// matrix, as (matmul none A (transpose 1_0 W) C). Folding that transpose (pipeline/
// weight_folding.h) wrote a transposed copy of W and a plain Gemm: on VGG-11-BN a 411 MB copy
// (2-4 s of a 6-10 s run), and an output whose classifier weights all differ from the
// input's. Such a matmul is written as Gemm(A, W, C, transB = 1) over W itself instead, as
// the input had it, and fold_weights leaves the transpose for it.
#pragma once

#include <vector>

#include "lang/graph.h"

namespace tensat {

/// Per node of g: whether it is a (transpose 1_0 W) of a 2-D float32 weight leaf W, not a graph
/// output, that every node reading it reads as the B operand of a matmul whose A is 2-D. The
/// exporter writes those matmuls as Gemm with transB = 1 over W (and the transpose as nothing);
/// fold_weights does not fold them.
std::vector<bool> transposed_gemm_weights(const ir::Graph& g);

}  // namespace tensat
