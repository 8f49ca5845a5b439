// Costing: the cost-model total of a term graph and the per-e-node costs of an e-graph
// (TASO's model: the sum of the operators' costs; weight-only nodes cost 0).
#pragma once

#include <vector>

#include "egraph/egraph.h"
#include "lang/graph.h"
#include "gpu_cost/cost_model.h"

namespace tensat {

/// Sum of node costs over the nodes reachable from the root.
double graph_cost(const ir::Graph& g, cost::CostModel& model);

/// Cost of every live e-node (indexed by ENodeId; dead nodes get 0).
std::vector<double> enode_costs(const EGraph& eg, cost::CostModel& model);

}  // namespace tensat
