// egraph-serialize JSON export (see serialize_json.h).
#include "egraph/serialize_json.h"

#include <algorithm>

namespace tensat {

std::string json_node_id(const EGraph& eg, ENodeId id) {
  EClassId c = eg.class_of(id);
  const auto& nodes = eg.eclass(c).nodes;
  auto it = std::lower_bound(nodes.begin(), nodes.end(), id);
  return std::to_string(c.v) + "__" + std::to_string(it - nodes.begin());
}

nlohmann::json egraph_to_json(const EGraph& eg, EClassId root, const NodeCostFn& cost,
                              const SerializeOptions& opt) {
  eg.require_clean("egraph_to_json");
  // A child names the first exported e-node of its class.
  auto child_id = [&](EClassId ch) {
    ch = eg.find(ch);
    const auto& ns = eg.eclass(ch).nodes;
    size_t k = 0;
    if (!opt.include_filtered)
      while (k + 1 < ns.size() && eg.is_filtered(ns[k])) ++k;
    return std::to_string(ch.v) + "__" + std::to_string(k);
  };
  nlohmann::json nodes = nlohmann::json::object();
  for (EClassId c : eg.class_ids()) {
    const auto& ns = eg.eclass(c).nodes;
    for (size_t k = 0; k < ns.size(); ++k) {
      ENodeId nid = ns[k];
      bool filtered = eg.is_filtered(nid);
      if (filtered && !opt.include_filtered) continue;
      const ENode& en = eg.node(nid);
      nlohmann::json j;
      if (en.op == Op::Num) j["op"] = std::to_string(en.num);
      else if (en.op == Op::Sym) j["op"] = eg.symbol(static_cast<uint32_t>(en.num));
      else j["op"] = std::string(op_name(en.op));
      nlohmann::json kids = nlohmann::json::array();
      for (EClassId ch : en.children) kids.push_back(child_id(ch));
      j["children"] = std::move(kids);
      j["eclass"] = std::to_string(c.v);
      j["cost"] = cost ? cost(eg, nid) : 0.0;
      if (filtered) j["filtered"] = true;
      nodes[std::to_string(c.v) + "__" + std::to_string(k)] = std::move(j);
    }
  }
  nlohmann::json out;
  out["nodes"] = std::move(nodes);
  out["root_eclasses"] = nlohmann::json::array({std::to_string(eg.find(root).v)});
  return out;
}

std::string egraph_to_json_string(const EGraph& eg, EClassId root, const NodeCostFn& cost,
                                  const SerializeOptions& opt) {
  return egraph_to_json(eg, root, cost, opt).dump();
}

}  // namespace tensat
