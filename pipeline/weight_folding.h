// Weight folding, the pipeline step between extraction and export: every weight-only subgraph
// that the graph needs (a concatenation, enlargement, merge or transpose of weights, the zeros
// of a bias, ...) is computed once on the CPU and becomes a new weight leaf, so the exporter
// only writes. TENSAT charges such subgraphs nothing (they run once, not per inference); this
// step is where that promise is kept. One exception: the transpose of a weight matrix that a
// Gemm reads as B (how nn.Linear imports) stays, and the exporter writes Gemm with transB = 1
// over the weight itself (lang/graph.h, transposed_weights_read_as_b).
#pragma once

#include "lang/graph.h"
#include "lang/weights.h"

namespace tensat {

struct FoldStats {
  int folded = 0;  ///< weight-only subgraphs computed into new weights
};

/// Returns `g` with each needed weight-only tensor node (is_weight_only, not already a weight
/// leaf, read by a node that is not weight-only or a graph output; not a transposed weight
/// matrix that ir::transposed_weights_read_as_b(g, true) names) replaced by a weight leaf
/// whose float32 value is computed with the CPU reference executor and stored in `weights`
/// under a fresh name ("tensat_folded", "tensat_folded_1", ...). The result is compacted.
/// Throws exec::ExecError if a value cannot be computed.
ir::Graph fold_weights(const ir::Graph& g, WeightStore& weights, FoldStats* stats = nullptr);

}  // namespace tensat
