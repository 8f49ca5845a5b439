// Local search on a complete acyclic extraction (run after greedy DAG: Method::Dag returns
// its result, and the ILP's warm start is the best of greedy, greedy DAG and this).
//
// A move switches the node chosen for a used class c to another node n of c:
//   * n's child classes that are not in the extraction are filled in recursively with their
//     cheapest option given the extraction: a class already used costs nothing (sharing), an
//     unused one its cheapest node plus its own unused children (a tree estimate, computed on
//     demand and memoised until the extraction changes);
//   * classes no longer reachable from the roots are dropped (reference counts, cascading);
//   * a move that would close a cycle is rejected: a new edge to a class ranked below the
//     class (a topological rank, heights kept up to date in the move) is safe at once, the
//     others get a depth-first search above the class's rank; when the cheapest fill
//     would close a cycle, the move is filled again without the classes that reach c.
// Compound moves (LocalSearchOptions::compound): after the switch has added the classes S,
// every used class with a node that has a child in S and all children in the extraction is
// re-evaluated, greedily (a step is kept when it lowers the cost), and the whole move is
// accepted when the total DAG cost strictly decreases. This finds the merged-operator
// rewrites that only pay when several classes switch together: on NasRNN, C1 -> split_0(X)
// with X = split(matmul(x, concat(W1, W2))) costs more than C1's own matmul, and pays only
// when the sibling C2 switches to split_1(X) as well.
//
// The search sweeps the used classes (roots first); per class it evaluates every other node
// and makes the best move that lowers the cost, until a sweep makes none (a local optimum:
// in particular no single switch of a used class to a node whose children are all used
// pays) or a round or time budget runs out. It is deterministic.
//
// Measured (min of 20 runs in memory, this 2-core machine; e-graphs of onnx-tensat
// --dump-egraph and extraction-gym): nasrnn (9.1k nodes) 1.1280 -> 1.0084 (the ILP's
// result) in 1.1 ms, nasneta (14.8k) 11.578 -> 11.558 in 7 ms, inceptionv3 3.3976 -> 3.3859
// in 0.7 ms, gym bert (20k) 0.8247 -> 0.7047 in 8 ms, gym resnet50 4.3969 -> 4.3858 in
// 1.2 ms; unchanged on squeezenet, bert, vgg19, resnet50, resnext50, gym vgg.
// The cost is tracked by deltas; `verify` recomputes it from scratch (dag_cost) and re-checks
// the extraction after every accepted move. The result is checked (check_extraction) and never
// worse than the start: when it is not strictly cheaper, the start is returned.
#pragma once

#include <atomic>
#include <cstdint>

#include "extract/extract_graph.h"
#include "extract/graph_index.h"

namespace tensat::extract {

struct LocalSearchOptions {
  int max_rounds = 100;        ///< sweeps over the used classes
  double time_limit_s = 1.0;   ///< wall clock (checked between moves)
  bool compound = true;        ///< re-optimise the classes that can share what a move adds
  /// Skip a class none of whose moves paid when the extraction was as it is now (the same
  /// result; false evaluates every class in every sweep, for the tests).
  bool skip_unproductive = true;
  /// Evaluate such a class again once other moves were accepted (the default: the result is a
  /// local optimum). false: never again, so later sweeps evaluate only the classes never found
  /// unproductive (those whose move was accepted, or that were unused when reached); the
  /// result may then be no local optimum, but on every e-graph measured it was the same (the
  /// 38 extraction campaign e-graphs, the random ones of the tests) and NasRNN's second sweep,
  /// 4 of its 12 ms, is gone. The ILP's warm start, followed by the ILP, uses it.
  bool revisit = true;
  /// Polled with the time limit: once set, the search stops (a caller that no longer needs
  /// the result; the extraction so far comes back).
  const std::atomic<bool>* stop = nullptr;
#ifdef NDEBUG
  bool verify = false;         ///< from-scratch cost and extraction check per accepted move
#else
  bool verify = true;
#endif
};

struct LocalSearchStats {
  int rounds = 0;                ///< sweeps started
  int64_t moves = 0;             ///< (class, node) switches evaluated
  int64_t skipped = 0;           ///< classes not evaluated again: none of their moves paid (nothing accepted since, or `revisit` false)
  int64_t compound_moves = 0;    ///< of those, the ones that re-optimised other classes
  int64_t compound_steps = 0;    ///< re-optimisation steps evaluated
  int64_t cycle_checks = 0;      ///< depth-first reachability searches
  int64_t search_visits = 0;     ///< classes those searches visited
  int64_t raised = 0;            ///< ancestors re-ranked to keep the order topological
  int64_t refills = 0;           ///< moves whose fill closed a cycle, filled again avoiding it
  int64_t rejected_cycle = 0;    ///< moves rejected because they would close a cycle
  int64_t rejected_fill = 0;     ///< moves whose new child classes could not be filled
  int accepted = 0;              ///< moves accepted
  int accepted_compound = 0;     ///< of those, the ones with at least one re-optimisation step
  double start_cost = 0.0;       ///< DAG cost of the start
  double final_cost = 0.0;       ///< DAG cost of the result
  double time_s = 0.0;
  bool hit_limit = false;        ///< stopped by max_rounds or time_limit_s
};

/// Improves a complete acyclic extraction `start` (pruned to the roots first; InternalError
/// when it is not a valid extraction) by local search. Returns a checked extraction that costs
/// no more than `start` (method "local", status "heuristic", gap and bound NaN).
ExtractResult improve_local(const ExtractGraph& g, Choice start,
                            const LocalSearchOptions& opts = {}, LocalSearchStats* stats = nullptr);
/// The same over an index of `g` built already (greedy.h).
ExtractResult improve_local(const ExtractGraph& g, const GraphIndex& index, Choice start,
                            const LocalSearchOptions& opts = {}, LocalSearchStats* stats = nullptr);

}  // namespace tensat::extract
