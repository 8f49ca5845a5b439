// Bridge from the e-graph engine to extraction: the e-graph with per-node costs and the
// cycle filter's list as an extract::ExtractGraph, and the extractor's choice back as a term.
#pragma once

#include <vector>

#include "egraph/egraph.h"
#include "lang/graph.h"
#include "extract/extract_graph.h"

namespace tensat {

struct ExtractView {
  extract::ExtractGraph graph;
  std::vector<EClassId> class_of_index;   ///< extract class index -> e-class
  std::vector<ENodeId> node_of_index;     ///< extract node index -> e-node
};

/// Live, canonical classes and nodes of `eg`; `costs` indexed by ENodeId; root = `root`.
ExtractView to_extract_graph(const EGraph& eg, EClassId root, const std::vector<double>& costs);

/// The extracted term: choice (per extract class index) mapped back to e-nodes.
ir::Graph choice_to_graph(const EGraph& eg, EClassId root, const ExtractView& view,
                          const extract::Choice& choice);

/// The reverse: the choice (per extract class index) that picks the e-nodes of term graph `g`,
/// whose nodes are in the classes `node_classes` (from add_graph(eg, g, &node_classes)).
/// Empty when some node of `g` is not an e-node of the view, or two nodes of `g` fall into
/// one class with different e-nodes (then no single choice gives `g`).
extract::Choice graph_to_choice(const EGraph& eg, const ExtractView& view, const ir::Graph& g,
                                const std::vector<EClassId>& node_classes);

}  // namespace tensat
