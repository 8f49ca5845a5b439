// E-matching: table-driven patterns against small e-graphs.
#include <gtest/gtest.h>

#include "egraph/ematch.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;

struct Case {
  const char* pattern;
  size_t expected;
};

size_t count_matches(const EGraph& eg, const std::string& pat) {
  VarTable vars;
  Pattern p = compile_pattern(parse_sexpr(pat), vars, false);
  Matches m(vars.size());
  return search_pattern(eg, p, vars.size(), m);
}

TEST(EMatch, TableDriven) {
  Built b;
  build(b, {"(ewadd (input x@4_4) (input x@4_4))", "(ewadd (input x@4_4) (input y@4_4))",
            "(relu (matmul none (input x@4_4) (weight w@4_4) none))",
            "(matmul relu (input y@4_4) (weight w@4_4) none)",
            "(split_0 (split 1 3 (concat 1 (input x@4_4) (weight v@4_4))))"});
  const Case cases[] = {
      {"(ewadd ?a ?b)", 2},
      {"(ewadd ?a ?a)", 1},                                   // non-linear
      {"(matmul ?act ?x ?w none)", 2},
      {"(matmul none ?x ?w none)", 1},                        // parameter literal
      {"(matmul relu ?x ?w none)", 1},
      {"(matmul sigmoid ?x ?w none)", 0},                     // literal absent from the e-graph
      {"(relu (matmul ?act ?x ?w ?b))", 1},
      {"(matmul ?act ?x (weight ?id) ?b)", 2},
      {"(split 1 ?x)", 1},                                    // any POS
      {"(split 1 3 ?x)", 1},
      {"(split 1 5 ?x)", 0},
      {"(split 0 ?x)", 0},
      {"(concat ?ax ?a ?b)", 1},
      {"(ewadd ?a (input ?n))", 2},
      {"(tanh ?x)", 0},
  };
  for (const auto& c : cases) EXPECT_EQ(count_matches(b.eg, c.pattern), c.expected) << c.pattern;
}

TEST(EMatch, SubstitutionBindsClasses) {
  Built b;
  build(b, {"(ewadd (input x@4) (relu (input x@4)))"});
  VarTable vars;
  Pattern p = compile_pattern(parse_sexpr("(ewadd ?a (relu ?a))"), vars, false);
  Matches m(vars.size());
  ASSERT_EQ(search_pattern(b.eg, p, vars.size(), m), 1u);
  EXPECT_EQ(m.root(0), b.terms[0]);
  auto x = b.eg.lookup(ENode::make(Op::Input, {*b.eg.lookup_sym("x@4")}));
  ASSERT_TRUE(x);
  EXPECT_EQ(m.subst(0)[0], *x);
}

TEST(EMatch, RefusesDirtyEGraph) {
  Built b;
  build(b, {"(relu (input x@4))"});
  b.eg.add(ENode::make(Op::Tanh, {b.terms[0]}));
  EXPECT_THROW(count_matches(b.eg, "(relu ?x)"), std::logic_error);
}

TEST(EMatch, MatchesAcrossMergedClasses) {
  Built b;
  build(b, {"(relu (input x@4))", "(tanh (input y@4))"});
  b.eg.merge(b.terms[0], b.terms[1]);
  b.eg.rebuild();
  EXPECT_EQ(count_matches(b.eg, "(relu ?a)"), 1u);
  EXPECT_EQ(count_matches(b.eg, "(ewadd ?a ?a)"), 0u);
  auto r = b.eg.add(ENode::make(Op::Ewadd, {b.terms[0], b.terms[1]}));
  (void)r;
  b.eg.rebuild();
  EXPECT_EQ(count_matches(b.eg, "(ewadd ?a ?a)"), 1u);
  EXPECT_EQ(count_matches(b.eg, "(ewadd (relu ?x) (tanh ?y))"), 1u);
}

TEST(Conditions, Vocabulary) {
  Built b;
  build(b, {"(conv 1 1 same none (input x@1_8_6_6) (weight w@8_4_3_3) none)",
            "(conv 1 1 same none (input x@1_8_6_6) (weight v@8_8_1_1) none)"});
  struct CCase {
    const char* cond;
    bool expected;
  };
  const CCase cases[] = {
      {"(weight-only ?w)", true},   {"(not-weight-only ?x)", true}, {"(weight-only ?x)", false},
      {"(rank ?w 4)", true},        {"(rank ?w 2)", false},         {"(kernel ?w 3 3)", true},
      {"(groups ?x ?w 2)", true},   {"(groups ?x ?w 1)", false},    {"(distinct ?x ?w)", true},
      {"(same-shape ?w ?w)", true}, {"(same-shape ?x ?w)", false},  {"(kernel-le ?w ?w)", true},
  };
  VarTable vars;
  Pattern p = compile_pattern(parse_sexpr("(conv ?sh ?sw same ?a ?x (weight ?id) ?b)"), vars, false);
  // bind ?w as the weight class: use a second pattern form
  VarTable vars2;
  Pattern p2 = compile_pattern(parse_sexpr("(conv ?sh ?sw same ?a ?x ?w ?b)"), vars2, false);
  Matches m(vars2.size());
  ASSERT_EQ(search_pattern(b.eg, p2, vars2.size(), m), 2u);
  size_t which = 0;  // the 3x3 weight with 4 input channels
  for (size_t i = 0; i < m.size(); ++i)
    if (b.eg.type(m.subst(i)[static_cast<size_t>(vars2.find("w"))]).shape()[1] == 4) which = i;
  for (const auto& c : cases) {
    Condition cond = compile_condition(parse_sexpr(c.cond), vars2);
    EXPECT_EQ(check_condition(b.eg, cond, m.subst(which)), c.expected) << c.cond;
  }
  EXPECT_THROW(compile_condition(parse_sexpr("(weight-only ?nope)"), vars2), RuleError);
  EXPECT_THROW(compile_condition(parse_sexpr("(frobnicate ?w)"), vars2), RuleError);
}

TEST(RuleCompile, ErrorsNameFileAndLine) {
  auto bad = [](std::vector<std::string> lhs, std::vector<std::string> rhs) {
    RuleSpec s = testing::spec("bad-rule", lhs, rhs);
    s.file = "rules/test.rules";
    s.line = 42;
    try {
      compile_rewrite(s);
    } catch (const RuleError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e1 = bad({"(frob ?x)"}, {"?x"});
  EXPECT_NE(e1.find("rules/test.rules:42"), std::string::npos) << e1;
  EXPECT_NE(e1.find("unknown operator"), std::string::npos) << e1;
  std::string e2 = bad({"(relu ?x ?y)"}, {"?x"});
  EXPECT_NE(e2.find("arguments"), std::string::npos) << e2;
  std::string e3 = bad({"(relu ?x)"}, {"(tanh ?y)"});
  EXPECT_NE(e3.find("?y"), std::string::npos) << e3;
  EXPECT_NE(e3.find("bad-rule"), std::string::npos) << e3;
  std::string e4 = bad({"(relu 3)"}, {"(tanh 3)"});
  EXPECT_NE(e4.find("tensor position"), std::string::npos) << e4;
  EXPECT_EQ(bad({"(relu ?x)"}, {"(tanh ?x)"}), "");
}

}  // namespace
}  // namespace tensat
