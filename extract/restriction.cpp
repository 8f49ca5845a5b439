// Restriction to base nodes (see restriction.h).
#include "extract/restriction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "extract/blocks.h"

namespace tensat::extract {

Restriction restrict_to_base_nodes(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                   double max_slack, const std::vector<char>* keep_open) {
  Restriction r;
  // The acyclicity the swap argument needs, and computed requirements: find_blocks checks
  // both (no blocks when either fails).
  const Blocks before = req.computed ? find_blocks(g, red, req) : Blocks{};
  if (before.count() == 0) return r;
  for (const auto& b : before.classes) r.largest_block_before = std::max(r.largest_block_before, b.size());
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r.graph = g;
  r.replacement.assign(g.nodes.size(), -1);
  // Nodes that stay candidates: alive in `red`, not filtered here.
  auto alive = [&](NodeIdx n) { return red.node_alive[n] && !r.graph.nodes[n].filtered; };
  auto given = [&](ClassIdx k) { return req.mandatory[k] || red.class_free[k]; };

  // First the swap with no slack: reduce()'s dominance with mandatory classes counted as
  // given as well (dominators()).
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    if (!red.class_alive[c] || red.class_free[c]) continue;
    std::vector<NodeIdx> cand;
    for (NodeIdx n : g.classes[c].nodes)
      if (alive(n)) cand.push_back(n);
    if (cand.size() < 2) continue;
    const std::vector<int64_t> by = dominators(g, cand, given);
    for (size_t i = 0; i < cand.size(); ++i) {
      if (by[i] < 0) continue;
      r.graph.nodes[cand[i]].filtered = true;
      r.replacement[cand[i]] = cand[static_cast<size_t>(by[i])];
      ++r.dominated;
    }
  }

  // Then the classes with base nodes and others, by their slack (over the nodes left), among
  // the classes still reachable: slack spent on a class no extraction uses is wasted.
  auto kept_nodes = [&] {
    std::vector<char> keep(g.nodes.size(), 0);
    for (NodeIdx n = 0; n < g.nodes.size(); ++n) keep[n] = alive(n);
    return restrict_nodes(g, red, keep);
  };
  const std::vector<char> reach = kept_nodes().class_alive;
  auto is_base = [&](NodeIdx n) { return std::all_of(g.nodes[n].children.begin(), g.nodes[n].children.end(), given); };
  struct Candidate {
    double slack;
    ClassIdx c;
    NodeIdx base;
    double other;  // the cheapest other node's cost
  };
  std::vector<Candidate> cands;
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    if (!reach[c] || red.class_free[c] || (keep_open && (*keep_open)[c])) continue;
    double base_cost = kInf, other_cost = kInf;
    int64_t base = -1;
    for (NodeIdx n : g.classes[c].nodes) {
      if (!alive(n)) continue;
      const double cost = g.nodes[n].cost;
      if (is_base(n)) {
        if (cost < base_cost) {
          base_cost = cost;
          base = n;
        }
      } else {
        other_cost = std::min(other_cost, cost);
      }
    }
    if (base < 0 || !std::isfinite(other_cost)) continue;
    cands.push_back({std::max(0.0, base_cost - other_cost), c, static_cast<NodeIdx>(base), other_cost});
  }
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& a, const Candidate& b) { return std::tie(a.slack, a.c) < std::tie(b.slack, b.c); });
  for (const Candidate& cand : cands) {
    if (r.slack + cand.slack > max_slack) break;
    r.slack += cand.slack;
    r.classes.push_back(cand.c);
    r.base.push_back(cand.base);
    r.delta.push_back(cand.slack);
    // Only the base nodes stay (the restricted problem is reduced again from scratch), each
    // lowered by the slack: the cheapest then costs min(cheapest base, cheapest other) (taken
    // as that minimum, not as base - (base - other), which can round one ulp above it).
    for (NodeIdx n : g.classes[cand.c].nodes) {
      if (!(alive(n) && is_base(n)))
        r.graph.nodes[n].filtered = true;
      else if (n == cand.base)
        r.graph.nodes[n].cost = std::min(g.nodes[n].cost, cand.other);
      else
        r.graph.nodes[n].cost = std::max(0.0, g.nodes[n].cost - cand.slack);
    }
  }
  if (r.classes.empty() && r.dominated == 0) {
    r.graph = {};
    r.replacement.clear();  // (map_to_restricted: nothing restricted)
    return r;
  }
  // The blocks of what is left (the mandatory classes as before: the restricted problem's own
  // can only be more).
  const Blocks after = find_blocks(g, kept_nodes(), req);
  for (const auto& b : after.classes) r.largest_block_after = std::max(r.largest_block_after, b.size());
  return r;
}

Choice map_to_restricted(const ExtractGraph& g, const Reduction& red, const Restriction& r, const Choice& choice) {
  if (r.replacement.size() != g.nodes.size()) return {};  // (nothing was restricted)
  Choice c = choice;
  // (Kept nodes are never dominated, so one step suffices.)
  for (int64_t& n : c)
    if (n >= 0 && r.replacement[static_cast<size_t>(n)] >= 0) n = r.replacement[static_cast<size_t>(n)];
  for (size_t i = 0; i < r.classes.size(); ++i)
    if (c[r.classes[i]] >= 0) c[r.classes[i]] = r.base[i];
  // A base node may read free classes the extraction did not use; their free nodes read only
  // free classes.
  for (ClassIdx k = 0; k < c.size(); ++k)
    if (c[k] < 0 && red.class_free[k]) c[k] = red.free_node[k];
  c = prune_to_roots(g, c);
  if (!extraction_problem(r.graph, c).empty()) return {};
  return c;
}

}  // namespace tensat::extract
