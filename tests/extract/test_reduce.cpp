// Tests of the ILP reductions (reduce.h): free classes, the warm-start mapping, requirements,
// and the TENSAT pipeline's e-graphs that exposed a mapping bug (tests/extract/data/).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <random>
#include <set>

#include "extract/greedy.h"
#include "extract/ilp.h"
#include "extract/reduce.h"
#include "extract/serialize_json.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

// R = f(A) [1]; A = leaf [0] | h(B) [0]; B = leaf [0]. A is free, and its free node is h(B)
// (the bottom-up marking reaches it last). Greedy picks A's leaf and leaves B unused, so
// the warm start does not choose B although A's free node needs it.
ExtractGraph free_class_with_unchosen_child() {
  ExtractGraph g;
  const ClassIdx r = g.add_class("R"), a = g.add_class("A"), b = g.add_class("B");
  g.add_node(r, "f", {a}, 1.0);
  g.add_node(a, "leafA", {}, 0.0);
  g.add_node(a, "h", {b}, 0.0);
  g.add_node(b, "leafB", {}, 0.0);
  g.roots = {r};
  return g;
}

TEST(Reduce, MapsOntoAFreeNodeWhoseChildrenTheInputDidNotChoose) {
  const ExtractGraph g = free_class_with_unchosen_child();
  const Reduction red = reduce(g);
  ASSERT_TRUE(red.class_free[1]);
  const Choice greedy_like = {0, 1, -1};  // A = leafA, B unused
  ASSERT_EQ(extraction_problem(g, greedy_like), "");
  const Choice mapped = map_to_reduced(g, red, greedy_like);  // threw "class B unchosen"
  EXPECT_EQ(extraction_problem(g, mapped), "");
  EXPECT_EQ(mapped[1], red.free_node[1]);
  EXPECT_EQ(dag_cost(g, mapped), 1.0);
  const auto r = extract_ilp(g);
  EXPECT_EQ(r.status, "optimal");
  EXPECT_EQ(r.dag_cost, 1.0);
}

// R = f(C) [1]; C = b(X, W) [2] | a(X) [2]; X = leaf [1]; W = weight [0]. W is free, so b
// dominates a although it has the extra child W (a weight, as in conv(x, w) next to a
// rewritten conv): a's warm start maps onto b with W set to its free node.
TEST(Reduce, DominanceIgnoresFreeChildClasses) {
  ExtractGraph g;
  const ClassIdx r = g.add_class("R"), c = g.add_class("C"), x = g.add_class("X"),
                 w = g.add_class("W");
  g.add_node(r, "f", {c}, 1.0);
  const NodeIdx b = g.add_node(c, "b", {x, w}, 2.0);
  const NodeIdx a = g.add_node(c, "a", {x}, 2.0);
  g.add_node(x, "leaf", {}, 1.0);
  g.add_node(w, "weight", {}, 0.0);
  g.roots = {r};
  const Reduction red = reduce(g);
  ASSERT_TRUE(red.class_free[w]);
  EXPECT_EQ(red.stats.dominated, 1u);
  EXPECT_FALSE(red.node_alive[a]);
  EXPECT_EQ(red.replacement[a], static_cast<int64_t>(b));
  const Choice uses_a = {0, static_cast<int64_t>(a), 3, -1};
  ASSERT_EQ(extraction_problem(g, uses_a), "");
  const Choice mapped = map_to_reduced(g, red, uses_a);
  EXPECT_EQ(extraction_problem(g, mapped), "");
  EXPECT_EQ(mapped[c], static_cast<int64_t>(b));
  EXPECT_EQ(dag_cost(g, mapped), 4.0);
  EXPECT_EQ(extract_ilp(g).dag_cost, 4.0);
}

TEST(Reduce, WarmStartMappingOnGraphsWithManyZeroCostNodes) {
  int mapped_count = 0;
  for (uint32_t seed = 0; seed < 200; ++seed) {
    const ExtractGraph g = testing::random_egraph(seed, 8, /*acyclic=*/seed % 2 == 0, 50);
    Reduction red;
    try {
      red = reduce(g);
    } catch (const InputError&) {
      continue;
    }
    for (const auto& r : {extract_greedy(g), extract_greedy_dag(g)}) {
      const Choice mapped = map_to_reduced(g, red, r.choice);
      EXPECT_EQ(extraction_problem(g, mapped), "") << seed;
      EXPECT_LE(dag_cost(g, mapped), r.dag_cost + 1e-12) << seed;
      ++mapped_count;
    }
  }
  EXPECT_GE(mapped_count, 200);
}

// R = a(X) [0] | b(Y) [0]; X = f(D) [1] | leaf [5]; Y = g(D) [1]; D = leaf [2] | leaf2 [3].
// Every node of Y needs D; R needs D only through Y when it picks b.
TEST(Reduce, RequirementsFollowEveryAlternative) {
  ExtractGraph g;
  const ClassIdx r = g.add_class("R"), x = g.add_class("X"), y = g.add_class("Y");
  const ClassIdx d = g.add_class("D"), e = g.add_class("E");
  g.add_node(r, "a", {x, e}, 1.0);
  g.add_node(r, "b", {y, e}, 1.0);
  g.add_node(x, "f", {d}, 1.0);
  g.add_node(x, "leafX", {}, 5.0);
  g.add_node(y, "g", {d}, 1.0);
  g.add_node(d, "leafD", {}, 2.0);
  g.add_node(d, "leafD2", {}, 3.0);
  g.add_node(e, "leafE", {}, 1.0);
  g.add_node(e, "leafE2", {}, 2.0);
  g.roots = {r};
  const Reduction red = reduce(g);
  const Requirements req = requirements(g, red);
  ASSERT_TRUE(req.computed);
  EXPECT_EQ(req.immediate[r], std::vector<ClassIdx>{e});  // both nodes of R use E
  EXPECT_EQ(req.immediate[y], std::vector<ClassIdx>{d});
  EXPECT_TRUE(req.immediate[x].empty());                  // X may be a leaf
  EXPECT_TRUE(req.mandatory[r] && req.mandatory[e]);
  EXPECT_FALSE(req.mandatory[x] || req.mandatory[y] || req.mandatory[d]);
  EXPECT_NEAR(extract_ilp(g).dag_cost, testing::brute_force_optimum(g), 1e-12);
}

TEST(Reduce, RequirementsAreTransitivelyReduced) {
  // A chain R -> B -> C -> D (single nodes plus a costlier leaf in D): R requires B, C, D
  // but lists only B.
  ExtractGraph g;
  const ClassIdx r = g.add_class("R"), b = g.add_class("B"), c = g.add_class("C"), d = g.add_class("D");
  g.add_node(r, "r", {b}, 1.0);
  g.add_node(b, "b", {c}, 1.0);
  g.add_node(b, "b2", {c, d}, 0.5);
  g.add_node(c, "c", {d}, 1.0);
  g.add_node(d, "d", {}, 1.0);
  g.add_node(d, "d2", {}, 2.0);
  g.roots = {r};
  const Requirements req = requirements(g, reduce(g));
  ASSERT_TRUE(req.computed);
  EXPECT_EQ(req.immediate[r], std::vector<ClassIdx>{b});
  EXPECT_EQ(req.immediate[b], std::vector<ClassIdx>{c});
  EXPECT_EQ(req.immediate[c], std::vector<ClassIdx>{d});
  EXPECT_EQ(req.pairs, 3u);
  for (ClassIdx k : {r, b, c, d}) EXPECT_TRUE(req.mandatory[k]);
}

// requirements() against its definition, computed the plain way: Req(C) = AND over C's alive
// nodes of OR over their (alive, non-free) child classes K of ({K} | Req(K)), iterated from
// "every class" to the greatest fixpoint; unusable: requires itself, or an unusable class;
// mandatory: a root or required by one; immediate: the usable D in Req(C) that no usable E in
// Req(C) requires. On reduced and unreduced, acyclic and cyclic random e-graphs (the function
// settles a DAG in one pass in a children-first order and iterates otherwise).
TEST(Reduce, RequirementsMatchTheirDefinitionOnRandomGraphs) {
  int compared = 0, cyclic = 0;
  for (uint32_t seed = 700; seed < 900; ++seed) {
    const bool acyclic = seed % 2 == 0;
    // Mostly small; every tenth 64, 65 or 150 classes (bitsets of one word exactly, more than
    // one word).
    const int sizes[] = {64, 65, 150};
    const int classes = seed % 10 == 5 ? sizes[(seed / 10) % 3] : 6 + static_cast<int>(seed % 7);
    ExtractGraph g = testing::random_egraph(seed, classes, acyclic, 20);
    std::mt19937 rng(seed);
    if (!acyclic && seed % 4 == 1) {  // a class that reads itself
      const auto c = static_cast<ClassIdx>(rng() % static_cast<uint32_t>(classes));
      g.add_node(c, "self", {c, static_cast<ClassIdx>(rng() % static_cast<uint32_t>(classes))}, 1.0);
    }
    const size_t C = g.classes.size();
    Reduction none;  // every node alive (or, every third graph, a random sixth of them dead), no free class
    none.node_alive.assign(g.nodes.size(), 1);
    if (seed % 3 == 0)
      for (auto& alive : none.node_alive) alive = rng() % 6 != 0;
    none.class_alive.assign(C, 1);
    none.class_free.assign(C, 0);
    none.free_node.assign(C, -1);
    none.replacement.assign(g.nodes.size(), -1);
    std::vector<Reduction> reductions{none};
    try {
      reductions.push_back(reduce(g));
    } catch (const InputError&) {
      // no acyclic extraction: the unreduced problem only
    }
    for (const Reduction& red : reductions) {
      const Requirements req = requirements(g, red, 1000);
      ASSERT_TRUE(req.computed) << seed;
      auto relevant = [&](ClassIdx c) { return red.class_alive[c] && !red.class_free[c]; };
      std::vector<std::set<ClassIdx>> R(C);
      std::set<ClassIdx> all;
      for (ClassIdx c = 0; c < C; ++c)
        if (relevant(c)) all.insert(c);
      for (ClassIdx c : all) R[c] = all;
      for (bool changed = true; changed;) {
        changed = false;
        for (ClassIdx c : all) {
          std::set<ClassIdx> meet = all;
          for (NodeIdx n : g.classes[c].nodes) {
            if (!red.node_alive[n]) continue;
            std::set<ClassIdx> join;
            for (ClassIdx k : g.nodes[n].children)
              if (relevant(k)) {
                join.insert(k);
                join.insert(R[k].begin(), R[k].end());
              }
            std::set<ClassIdx> both;
            std::set_intersection(meet.begin(), meet.end(), join.begin(), join.end(), std::inserter(both, both.end()));
            meet = std::move(both);
          }
          if (meet != R[c]) {
            R[c] = std::move(meet);
            changed = true;
          }
        }
      }
      std::vector<char> unusable(C, 0);
      for (ClassIdx c : all) unusable[c] = R[c].count(c) > 0;
      for (bool changed = true; changed;) {
        changed = false;
        for (ClassIdx c : all)
          for (ClassIdx d : R[c])
            if (unusable[d] && !unusable[c]) unusable[c] = changed = true;
      }
      for (ClassIdx c : all) {
        std::set<ClassIdx> bits;
        for (size_t w = 0; w < req.class_of.size(); ++w)
          if ((req.of(c)[w / 64] >> (w % 64)) & 1) bits.insert(req.class_of[w]);
        EXPECT_EQ(bits, R[c]) << "seed " << seed << " class " << c;
        EXPECT_EQ(req.unusable[c] != 0, unusable[c] != 0) << "seed " << seed << " class " << c;
        bool mandatory = false;
        for (ClassIdx root : g.roots) mandatory = mandatory || root == c || (relevant(root) && R[root].count(c));
        EXPECT_EQ(req.mandatory[c] != 0, mandatory) << "seed " << seed << " class " << c;
        if (unusable[c]) continue;
        std::vector<ClassIdx> immediate;
        for (ClassIdx d : R[c]) {
          if (unusable[d]) continue;
          bool through = false;
          for (ClassIdx e : R[c]) through = through || (e != d && !unusable[e] && R[e].count(d));
          if (!through) immediate.push_back(d);
        }
        EXPECT_EQ(req.immediate[c], immediate) << "seed " << seed << " class " << c;
      }
      ++compared;
      if (!relevant(0) || std::any_of(all.begin(), all.end(), [&](ClassIdx c) { return unusable[c]; })) ++cyclic;
    }
  }
  EXPECT_GE(compared, 390);
  EXPECT_GE(cyclic, 20);  // classes that require themselves: the iterated (cyclic) path
}

TEST(Reduce, RequirementRowsKeepTheOptimumOnRandomGraphs) {
  int checked = 0;
  for (uint32_t seed = 300; seed < 360; ++seed) {
    const bool acyclic = seed % 2 == 0;
    const ExtractGraph g = testing::random_egraph(seed, 8, acyclic, seed % 3 == 0 ? 40 : 0);
    const double best = testing::brute_force_optimum(g);
    if (!std::isfinite(best)) continue;
    ++checked;
    for (bool rows : {true, false}) {
      IlpOptions opts;
      opts.requirement_rows = rows;
      const auto r = extract_ilp(g, opts);
      EXPECT_EQ(r.status, "optimal") << seed;
      EXPECT_NEAR(r.dag_cost, best, 1e-9) << "seed " << seed << " rows " << rows;
      EXPECT_LE(r.best_bound, best + 1e-9) << seed;
    }
  }
  EXPECT_GE(checked, 30);
}

// E-graphs from the full pipeline (bert and nasrnn, roofline T4 costs, cycle-filter marks).
// Their warm start used to fail in map_to_reduced ("class c1704 unchosen"); with the
// requirement rows the ILP proves optimality in well under a second.
class PipelineEgraph : public ::testing::TestWithParam<std::string> {};

TEST_P(PipelineEgraph, IlpIsOptimalAndNoWorseThanGreedy) {
  const auto path = std::filesystem::path(TENSAT_TEST_DATA_DIR) / ("eg_" + GetParam() + ".json");
  const ExtractGraph g = read_egraph_json(path.string());
  const auto dag = extract_greedy_dag(g);
  const Reduction red = reduce(g);
  const Choice mapped = map_to_reduced(g, red, dag.choice);
  EXPECT_EQ(extraction_problem(g, mapped), "");
  IlpOptions opts;
  opts.time_limit_s = 20;
  const auto ilp = extract_ilp(g, opts);
  EXPECT_TRUE(ilp.acyclic);
  EXPECT_EQ(ilp.status, "optimal");
  EXPECT_LE(ilp.dag_cost, dag.dag_cost + 1e-12);
  EXPECT_LT(ilp.time_s, 10.0);
}

INSTANTIATE_TEST_SUITE_P(Files, PipelineEgraph, ::testing::Values("bert", "nasrnn"));

}  // namespace
}  // namespace tensat::extract
