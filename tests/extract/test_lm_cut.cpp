// Tests of the LM-cut lower bound, its incremental continuation and the node elimination,
// against brute force on small random e-graphs (acyclic, cyclic, with zero-cost nodes, and
// with the merged-operator sharing of TENSAT's rules).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "extract/lm_cut.h"
#include "extract/reduce.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

// g's reduction, or nullopt when g has no extraction (reduce() throws).
std::optional<Reduction> try_reduce(const ExtractGraph& g) {
  try {
    return reduce(g);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// The small e-graphs of these tests; those without an acyclic extraction are left out.
std::vector<ExtractGraph> small_graphs() {
  std::vector<ExtractGraph> out;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    out.push_back(testing::random_egraph(seed, 8, /*acyclic=*/true, seed % 2 ? 30 : 0));
    out.push_back(testing::random_egraph(seed + 1000, 8, /*acyclic=*/false, seed % 3 ? 0 : 40));
    if (seed < 30) out.push_back(testing::merge_egraph(seed, 3 + static_cast<int>(seed % 2)));
  }
  out.push_back(testing::matmul_merge());
  out.push_back(testing::two_cycle());
  out.push_back(testing::three_cycle());
  std::erase_if(out, [](const ExtractGraph& g) { return !std::isfinite(testing::brute_force_optimum(g)); });
  return out;
}

// g restricted to the candidates of the reduced problem minus the disabled actions: every
// other node (dead in the reduction, or disabled) is filtered. Its optimum is the optimum of
// the extractions LmCut still considers.
ExtractGraph restricted(const ExtractGraph& g, const Reduction& red, const RelaxedTask& t, const LmCut& lm) {
  ExtractGraph r = g;
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (red.class_free[g.nodes[n].eclass]) continue;  // the free node stays
    const uint32_t a = t.action_of(n);
    if (a == RelaxedTask::kNone || !lm.enabled(a)) r.nodes[n].filtered = true;
  }
  return r;
}

TEST(LmCut, BoundNeverAboveTheOptimum) {
  int exact = 0, graphs = 0;
  for (const ExtractGraph& g : small_graphs()) {
    const double best = testing::brute_force_optimum(g);
    const Reduction red = reduce(g);
    const RelaxedTask t(g, red);
    LmCut lm(t);
    std::vector<std::vector<uint32_t>> landmarks;
    const double b = lm.run(SIZE_MAX, &landmarks);
    ++graphs;
    EXPECT_TRUE(lm.complete());
    EXPECT_LE(b, best + 1e-9 * std::max(1.0, best)) << graphs;
    EXPECT_GE(b, 0.0);
    exact += b >= best - 1e-9 * std::max(1.0, best);
    // Every landmark is one: each extraction uses one of its nodes.
    testing::for_each_extraction(g, [&](const Choice& c) {
      const Choice m = map_to_reduced(g, red, c);
      for (const auto& l : landmarks) {
        bool hit = false;
        for (uint32_t a : l) hit = hit || a == t.goal_action() || m[g.nodes[t.node_of(a)].eclass] == static_cast<int64_t>(t.node_of(a));
        ASSERT_TRUE(hit) << graphs;
      }
    });
  }
  // Not a property, a sanity check that the bound is not trivially 0: it is exact on most of
  // these small graphs.
  EXPECT_GT(exact, graphs / 2) << exact << " of " << graphs;
}

TEST(LmCut, ResidualCostsBoundEveryExtraction) {
  // cost(S) >= bound + sum of S's residual costs, for every extraction S.
  for (const ExtractGraph& g : small_graphs()) {
    const Reduction red = reduce(g);
    const RelaxedTask t(g, red);
    LmCut lm(t);
    lm.run();
    testing::for_each_extraction(g, [&](const Choice& c) {
      const Choice m = map_to_reduced(g, red, c);
      double res = 0.0;
      for (size_t k = 0; k < m.size(); ++k)
        if (m[k] >= 0 && t.action_of(static_cast<NodeIdx>(m[k])) != RelaxedTask::kNone)
          res += lm.residual()[t.action_of(static_cast<NodeIdx>(m[k]))];
      EXPECT_GE(dag_cost(g, m) + 1e-9, lm.bound() + res);
    });
  }
}

TEST(LmCut, ContinuingAfterDisablingIsMonotoneAndValid) {
  std::mt19937 rng(7);
  int infeasible = 0;
  for (const ExtractGraph& g : small_graphs()) {
    const Reduction red = reduce(g);
    const RelaxedTask t(g, red);
    LmCut lm(t);
    double before = lm.run();
    for (int step = 0; step < 3 && std::isfinite(before) && t.goal_action() > 0; ++step) {
      const uint32_t a = static_cast<uint32_t>(rng() % t.goal_action());
      lm.disable(a);
      const double after = lm.run();
      EXPECT_GE(after, before);
      const double best = testing::brute_force_optimum(restricted(g, red, t, lm));
      EXPECT_LE(after, best + 1e-9 * std::max(1.0, best));
      EXPECT_EQ(std::isfinite(after), std::isfinite(best)) << "bound " << after << " optimum " << best;
      infeasible += !std::isfinite(best);
      before = after;
    }
  }
  EXPECT_GT(infeasible, 0);  // some steps disabled every way to the roots
}

TEST(LmCut, EliminationKeepsEveryCheaperExtraction) {
  int removed_total = 0;
  for (const ExtractGraph& g : small_graphs()) {
    const double best = testing::brute_force_optimum(g);
    for (double factor : {1.0, 1.2}) {
      const Reduction red = reduce(g);
      const RelaxedTask t(g, red);
      LmCut lm(t);
      lm.run();
      const double threshold = best * factor + (factor > 1.0 ? 0.5 : 0.0);
      const ExtractGraph candidates = restricted(g, red, t, lm);
      const size_t removed = eliminate(lm, threshold);
      removed_total += static_cast<int>(removed);
      // Every extraction of the reduced problem that costs less than the threshold survives.
      testing::for_each_extraction(candidates, [&](const Choice& c) {
        if (!(dag_cost(g, c) < threshold)) return;
        for (size_t k = 0; k < c.size(); ++k) {
          if (c[k] < 0) continue;
          const uint32_t a = t.action_of(static_cast<NodeIdx>(c[k]));
          if (a != RelaxedTask::kNone) {
            EXPECT_TRUE(lm.enabled(a)) << "cost " << dag_cost(g, c) << " threshold " << threshold;
          }
        }
      });
      // The bound after continuing stays valid for what is left.
      lm.run();
      const double left = testing::brute_force_optimum(restricted(g, red, t, lm));
      EXPECT_LE(lm.bound(), left + 1e-9 * std::max(1.0, left));
    }
  }
  EXPECT_GT(removed_total, 0);
}

TEST(LmCut, KeptActionsAreNotEliminated) {
  const ExtractGraph g = testing::matmul_merge();
  const Reduction red = reduce(g);
  const RelaxedTask t(g, red);
  LmCut lm(t);
  lm.run();
  std::vector<char> keep(t.actions(), 1);
  EXPECT_EQ(eliminate(lm, 0.0, keep), 0u);  // a threshold of 0 would eliminate everything
  for (uint32_t a = 0; a < t.goal_action(); ++a) EXPECT_TRUE(lm.enabled(a));
  EXPECT_EQ(eliminate(lm, 0.0), t.goal_action());
}

TEST(LmCut, CutsFromTheZoneDownEqualTheForwardSweep) {
  // Acyclic tasks find V0's edges into the zone by a search down from the zone; the forward
  // sweep from the leaves (what cyclic tasks use) must give the same landmarks, also after
  // actions are disabled and the run continues, on random e-graphs with zero-cost nodes.
  size_t compared = 0;
  for (uint32_t seed = 0; seed < 100; ++seed) {
    const ExtractGraph g = testing::random_egraph(seed, 80, /*acyclic=*/true, /*zero_percent=*/seed % 3 * 20);
    const std::optional<Reduction> red = try_reduce(g);
    if (!red) continue;
    const RelaxedTask t(g, *red);
    ASSERT_TRUE(t.acyclic());
    LmCut down(t), forward(t);
    forward.use_forward_cuts(true);
    std::vector<std::vector<uint32_t>> ld, lf;
    EXPECT_EQ(down.run(SIZE_MAX, &ld), forward.run(SIZE_MAX, &lf)) << "seed " << seed;
    std::mt19937 rng(seed);
    for (int step = 0; step < 3 && t.goal_action() > 0; ++step) {
      const uint32_t a = static_cast<uint32_t>(rng() % t.goal_action());
      down.disable(a);
      forward.disable(a);
      EXPECT_EQ(down.run(SIZE_MAX, &ld), forward.run(SIZE_MAX, &lf)) << "seed " << seed << " step " << step;
    }
    EXPECT_EQ(ld, lf) << "seed " << seed;
    compared += ld.size();
  }
  EXPECT_GT(compared, 200u) << compared;  // the runs found landmarks to compare
}

TEST(LmCut, TopologicalOrderOnAcyclicTasks) {
  for (uint32_t seed = 0; seed < 20; ++seed)
    for (bool acyclic : {true, false}) {
      const ExtractGraph g = testing::random_egraph(seed, 30, acyclic);
      const std::optional<Reduction> red = try_reduce(g);
      if (!red) continue;
      const RelaxedTask t(g, *red);
      if (acyclic) {
        EXPECT_TRUE(t.acyclic());
      }
      if (!t.acyclic()) continue;
      // Numbered in topological order, the goal last; the numbering is a bijection.
      EXPECT_EQ(t.eff(t.goal_action()), t.goal());
      for (uint32_t a = 0; a < t.actions(); ++a)
        for (const uint32_t* p = t.pre_begin(a); p != t.pre_end(a); ++p) EXPECT_LT(*p, t.eff(a));
      for (uint32_t f = 0; f < t.goal(); ++f) EXPECT_EQ(t.fact_of(t.class_of(f)), f);
    }
}

TEST(LmCut, ChainFromTheGoal) {
  // matmul_merge: out <- C1 <- M, out <- C2 <- M; the cheapest chain to M costs nothing
  // (split nodes cost 0), to C1 and C2 nothing either (the Noop costs 0).
  const ExtractGraph g = testing::matmul_merge();
  const Reduction red = reduce(g);
  const RelaxedTask t(g, red);
  std::vector<double> cost(t.actions());
  for (uint32_t a = 0; a < t.actions(); ++a) cost[a] = t.cost(a);
  const auto up = cheapest_chain_from_goal(t, cost, {});
  EXPECT_EQ(up[t.goal()], 0.0);
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    const uint32_t f = t.fact_of(c);
    if (f == RelaxedTask::kNone) continue;
    const std::string& name = g.classes[c].json_id;
    const double expected = name == "cat" ? 1.5 : 0.0;  // cat is only under M's matmul
    EXPECT_NEAR(up[f], expected, 1e-12) << name;
  }
}

}  // namespace
}  // namespace tensat::extract
