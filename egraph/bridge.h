// Bridges between the term graph (ir::Graph) and the e-graph.
//
//   add_graph      ir::Graph -> EGraph: adds every node reachable from the graph's root (a
//                  noop joining the outputs when the model has several) and returns the root
//                  class. The e-graph is rebuilt afterwards.
//   term_from_choice  EGraph -> ir::Graph: given one chosen e-node per e-class (indexed by
//                  class id; -1 where unused), builds the term of the root class. Throws
//                  std::invalid_argument if a needed class has no choice, the choice is not an
//                  e-node of that class, or the choice is cyclic.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/egraph.h"
#include "lang/graph.h"

namespace tensat {

/// Adds the nodes of `g` reachable from g.root(); returns the root class. If `node_classes`
/// is given it receives, per ir node id, its class (invalid for unreachable nodes).
EClassId add_graph(EGraph& eg, const ir::Graph& g, std::vector<EClassId>* node_classes = nullptr);

/// Like add_graph, without adding anything: the class of g's root where every node of `g`
/// reachable from it is an e-node of `eg` already (`node_classes` as add_graph's), else nullopt.
std::optional<EClassId> find_graph(const EGraph& eg, const ir::Graph& g, std::vector<EClassId>* node_classes = nullptr);

/// Builds the term of `root` from `choice` (choice[class id] = e-node id, or -1).
ir::Graph term_from_choice(const EGraph& eg, EClassId root, const std::vector<int64_t>& choice);

}  // namespace tensat
