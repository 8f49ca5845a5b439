// The parameterized activations (lang/op.h Act: clip / relu6, leaky): their symbols (one exact
// spelling each), the `act` operator's typing, the CPU executor against a plain loop, and the
// fusion rules firing and not firing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "lang/graph.h"
#include "lang/sexpr.h"
#include "refexec/executor.h"
#include "rules/check/rule_check.h"
#include "rules/loader.h"

namespace tensat {
namespace {

TEST(Activation, SymbolsRoundTripExactly) {
  EXPECT_EQ(act_name(Act::clip(0.0f, 6.0f)), "relu6");
  EXPECT_EQ(act_name(Act::clip(-1.0f, 1.0f)), "clip_-1_1");
  EXPECT_EQ(act_name(Act::leaky(0.01f)), "leaky_0.01");
  EXPECT_EQ(act_name(Act::Relu), "relu");
  for (const char* s : {"none", "relu", "sigmoid", "tanh", "relu6", "clip_-1_1", "clip_0_0.5", "leaky_0.01",
                        "leaky_-0.5", "clip_-3.4028235e+38_6", "clip_-inf_inf"}) {
    auto a = act_from_name(s);
    ASSERT_TRUE(a) << s;
    EXPECT_EQ(act_name(*a), s);
  }
  // Every float reads back bit for bit.
  for (float v : {0.1f, 1.0f / 3.0f, 1e-7f, -123456.789f, std::numeric_limits<float>::denorm_min()}) {
    auto a = act_from_name(act_name(Act::leaky(v)));
    ASSERT_TRUE(a);
    uint32_t x, y;
    std::memcpy(&x, &v, 4);
    std::memcpy(&y, &a->alpha, 4);
    EXPECT_EQ(x, y) << act_name(Act::leaky(v));
  }
  // Only the canonical spelling: relu6 is not clip_0_6, 0.010 is not 0.01.
  for (const char* s : {"clip_0_6", "leaky_0.010", "clip_1", "clip__1", "leaky_", "leaky_nan", "clip_nan_1", "relu7",
                        "leaky_1e-2", "clip_+1_2"})
    EXPECT_FALSE(act_from_name(s)) << s;
  EXPECT_TRUE(act_from_name("relu6")->parameterized());
  EXPECT_FALSE(act_from_name("relu")->parameterized());
}

TEST(Activation, ActOperatorTakesOnlyParameterizedActivations) {
  ir::Graph g;
  ir::NodeId x = g.input("x", TensorType{DType::F32, {2, 3}});
  ir::NodeId id = 0;
  std::string err;
  EXPECT_TRUE(g.try_add(ir::Node{Op::Act, {g.sym("relu6"), x}, 0, {}}, &id, &err)) << err;
  EXPECT_EQ(g.type(id).tensor.shape, (Shape{2, 3}));
  for (const char* s : {"relu", "none", "tanh", "clip_0_6", "bogus"})
    EXPECT_FALSE(g.try_add(ir::Node{Op::Act, {g.sym(s), x}, 0, {}}, &id, &err)) << s;
  ir::NodeId i = g.input("i", TensorType{DType::I64, {2}});
  EXPECT_FALSE(g.try_add(ir::Node{Op::Act, {g.sym("relu6"), i}, 0, {}}, &id, &err));
  // conv and matmul carry any activation, parameterized ones included
  ir::NodeId w = g.weight("w", TensorType{DType::F32, {3, 4}});
  EXPECT_TRUE(g.try_add(ir::Node{Op::Matmul, {g.sym("leaky_0.2"), x, w, g.sym("none")}, 0, {}}, &id, &err)) << err;
}

TEST(Activation, ExecutorMatchesThePlainDefinition) {
  // (act A x), (matmul A x w none), (conv ... A x w b) against loops over the definition.
  const std::vector<std::pair<std::string, std::function<float(float)>>> acts = {
      {"relu6", [](float v) { return std::min(6.0f, std::max(0.0f, v)); }},
      {"clip_-0.5_0.75", [](float v) { return std::min(0.75f, std::max(-0.5f, v)); }},
      {"leaky_0.1", [](float v) { return v >= 0 ? v : 0.1f * v; }},
      {"leaky_-2", [](float v) { return v >= 0 ? v : -2.0f * v; }},
  };
  for (const auto& [name, f] : acts) {
    ir::Graph g;
    ir::NodeId x = g.input("x", TensorType{DType::F32, {4, 5}});
    ir::NodeId w = g.weight("w", TensorType{DType::F32, {5, 3}});
    ir::NodeId a = g.op(Op::Act, {g.sym(name), x});
    ir::NodeId plain = g.op(Op::Matmul, {g.sym("none"), x, w, g.sym("none")});
    ir::NodeId fused = g.op(Op::Matmul, {g.sym(name), x, w, g.sym("none")});
    g.set_root(g.op(Op::Noop, {a, plain, fused}));
    WeightStore ws;
    refexec::Tensor wt = refexec::random_tensor({5, 3}, 3);
    ws.put_f32("w", {5, 3}, wt.data);
    refexec::Tensor xt = refexec::random_tensor({4, 5}, 4);
    for (auto& v : xt.data) v *= 8.0f;  // reach beyond the clip bounds
    auto out = refexec::run(g, ws, {{"x", xt}}).outputs;
    ASSERT_EQ(out.size(), 3u);
    int clipped = 0;
    for (size_t i = 0; i < xt.data.size(); ++i) {
      EXPECT_EQ(out[0].data[i], f(xt.data[i])) << name;
      clipped += out[0].data[i] != xt.data[i];
    }
    EXPECT_GT(clipped, 0) << name;
    for (size_t i = 0; i < out[1].data.size(); ++i) EXPECT_EQ(out[2].data[i], f(out[1].data[i])) << name;
  }
}

const RuleSpec& rule(const std::string& name) {
  static const std::vector<RuleSpec> rules = rules::default_rules();
  for (const auto& r : rules)
    if (r.name == name) return r;
  throw std::runtime_error("no rule named " + name);
}

std::string apply(const std::string& rule_name, const std::string& term, std::string* why = nullptr) {
  ir::Graph g;
  std::vector<ir::NodeId> roots;
  for (const SExpr& e : parse_sexprs(term)) roots.push_back(build_term(g, e));
  std::string reason;
  auto r = rules::check::match_and_apply(g, rule(rule_name), roots, &reason);
  if (why) *why = reason;
  if (!r) return "";
  std::string s;
  for (size_t i = 0; i < r->size(); ++i) s += (i ? "\n" : "") + print_term(g, (*r)[i]);
  return s;
}

TEST(Activation, FusionAndMergeRulesCarryThem) {
  EXPECT_EQ(apply("conv-act", "(act relu6 (conv 1 1 same none (input x@1_4_6_6) (weight w@8_4_3_3) (weight b@8)))"),
            "(conv 1 1 same relu6 (input x@1_4_6_6) (weight w@8_4_3_3) (weight b@8))");
  EXPECT_EQ(apply("matmul-act-rev", "(matmul leaky_0.1 (input x@2_3) (weight w@3_4) none)"),
            "(act leaky_0.1 (matmul none (input x@2_3) (weight w@3_4) none))");
  // Two products of one input with the same clip merge, the clip kept on the merged product.
  EXPECT_EQ(apply("matmul-merge",
                  "(matmul clip_-1_1 (input x@2_3) (weight a@3_4) none) (matmul clip_-1_1 (input x@2_3) (weight b@3_5) none)"),
            "(split_0 (split 1 4 (matmul clip_-1_1 (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) none)))\n"
            "(split_1 (split 1 4 (matmul clip_-1_1 (input x@2_3) (concat 1 (weight a@3_4) (weight b@3_5)) none)))");
  EXPECT_EQ(apply("act-concat", "(concat 1 (act relu6 (input a@2_3)) (act relu6 (input b@2_4)))"),
            "(act relu6 (concat 1 (input a@2_3) (input b@2_4)))");
}

TEST(Activation, RulesDoNotFireAcrossDifferentActivations) {
  std::string why;
  // relu6 and clip(0, 5) are different functions: no merge, no concat of the two.
  EXPECT_EQ(apply("matmul-merge",
                  "(matmul relu6 (input x@2_3) (weight a@3_4) none) (matmul clip_0_5 (input x@2_3) (weight b@3_5) none)",
                  &why),
            "");
  EXPECT_EQ(apply("act-concat", "(concat 1 (act relu6 (input a@2_3)) (act leaky_0.1 (input b@2_4)))", &why), "");
  // The reverse fusion of a relu conv would need (act relu ..): ill-typed, so it does not apply.
  EXPECT_EQ(apply("conv-act-rev", "(conv 1 1 same relu (input x@1_4_6_6) (weight w@8_4_3_3) none)", &why), "");
  EXPECT_NE(why.find("act"), std::string::npos) << why;
  // An activation on top of a conv that already has one is not fused (the conv's is not none).
  EXPECT_EQ(apply("conv-act", "(act relu6 (conv 1 1 same relu (input x@1_4_6_6) (weight w@8_4_3_3) none))", &why), "");
}

}  // namespace
}  // namespace tensat
