// Loader tests: the shipped rules load; malformed rule text gives "file:line: what".
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "rules/loader.h"

namespace tensat::rules {
namespace {

std::string load_error(const std::string& text) {
  try {
    load_rules_text(text, "inline");
  } catch (const RuleError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(LoaderDefault, LoadsShippedRules) {
  std::vector<RuleSpec> rules;
  ASSERT_NO_THROW(rules = default_rules());
  EXPECT_GE(rules.size(), 100u);
  std::set<std::string> names;
  size_t multi = 0;
  for (const auto& r : rules) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_EQ(r.lhs.size(), r.rhs.size()) << r.name;
    EXPECT_GT(r.line, 0);
    multi += r.is_multi();
  }
  EXPECT_GE(multi, 10u);
  for (const char* must : {"matmul-assoc", "matmul-assoc-rev", "matmul-merge", "conv-merge", "conv-enlarge-merge",
                           "conv-relu", "conv-relu-rev", "split0-concat", "concat-interchange", "poolmax-concat",
                           "ewmul-distrib", "conv-sum-merge", "conv-act", "matmul-act-rev", "act-concat"})
    EXPECT_TRUE(names.count(must)) << must;
  // Optional rules live in rules/extra/, outside the default set (rules/README.md).
  EXPECT_FALSE(names.count("conv-merge-gconv-2"));
  auto extra = load_rules_dir(std::string(TENSAT_SOURCE_DIR) + "/rules/extra");
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_EQ(extra[0].name, "conv-merge-gconv-2");
}

TEST(LoaderText, SinglePatternAndReverse) {
  auto rs = load_rules_text("# comment\n\nr1: (ewadd ?a ?b) <=> (ewadd ?b ?a)  # trailing\n", "inline");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].name, "r1");
  EXPECT_EQ(rs[1].name, "r1-rev");
  EXPECT_EQ(rs[0].line, 3);
  EXPECT_EQ(rs[0].file, "inline");
  EXPECT_EQ(rs[0].lhs[0].str(), "(ewadd ?a ?b)");
  EXPECT_EQ(rs[1].lhs[0].str(), "(ewadd ?b ?a)");
}

TEST(LoaderText, MultiPatternContinuationAndConditions) {
  auto rs = load_rules_text(
      "m: (conv ?sh ?sw same ?a ?x ?w1 none) ; (conv ?sh ?sw same ?a ?x ?w2 none) => \\\n"
      "   (split_0 (split 1 (conv ?sh ?sw same ?a ?x (concat 0 ?w1 ?w2) none))) ; \\\n"
      "   (split_1 (split 1 (conv ?sh ?sw same ?a ?x (concat 0 ?w1 ?w2) none))) if (groups ?x ?w1 1), (kernel ?w1 3 3)\n"
      "n: (relu ?x) => ?x\n",
      "inline");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_TRUE(rs[0].is_multi());
  EXPECT_EQ(rs[0].lhs.size(), 2u);
  EXPECT_EQ(rs[0].conditions.size(), 2u);
  EXPECT_EQ(rs[0].conditions[1].str(), "(kernel ?w1 3 3)");
  EXPECT_EQ(rs[1].line, 4);  // lines after a continued rule keep their numbers
  EXPECT_EQ(rs[1].rhs[0].str(), "?x");
}

struct BadCase {
  const char* text;
  const char* expect;  // substring of the message, after "inline:LINE: "
  int line;
};

TEST(LoaderText, ErrorsNameFileLineAndProblem) {
  const BadCase cases[] = {
      {"r: (foo ?x) => ?x", "unknown operator 'foo'", 1},
      {"\nr: (relu ?x ?y) => ?x", "operator 'relu' takes 1 arguments, got 2", 2},
      {"r: (conv 1 1 same none ?x ?w) => ?x", "operator 'conv' takes 7 arguments", 1},
      {"r: (relu ?x) => (relu ?y)", "variable ?y on the right-hand side is not bound", 1},
      {"r: (ewadd ?a ?b) <=> (relu ?a)", "reverse direction: variable ?b on the right-hand side is not bound", 1},
      {"r: (relu ?x) => ?x if (rank ?y 2)", "variable ?y is not bound by a left-hand side", 1},
      {"r: (relu ?x) => ?x\nr: (tanh ?x) => ?x", "duplicate rule name 'r' (first defined at line 1)", 2},
      {"r: (relu ?x) <=> (tanh ?x)\nr-rev: (tanh ?x) => ?x", "duplicate rule name 'r-rev'", 2},
      {"r: (relu ?x => ?x", "missing ')'", 1},
      {"(relu ?x) => ?x", "expected 'NAME: lhs => rhs'", 1},
      {"r: (relu ?x)", "missing '=>' or '<=>'", 1},
      {"r: (relu ?x) => ?x if (frobnicate ?x)", "unknown condition 'frobnicate'", 1},
      {"r: (relu ?x) => ?x if", "'if' without conditions", 1},
      {"r: (relu ?x) ; (relu ?y) => (relu ?x)", "as many right-hand sides as left-hand sides (2 vs 1)", 1},
      {"r: (relu ?x) => (relu (split_0 (split 1 ?x)))", "may only appear as (split_0 (split AXIS x))", 1},
      {"r: (concat ?a ?a ?b) => ?b", "used both as a parameter and as a tensor", 1},
      {"r: ?x => (relu ?x)", "must be an operator pattern, not the variable ?x", 1},
      {"r: (relu foo) => (relu foo)", "literal 'foo' where a tensor is expected", 1},
      {"r: (matmul none ?a ?b relu) => ?a", "literal 'relu' where a tensor is expected", 1},
      {"r: (concat (relu ?x) ?a ?b) => ?a", "where a parameter (literal or variable) is expected", 1},
      {"r: (relu ?x) => ?x if (rank ?x two)", "must be an integer", 1},
      {"r: (relu ?x) => ?x if (groups ?x ?x)", "condition 'groups' takes 3 arguments, got 2", 1},
      {"r: (relu ?x) => ?x => ?x", "more than one arrow", 1},
      {"bad name: (relu ?x) => ?x", "invalid rule name", 1},
      {"r: (opaque ?i ?x) => ?x", "cannot appear in a rule", 1},
  };
  for (const auto& c : cases) {
    std::string msg = load_error(c.text);
    std::string prefix = "inline:" + std::to_string(c.line) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "text: " << c.text << "\nmessage: " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "text: " << c.text << "\nmessage: " << msg;
  }
}

TEST(LoaderFiles, MissingFileAndDirectory) {
  EXPECT_THROW(load_rules_file("/nonexistent/x.rules"), RuleError);
  EXPECT_THROW(load_rules_dir("/nonexistent-dir"), RuleError);
}

}  // namespace
}  // namespace tensat::rules

namespace tensat::rules {
namespace {

// The examples in FORMAT.md are valid rules.
TEST(LoaderText, FormatMdExamplesLoad) {
  std::ifstream in(TENSAT_SOURCE_DIR "/rules/FORMAT.md");
  ASSERT_TRUE(in.good());
  std::string line, block;
  bool inside = false, done = false;
  while (!done && std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      done = inside;
      inside = !inside;
      continue;
    }
    if (inside) block += line + "\n";
  }
  std::vector<RuleSpec> rs;
  ASSERT_NO_THROW(rs = load_rules_text(block, "FORMAT.md")) << block;
  EXPECT_EQ(rs.size(), 5u);
}

}  // namespace
}  // namespace tensat::rules

// The compiled-in rule set is the rules/*.rules files as they are on disk.
TEST(Loader, EmbeddedRulesEqualTheFilesOnDisk) {
  auto embedded = tensat::rules::default_rules();
  auto disk = tensat::rules::load_rules_dir(TENSAT_SOURCE_DIR "/rules");
  ASSERT_EQ(embedded.size(), disk.size());
  for (size_t i = 0; i < embedded.size(); ++i) {
    EXPECT_EQ(embedded[i].name, disk[i].name);
    EXPECT_EQ(embedded[i].line, disk[i].line);
    ASSERT_EQ(embedded[i].lhs.size(), disk[i].lhs.size());
    for (size_t k = 0; k < embedded[i].lhs.size(); ++k) {
      EXPECT_EQ(embedded[i].lhs[k].str(), disk[i].lhs[k].str());
      EXPECT_EQ(embedded[i].rhs[k].str(), disk[i].rhs[k].str());
    }
  }
}
