// Costing implementation.
#include "pipeline/costing.h"


namespace tensat {

double graph_cost(const ir::Graph& g, cost::CostModel& model) {
  ir::Graph c = g.compact();
  std::vector<bool> wo = weight_only_nodes(c);
  double total = 0;
  std::vector<const ValueType*> kids;
  for (ir::NodeId i = 0; i < c.size(); ++i) {
    const ir::Node& n = c.node(i);
    kids.clear();
    for (auto ch : n.children) kids.push_back(&c.type(ch));
    total += model.node_cost(n.op, kids, wo[i]);
  }
  return total;
}

std::vector<double> enode_costs(const EGraph& eg, cost::CostModel& model) {
  std::vector<double> out(eg.node_capacity(), 0.0);
  std::vector<const ValueType*> kids;
  for (EClassId c : eg.class_ids()) {
    for (ENodeId n : eg.eclass(c).nodes) {
      const ENode& e = eg.node(n);
      kids.clear();
      // Weight-only per node (not per class): the node itself is computable at export time.
      bool all = true;
      for (auto ch : e.children) {
        kids.push_back(&eg.type(ch));
        all = all && eg.data(ch).weight_only;
      }
      out[n.v] = model.node_cost(e.op, kids, is_weight_only(e.op, all));
    }
  }
  return out;
}

}  // namespace tensat
