// Bridge e-graph <-> extraction.
#include "pipeline/egraph_extract.h"

#include <unordered_map>

#include "egraph/bridge.h"

namespace tensat {

ExtractView to_extract_graph(const EGraph& eg, EClassId root, const std::vector<double>& costs) {
  ExtractView v;
  std::unordered_map<uint32_t, extract::ClassIdx> index;
  for (EClassId c : eg.class_ids()) {
    index[c.v] = v.graph.add_class("c" + std::to_string(c.v));
    v.class_of_index.push_back(c);
  }
  for (EClassId c : eg.class_ids()) {
    extract::ClassIdx ci = index.at(c.v);
    for (ENodeId n : eg.eclass(c).nodes) {
      const ENode& e = eg.node(n);
      std::vector<extract::ClassIdx> kids;
      kids.reserve(e.children.size());
      for (auto ch : e.children) kids.push_back(index.at(eg.find(ch).v));
      extract::NodeIdx ni = v.graph.add_node(ci, std::string(op_name(e.op)), std::move(kids), costs[n.v]);
      v.graph.nodes[ni].filtered = eg.is_filtered(n);
      v.node_of_index.push_back(n);
    }
  }
  v.graph.roots.push_back(index.at(eg.find(root).v));
  return v;
}

ir::Graph choice_to_graph(const EGraph& eg, EClassId root, const ExtractView& view, const extract::Choice& choice) {
  std::vector<int64_t> by_class(eg.class_capacity(), -1);
  for (size_t ci = 0; ci < choice.size(); ++ci) {
    if (choice[ci] < 0) continue;
    by_class[view.class_of_index[ci].v] = static_cast<int64_t>(view.node_of_index[static_cast<size_t>(choice[ci])].v);
  }
  return term_from_choice(eg, root, by_class);
}

}  // namespace tensat
