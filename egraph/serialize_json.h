// EGraph -> egraph-serialize JSON (the format of extraction-gym and
// /work/shared/data/extraction-gym-tensat/*.json):
//
//   {"nodes": {"<node id>": {"op": "...", "children": ["<node id>", ...],
//                            "eclass": "<class id>", "cost": 0.0}, ...},
//    "root_eclasses": ["<class id>"]}
//
// Node ids are "<class>__<k>" (k-th live e-node of the class), class ids are the canonical
// EClassId numbers; k counts all live e-nodes of the class, so ids are stable whether or not
// filtered nodes are exported. A child is named by the first exported e-node of its class, as
// egraph-serialize does (children stand for e-classes; any node of the class will do). `op` is the
// operator name (op.h) for operator nodes, the integer for a Num leaf, the text for a Sym
// leaf. Filtered e-nodes are left out unless `include_filtered` is set (then they carry
// "filtered": true).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "egraph/egraph.h"

namespace tensat {

using NodeCostFn = std::function<double(const EGraph&, ENodeId)>;

struct SerializeOptions {
  bool include_filtered = false;
};

nlohmann::json egraph_to_json(const EGraph& eg, EClassId root, const NodeCostFn& cost,
                              const SerializeOptions& opt = {});
std::string egraph_to_json_string(const EGraph& eg, EClassId root, const NodeCostFn& cost,
                                  const SerializeOptions& opt = {});

/// "<class>__<k>": the JSON id of e-node `id`.
std::string json_node_id(const EGraph& eg, ENodeId id);

}  // namespace tensat
