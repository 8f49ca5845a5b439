// End to end: the shipped rules (default_rules) compiled by the engine and run by the Runner
// on small models with the shapes of the benchmark graphs. Checks that the paper's key
// rewrites appear in the e-graph (matmul merge, conv merge with enlarge, the SqueezeNet
// expand merge), that the invariants hold and that the e-graph minus filtered e-nodes is
// acyclic, for both cycle-filter algorithms.
#include <gtest/gtest.h>

#include <type_traits>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/ematch.h"
#include "egraph/runner.h"
#include "lang/sexpr.h"
#include "rules/loader.h"

namespace tensat {
namespace {

const std::vector<Rewrite>& shipped() {
  static const std::vector<Rewrite> rules = compile_rewrites(rules::default_rules());
  return rules;
}

struct Model {
  EGraph eg;
  EClassId root;
  std::vector<EClassId> outputs;
};

void build(Model& m, const std::vector<std::string>& outputs) {
  ir::Graph g;
  std::vector<ir::NodeId> ids;
  for (const auto& t : outputs) ids.push_back(parse_term(g, t));
  g.set_root(ids.size() == 1 ? ids[0] : g.op(Op::Noop, ids));
  std::vector<EClassId> cls;
  m.root = add_graph(m.eg, g, &cls);
  for (auto id : ids) m.outputs.push_back(m.eg.find(cls[id]));
}

// Matches of a pattern (text) anywhere in the e-graph, or at one class; filtered e-nodes skipped.
size_t count_matches(const EGraph& eg, const std::string& pat, std::optional<EClassId> at = {},
                     Matches* out = nullptr) {
  VarTable vars;
  Pattern p = compile_pattern(parse_sexpr(pat), vars, /*rhs=*/false);
  Matches local(vars.size());
  Matches& ms = out ? *out : local;
  ms.reset(vars.size());
  return at ? search_pattern_at(eg, p, vars.size(), *at, ms) : search_pattern(eg, p, vars.size(), ms);
}

RunReport explore(Model& m, CycleFilterMode mode, size_t k_multi = 1) {
  RunReport rep = Runner(m.eg)
                      .with_k_multi(k_multi)
                      .with_cycle_filter(mode)
                      .with_node_limit(20000)
                      .with_iter_limit(8)
                      .run(shipped());
  EXPECT_EQ(m.eg.check_invariants(), "");
  EXPECT_TRUE(is_acyclic(m.eg)) << cycle_filter_name(mode);
  return rep;
}

size_t applied(const RunReport& rep, std::string_view rule) {
  auto t = rep.totals();
  for (size_t i = 0; i < t.size(); ++i)
    if (rep.rule_names[i] == rule) return t[i].applied;
  ADD_FAILURE() << "no rule " << rule;
  return 0;
}

class Explore : public ::testing::TestWithParam<CycleFilterMode> {};

// One BERT layer (BENCHMARKS.md), scaled down: Q, K, V share x; two heads.
TEST_P(Explore, BertAttentionMergesQKV) {
  const std::string x = "(relu (input x@8_16))";
  auto proj = [&](const std::string& w) {
    return "(transpose 1_0_2 (reshape 8_2_8 (matmul none " + x + " (weight " + w + "@16_16) none)))";
  };
  std::string att = "(matmul none (matmul none " + proj("wq") + " " + proj("wk") + " none) " + proj("wv") + " none)";
  std::string out = "(matmul none (reshape 8_16 (transpose 1_0_2 " + att + ")) (weight wo@16_16) none)";
  Model m;
  build(m, {out});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "matmul-merge"), 0u);
  // x times two concatenated weights: one [8,32] product replacing two [8,16] ones.
  EXPECT_GT(count_matches(m.eg, "(matmul none (relu (input x@8_16)) (concat 1 (weight ?a) (weight ?b)) none)"), 0u);
  // The Q projection's class holds a split of the merged product.
  EXPECT_GT(count_matches(m.eg, "(split_0 (split 1 ?pos (matmul none ?x (concat 1 ?w1 ?w2) none)))"), 0u);
}

// Two convolutions of one input, 1x1 and 3x3, same padding: the smaller kernel is enlarged
// and both become one convolution over stacked weights (TASO's enlarge + merge).
TEST_P(Explore, ConvEnlargeMerge) {
  const std::string x = "(input x@1_4_8_8)";
  Model m;
  build(m, {"(conv 1 1 same none " + x + " (weight w1@8_4_1_1) none)",
            "(conv 1 1 same none " + x + " (weight w3@8_4_3_3) none)"});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "conv-enlarge-merge"), 0u);
  EXPECT_GT(applied(rep, "conv-enlarge"), 0u);
  Matches ms;
  ASSERT_GT(count_matches(m.eg, "(conv 1 1 same none ?x (concat 0 (enlarge ?w1 ?w2) ?w2) none)", {}, &ms), 0u);
  // Both outputs are splits of a merged [1,16,8,8] convolution.
  const std::string merged = "(split 1 ?pos (conv 1 1 same none ?x (concat 0 ?a ?b) none))";
  EXPECT_GT(count_matches(m.eg, "(split_0 " + merged + ")", m.outputs[0]), 0u);
  EXPECT_GT(count_matches(m.eg, "(split_1 " + merged + ")", m.outputs[1]), 0u);
}

// A SqueezeNet 1.1 fire module: squeeze 1x1 + relu, expand 1x1 + relu and 3x3 + relu, concat
// on channels (as the importer lowers it: conv, then relu). The expand convolutions merge
// into one, and the concat itself becomes that convolution (concat-split).
TEST_P(Explore, SqueezeNetFireExpandMerge) {
  const std::string s = "(relu (conv 1 1 same none (input x@1_8_6_6) (weight sq@4_8_1_1) (weight sqb@4)))";
  const std::string e1 = "(relu (conv 1 1 same none " + s + " (weight e1@8_4_1_1) (weight e1b@8)))";
  const std::string e3 = "(relu (conv 1 1 same none " + s + " (weight e3@8_4_3_3) (weight e3b@8)))";
  Model m;
  build(m, {"(concat 1 " + e1 + " " + e3 + ")"});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "conv-enlarge-merge-bias"), 0u);
  EXPECT_GT(applied(rep, "concat-split"), 0u);
  const EClassId fire = m.outputs[0];
  size_t one_conv =
      count_matches(m.eg, "(relu (conv 1 1 same none ?x (concat 0 (enlarge ?w1 ?w2) ?w2) (concat 0 ?b1 ?b2)))", fire) +
      count_matches(m.eg, "(conv 1 1 same relu ?x (concat 0 (enlarge ?w1 ?w2) ?w2) (concat 0 ?b1 ?b2))", fire);
  EXPECT_GT(one_conv, 0u) << "the fire module's output is not one convolution";
}

// Two NasRNN gates relu(x@W + h@U) over the same (x, h) (BENCHMARKS.md), scaled down: at
// k_multi = 1, matmul-sum-merge turns them into one product over (concat x h) and a block
// weight; relu-split + matmul-relu put both relus on it, so both gates are splits of one
// fused product (TASO reaches this through its rule 70).
TEST_P(Explore, RnnGatesMergeIntoOneProduct) {
  const std::string x = "(input x@1_8)", h = "(weight h@1_8)";
  auto gate = [&](const std::string& w, const std::string& u) {
    return "(relu (ewadd (matmul none " + x + " (weight " + w + "@8_8) none) (matmul none " + h +
           " (weight " + u + "@8_8) none)))";
  };
  Model m;
  build(m, {gate("w0", "u0"), gate("w7", "u7")});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "matmul-sum-merge"), 0u);
  const std::string merged = "(split 1 ?pos (matmul relu (concat 1 ?x ?h) ?w none))";
  EXPECT_GT(count_matches(m.eg, "(split_0 " + merged + ")", m.outputs[0]), 0u);
  EXPECT_GT(count_matches(m.eg, "(split_1 " + merged + ")", m.outputs[1]), 0u);
}

// Rules that collapse a term to one of its subterms (`=> ?x`) merge the matched class with
// the variable's class; the cycle this closes through the matched e-nodes is filtered.
TEST_P(Explore, BareVariableRightHandSidesMerge) {
  Model m;
  build(m, {"(transpose 1_0 (transpose 1_0 (input x@3_5)))",
            "(split_0 (split 1 3 (concat 1 (input a@2_3) (input b@2_4))))"});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "transpose-involution-2d"), 0u);
  EXPECT_GT(applied(rep, "split0-concat"), 0u);
  EXPECT_EQ(m.eg.find(m.outputs[0]), m.eg.find(*m.eg.lookup(ENode::make(Op::Input, {*m.eg.lookup_sym("x@3_5")}))));
  EXPECT_EQ(m.eg.find(m.outputs[1]), m.eg.find(*m.eg.lookup(ENode::make(Op::Input, {*m.eg.lookup_sym("a@2_3")}))));
  EXPECT_GT(m.eg.num_filtered(), 0u);
}

// Q/K/V of a transformer encoder as the importer makes them of PyTorch's MatMul + Add(bias):
// three 3-D products of one input, each with a bias.
std::vector<std::string> qkv_projections() {
  const std::string x = "(input x@2_8_16)";
  auto proj = [&](const std::string& w) {
    return "(matmul none " + x + " (weight " + w + "@16_16) (weight " + w + "b@16))";
  };
  return {proj("wq"), proj("wk"), proj("wv")};
}

// They merge pairwise (matmul-merge-3d-bias), biases concatenated.
TEST_P(Explore, LinearProjectionsMergeAcrossBiases) {
  Model m;
  build(m, qkv_projections());
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "matmul-merge-3d-bias"), 0u);
  const std::string merged = "(split 2 ?pos (matmul none ?x (concat 1 ?w1 ?w2) (concat 0 ?b1 ?b2)))";
  size_t q = count_matches(m.eg, "(split_0 " + merged + ")", m.outputs[0]) +
             count_matches(m.eg, "(split_1 " + merged + ")", m.outputs[0]);
  EXPECT_GT(q, 0u) << "the Q projection is not part of a merged product";
}

// The same at k_multi 1 with the shipped rules: all three become parts of one product over
// the three concatenated weights (matmul-merge3-3d-bias, matmul-split0-weight-3d-bias), not
// only two (matmul-merge merges products that exist in its round).
TEST_P(Explore, ThreeProjectionsMergeIntoOneProduct) {
  Model m;
  build(m, qkv_projections());
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "matmul-merge3-3d-bias"), 0u);
  EXPECT_GT(applied(rep, "matmul-split0-weight-3d-bias"), 0u);
  const std::string m3 =
      "(matmul none ?x (concat 1 (concat 1 ?w1 ?w2) ?w3) (concat 0 (concat 0 ?b1 ?b2) ?b3))";
  const std::string pair = "(split_0 (split 2 ?q " + m3 + "))";
  for (size_t i = 0; i < 3; ++i) {
    const size_t n = count_matches(m.eg, "(split_1 (split 2 ?p " + m3 + "))", m.outputs[i]) +
                     count_matches(m.eg, "(split_0 (split 2 ?p " + pair + "))", m.outputs[i]) +
                     count_matches(m.eg, "(split_1 (split 2 ?p " + pair + "))", m.outputs[i]);
    EXPECT_GT(n, 0u) << "projection " << i << " is not a part of the three-way product";
  }
}

// Two DenseNet layers (BatchNorm as the importer lowers it after a concat, relu, 1x1, relu,
// 3x3), the block output the concat of everything. concat-assoc puts the two 3x3 outputs side
// by side and conv-concat-grouped makes them one grouped convolution over the concatenated
// inputs. No rule may turn that into a dense convolution with zero blocks ((merge 2 w): twice
// the arithmetic of the two convolutions it replaces, and the second layer's input depends on
// the first's output, so the first would be computed twice): a cost table that measured the
// larger convolution as cheaper (launch-bound timings of small convolutions) made DenseNet-121
// recompute features that way and run slower (rules/README.md).
TEST_P(Explore, DenseBlockGetsNoZeroBlockConvolutions) {
  auto layer = [](const std::string& in, int cin, const std::string& k) {
    const std::string c = std::to_string(cin);
    std::string bn = "(relu (ewadd (ewmul " + in + " (weight s" + k + "@" + c + "_1_1)) (weight t" + k + "@" + c + "_1_1)))";
    std::string h = "(relu (conv 1 1 valid none " + bn + " (weight a" + k + "@16_" + c + "_1_1) (weight ab" + k + "@16)))";
    return "(conv 1 1 same none " + h + " (weight b" + k + "@4_16_3_3) none)";
  };
  const std::string x0 = "(input x@1_8_6_6)";
  const std::string c1 = "(concat 1 " + x0 + " " + layer(x0, 8, "1") + ")";
  const std::string out = "(concat 1 " + c1 + " " + layer(c1, 12, "2") + ")";
  Model m;
  build(m, {out});
  RunReport rep = explore(m, GetParam());
  EXPECT_GT(applied(rep, "conv-concat-grouped"), 0u);  // the grouped form is reached
  EXPECT_EQ(count_matches(m.eg, "(conv ?sh ?sw ?p ?a ?x (merge ?c ?w) ?b)"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Filters, Explore,
                         ::testing::Values(CycleFilterMode::Efficient, CycleFilterMode::Vanilla),
                         [](const auto& info) { return std::string(cycle_filter_name(info.param)); });

// Split trees the shipped rules rely on (rules/FORMAT.md): conv axis 0 from the input, pool
// axes 0 and 1 from the input, matmul rows from a's rows.
TEST(Explore, SplitTreePropagation) {
  Model m;
  build(m, {"(conv 1 1 same none (concat 0 (input a@1_2_4_4) (input b@2_2_4_4)) (weight w@3_2_3_3) none)",
            "(poolmax 2 2 2 2 valid (concat 1 (input c@1_2_4_4) (input d@1_5_4_4)))",
            "(poolavg 2 2 2 2 valid 0 (concat 0 (input e@1_2_4_4) (input f@3_2_4_4)))",
            "(matmul none (concat 0 (input g@2_4) (input h@3_4)) (weight v@4_4) none)"});
  EXPECT_EQ(m.eg.data(m.outputs[0]).boundary(0), 1);
  EXPECT_EQ(m.eg.data(m.outputs[1]).boundary(1), 2);
  EXPECT_EQ(m.eg.data(m.outputs[2]).boundary(0), 1);
  EXPECT_EQ(m.eg.data(m.outputs[3]).boundary(0), 2);
}

// One exception type for the rule pipeline (loader and engine).
static_assert(std::is_same_v<rules::RuleError, RuleError>);

TEST(Explore, OneRuleErrorType) {
  EXPECT_THROW(rules::load_rules_text("bad: (relu ?x) => (relu ?y)", "inline"), tensat::RuleError);
  VarTable vars;
  EXPECT_THROW(compile_pattern(parse_sexpr("(frobnicate ?x)"), vars, false), rules::RuleError);
}

// k_multi = 2 lets merged products merge again (three projections into one).
TEST(Explore, KMulti2MergesThreeProjections) {
  const std::string x = "(input x@8_16)";
  Model m;
  build(m, {"(matmul none " + x + " (weight wq@16_16) none)", "(matmul none " + x + " (weight wk@16_16) none)",
            "(matmul none " + x + " (weight wv@16_16) none)"});
  explore(m, CycleFilterMode::Efficient, 2);
  size_t three = 0;
  for (EClassId c : m.eg.classes_with_op(Op::Matmul))
    if (m.eg.type(c).shape() == Shape{8, 48}) ++three;
  EXPECT_GT(three, 0u);
}

}  // namespace
}  // namespace tensat
