// Runner: equality saturation with limits, multi-pattern rules, scheduling and cycle
// filtering (egg's Runner, TENSAT's exploration phase).
//
//   EGraph eg;  EClassId root = add_graph(eg, graph);
//   auto rules = compile_rewrites(specs);
//   RunReport rep = Runner(eg).with_node_limit(50000).with_iter_limit(15)
//                     .with_time_limit(10.0).with_k_multi(1)
//                     .with_cycle_filter(CycleFilterMode::Efficient).run(rules);
//   rep.stop_reason; rep.iterations[i].rules[r].applied; eg.filtered();
//
// egg's shape: run() checks the limits, then run_one() iteration = search, apply, rebuild,
// cycle post-pass; the per-run state is one object (runner.cpp's Exploration), the single-
// pattern search state another (rule_search.h), the no-op memo a third (match_memo.h).
// Each iteration: search every single-pattern rule (through the scheduler) and, in the first
// iteration and the later rounds (RunnerConfig::k_multi), every multi-pattern rule
// (multi_pattern.h); take the cycle filter's
// snapshot; apply all matches (conditions, shape checks, cycle pre-filter); rebuild; remove
// remaining cycles. Stops when nothing changed (Saturated, unless the scheduler lifts bans)
// or at a limit. Hitting a limit is a stop reason, never an error.
//
// Two things make later iterations cheap without changing what is explored (tested against
// a plain run in tests/egraph/test_incremental.cpp):
//   - incremental search (change_tracker.h): a single-pattern rule whose last search was
//     complete searches only classes within its pattern's height of a change; the scheduler
//     is still shown the full match count (per-root counts from earlier searches);
//   - a memo, per rule, of matches whose application is a known no-op (applied or unchanged
//     before over the same canonical classes, or ill-typed): they are counted as unchanged
//     (RuleStats::memo_hits) without re-planning the right-hand side; and one of matches the
//     cycle filter refused, which are asked again before their analysis data is computed;
//   - rules' left-hand sides are compiled once (ematch.h); the cycle post-pass decides from
//     the iteration's snapshot whether there is a new cycle (cycle_filter.h).
// Multi-pattern rules search fully in each of their k_multi iterations; their Cartesian
// product is bounded by RunnerConfig::multi_combination_limit.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "egraph/cycle_filter.h"
#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "egraph/scheduler.h"

namespace tensat {

enum class StopReason : uint8_t { Saturated, NodeLimit, IterationLimit, TimeLimit };
std::string_view stop_reason_name(StopReason r);

/// Per rule, per iteration.
struct RuleStats {
  size_t matches = 0;      ///< substitutions in the e-graph, what the scheduler judges (combinations, for multi-pattern rules)
  size_t searched = 0;     ///< of those, found by this iteration's (incremental) search; these are
                           ///< processed: applied + unchanged + rejected == searched unless banned
                           ///< or cut by a limit
  size_t applied = 0;      ///< applications that changed the e-graph
  size_t unchanged = 0;    ///< right-hand side already in the class
  size_t memo_hits = 0;    ///< of those (or ill-typed ones), known from an earlier iteration, not re-planned
  size_t rejected_condition = 0;
  size_t rejected_type = 0;   ///< ill-typed right-hand side or type differs from the match
  size_t rejected_split = 0;  ///< (split AXIS x) without a boundary
  size_t rejected_cycle = 0;  ///< cycle filter pre-check
  bool banned = false;        ///< skipped or dropped by the scheduler
  bool truncated = false;     ///< multi-pattern: combinations cut at multi_combination_limit
  double search_s = 0;        ///< e-matching time (multi-pattern: the combination step)
  double apply_s = 0;         ///< applying its matches
  size_t rejected() const { return rejected_condition + rejected_type + rejected_split + rejected_cycle; }
  void add(const RuleStats& o);
};

struct IterationReport {
  size_t iteration = 0;
  bool multi = false;  ///< multi-pattern rules were applied in this iteration (a round)
  std::vector<RuleStats> rules;  ///< indexed like the rules given to run()
  size_t nodes = 0, classes = 0;  ///< after the iteration
  size_t filtered_new = 0;        ///< e-nodes filtered by the post-pass
  size_t filtered_total = 0;
  double search_s = 0, apply_s = 0, rebuild_s = 0, filter_s = 0;
};

struct RunReport {
  StopReason stop_reason = StopReason::Saturated;
  std::vector<std::string> rule_names;
  std::vector<IterationReport> iterations;
  size_t nodes = 0, classes = 0, filtered = 0;
  /// The most live e-nodes at a limit check (before an iteration and after every application):
  /// whether the exploration reached a node count, though a rebuild may have brought it under.
  size_t peak_nodes = 0;
  double total_s = 0;
  /// Sum over iterations, per rule.
  std::vector<RuleStats> totals() const;
  /// Human-readable table (for logs and the CLI report).
  std::string summary() const;
};

struct RunnerConfig {
  size_t node_limit = 50000;
  /// A node limit another thread may lower while the exploration runs (null: none); the
  /// exploration stops at the lower of the two (StopReason::NodeLimit). The background
  /// k_multi 0 seed (pipeline/seed.h) is explored beside the larger exploration and stopped
  /// once that has found its e-graph too large to seed from.
  const std::atomic<size_t>* node_cap = nullptr;
  size_t iter_limit = 15;
  double time_limit_s = 1e9;
  /// Multi-pattern rounds (TENSAT's k_multi). Round 1 is the first iteration, with the
  /// single-pattern rules, as in TENSAT. Each later round starts when the exploration with
  /// the rules so far has saturated (never after an iteration, node or time limit), at the end
  /// of that iteration: the multi-pattern rules alone are searched and applied until they
  /// have used later_multi_share of the node budget left, then the single-pattern rules run
  /// on. So the e-graph of k_multi 1 is a stage of the one of k_multi 2 (TENSAT applies them
  /// in the first k_multi iterations, where iteration 2's merges could fill the node budget
  /// before the single-pattern rules had exploited iteration 1's: NasRNN and NasNet-A were
  /// worse at k_multi 2 than at 1). 0: no multi-pattern rules.
  size_t k_multi = 1;
  double later_multi_share = 0.5;
  CycleFilterMode cycle_filter = CycleFilterMode::Efficient;
  bool skip_filtered_in_search = true;
  /// Bound on the Cartesian product of a multi-pattern rule, per rule and iteration: matches
  /// sharing a join key (e.g. n products of one input give n(n-1) ordered pairs) grow
  /// quadratically with every k_multi iteration. The first combinations in match order are
  /// applied, the rest dropped (RuleStats::truncated). 100k is above every benchmark model at
  /// k_multi 2 (largest: about 41k for NasRNN's matmul-merge) and keeps the product's memory
  /// and time bounded (a few MB, well under a second) on e-graphs near the node limit.
  size_t multi_combination_limit = 100000;
  /// Single-pattern rules search only near classes changed since their last complete search
  /// (change_tracker.h); false searches everything every iteration (egg's behaviour).
  bool incremental_search = true;
  /// Called after every iteration with its report (progress lines in the CLI); may be empty.
  std::function<void(const IterationReport&)> on_iteration;
};

class Runner {
 public:
  explicit Runner(EGraph& eg);
  Runner& with_node_limit(size_t n) { cfg_.node_limit = n; return *this; }
  Runner& with_iter_limit(size_t n) { cfg_.iter_limit = n; return *this; }
  Runner& with_time_limit(double seconds) { cfg_.time_limit_s = seconds; return *this; }
  Runner& with_k_multi(size_t k) { cfg_.k_multi = k; return *this; }
  Runner& with_cycle_filter(CycleFilterMode m) { cfg_.cycle_filter = m; return *this; }
  Runner& with_skip_filtered_in_search(bool b) { cfg_.skip_filtered_in_search = b; return *this; }
  Runner& with_incremental_search(bool b) { cfg_.incremental_search = b; return *this; }
  Runner& with_config(const RunnerConfig& c) { cfg_ = c; return *this; }
  /// Default: BackoffScheduler(1000, 5) for single-pattern rules.
  Runner& with_scheduler(std::unique_ptr<Scheduler> s) { sched_ = std::move(s); return *this; }
  const RunnerConfig& config() const { return cfg_; }

  /// Runs to a stop reason. `rules` may mix single- and multi-pattern rules.
  RunReport run(const std::vector<Rewrite>& rules);

 private:
  EGraph& eg_;
  RunnerConfig cfg_;
  std::unique_ptr<Scheduler> sched_;
};

}  // namespace tensat
