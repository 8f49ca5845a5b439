// Bridge e-graph <-> extraction.
#include "pipeline/egraph_extract.h"

#include <string>

#include "egraph/bridge.h"

namespace tensat {

ExtractView to_extract_graph(const EGraph& eg, EClassId root, const std::vector<double>& costs) {
  ExtractView v;
  std::vector<extract::ClassIdx> index(eg.class_capacity(), 0);  // by e-class id (dense)
  // (Reserved: growing the node array moves every node, its op string and children, about
  // 13 times on NasRNN's 13k e-nodes.)
  size_t classes = 0, nodes = 0;
  for (EClassId c : eg.class_ids()) {
    ++classes;
    nodes += eg.eclass(c).nodes.size();
  }
  v.graph.classes.reserve(classes);
  v.graph.nodes.reserve(nodes);
  v.class_of_index.reserve(classes);
  v.node_of_index.reserve(nodes);
  for (EClassId c : eg.class_ids()) {
    index[c.v] = v.graph.add_class("c" + std::to_string(c.v));
    v.class_of_index.push_back(c);
  }
  for (EClassId c : eg.class_ids()) {
    const extract::ClassIdx ci = index[c.v];
    for (ENodeId n : eg.eclass(c).nodes) {
      const ENode& e = eg.node(n);
      std::vector<extract::ClassIdx> kids;
      kids.reserve(e.children.size());
      for (auto ch : e.children) kids.push_back(index[eg.find(ch).v]);
      extract::NodeIdx ni = v.graph.add_node(ci, std::string(op_name(e.op)), std::move(kids), costs[n.v]);
      v.graph.nodes[ni].filtered = eg.is_filtered(n);
      v.node_of_index.push_back(n);
    }
  }
  v.graph.roots.push_back(index[eg.find(root).v]);
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

extract::Choice graph_to_choice(const EGraph& eg, const ExtractView& view, const ir::Graph& g,
                                const std::vector<EClassId>& node_classes) {
  // The view's indices by e-class and e-node id (-1: not in the view).
  std::vector<int64_t> class_index(eg.class_capacity(), -1), node_index(eg.node_capacity(), -1);
  for (size_t ci = 0; ci < view.class_of_index.size(); ++ci) class_index[view.class_of_index[ci].v] = static_cast<int64_t>(ci);
  for (size_t ni = 0; ni < view.node_of_index.size(); ++ni) node_index[view.node_of_index[ni].v] = static_cast<int64_t>(ni);
  extract::Choice choice(view.graph.classes.size(), -1);
  for (size_t i = 0; i < g.size() && i < node_classes.size(); ++i) {
    if (!node_classes[i].valid()) continue;  // not reachable from g's root
    const ir::Node& nd = g.node(static_cast<ir::NodeId>(i));
    const EClassId c = eg.find(node_classes[i]);
    // The e-node of this term node: same operator, value and (canonical) child classes.
    auto same = [&](const ENode& e) {
      if (e.op != nd.op || e.children.size() != nd.children.size()) return false;
      if (nd.op == Op::Num && e.num != nd.num) return false;
      if (nd.op == Op::Sym && eg.symbol(static_cast<uint32_t>(e.num)) != nd.sym) return false;
      for (size_t k = 0; k < nd.children.size(); ++k)
        if (eg.find(e.children[k]) != eg.find(node_classes[nd.children[k]])) return false;
      return true;
    };
    int64_t found = -1;
    for (ENodeId n : eg.eclass(c).nodes)
      if (same(eg.node(n))) {
        found = node_index[n.v];
        break;
      }
    const int64_t ci = class_index[c.v];
    if (found < 0 || ci < 0) return {};
    if (choice[ci] >= 0 && choice[ci] != found) return {};
    choice[ci] = found;
  }
  return choice;
}

}  // namespace tensat
