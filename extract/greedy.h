// Greedy extractors: bottom-up tree-cost greedy and the "faster greedy DAG" heuristic.
//
// Both skip unusable nodes (filtered, infinite cost, self-loop) and always return a
// complete, acyclic extraction (checked), or throw InputError when a root class has no
// acyclic option at all.
#pragma once

#include <atomic>

#include "extract/extract_graph.h"
#include "extract/graph_index.h"

namespace tensat::extract {

/// Classic greedy: per class the node minimising cost + sum of its children's tree costs,
/// computed by a bottom-up worklist fixpoint that only accepts strict improvements (which
/// makes the choice acyclic). status "heuristic".
ExtractResult extract_greedy(const ExtractGraph& g);
/// The same over an index of `g` built already (the ILP's warm start builds one for all its
/// heuristics: 0.6 ms each on NasRNN's 13k e-nodes). So for every overload below that takes one.
ExtractResult extract_greedy(const ExtractGraph& g, const GraphIndex& index);

/// The same fixpoint with the given per-node costs instead of the graph's (used to repair a
/// cyclic ILP solution). Returns the choice pruned to the roots; throws InputError when a
/// root class has no finite acyclic option.
Choice greedy_tree_choice(const ExtractGraph& g, const std::vector<double>& node_costs);
Choice greedy_tree_choice(const ExtractGraph& g, const GraphIndex& index, const std::vector<double>& node_costs);

/// Greedy DAG (extraction-gym's faster-greedy-dag): per class keep the cheapest "cost set",
/// a closed set of (class, node) pairs whose node costs are summed once, built from the
/// union of the children's sets. The extraction is the roots' set. When that set is cyclic
/// (possible in the worklist order below, whose unions are not checked; not in the settled
/// one), the per-class best nodes are tried, then the tree greedy; status "heuristic" or
/// "fallback-greedy".
/// In the settled order (DagOrder below); `items` (if given) receives the items of the sets it
/// accepted. `stop` (if given) is polled: once set, the result has an empty choice (status
/// "stopped"; a caller that no longer needs it).
ExtractResult extract_greedy_dag(const ExtractGraph& g, size_t* items = nullptr);
ExtractResult extract_greedy_dag(const ExtractGraph& g, const GraphIndex& index, size_t* items = nullptr,
                                 const std::atomic<bool>* stop = nullptr);

/// The order greedy DAG evaluates nodes in (see greedy_dag_choice).
enum class DagOrder {
  /// Knuth's generalisation of Dijkstra: each node once, when its last child class is settled;
  /// the pending class with the cheapest set (then the lowest index) is settled next. Every
  /// class ends with the cheapest union of its children's final sets. The default.
  Settled,
  /// Extraction-gym's FIFO worklist: a node again whenever a child class's set improved. A
  /// class may keep a set built from a child's earlier one, which is sometimes cheaper in the
  /// end (the ILP's warm start runs both, this one capped), and sets are rebuilt along chains
  /// (NasNet-A: 66 896 sets accepted for 3 301 classes, 29.6 M items, against 8 205 and 2.2 M).
  Worklist,
};

/// Greedy DAG's choice with the given per-node costs instead of the graph's (nodes whose cost
/// is not finite are never chosen; the ILP's start guided by LM-cut's residual costs).
/// `fell_back` (if given) tells whether the tree greedy had to replace a cyclic union.
/// Throws InputError when a root class has no finite acyclic option.
/// max_items > 0 caps the work (the items of the cost sets it accepts, deterministic): past it,
/// an empty choice comes back (a safety net: at most one set per e-node is accepted, but a set
/// may hold most classes).
/// `stop` (if given) is polled: once it is set, an empty choice comes back (a caller that no
/// longer needs the result). `items` (if given) receives the items of the sets accepted (up to
/// the cap's breach; left as it was when `stop` ended the call).
Choice greedy_dag_choice(const ExtractGraph& g, const std::vector<double>& node_costs, bool* fell_back = nullptr,
                         size_t max_items = 0, const std::atomic<bool>* stop = nullptr,
                         DagOrder order = DagOrder::Settled, size_t* items = nullptr);
Choice greedy_dag_choice(const ExtractGraph& g, const GraphIndex& index, const std::vector<double>& node_costs,
                         bool* fell_back = nullptr, size_t max_items = 0, const std::atomic<bool>* stop = nullptr,
                         DagOrder order = DagOrder::Settled, size_t* items = nullptr);

}  // namespace tensat::extract
