// Weight folding: which nodes are weight-only, and their values computed on the CPU so the
// exporter can write them as initializers (TENSAT: such nodes run once, not per inference).
#pragma once

#include <string>
#include <vector>

#include "egraph/graph.h"
#include "egraph/weights.h"

namespace tensat {

/// weight_only[n]: every leaf below n is a weight, zeros or parameter (no input, no opaque).
std::vector<bool> compute_weight_only(const ir::Graph& g);

/// Raw float32 bytes of each target node's value (targets must be weight-only tensors).
using FoldedWeights = std::vector<std::string>;
FoldedWeights fold_weights(const ir::Graph& g, const WeightStore& weights, const std::vector<ir::NodeId>& targets);

}  // namespace tensat
