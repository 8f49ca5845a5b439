// Multi-pattern rules: matmul merging over shared inputs (TENSAT Algorithm 1).
#include <gtest/gtest.h>

#include "egraph/cycle_filter.h"
#include "egraph/multi_pattern.h"
#include "egraph/runner.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;

// A class of type `shape` holding a matmul node, if any.
std::optional<EClassId> matmul_class_of_shape(const EGraph& eg, const Shape& shape) {
  for (EClassId c : eg.classes_with_op(Op::Matmul))
    if (eg.type(c).is_tensor() && eg.type(c).shape() == shape) return c;
  return std::nullopt;
}

// True if class `c` holds (split_K (split AXIS POS target)) for K = 0 or 1.
bool is_split_of(const EGraph& eg, EClassId c, EClassId target) {
  for (ENodeId n : eg.eclass(c).nodes) {
    const ENode& s = eg.node(n);
    if (s.op != Op::Split0 && s.op != Op::Split1) continue;
    for (ENodeId m : eg.eclass(s.children[0]).nodes)
      if (eg.node(m).op == Op::Split && eg.find(eg.node(m).children[2]) == eg.find(target)) return true;
  }
  return false;
}

TEST(MultiPattern, CanonicalPatternsAreSearchedOnce) {
  Rewrite r1 = testing::matmul_merge();
  Rewrite r2 = compile_rewrite(testing::spec(
      "other", {"(matmul ?a ?y ?v none)", "(relu ?y)"}, {"(matmul ?a ?y ?v none)", "(relu ?y)"}));
  MultiPatternSearcher mps({&r1, &r2});
  EXPECT_EQ(mps.num_patterns(), 2u);  // the three matmul sides are one pattern
}

TEST(MultiPattern, TwoMatmulsSharingAnInputMerge) {
  Built b;
  build(b, {"(matmul none (input x@8_16) (weight w1@16_16) none)",
            "(matmul none (input x@8_16) (weight w2@16_32) none)"});
  std::vector<Rewrite> rules{testing::matmul_merge()};
  RunReport rep = Runner(b.eg).with_iter_limit(1).with_k_multi(1).run(rules);
  ASSERT_EQ(b.eg.check_invariants(), "");
  EXPECT_EQ(rep.iterations.at(0).rules[0].matches, 2u);  // (a, b) and (b, a)
  EXPECT_EQ(rep.iterations[0].rules[0].applied, 2u);
  auto merged = matmul_class_of_shape(b.eg, {8, 48});
  ASSERT_TRUE(merged);
  EXPECT_TRUE(is_split_of(b.eg, b.terms[0], *merged));
  EXPECT_TRUE(is_split_of(b.eg, b.terms[1], *merged));
  EXPECT_EQ(b.eg.data(*merged).boundary(1), 16);  // one of the two concat orders
  EXPECT_TRUE(is_acyclic(b.eg));
}

TEST(MultiPattern, DoesNotFireWithoutSharedInput) {
  Built b;
  build(b, {"(matmul none (input x@8_16) (weight w1@16_16) none)",
            "(matmul none (input y@8_16) (weight w2@16_16) none)"});
  std::vector<Rewrite> rules{testing::matmul_merge()};
  RunReport rep = Runner(b.eg).with_iter_limit(3).run(rules);
  EXPECT_EQ(rep.stop_reason, StopReason::Saturated);
  EXPECT_EQ(rep.totals()[0].matches, 0u);
  EXPECT_FALSE(matmul_class_of_shape(b.eg, {8, 32}));
}

TEST(MultiPattern, DifferentActivationsDoNotMerge) {
  Built b;
  build(b, {"(matmul none (input x@8_16) (weight w1@16_16) none)",
            "(matmul relu (input x@8_16) (weight w2@16_16) none)"});
  std::vector<Rewrite> rules{testing::matmul_merge()};
  RunReport rep = Runner(b.eg).with_iter_limit(3).run(rules);
  EXPECT_EQ(rep.totals()[0].matches, 0u);
}

void build_qkv(Built& b) {
  build(b, {"(matmul none (input x@8_16) (weight wq@16_16) none)",
            "(matmul none (input x@8_16) (weight wk@16_16) none)",
            "(matmul none (input x@8_16) (weight wv@16_16) none)"});
}

TEST(MultiPattern, QKVReachesThreeWayMergeWithKMulti2) {
  Built b;
  build_qkv(b);
  std::vector<Rewrite> rules{testing::matmul_merge()};
  RunReport rep = Runner(b.eg).with_iter_limit(2).with_k_multi(2).run(rules);
  ASSERT_EQ(b.eg.check_invariants(), "");
  EXPECT_TRUE(is_acyclic(b.eg));
  EXPECT_TRUE(matmul_class_of_shape(b.eg, {8, 32}));
  auto three = matmul_class_of_shape(b.eg, {8, 48});
  ASSERT_TRUE(three);
  // Some two-way class is a split of the three-way matmul, and each of Q, K, V is a split of
  // a two-way or the three-way matmul.
  bool two_from_three = false;
  for (EClassId c : b.eg.classes_with_op(Op::Matmul))
    if (b.eg.type(c).shape() == Shape{8, 32} && is_split_of(b.eg, c, *three)) two_from_three = true;
  EXPECT_TRUE(two_from_three);
  EXPECT_TRUE(rep.iterations.at(1).multi);
}

TEST(MultiPattern, QKVStaysTwoWayWithKMulti1) {
  Built b;
  build_qkv(b);
  std::vector<Rewrite> rules{testing::matmul_merge()};
  Runner(b.eg).with_iter_limit(2).with_k_multi(1).run(rules);
  EXPECT_TRUE(matmul_class_of_shape(b.eg, {8, 32}));
  EXPECT_FALSE(matmul_class_of_shape(b.eg, {8, 48}));
}


// matmul-merge3 (rules/matmul.rules) with the split0 link: at k_multi 1, Q, K and V end up as
// parts of one three-way product. The third side writes only (split_1 (split 1 M)); the
// engine adds its sibling (split_0 ...), which the link rule needs to find.
Rewrite matmul_merge3() {
  return compile_rewrite(testing::spec(
      "matmul-merge3",
      {"(matmul ?act ?x ?w1 none)", "(matmul ?act ?x ?w2 none)", "(matmul ?act ?x ?w3 none)"},
      {"(split_0 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))",
       "(split_1 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))",
       "(split_1 (split 1 (matmul ?act ?x (concat 1 (concat 1 ?w1 ?w2) ?w3) none)))"},
      {"(ordered ?w1 ?w2)", "(ordered ?w2 ?w3)"}));
}
Rewrite split0_weight() {
  return testing::rule("matmul-split0-weight", "(split_0 (split 1 (matmul ?act ?x (concat 1 ?a ?b) none)))",
                       "(matmul ?act ?x ?a none)");
}

TEST(MultiPattern, QKVMergesThreeWayWithKMulti1) {
  Built b;
  build_qkv(b);
  std::vector<Rewrite> rules{matmul_merge3(), split0_weight()};
  RunReport rep = Runner(b.eg).with_iter_limit(4).with_k_multi(1).run(rules);
  ASSERT_EQ(b.eg.check_invariants(), "");
  EXPECT_TRUE(is_acyclic(b.eg));
  auto three = matmul_class_of_shape(b.eg, {8, 48});
  ASSERT_TRUE(three);
  // ordered: one of the 6 orders of (Q, K, V) applies
  EXPECT_EQ(rep.totals()[0].applied, 1u);
  EXPECT_EQ(rep.totals()[1].applied, 1u);  // the pair's product became M's left part
  auto two = matmul_class_of_shape(b.eg, {8, 32});
  ASSERT_TRUE(two);
  EXPECT_TRUE(is_split_of(b.eg, *two, *three));
  int from_three = 0, from_two = 0;
  for (EClassId t : b.terms) {
    from_three += is_split_of(b.eg, t, *three) ? 1 : 0;
    from_two += is_split_of(b.eg, t, *two) ? 1 : 0;
  }
  EXPECT_EQ(from_three, 1);
  EXPECT_EQ(from_two, 2);
}

TEST(MultiPattern, SplitPartOnAMultiPatternSideAddsItsSibling) {
  Built b;
  build_qkv(b);
  std::vector<Rewrite> rules{matmul_merge3()};
  Runner(b.eg).with_iter_limit(1).with_k_multi(1).run(rules);
  auto three = matmul_class_of_shape(b.eg, {8, 48});
  ASSERT_TRUE(three);
  bool part0 = false, part1 = false;
  for (EClassId c : b.eg.class_ids())
    for (ENodeId n : b.eg.eclass(c).nodes) {
      const ENode& e = b.eg.node(n);
      if (e.op != Op::Split0 && e.op != Op::Split1) continue;
      for (ENodeId m : b.eg.eclass(e.children[0]).nodes)
        if (b.eg.node(m).op == Op::Split && b.eg.find(b.eg.node(m).children[2]) == b.eg.find(*three))
          (e.op == Op::Split0 ? part0 : part1) = true;
    }
  EXPECT_TRUE(part1);  // written by the rule
  EXPECT_TRUE(part0);  // added by the engine
}

TEST(MultiPattern, ThreeProductsWithoutASharedInputDoNotMerge) {
  Built b;
  build(b, {"(matmul none (input x@8_16) (weight wq@16_16) none)",
            "(matmul none (input y@8_16) (weight wk@16_16) none)",
            "(matmul none (input x@8_16) (weight wv@16_16) none)"});
  std::vector<Rewrite> rules{matmul_merge3(), split0_weight()};
  RunReport rep = Runner(b.eg).with_iter_limit(4).with_k_multi(1).run(rules);
  EXPECT_EQ(rep.totals()[0].applied, 0u);
  EXPECT_FALSE(matmul_class_of_shape(b.eg, {8, 48}));
}

}  // namespace
}  // namespace tensat
