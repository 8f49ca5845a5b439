// Proving two terms equal with a rule set by equality saturation (egg's test_fn is the model):
// both terms go into one e-graph, the rules run iteration by iteration within the limits, and
// after every iteration the goal pairs are checked; the run stops as soon as all are proved.
//
//   ir::Graph g;  ir::NodeId a = parse_term(g, "..."), b = parse_term(g, "...");
//   ProveResult r = prove(g, {{a, b}}, compile_rewrites(rules::default_rules()), ProveLimits{});
//   r.proved, r.iterations, r.nodes, r.seconds, r.stop
//
// Multi-pattern rules are applied in the first k_multi iterations (as the Runner does); the
// prover's default applies them in every iteration: it asks what the rules derive, not what a
// bounded exploration finds. Cycle filtering is off by default (equality, not extraction, is the
// question); it can be switched on to see what TENSAT's exploration would derive.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "egraph/cycle_filter.h"
#include "lang/graph.h"
#include "egraph/rewrite.h"

namespace tensat::taso {

struct ProveLimits {
  size_t iter_limit = 15;
  size_t node_limit = 50000;
  double time_limit_s = 10.0;
  size_t k_multi = SIZE_MAX;  ///< iterations in which multi-pattern rules are applied
  CycleFilterMode cycle_filter = CycleFilterMode::None;
};

struct ProveResult {
  bool proved = false;
  std::vector<bool> pair_proved;  ///< per goal pair
  /// "proved", "types-differ", "saturated", "iteration-limit", "node-limit", "time-limit"
  std::string stop;
  std::string detail;  ///< why not, where clear (e.g. the two types)
  size_t iterations = 0;
  size_t nodes = 0, classes = 0;
  double seconds = 0;
};

/// Proves graph nodes pairwise equal. `g` holds both sides of every pair (shared leaves).
ProveResult prove(const ir::Graph& g, const std::vector<std::pair<ir::NodeId, ir::NodeId>>& goals,
                  const std::vector<Rewrite>& rules, const ProveLimits& limits);

/// One JSON object on one line (no trailing newline).
std::string prove_result_json(const ProveResult& r);

}  // namespace tensat::taso
