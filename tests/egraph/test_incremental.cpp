// Performance machinery of the runner that must not change results: incremental search
// (change_tracker.h), the memo of no-op matches, oldest-root unions, the multi-pattern
// combination bound.
#include <gtest/gtest.h>

#include "egraph/change_tracker.h"
#include "egraph/cycle_filter.h"
#include "egraph/runner.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;
using testing::rule;

std::vector<Rewrite> mixed_rules() {
  return {rule("ewadd-comm", "(ewadd ?a ?b)", "(ewadd ?b ?a)"),
          rule("ewadd-assoc", "(ewadd ?a (ewadd ?b ?c))", "(ewadd (ewadd ?a ?b) ?c)"),
          rule("relu-ewadd", "(relu (ewadd ?a ?b))", "(relu (ewadd ?b ?a))"),
          rule("matmul-relu", "(relu (matmul none ?a ?b none))", "(matmul relu ?a ?b none)"),
          rule("matmul-assoc", "(matmul none ?a (matmul none ?b ?c none) none)",
               "(matmul none (matmul none ?a ?b none) ?c none)"),
          testing::matmul_merge()};
}

void build_mixed(Built& b) {
  build(b, {"(relu (ewadd (input a@4_4) (ewadd (input b@4_4) (ewadd (input c@4_4) (input d@4_4)))))",
            "(relu (matmul none (input x@4_4) (matmul none (weight w@4_4) (weight v@4_4) none) none))",
            "(matmul none (input x@4_4) (weight u@4_4) none)"});
}

// Per-iteration sizes of a run: equal sizes in every iteration mean the same exploration.
std::vector<std::pair<size_t, size_t>> sizes(const RunReport& rep) {
  std::vector<std::pair<size_t, size_t>> s;
  for (const auto& it : rep.iterations) s.push_back({it.nodes, it.classes});
  return s;
}

TEST(Incremental, SameExplorationAsFullSearch) {
  for (size_t match_limit : {size_t{1000}, size_t{6}}) {  // 6: the backoff scheduler bans rules
    Built full, inc;
    build_mixed(full);
    build_mixed(inc);
    auto rules = mixed_rules();
    RunReport a = Runner(full.eg)
                      .with_incremental_search(false)
                      .with_scheduler(std::make_unique<BackoffScheduler>(match_limit, 2))
                      .with_iter_limit(8)
                      .run(rules);
    RunReport b = Runner(inc.eg)
                      .with_incremental_search(true)
                      .with_scheduler(std::make_unique<BackoffScheduler>(match_limit, 2))
                      .with_iter_limit(8)
                      .run(rules);
    EXPECT_EQ(sizes(a), sizes(b)) << "match limit " << match_limit;
    EXPECT_EQ(a.stop_reason, b.stop_reason);
    ASSERT_EQ(a.iterations.size(), b.iterations.size());
    for (size_t i = 0; i < a.iterations.size(); ++i) {
      for (size_t r = 0; r < rules.size(); ++r) {
        const RuleStats &x = a.iterations[i].rules[r], &y = b.iterations[i].rules[r];
        // The scheduler saw the same counts (a full search stops one past the limit).
        EXPECT_EQ(x.banned, y.banned) << a.rule_names[r] << " iteration " << i;
        if (!x.banned) {
          EXPECT_EQ(x.matches, y.matches) << a.rule_names[r] << " iteration " << i;
        }
        EXPECT_EQ(x.applied, y.applied) << a.rule_names[r] << " iteration " << i;
        EXPECT_LE(y.searched, x.searched) << a.rule_names[r] << " iteration " << i;
        if (!y.banned) {  // every match searched is accounted for
          EXPECT_EQ(y.applied + y.unchanged + y.rejected(), y.searched) << a.rule_names[r];
        }
      }
    }
    EXPECT_EQ(inc.eg.check_invariants(), "");
    EXPECT_TRUE(is_acyclic(inc.eg));
  }
}

TEST(Incremental, KnownMatchesAreNotReplanned) {
  Built b;
  build(b, {"(ewadd (input a@4) (input b@4))"});
  std::vector<Rewrite> rules{rule("ewadd-comm", "(ewadd ?a ?b)", "(ewadd ?b ?a)")};
  RunReport rep = Runner(b.eg).run(rules);
  ASSERT_EQ(rep.iterations.size(), 2u);
  EXPECT_EQ(rep.iterations[1].rules[0].unchanged, 2u);
  EXPECT_EQ(rep.iterations[1].rules[0].memo_hits, 1u);  // (a+b) was applied in iteration 0
}

TEST(ChangeTracker, DistancesFromTouchedClasses) {
  Built b;
  build(b, {"(tanh (relu (sigmoid (input a@4))))", "(relu (input b@4))"});
  EGraph& eg = b.eg;
  std::vector<EClassId> n, d;
  eg.take_touched(n, d);  // start clean
  EClassId a = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("a@4")}));
  EClassId s = eg.add(ENode::make(Op::Sigmoid, {a}));  // exists: nothing touched
  eg.take_touched(n, d);
  EXPECT_TRUE(n.empty() && d.empty());
  EClassId r = eg.find(*eg.lookup(ENode::make(Op::Relu, {s})));
  // A new e-node in sigmoid's class (a node change, not a data change).
  EClassId t = eg.add(ENode::make(Op::Tanh, {a}));
  eg.merge(s, t);
  eg.rebuild();
  ChangeTracker tr;
  tr.update(eg, 3);
  // (relu ?x) reads only the identity of ?x's class: unchanged, nothing to search.
  EXPECT_TRUE(tr.roots(eg, Op::Relu, 0, 1, {}).empty());
  // (relu (sigmoid ?x)) reads sigmoid's e-nodes: one level down.
  EXPECT_EQ(tr.roots(eg, Op::Relu, 1, 2, {}), std::vector<EClassId>{r});
  // Tanh patterns: sigmoid's class itself now holds a tanh; the outer tanh is two levels up.
  EClassId sc = eg.find(s);
  EXPECT_EQ(tr.roots(eg, Op::Tanh, 1, 2, {}), std::vector<EClassId>{sc});
  EXPECT_EQ(tr.roots(eg, Op::Tanh, 2, 3, {}), (std::vector<EClassId>{sc, b.terms[0]}));
  // An extra root (a cycle-refused match) comes after the others, once.
  EXPECT_EQ(tr.roots(eg, Op::Relu, 0, 0, {b.terms[1]}), std::vector<EClassId>{b.terms[1]});
  EXPECT_EQ(tr.roots(eg, Op::Relu, 1, 2, {b.terms[1], r, b.terms[1]}), (std::vector<EClassId>{r, b.terms[1]}));
  // Cached per (operator, heights): asking again gives the same list.
  EXPECT_EQ(tr.roots(eg, Op::Tanh, 2, 3, {}), (std::vector<EClassId>{sc, b.terms[0]}));
  tr.update(eg, 3);
  EXPECT_EQ(tr.num_touched(), 0u);
}

TEST(EGraph, UnionKeepsTheOlderClassAsRoot) {
  EGraph eg;
  EClassId x = eg.add(ENode::make(Op::Input, {eg.add_sym("x@4")}));
  EClassId r = eg.add(ENode::make(Op::Relu, {x}));
  EClassId t = eg.add(ENode::make(Op::Tanh, {r}));
  eg.merge(t, r);
  eg.rebuild();
  EXPECT_EQ(eg.find(t), r);
  EXPECT_EQ(eg.check_invariants(), "");
}

TEST(MultiPattern, CombinationLimitTruncates) {
  Built b;
  build(b, {"(matmul none (input x@8_16) (weight w1@16_16) none)",
            "(matmul none (input x@8_16) (weight w2@16_16) none)",
            "(matmul none (input x@8_16) (weight w3@16_16) none)"});
  std::vector<Rewrite> rules{testing::matmul_merge()};
  RunnerConfig cfg;
  cfg.iter_limit = 1;
  cfg.multi_combination_limit = 2;
  RunReport rep = Runner(b.eg).with_config(cfg).run(rules);
  EXPECT_EQ(rep.iterations[0].rules[0].matches, 2u);  // of 6 ordered pairs
  EXPECT_TRUE(rep.iterations[0].rules[0].truncated);
  EXPECT_EQ(b.eg.check_invariants(), "");
}

}  // namespace
}  // namespace tensat
