// ILP extraction with COIN-OR CBC (TENSAT Section 5.1), with lazy cycle cuts.
//
// Model: a binary x_n per candidate e-node (after reduce()): the root classes pick exactly
// one node, every class at most one, a chosen node implies a chosen node in each child
// class. Acyclicity, by default, comes from lazy cuts: solve, look for cycles among the
// chosen nodes, add "not all of this cycle" cuts, re-solve (warm-started) until the
// solution is acyclic. Optionally the paper's topological-order constraints (real or
// integer order variables) make every solution acyclic up front, for the ablation.
#pragma once

#include <string>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract {

enum class OrderConstraints { None, Real, Integer };

/// "none" | "real" | "int"; throws InputError otherwise.
OrderConstraints parse_order(const std::string& s);
std::string to_string(OrderConstraints o);

struct IlpOptions {
  double time_limit_s = 10.0;  ///< wall clock for the whole call (greedy warm start included)
  /// Stall stop: once CBC has solved its first LP, it stops when the incumbent has not
  /// improved for this many seconds (status "stalled-best-found" / "stalled-greedy").
  /// Negative: max(0.3 s, 3% of time_limit_s); 0: off (only the time limit stops CBC).
  double stall_s = -1.0;
  int threads = 1;             ///< CBC threads
  OrderConstraints order = OrderConstraints::None;
  bool reduce = true;          ///< apply reduce() first (see extract/README.md)
  bool warm_start = true;      ///< start CBC from the best of greedy, greedy-DAG (+ local search)
  /// Improve greedy-DAG's extraction by local search (local_search.h) for the warm start.
  bool local_search = true;
  /// Requirement rows (reduce.h, requirements()): "C used => D used" for the immediately
  /// required classes, "= 1" for mandatory classes, unusable classes fixed to 0. They make
  /// the LP relaxation much tighter (see extract/README.md); off only for experiments.
  bool requirement_rows = true;
  /// LP cutting-plane rounds on node-level requirement rows before CBC (0 = off); they take
  /// at most 30% of the time limit and stop at the first round that does not raise the LP
  /// bound.
  int separation_rounds = 20;
  int precut_cycle_length = 6; ///< before the first solve, cut every class cycle up to this length
  int max_precuts = 50000;     ///< cap on those cuts
  int max_rounds = 10000;      ///< cycle-cut rounds
  int cbc_log_level = 0;       ///< CBC's own log on stdout (0 = silent)
  /// Passes per dive of CBC's diving heuristics (CBC's default: 100; 0 keeps it). They run at
  /// the root before the cut loop and honour no time limit: DiveCoefficient ran 0.8-2.6 s past
  /// the stall deadline without a result on the pipeline e-graphs, while the dives that found
  /// something (nasrnn) finished within 30 passes (extract/README.md, "CBC's time"). A
  /// multiple of 10 (CBC reads the last digit as flags); others are rounded down (to 10 at
  /// least).
  int cbc_dive_passes = 50;
  /// Extra CBC options, before -solve. CBC's own preprocessing is off by default: it takes
  /// seconds on the larger e-graphs without honouring the time limit, and it garbles the warm
  /// start (the MIP start is then read against the preprocessed columns).
  std::vector<std::string> cbc_args = {"-preprocess", "off"};
  /// Run CBC in a child process (fork): an abort inside CBC/CLP (Debian builds them with
  /// assertions on, and CLP asserts on some models, see extract/README.md) or a solver that
  /// overruns the time limit by more than max(5 s, the limit) then ends that process, not
  /// ours, and the best extraction found so far is returned ("ilp-failed-..."). Off: in
  /// process (for debuggers).
  bool isolate_solver = true;
};

/// Solves the extraction ILP. Never returns a worse DAG cost than the warm start, always
/// returns a checked acyclic, complete extraction. status: "optimal"; on a time-out
/// "timeout-best-found" (the ILP improved on the warm start) or "timeout-greedy"; when the
/// stall rule stopped CBC "stalled-best-found" or "stalled-greedy"; when CBC
/// fails unexpectedly (crashed, hung or inconsistent) "ilp-failed-greedy" or
/// "ilp-failed-best-found" (an earlier round had improved on the warm start). Throws
/// InputError when no acyclic extraction exists.
ExtractResult extract_ilp(const ExtractGraph& g, const IlpOptions& opts = {});

}  // namespace tensat::extract
