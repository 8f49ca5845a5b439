// The default extraction: prove or improve within a budget (extract/README.md).
//
//   1. reduce() the problem; warm start: the best of greedy, greedy DAG and the local search;
//   2. LM-cut (lm_cut.h) bounds the optimum from below; where the bound meets the warm start
//      (within IlpOptions::optimality_tolerance), it is optimal and nothing else runs;
//   3. the residual costs eliminate the nodes no cheaper extraction can use;
//   4. the ILP (formulation.h) over what is left, its LP relaxation tightened by requirement
//      and landmark rows; again, an LP bound that meets the warm start ends here;
//   5. CBC (cbc_driver.h), started from the warm start, within the budget: it proves the warm
//      start optimal, or improves it. Acyclicity comes from lazy cuts: solve, look for cycles
//      among the chosen nodes, add "not all of this cycle" cuts, re-solve (warm-started) until
//      the solution is acyclic. Optionally the paper's topological-order constraints (real or
//      integer order variables) make every solution acyclic up front, for the ablation.
// The result says "optimal" only when a lower bound meets its cost; otherwise it carries the
// best bound and the gap.
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
  /// Time for proving or improving after the warm start, tied to the model size: negative
  /// gives budget_per_node_s times the e-nodes, at least min_budget_s (see
  /// extract/README.md, "Budget"); capped by time_limit_s. A run that closes the bound earlier
  /// stops at once.
  double budget_s = -1.0;
  double budget_per_node_s = 4e-5;
  double min_budget_s = 0.1;
  /// Relative tolerance of "optimal": the lower bound is at least (1 - tolerance) * cost.
  double optimality_tolerance = 1e-6;
  /// Lower bound by LM-cut and node elimination by its residual costs before the ILP
  /// (lm_cut.h); the landmarks also become ILP rows (separated). Off only for experiments.
  bool landmarks = true;
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

/// The budget extract_ilp() uses for a graph (IlpOptions::budget_s and its defaults).
double ilp_budget_s(const ExtractGraph& g, const IlpOptions& opts);

/// Solves the extraction problem as described above. Never returns a worse DAG cost than the
/// warm start, always returns a checked acyclic, complete extraction. status: "optimal" (a
/// lower bound within optimality_tolerance of the cost: best_bound, gap 0); when the budget
/// or time limit ran out "timeout-best-found" (the ILP improved on the warm start) or
/// "timeout-greedy"; when the stall rule stopped CBC "stalled-best-found" or
/// "stalled-greedy"; when CBC fails unexpectedly (crashed, hung or inconsistent)
/// "ilp-failed-greedy" or "ilp-failed-best-found" (an earlier round had improved on the warm
/// start). The others carry best_bound and gap. Throws InputError when no acyclic extraction
/// exists.
ExtractResult extract_ilp(const ExtractGraph& g, const IlpOptions& opts = {});

}  // namespace tensat::extract
