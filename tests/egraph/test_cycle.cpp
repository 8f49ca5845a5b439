// Cycle filtering: the paper's Figure 3 situation, both algorithms, and the post-pass.
#include <gtest/gtest.h>

#include <random>

#include "egraph/cycle_filter.h"
#include "egraph/runner.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;

// Merging two matmuls that share a weight by concatenating their inputs (TASO's rule). With
// y = x·w and z = y·w, merging creates (matmul (concat 0 x y) w) whose split is y: a cycle.
Rewrite merge_by_input() {
  return compile_rewrite(testing::spec(
      "matmul-merge-input", {"(matmul ?act ?x1 ?w none)", "(matmul ?act ?x2 ?w none)"},
      {"(split_0 (split 0 (matmul ?act (concat 0 ?x1 ?x2) ?w none)))",
       "(split_1 (split 0 (matmul ?act (concat 0 ?x1 ?x2) ?w none)))"}));
}

void build_fig3(Built& b) {
  build(b, {"(matmul none (matmul none (input x@4_4) (weight w@4_4) none) (weight w@4_4) none)"});
}

class Figure3 : public ::testing::TestWithParam<CycleFilterMode> {};

TEST_P(Figure3, FilteredAndAcyclic) {
  Built b;
  build_fig3(b);
  std::vector<Rewrite> rules{merge_by_input()};
  RunReport rep = Runner(b.eg).with_iter_limit(3).with_k_multi(3).with_cycle_filter(GetParam()).run(rules);
  ASSERT_EQ(b.eg.check_invariants(), "");
  EXPECT_TRUE(is_acyclic(b.eg));
  const RuleStats t = rep.totals()[0];
  EXPECT_GT(t.matches, 0u);
  EXPECT_GT(t.rejected_cycle, 0u);
  EXPECT_EQ(t.applied, 0u);  // the only merge there is would be cyclic
}

INSTANTIATE_TEST_SUITE_P(Modes, Figure3,
                         ::testing::Values(CycleFilterMode::Efficient, CycleFilterMode::Vanilla));

TEST(CycleFilter, WithoutFilteringTheEGraphBecomesCyclic) {
  Built b;
  build_fig3(b);
  std::vector<Rewrite> rules{merge_by_input()};
  Runner(b.eg).with_iter_limit(1).with_cycle_filter(CycleFilterMode::None).run(rules);
  EXPECT_FALSE(is_acyclic(b.eg));
  // The post-pass alone removes the cycles, filtering the newest e-node on each.
  CycleFilter f(CycleFilterMode::Efficient);
  EXPECT_GT(f.remove_cycles(b.eg), 0u);
  EXPECT_TRUE(is_acyclic(b.eg));
  EXPECT_FALSE(is_acyclic(b.eg, /*ignore_filtered=*/false));
}

TEST(CycleFilter, PostPassFiltersNewestNode) {
  Built b;
  build(b, {"(tanh (relu (input a@4)))"});
  EGraph& eg = b.eg;
  auto a = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("a@4")}));
  eg.merge(a, b.terms[0]);  // a = tanh(relu(a)): a cycle through relu and tanh
  eg.rebuild();
  ASSERT_EQ(eg.check_invariants(), "");
  EXPECT_FALSE(is_acyclic(eg));
  CycleFilter f(CycleFilterMode::Efficient);
  EXPECT_EQ(f.remove_cycles(eg), 1u);
  EXPECT_TRUE(is_acyclic(eg));
  // The tanh node was added last.
  ENodeId newest;
  for (ENodeId n : eg.eclass(a).nodes) newest = std::max(newest.valid() ? newest : n, n);
  EXPECT_EQ(eg.node(newest).op, Op::Tanh);
  EXPECT_TRUE(eg.is_filtered(newest));
  EXPECT_EQ(eg.num_filtered(), 1u);
}

TEST(CycleFilter, ModesAgreeOnARealisticRun) {
  // Both algorithms end acyclic on a graph where merging is partly legal.
  for (auto mode : {CycleFilterMode::Efficient, CycleFilterMode::Vanilla}) {
    Built b;
    build(b, {"(matmul none (matmul none (input x@4_4) (weight w@4_4) none) (weight w@4_4) none)",
              "(matmul none (input y@4_4) (weight w@4_4) none)"});
    std::vector<Rewrite> rules{merge_by_input()};
    RunReport rep = Runner(b.eg).with_iter_limit(2).with_k_multi(2).with_cycle_filter(mode).run(rules);
    ASSERT_EQ(b.eg.check_invariants(), "");
    EXPECT_TRUE(is_acyclic(b.eg)) << cycle_filter_name(mode);
    EXPECT_GT(rep.totals()[0].applied, 0u) << cycle_filter_name(mode);
    EXPECT_GT(rep.totals()[0].rejected_cycle, 0u) << cycle_filter_name(mode);
  }
}


// The efficient mode's snapshot answers every reachability question as a walk of the live
// e-graph does (the vanilla mode), on random e-graphs, acyclic ones and ones that merges made
// cyclic: refused and allowed alike. (Its post-order prunes the walk, its DFS subtree ranges
// answer most refusals without one.)
TEST(CycleFilter, SnapshotAnswersAsTheLiveWalkOnRandomEGraphs) {
  const uint64_t leaves = (uint64_t{1} << static_cast<unsigned>(Op::Num)) | (uint64_t{1} << static_cast<unsigned>(Op::Sym));
  size_t questions = 0, reachable = 0, cyclic = 0;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    std::vector<std::string> pool{"(input a@4)", "(input b@4)", "(input c@4)"};
    const char* unary[] = {"relu", "tanh", "sigmoid"};
    const char* binary[] = {"ewadd", "ewmul"};
    const size_t terms = 8 + pick(40);
    for (size_t i = 0; i < terms; ++i) {
      const std::string& x = pool[pick(pool.size())];
      const std::string& y = pool[pick(pool.size())];
      pool.push_back(pick(2) ? "(" + std::string(unary[pick(3)]) + " " + x + ")"
                             : "(" + std::string(binary[pick(2)]) + " " + x + " " + y + ")");
    }
    Built b;
    build(b, {pool.end() - 4, pool.end()});
    EGraph& eg = b.eg;
    std::vector<EClassId> tensors;  // classes of operators and inputs (all of shape 4; not the noop root)
    for (uint32_t c = 0; c < eg.class_capacity(); ++c)
      if (eg.find(EClassId(c)) == EClassId(c) && (eg.class_ops(EClassId(c)) & ~leaves) != 0 && EClassId(c) != b.root)
        tensors.push_back(EClassId(c));
    for (size_t m = seed % 3; m > 0; --m) eg.merge(tensors[pick(tensors.size())], tensors[pick(tensors.size())]);
    eg.rebuild();
    ASSERT_EQ(eg.check_invariants(), "");
    cyclic += !is_acyclic(eg);
    std::vector<EClassId> live;
    for (uint32_t c = 0; c < eg.class_capacity(); ++c)
      if (eg.find(EClassId(c)) == EClassId(c) && eg.class_ops(EClassId(c)) != 0) live.push_back(EClassId(c));
    CycleFilter efficient(CycleFilterMode::Efficient), vanilla(CycleFilterMode::Vanilla);
    efficient.begin_iteration(eg);
    for (EClassId to : live) {
      if ((eg.class_ops(to) & ~leaves) == 0) continue;  // (a parameter leaf is never matched)
      for (EClassId from : live) {
        const bool want = vanilla.would_cycle(eg, to, {from}, std::nullopt);
        ASSERT_EQ(efficient.would_cycle(eg, to, {from}, std::nullopt), want)
            << "seed " << seed << ": from class " << from.v << " to class " << to.v;
        ++questions;
        reachable += want;
      }
    }
  }
  // Both answers, on both kinds of e-graph, many times.
  EXPECT_GT(reachable, 1000u);
  EXPECT_GT(questions - reachable, 1000u);
  EXPECT_GT(cyclic, 5u);
}

}  // namespace
}  // namespace tensat
