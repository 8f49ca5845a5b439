// Table-driven rule tests on ir::Graph terms: "start => expected" and "must not fire".
#include <gtest/gtest.h>

#include <map>

#include "lang/sexpr.h"
#include "rules/check/rule_check.h"
#include "rules/loader.h"

namespace tensat::rules::check {
namespace {

// A rule of the default set or of the optional ones (rules/extra/).
const RuleSpec& rule(const std::string& name) {
  static const std::vector<RuleSpec> rules = [] {
    std::vector<RuleSpec> rs = default_rules();
    for (auto& r : load_rules_dir(std::string(TENSAT_SOURCE_DIR) + "/rules/extra")) rs.push_back(std::move(r));
    return rs;
  }();
  for (const auto& r : rules)
    if (r.name == name) return r;
  throw std::runtime_error("no rule named " + name);
}

std::vector<ir::NodeId> parse_roots(ir::Graph& g, const std::string& text) {
  std::vector<ir::NodeId> roots;
  for (const SExpr& e : parse_sexprs(text)) roots.push_back(build_term(g, e));
  return roots;
}

std::string joined(const ir::Graph& g, const std::vector<ir::NodeId>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "\n" : "") + print_term(g, ids[i]);
  return s;
}

// Random data for every leaf of g; returns the outputs of `roots`.
std::vector<refexec::Tensor> evaluate(const ir::Graph& g0, const std::vector<ir::NodeId>& roots) {
  ir::Graph g = g0;
  WeightStore ws;
  std::unordered_map<std::string, refexec::Tensor> inputs;
  uint64_t seed = 11;
  for (size_t i = 0; i < g.size(); ++i) {
    const ir::Node& n = g.node(static_cast<ir::NodeId>(i));
    if (n.op != Op::Input && n.op != Op::Weight) continue;
    auto id = parse_leaf_id(g.node(n.children[0]).sym);
    refexec::Tensor t = refexec::random_tensor(id->type.shape, ++seed);
    if (n.op == Op::Weight) ws.put_f32(id->name, id->type.shape, t.data);
    else inputs[id->name] = t;
  }
  g.set_root(g.op(Op::Noop, roots));
  return refexec::run(g, ws, inputs).outputs;
}

struct FireCase {
  const char* rule;
  const char* start;     // one term per left-hand side
  const char* expected;  // one printed term per right-hand side, '\n'-separated
};

TEST(RuleApply, StartToExpected) {
  const FireCase cases[] = {
      {"conv-relu", "(relu (conv 1 1 same none (input x@1_4_6_6) (weight w@8_4_3_3) none))",
       "(conv 1 1 same relu (input x@1_4_6_6) (weight w@8_4_3_3) none)"},
      {"matmul-relu-rev", "(matmul relu (input x@2_3) (weight w@3_4) (weight b@4))",
       "(relu (matmul none (input x@2_3) (weight w@3_4) (weight b@4)))"},
      {"matmul-assoc", "(matmul none (input a@2_3) (matmul none (weight b@3_4) (weight c@4_5) none) none)",
       "(matmul none (matmul none (input a@2_3) (weight b@3_4) none) (weight c@4_5) none)"},
      {"matmul-merge",
       "(matmul relu (input x@2_3) (weight a@3_4) none) (matmul relu (input x@2_3) (weight b@3_5) none)",
       "(split_0 (split 1 4 (matmul relu (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) none)))\n"
       "(split_1 (split 1 4 (matmul relu (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) none)))"},
      {"matmul-merge-bias",
       "(matmul none (input x@2_3) (weight a@3_4) (weight p@4)) (matmul none (input x@2_3) (weight b@3_5) (weight q@5))",
       "(split_0 (split 1 4 (matmul none (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) (concat 0 (weight p@4) (weight q@5)))))\n"
       "(split_1 (split 1 4 (matmul none (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) (concat 0 (weight p@4) (weight q@5)))))"},
      {"conv-enlarge-merge",
       "(conv 1 1 same relu (input x@1_4_6_6) (weight a@2_4_1_1) none) (conv 1 1 same relu (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "(split_0 (split 1 2 (conv 1 1 same relu (input x@1_4_6_6) (concat 0 (enlarge (weight a@2_4_1_1) (weight b@3_4_3_3)) (weight b@3_4_3_3)) none)))\n"
       "(split_1 (split 1 2 (conv 1 1 same relu (input x@1_4_6_6) (concat 0 (enlarge (weight a@2_4_1_1) (weight b@3_4_3_3)) (weight b@3_4_3_3)) none)))"},
      {"conv-merge-gconv-2", "(conv 1 1 same none (input x@1_4_5_5) (weight w@6_2_3_3) none)",
       "(conv 1 1 same none (input x@1_4_5_5) (merge 2 (weight w@6_2_3_3)) none)"},
      {"split0-concat", "(split_0 (split 1 2 (concat 1 (input a@3_2) (input b@3_5))))", "(input a@3_2)"},
      {"split1-concat", "(split_1 (split 1 2 (concat 1 (input a@3_2) (input b@3_5))))", "(input b@3_5)"},
      {"concat-interchange",
       "(concat 0 (concat 1 (input a@2_3) (input b@2_4)) (concat 1 (input c@5_3) (input d@5_4)))",
       "(concat 1 (concat 0 (input a@2_3) (input c@5_3)) (concat 0 (input b@2_4) (input d@5_4)))"},
      {"ewmul-distrib", "(ewmul (ewadd (input a@4) (input b@4)) (input c@4))",
       "(ewadd (ewmul (input a@4) (input c@4)) (ewmul (input b@4) (input c@4)))"},
      {"poolmax-concat",
       "(concat 1 (poolmax 3 3 2 2 same (input a@1_2_6_6)) (poolmax 3 3 2 2 same (input b@1_3_6_6)))",
       "(poolmax 3 3 2 2 same (concat 1 (input a@1_2_6_6) (input b@1_3_6_6)))"},
      {"conv-sum-concat",
       "(ewadd (conv 1 1 same none (input x@1_2_5_5) (weight a@4_2_3_3) none) (conv 1 1 same none (input y@1_3_5_5) (weight b@4_3_3_3) none))",
       "(conv 1 1 same none (concat 1 (input x@1_2_5_5) (input y@1_3_5_5)) (concat 1 (weight a@4_2_3_3) (weight b@4_3_3_3)) none)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    ir::Graph g;
    auto roots = parse_roots(g, c.start);
    std::string why;
    auto out = match_and_apply(g, rule(c.rule), roots, &why);
    ASSERT_TRUE(out.has_value()) << why;
    EXPECT_EQ(joined(g, *out), c.expected);
    // and the rewrite keeps the values
    auto before = evaluate(g, roots), after = evaluate(g, *out);
    ASSERT_EQ(before.size(), after.size());
    for (size_t i = 0; i < before.size(); ++i) {
      ASSERT_EQ(before[i].shape, after[i].shape);
      for (size_t k = 0; k < before[i].size(); ++k) EXPECT_NEAR(before[i].data[k], after[i].data[k], 1e-4);
    }
  }
}

// n-ary merge by repeated application of the binary multi-pattern rule.
TEST(RuleApply, MatmulMergeThreeWay) {
  ir::Graph g;
  auto roots = parse_roots(g,
                           "(matmul none (input x@2_3) (weight a@3_4) none) (matmul none (input x@2_3) (weight b@3_5) none)"
                           " (matmul none (input x@2_3) (weight c@3_6) none)");
  std::string why;
  auto first = match_and_apply(g, rule("matmul-merge"), {roots[0], roots[1]}, &why);
  ASSERT_TRUE(first) << why;
  // the merged product (the split's operand) merges with the third one
  ir::NodeId merged = g.node(g.node((*first)[0]).children[0]).children[2];
  auto second = match_and_apply(g, rule("matmul-merge"), {merged, roots[2]}, &why);
  ASSERT_TRUE(second) << why;
  EXPECT_EQ(print_term(g, (*second)[1]),
            "(split_1 (split 1 9 (matmul none (input x@2_3) (concat 1 (concat 1 (weight a@3_4) (weight b@3_5)) "
            "(weight c@3_6)) none)))");
  // the three original outputs, recovered from the one product
  std::vector<ir::NodeId> recovered = {g.op(Op::Split0, {g.op(Op::Split, {g.num(1), g.num(4), (*second)[0]})}),
                                       g.op(Op::Split1, {g.op(Op::Split, {g.num(1), g.num(4), (*second)[0]})}),
                                       (*second)[1]};
  auto before = evaluate(g, roots), after = evaluate(g, recovered);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(before[i].shape, after[i].shape);
    for (size_t k = 0; k < before[i].size(); ++k) EXPECT_NEAR(before[i].data[k], after[i].data[k], 1e-4);
  }
}

struct NoFireCase {
  const char* rule;
  const char* start;
  const char* reason;  // substring of the harness's explanation
};

TEST(RuleApply, MustNotFire) {
  const NoFireCase cases[] = {
      // same-padding rules never match explicit pads (even when they equal "same" numerically elsewhere)
      {"conv-enlarge-merge",
       "(conv 1 1 p1_1_1_1 none (input x@1_4_6_6) (weight a@2_4_1_1) none) (conv 1 1 p1_1_1_1 none (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "does not match"},
      {"conv-enlarge",
       "(conv 1 1 p0_1_0_1 none (input x@1_4_6_6) (weight a@2_4_1_3) none) (conv 1 1 same none (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "does not match"},
      // different strides / activations / inputs: the shared variables disagree
      {"conv-merge",
       "(conv 1 1 same none (input x@1_4_6_6) (weight a@2_4_3_3) none) (conv 2 2 same none (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "does not match"},
      {"conv-merge",
       "(conv 1 1 same relu (input x@1_4_6_6) (weight a@2_4_3_3) none) (conv 1 1 same none (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "does not match"},
      {"conv-merge",
       "(conv 1 1 same none (input x@1_4_6_6) (weight a@2_4_3_3) none) (conv 1 1 same none (input y@1_4_6_6) (weight b@3_4_3_3) none)",
       "does not match"},
      {"matmul-merge",
       "(matmul relu (input x@2_3) (weight a@3_4) none) (matmul none (input x@2_3) (weight b@3_5) none)", "does not match"},
      // mismatched shapes: kernels of different sizes cannot be concatenated without enlarge
      {"conv-merge",
       "(conv 1 1 same none (input x@1_4_6_6) (weight a@2_4_1_1) none) (conv 1 1 same none (input x@1_4_6_6) (weight b@3_4_3_3) none)",
       "concat"},
      // enlarge only to a kernel at least as large
      {"conv-enlarge-merge",
       "(conv 1 1 same none (input x@1_4_6_6) (weight a@2_4_3_3) none) (conv 1 1 same none (input x@1_4_6_6) (weight b@3_4_1_1) none)",
       "kernel-le"},
      // grouped convolutions: output channels are interleaved by group
      {"conv-merge",
       "(conv 1 1 same none (input x@1_4_6_6) (weight a@2_2_3_3) none) (conv 1 1 same none (input x@1_4_6_6) (weight b@2_2_3_3) none)",
       "groups"},
      {"conv-merge-gconv-2", "(conv 1 1 same none (input x@1_8_5_5) (weight w@8_2_3_3) none)", "groups"},
      {"conv-sum-concat",
       "(ewadd (conv 1 1 same none (input x@1_4_5_5) (weight a@4_2_3_3) none) (conv 1 1 same none (input y@1_4_5_5) (weight b@4_2_3_3) none))",
       "groups"},
      // broadcast operands of the linearity rules
      {"conv-linear-weight",
       "(conv 1 1 same none (input x@1_2_5_5) (ewadd (weight a@4_2_3_3) (weight b@4_2_1_1)) none)", "same-shape"},
      {"conv-linear-input",
       "(conv 1 1 same none (ewadd (input x@1_2_5_5) (input y@1_2_1_1)) (weight w@4_2_3_3) none)", "same-shape"},
      {"conv-concat-grouped",
       "(concat 1 (conv 1 1 same none (input x@1_2_5_5) (weight a@2_2_3_3) none) (conv 1 1 same none (input y@1_2_5_5) (weight b@4_2_3_3) none))",
       "same-shape"},
      // a non-scalar multiplier does not commute with matmul / conv
      {"matmul-scalar-rhs", "(ewmul (matmul none (input a@2_3) (weight b@3_3) none) (weight s@3))", "rank"},
      {"conv-scalar-weight",
       "(ewmul (conv 1 1 same none (input x@1_2_3_3) (weight w@3_2_3_3) none) (weight s@3))", "rank"},
      // concat interchange on one axis would reorder blocks
      {"concat-interchange",
       "(concat 0 (concat 0 (input a@2_3) (input b@2_3)) (concat 0 (input c@2_3) (input d@2_3)))", "distinct"},
      // split on another axis than the concat, and a split not at the concat boundary
      {"split0-concat", "(split_0 (split 0 1 (concat 1 (input a@2_2) (input b@2_5))))", "does not match"},
      {"split0-concat", "(split_0 (split 1 3 (concat 1 (input a@3_2) (input b@3_5))))", "shape check"},
      // rank conditions pin the concat axis of the merge rules
      {"matmul-merge",
       "(matmul none (input x@2_2_3) (weight a@3_4) none) (matmul none (input x@2_2_3) (weight b@3_5) none)", "rank"},
      // fused activations only absorb an activation into an act-free op
      {"conv-relu", "(relu (conv 1 1 same tanh (input x@1_4_6_6) (weight w@8_4_3_3) none))", "does not match"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.rule) + ": " + c.start);
    ir::Graph g;
    auto roots = parse_roots(g, c.start);
    std::string why;
    auto out = match_and_apply(g, rule(c.rule), roots, &why);
    EXPECT_FALSE(out.has_value()) << "fired, giving " << joined(g, *out);
    EXPECT_NE(why.find(c.reason), std::string::npos) << "reason: " << why;
  }
}

}  // namespace
}  // namespace tensat::rules::check
