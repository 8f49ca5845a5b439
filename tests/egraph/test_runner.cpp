// Runner: stop reasons, statistics, shape-checked application, bridges and JSON export.
#include <gtest/gtest.h>

#include <atomic>

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

// RunnerConfig::node_cap: the lower of the two limits stops the exploration, also where the cap
// is lowered while it runs (from on_iteration here; the k_multi 0 seed's from another thread);
// RunReport::peak_nodes is the most live e-nodes seen at a check, never below the final count.
TEST(Runner, NodeCapAndPeak) {
  auto rules = add_rules();
  Built full;
  build(full, {kChain});
  RunnerConfig rc;
  rc.iter_limit = 100;
  rc.node_limit = 200;
  const RunReport free_run = Runner(full.eg).with_config(rc).run(rules);
  EXPECT_EQ(free_run.stop_reason, StopReason::NodeLimit);
  EXPECT_GE(free_run.peak_nodes, 200u);
  EXPECT_GE(free_run.peak_nodes, free_run.nodes);

  std::atomic<size_t> cap{SIZE_MAX};
  rc.node_cap = &cap;
  Built same;
  build(same, {kChain});
  const RunReport uncapped = Runner(same.eg).with_config(rc).run(rules);
  EXPECT_EQ(uncapped.nodes, free_run.nodes);  // (a cap above the limit changes nothing)
  EXPECT_EQ(uncapped.peak_nodes, free_run.peak_nodes);

  cap = 60;
  Built capped;
  build(capped, {kChain});
  const RunReport at_cap = Runner(capped.eg).with_config(rc).run(rules);
  EXPECT_EQ(at_cap.stop_reason, StopReason::NodeLimit);
  EXPECT_GE(at_cap.peak_nodes, 60u);
  EXPECT_LT(at_cap.nodes, free_run.nodes);

  cap = SIZE_MAX;
  rc.on_iteration = [&](const IterationReport& it) {
    if (it.iteration == 1) cap = 0;  // (lowered during the run: no further iteration)
  };
  Built lowered;
  build(lowered, {kChain});
  const RunReport stopped = Runner(lowered.eg).with_config(rc).run(rules);
  EXPECT_EQ(stopped.stop_reason, StopReason::NodeLimit);
  EXPECT_EQ(stopped.iterations.size(), 2u);
  EXPECT_EQ(lowered.eg.check_invariants(), "");
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

// k_multi: the later multi-pattern rounds start where the k_multi 1 exploration stops as
// saturated, so every e-node and every equality of the k_multi 1 e-graph is in the k_multi 2
// one (class ids agree up to that point: both runs are deterministic and identical so far).
std::vector<std::string> qkv_terms() {
  const std::string x = "(input x@8_16)";
  return {"(ewadd (matmul none " + x + " (weight wq@16_16) none) (matmul none " + x + " (weight wk@16_16) none))",
          "(relu (matmul none " + x + " (weight wv@16_16) none))"};
}

std::vector<Rewrite> merge_and_add_rules() {
  std::vector<Rewrite> rules = add_rules();
  rules.push_back(testing::matmul_merge());
  return rules;
}

void expect_contains(const EGraph& small, const EGraph& big) {
  for (EClassId c : small.class_ids())
    for (ENodeId id : small.eclass(c).nodes) {
      ENode n = small.node(id);
      for (auto& k : n.children) k = big.find(k);
      const auto at = big.lookup(n);
      ASSERT_TRUE(at.has_value()) << small.node_str(id);
      EXPECT_EQ(big.find(*at), big.find(c)) << small.node_str(id);
    }
}

TEST(Runner, KMulti2KeepsTheKMulti1EGraph) {
  for (size_t node_limit : {size_t{400}, size_t{50000}}) {
    Built a, b;
    build(a, qkv_terms());
    build(b, qkv_terms());
    const auto rules = merge_and_add_rules();
    const RunReport r1 = Runner(a.eg).with_k_multi(1).with_node_limit(node_limit).run(rules);
    const RunReport r2 = Runner(b.eg).with_k_multi(2).with_node_limit(node_limit).run(rules);
    ASSERT_EQ(r1.stop_reason, StopReason::Saturated) << node_limit;
    expect_contains(a.eg, b.eg);
    EXPECT_GT(b.eg.num_nodes(), a.eg.num_nodes()) << node_limit;
    // The same iterations up to k_multi 1's last; that one ends with the second round.
    ASSERT_GE(r2.iterations.size(), r1.iterations.size());
    for (size_t i = 0; i + 1 < r1.iterations.size(); ++i) {
      EXPECT_EQ(r2.iterations[i].nodes, r1.iterations[i].nodes) << i;
      EXPECT_EQ(r2.iterations[i].multi, r1.iterations[i].multi) << i;
    }
    EXPECT_TRUE(r2.iterations[r1.iterations.size() - 1].multi);
    EXPECT_TRUE(b.eg.check_invariants().empty());
  }
}

TEST(Runner, LaterRoundLeavesRoomForSingleRules) {
  // The second round may use half the node budget left (RunnerConfig::later_multi_share),
  // then the single-pattern rules run on. Unbounded, it would add more than that here.
  const auto rules = merge_and_add_rules();
  auto terms = qkv_terms();
  terms.push_back("(matmul none (input x@8_16) (weight wo@16_16) none)");
  Built a, c;
  build(a, terms);
  build(c, terms);
  const RunReport r1 = Runner(a.eg).with_k_multi(1).run(rules);
  const RunReport free = Runner(c.eg).with_k_multi(2).run(rules);
  ASSERT_EQ(r1.stop_reason, StopReason::Saturated);
  const size_t round2 = r1.iterations.size() - 1, before = r1.iterations.back().nodes;
  ASSERT_TRUE(free.iterations.at(round2).multi);
  const size_t unbounded = free.iterations[round2].nodes - before;
  const size_t limit = before + unbounded;  // room for the unbounded round exactly
  Built b;
  build(b, terms);
  const RunReport r2 = Runner(b.eg).with_k_multi(2).with_node_limit(limit).run(rules);
  ASSERT_GT(r2.iterations.size(), round2);
  ASSERT_TRUE(r2.iterations[round2].multi);
  // One application adds a few e-nodes beyond the share at most.
  EXPECT_LE(r2.iterations[round2].nodes, before + unbounded / 2 + 8) << unbounded;
  EXPECT_LT(r2.iterations[round2].nodes, free.iterations[round2].nodes);
  EXPECT_GT(r2.iterations.size(), round2 + 1);  // the single-pattern rules ran on
}

TEST(Runner, NoLaterRoundAfterTheIterationLimit) {
  // k_multi 1 stops at the iteration limit: k_multi 2 explores exactly the same.
  Built a, b;
  build(a, {kChain, qkv_terms()[0]});
  build(b, {kChain, qkv_terms()[0]});
  const auto rules = merge_and_add_rules();
  const RunReport r1 = Runner(a.eg).with_k_multi(1).with_iter_limit(3).run(rules);
  const RunReport r2 = Runner(b.eg).with_k_multi(2).with_iter_limit(3).run(rules);
  ASSERT_EQ(r1.stop_reason, StopReason::IterationLimit);
  EXPECT_EQ(r2.stop_reason, StopReason::IterationLimit);
  EXPECT_EQ(a.eg.num_nodes(), b.eg.num_nodes());
  EXPECT_EQ(a.eg.num_classes(), b.eg.num_classes());
  for (const auto& it : r2.iterations) EXPECT_EQ(it.multi, it.iteration == 0);
}

}  // namespace
}  // namespace tensat
