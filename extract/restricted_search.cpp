// The ILP run's step 7 (see restricted_search.h).
#include "extract/restricted_search.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "extract/local_search.h"
#include "extract/restriction.h"
#include "support/stopwatch.h"

namespace tensat::extract {

using Clock = Stopwatch::Clock;

std::pair<int64_t, int64_t> restricted_search(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                              const IlpOptions& opts, Progress& p, ExtractResult& res,
                                              std::chrono::steady_clock::time_point hard_end,
                                              std::chrono::steady_clock::time_point t0) {
  constexpr int kRefinements = 4;
  const Requirements req = requirements(g, index, red);
  std::vector<char> keep_open(g.classes.size(), 0);
  std::pair<int64_t, int64_t> work{0, 0};
  for (int round = 0; round < kRefinements && !p.closed(); ++round) {
    const double seconds_left = std::chrono::duration<double>(hard_end - Clock::now()).count();
    if (seconds_left <= 0.0) break;
    const Restriction r = restrict_to_base_nodes(g, index, red, req, opts.restriction_slack * p.cost, &keep_open);
    // Only where it splits the problem: the largest block at least halves. Elsewhere the
    // restricted problem is as hard as the problem (k_multi 2: NasRNN 7770 -> 7768 classes,
    // Inception-v3 1647 -> 1627, BERT 9554 -> 9550; a second search there took 0.4-1.8 s for at
    // most 0.07%).
    // (With no class restricted, R is the swapped problem: solved already where the search
    // took the swaps.)
    if ((r.classes.empty() && (r.dominated + r.swapped == 0 || res.swapped > 0)) ||
        2 * r.largest_block_after > r.largest_block_before) {
      spdlog::debug("ilp: [{:.4f} s] no restricted search: {} classes restricted, the largest block {} -> {} classes",
                    seconds_since(t0), r.classes.size(), r.largest_block_before, r.largest_block_after);
      break;
    }
    IlpOptions o = opts;
    o.restriction = false;
    o.work = res.work_budget;
    o.time_limit_s = seconds_left;
    o.hints.clear();
    o.late_hints = nullptr;  // (of the whole problem; its incumbent, below, has what they gave)
    // The incumbent made an extraction of the restricted problem (no dearer there).
    if (Choice hint = map_to_restricted(g, red, r, p.incumbent); !hint.empty())
      o.hints.push_back(std::move(hint));
    else
      spdlog::warn("ilp: the incumbent does not map onto the restricted problem (a broken invariant)");
    spdlog::debug("ilp: [{:.4f} s] round {}: restricted {} classes to their base nodes, slack {}; swaps: {} nodes "
                  "dominated, {} swapped for a base node; largest block {} -> {} classes",
                  seconds_since(t0), round, r.classes.size(), r.slack, r.dominated, r.swapped,
                  r.largest_block_before, r.largest_block_after);
    if (spdlog::should_log(spdlog::level::trace))
      for (ClassIdx c : r.classes) spdlog::trace("ilp: restricted class {}", class_name(g, c));
    const ExtractResult rr = extract_ilp(r.graph, o);
    res.restricted_twins += rr.twin_parts;
    work.first += rr.work_budget;
    work.second += rr.work_used;
    // (The classes and slack of the last round; the best extraction, really priced, and the
    // best bound of all rounds.)
    res.restricted_classes = r.classes.size();
    res.restriction_slack = r.slack;
    const double real_cost = dag_cost(g, rr.choice);
    res.restricted_cost = res.restriction_rounds == 0 ? real_cost : std::min(res.restricted_cost, real_cost);
    res.restricted_bound = res.restriction_rounds == 0 ? rr.best_bound : std::max(res.restricted_bound, rr.best_bound);
    ++res.restriction_rounds;
    // Every extraction of the restricted problem is one of the whole problem (at its real
    // cost), and every bound of it one of the whole problem.
    offer(g, p, rr.choice);
    // Its extraction priced really, where it paid a lowered cost, may gain from the other
    // nodes of those classes: the local search on the whole problem.
    if (opts.local_search) {
      const Choice local = improve_local(g, index, rr.choice).choice;
      offer(g, p, opts.reduce ? map_to_reduced(g, red, local) : local);
    }
    if (std::isfinite(rr.best_bound)) p.raise(rr.best_bound, "restriction");
    // The restricted classes where its extraction paid a lowered cost: left open next round.
    size_t lowered = 0;
    for (size_t i = 0; i < r.classes.size(); ++i)
      if (r.delta[i] > 0.0 && rr.choice[r.classes[i]] >= 0) {
        keep_open[r.classes[i]] = 1;
        ++lowered;
      }
    spdlog::debug("ilp: [{:.4f} s] restricted problem: {} {} (really {}) bound {}, {} lowered classes used; now {} "
                  "bound {}",
                  seconds_since(t0), rr.status, rr.dag_cost, real_cost, rr.best_bound, lowered, p.cost,
                  p.bound);
    if (rr.status != "optimal" || lowered == 0) break;
  }
  return work;
}

}  // namespace tensat::extract
