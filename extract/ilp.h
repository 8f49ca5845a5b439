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

#include <stdexcept>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract {

enum class OrderConstraints { None, Real, Integer };

/// "none" | "real" | "int"; throws InputError otherwise.
OrderConstraints parse_order(const std::string& s);
std::string to_string(OrderConstraints o);

struct IlpOptions {
  /// Wall clock for the whole call (warm start included): a safety net. Results are
  /// deterministic only when the work budget, not this limit, ends the search (status
  /// "timeout-*" says the clock decided).
  double time_limit_s = 10.0;
  /// The budget for proving or improving after the warm start, in deterministic work units
  /// (extract/README.md, "Budget"): a simplex iteration of the LP solves and of CBC costs
  /// rows/1000 units (at least 1), a CBC event (a node, a cut pass, a root heuristic, a
  /// solution: work CBC does not count as iterations) rows/10 units (at least 10). One unit
  /// is about 20-40 us on the 2-core CI machine. Negative: work_per_node times the e-nodes,
  /// at least min_work. A run that closes the bound earlier stops at once. The same e-graph
  /// and options give the same result on an idle or a loaded machine.
  int64_t work = -1;
  double work_per_node = 1.0;
  int64_t min_work = 10000;
  /// CBC's stall stop, in the same units: CBC stops when its incumbent has not improved for
  /// this much work (status "stalled-*"). Negative: a quarter of the budget; 0: off.
  int64_t stall_work = -1;
  /// Relative tolerance of "optimal": the lower bound is at least (1 - tolerance) * cost.
  double optimality_tolerance = 1e-6;
  /// Lower bound by LM-cut and node elimination by its residual costs before the ILP
  /// (lm_cut.h); the landmarks also become ILP rows (separated). Off only for experiments.
  bool landmarks = true;
  /// The warm start on a second thread beside the reduction and LM-cut's first run (where the
  /// machine has more than one hardware thread); the result is the same either way.
  bool concurrent_start = true;
  int threads = 1;             ///< CBC threads
  OrderConstraints order = OrderConstraints::None;
  bool reduce = true;          ///< apply reduce() first (see extract/README.md)
  bool warm_start = true;      ///< start CBC from the best of greedy, greedy-DAG (+ local search)
  /// Improve greedy-DAG's extraction by local search (local_search.h) for the warm start.
  bool local_search = true;
  /// More warm-start candidates (e.g. the pipeline's k_multi 1 result mapped into the k_multi 2
  /// e-graph): each one that is a valid extraction (extraction_problem() empty; others are
  /// skipped with a debug line) is improved by the local search and competes with the others,
  /// so the result is never worse than any valid hint.
  std::vector<Choice> hints;
  /// Hints that cost something to compute (pipeline/seed.h: a lower k_multi's extraction):
  /// asked for once, where LM-cut's first bound does not prove the greedy extraction optimal
  /// (after the warm start where landmarks are off). The cheapest valid one is first tried as
  /// the incumbent on its own, beside the warm start (a speculative run of the elimination
  /// and the LPs, on a copy of LM-cut's state): where that proves the optimum, it is the
  /// result and the warm start is told to stop (ExtractResult::warm_start_cost NaN; its
  /// thread is joined, at its next check of the flag). Else
  /// nothing of that run is kept: each hint is improved by the local search as the hints are,
  /// and becomes the incumbent where cheaper than the warm start (before the elimination,
  /// which then keeps fewer nodes; ExtractResult::late_hint_cost). Their time does not count
  /// against time_limit_s.
  std::function<std::vector<Choice>()> late_hints;
  /// Polled between the phases, before each part's LP and CBC run, and while CBC runs (its
  /// child is killed): once set, extract_ilp throws Stopped (a caller that no longer wants the
  /// result: the k_multi 0 seed, pipeline/seed.h). The reduction, LM-cut's first run and an
  /// LP under way run to their end. Null: never.
  const std::atomic<bool>* stop = nullptr;
  /// Requirement rows (reduce.h, requirements()): "C used => D used" for the immediately
  /// required classes, "= 1" for mandatory classes, unusable classes fixed to 0. They make
  /// the LP relaxation much tighter (see extract/README.md); off only for experiments.
  bool requirement_rows = true;
  /// Odd-cover cuts in the LP rounds (formulation.h): three mandatory classes whose nodes
  /// share their child classes need two of them. Off only for experiments.
  bool odd_cover_cuts = true;
  /// Path cuts in the first path_cut_rounds LP rounds (formulation.h): a class used means a
  /// class all its paths (over the LP's support) lead to is used, unless one of the paths'
  /// exits is. They close the LP where it is integral but for such paths (DenseNet), and are
  /// dropped before CBC, which they slow down (Inception-v3: 18k units to the proof with
  /// them dropped, 22.5k kept, 94k not enough with 20 rounds of them). Off only for experiments.
  bool path_cuts = true;
  int path_cut_rounds = 2;
  /// Exclusive-reader rows in the LP rounds (reader_rows.cpp): the nodes reading a class K
  /// from classes no extraction uses together need K once each, so their sum is at most
  /// x(K) (Inception-v3: concat trees of different shapes sharing a subtree). Off only for
  /// experiments.
  bool exclusive_readers = true;
  /// Lifted exclusive-reader rows: the readers the LP leaves at 0 that exclude every reader
  /// of a violated row join it (NasNet-A's 705-column blocks: their LP rounds ran out of the
  /// budget after 18 rounds and 886 rows; lifted, 3-7 rounds and 10-139 rows close them).
  /// Off only for experiments.
  bool lift_exclusive_readers = true;
  /// Deep odd covers over pairs of a class the LP uses (at 1) with another class, where with
  /// both gone a mandatory class has no derivation (odd_covers.cpp). Off only for experiments.
  bool used_pairs = true;
  /// Read-class rows (formulation.h): a class that is no root and not mandatory is used only
  /// where a node that reads it is, x(K) <= sum of its readers' x (valid for the pruned
  /// extractions, which the optimum is one of); separated where the LP violates them. Off
  /// only for experiments.
  bool read_rows = true;
  /// Split the ILP into independent blocks at the mandatory classes (blocks.h) where the
  /// class graph is acyclic: one small LP and CBC run per block, the bound their sum. Off
  /// only for experiments (one ILP over everything).
  bool blocks = true;
  /// Blocks that are the same problem as another (twins.h: repeated cells) take its LP, CBC
  /// run, bound and extraction instead of their own. Off only for experiments.
  bool twins = true;
  /// Build the parts' models and solve their LPs in parallel (where concurrent_start allows
  /// more than one thread), each within all the work left, then take them in order as if one
  /// had run after the other; off: one after the other. The result is the same either way
  /// (`Ilp.ParallelLpsGiveTheResultOfOneAfterTheOther`).
  bool parallel_lps = true;
  /// LP cutting-plane rounds on node-level requirement rows before CBC (0: the LP alone); the
  /// LP solves are paid from the work budget, the rounds stop at the first one that does not
  /// raise the LP bound. CBC runs only when the LP was solved within the budget.
  int separation_rounds = 20;
  int precut_cycle_length = 6; ///< before the first solve, cut every class cycle up to this length
  int max_precuts = 50000;     ///< cap on those cuts
  int max_rounds = 10000;      ///< cycle-cut rounds
  int cbc_log_level = 0;       ///< CBC's own log on stdout (0 = silent)
  /// Passes per dive of CBC's diving heuristics (CBC's default: 100; 0 keeps it). They run at
  /// the root before the cut loop and honour no limit: DiveCoefficient ran 0.8-2.6 s without
  /// a result on the pipeline e-graphs, while the dives that found
  /// something (nasrnn) finished within 30 passes (extract/README.md, "CBC's time"). A
  /// multiple of 10 (CBC reads the last digit as flags); others are rounded down (to 10 at
  /// least).
  int cbc_dive_passes = 50;
  /// Extra CBC options, before -solve. CBC's own preprocessing is off by default: it takes
  /// seconds on the larger e-graphs without honouring the time limit, and it garbles the warm
  /// start (the MIP start is then read against the preprocessed columns). One pass of CBC's
  /// cut generators at the root (-passC 1; CBC's default is up to 20-100): the LP rounds before
  /// CBC separate this model's own cuts, and CBC's passes mostly spent work (Inception-v3's last
  /// open block: ~6 000 of the 8 700 units to its proof in the root cut loop, the bound moving
  /// 0.30787 -> 0.30869; with one pass the default budget proves it, 4 959 units in all).
  /// Measured 2026-11-26 on the pipeline and gym e-graphs, k_multi 0-2: no cost or status
  /// worse, Inception-v3 optimal at k_multi 0 and 1, BERT 3 160 -> 3 046 units.
  std::vector<std::string> cbc_args = {"-preprocess", "off", "-passC", "1"};
  /// Run CBC in a child process (fork): an abort inside CBC/CLP (Debian builds them with
  /// assertions on, and CLP asserts on some models, see extract/README.md) or a solver that
  /// overruns the time limit by more than max(5 s, the limit) then ends that process, not
  /// ours, and the best extraction found so far is returned ("ilp-failed-..."). Off: in
  /// process (for debuggers).
  bool isolate_solver = true;
  /// Where the search ends open: solve the problem again restricted to base nodes, lowered by
  /// their slack (restriction.h), with a budget of its own (the same as this one's) and the
  /// time left; take its extraction (at its real cost) where it is cheaper, and its bound.
  /// Where it proves its optimum and that pays a lowered cost, those classes are left open and
  /// it runs again (at most 4 rounds). Only where the restriction at least halves the largest
  /// block (elsewhere the second search costs as much and finds next to nothing), so only with
  /// reduce, blocks, requirement_rows and no order constraints. The slack may be at most
  /// `restriction_slack` times the incumbent's cost. It does not run where the search took
  /// the swaps and its LPs drew on this budget (`swaps`). NasNet-A (`onnx-tensat-extract` on
  /// tests/extract/data/eg_nasneta_v2.json, `--no-swaps`): 3.742947 with gap 0.19 -> 3.731614
  /// with gap 0.023 (2026-11-26; with the swaps the search proves 3.731614 itself).
  bool restriction = true;
  double restriction_slack = 0.02;
  /// Before the blocks, the swaps (restriction.h, find_swaps): nodes that an optimal
  /// extraction can give up for a node of their class that reads only mandatory and free
  /// classes at no loss (dominated once mandatory classes count as given, or costing at least
  /// that node with what only they need) are left out where that at least halves the largest
  /// block; the optimum is the same. Where the LPs then need more than the budget, the search
  /// keeps the restricted search's budget as well (LPs and CBC; the restricted search does not
  /// run). With reduce, blocks and requirement rows, no order constraints. Off only for
  /// experiments.
  bool swaps = true;
};

/// The work budget extract_ilp() uses for a graph (IlpOptions::work and its defaults).
int64_t ilp_work_budget(const ExtractGraph& g, const IlpOptions& opts);

/// What extract_ilp throws once IlpOptions::stop is set.
class Stopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Solves the extraction problem as described above. Never returns a worse DAG cost than the
/// warm start, always returns a checked acyclic, complete extraction. status: "optimal" (a
/// lower bound within optimality_tolerance of the cost: best_bound, gap 0); when the work
/// budget ran out "budget-best-found" (the ILP improved on the warm start) or
/// "budget-greedy"; when the stall rule stopped CBC "stalled-best-found" or
/// "stalled-greedy"; when the wall-clock time limit ended it "timeout-best-found" or
/// "timeout-greedy"; when CBC fails unexpectedly (crashed, hung or inconsistent)
/// "ilp-failed-greedy" or "ilp-failed-best-found" (an earlier round had improved on the warm
/// start). The others carry best_bound and gap. Throws InputError when no acyclic extraction
/// exists.
ExtractResult extract_ilp(const ExtractGraph& g, const IlpOptions& opts = {});

}  // namespace tensat::extract
