// Runner: stop reasons, statistics, shape-checked application, bridges and JSON export.
#include <gtest/gtest.h>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/runner.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;
using testing::rule;

std::vector<Rewrite> add_rules() {
  return {rule("ewadd-comm", "(ewadd ?a ?b)", "(ewadd ?b ?a)"),
          rule("ewadd-assoc", "(ewadd ?a (ewadd ?b ?c))", "(ewadd (ewadd ?a ?b) ?c)")};
}

const char* kChain =
    "(ewadd (input a@4) (ewadd (input b@4) (ewadd (input c@4) (ewadd (input d@4) (ewadd (input e@4) "
    "(ewadd (input f@4) (ewadd (input g@4) (input h@4))))))))";

TEST(Runner, Saturates) {
  Built b;
  build(b, {"(ewadd (input a@4) (input b@4))"});
  auto rules = add_rules();
  RunReport rep = Runner(b.eg).run(rules);
  EXPECT_EQ(rep.stop_reason, StopReason::Saturated);
  EXPECT_EQ(rep.iterations.size(), 2u);  // one that adds (b+a), one that changes nothing
  EXPECT_EQ(rep.iterations[0].rules[0].applied, 1u);
  EXPECT_EQ(rep.iterations[1].rules[0].unchanged, 2u);
  EXPECT_EQ(b.eg.eclass(b.root).nodes.size(), 2u);
  EXPECT_EQ(b.eg.check_invariants(), "");
}

TEST(Runner, NodeLimit) {
  Built b;
  build(b, {kChain});
  auto rules = add_rules();
  RunReport rep = Runner(b.eg).with_node_limit(200).with_iter_limit(100).run(rules);
  EXPECT_EQ(rep.stop_reason, StopReason::NodeLimit);
  EXPECT_GE(b.eg.num_nodes(), 200u);
  EXPECT_EQ(b.eg.check_invariants(), "");
  EXPECT_TRUE(is_acyclic(b.eg));
}

TEST(Runner, IterationLimit) {
  Built b;
  build(b, {kChain});
  auto rules = add_rules();
  RunReport rep = Runner(b.eg).with_iter_limit(2).run(rules);
  EXPECT_EQ(rep.stop_reason, StopReason::IterationLimit);
  EXPECT_EQ(rep.iterations.size(), 2u);
}

TEST(Runner, TimeLimit) {
  Built b;
  build(b, {kChain});
  auto rules = add_rules();
  RunReport rep = Runner(b.eg).with_time_limit(0.0).run(rules);
  EXPECT_EQ(rep.stop_reason, StopReason::TimeLimit);
  EXPECT_TRUE(rep.iterations.empty());
}

TEST(Runner, BackoffBansExplosiveRule) {
  Built b;
  build(b, {kChain});
  auto rules = add_rules();
  RunReport rep = Runner(b.eg)
                      .with_scheduler(std::make_unique<BackoffScheduler>(4, 2))
                      .with_iter_limit(4)
                      .run(rules);
  bool banned = false;
  for (const auto& it : rep.iterations)
    for (const auto& r : it.rules) banned = banned || r.banned;
  EXPECT_TRUE(banned);
  EXPECT_FALSE(rep.summary().empty());
}

TEST(Runner, ShapeChecksRejectIllTypedRightHandSides) {
  Built b;
  build(b, {"(matmul none (input x@2_3) (weight w@3_5) none)"});
  // transposing the operands is ill-typed here: [3,5] x [2,3] does not multiply.
  std::vector<Rewrite> rules{rule("swap", "(matmul ?act ?a ?b none)", "(matmul ?act ?b ?a none)"),
                             rule("relu-fuse", "(matmul none ?a ?b none)", "(matmul relu ?a ?b none)",
                                  {"(rank ?a 3)"})};
  RunReport rep = Runner(b.eg).run(rules);
  auto t = rep.totals();
  EXPECT_EQ(t[0].rejected_type, 1u);
  EXPECT_EQ(t[0].applied, 0u);
  EXPECT_EQ(t[1].rejected_condition, 1u);
  EXPECT_EQ(rep.stop_reason, StopReason::Saturated);
}

TEST(Runner, SplitWithoutBoundaryDoesNotApply) {
  Built b;
  build(b, {"(relu (input x@4_8))", "(relu (concat 1 (input y@4_3) (input z@4_5)))"});
  std::vector<Rewrite> rules{rule("split-relu", "(relu ?x)", "(relu (concat 1 (split_0 (split 1 ?x)) (split_1 (split 1 ?x))))")};
  RunReport rep = Runner(b.eg).with_iter_limit(1).run(rules);
  auto t = rep.totals();
  EXPECT_EQ(t[0].rejected_split, 1u);  // relu x: x has no boundary
  EXPECT_EQ(t[0].applied, 1u);         // relu concat: boundary 3
  EXPECT_EQ(b.eg.check_invariants(), "");
}

TEST(Bridge, GraphToEGraphAndBack) {
  ir::Graph g;
  ir::NodeId a = parse_term(g, "(relu (matmul none (input x@2_3) (weight w@3_5) none))");
  ir::NodeId c = parse_term(g, "(tanh (matmul none (input x@2_3) (weight w@3_5) none))");
  g.set_root(g.op(Op::Noop, {a, c}));
  EGraph eg;
  EClassId root = add_graph(eg, g);
  EXPECT_EQ(eg.check_invariants(), "");
  std::vector<int64_t> choice(eg.class_capacity(), -1);
  for (EClassId cl : eg.class_ids()) choice[cl.v] = eg.eclass(cl).nodes.front().v;
  ir::Graph back = term_from_choice(eg, root, choice);
  EXPECT_EQ(print_term(back, back.root()), print_term(g, g.root()));
  EXPECT_EQ(back.size(), g.compact().size());
  // Incomplete choice.
  auto partial = choice;
  partial[eg.find(*eg.lookup_sym("none")).v] = -1;
  EXPECT_THROW(term_from_choice(eg, root, partial), std::invalid_argument);
}

TEST(Bridge, CyclicChoiceThrows) {
  Built b;
  build(b, {"(tanh (relu (input a@4)))"});
  auto a = *b.eg.lookup(ENode::make(Op::Input, {*b.eg.lookup_sym("a@4")}));
  b.eg.merge(a, b.terms[0]);
  b.eg.rebuild();
  std::vector<int64_t> choice(b.eg.class_capacity(), -1);
  for (EClassId cl : b.eg.class_ids()) {
    // pick tanh in the merged class: tanh -> relu -> (class of tanh)
    for (ENodeId n : b.eg.eclass(cl).nodes) {
      if (choice[cl.v] < 0 || b.eg.node(n).op == Op::Tanh) choice[cl.v] = n.v;
    }
  }
  EXPECT_THROW(term_from_choice(b.eg, b.root, choice), std::invalid_argument);
}

}  // namespace
}  // namespace tensat
