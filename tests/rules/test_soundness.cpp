// Numeric soundness of every shipped rule: each left/right pair is instantiated on random
// tensors of several random compatible shapes and both sides are evaluated with the CPU
// reference executor. A rule that fails is wrong (fix or remove it), never a tolerance to widen.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "rules/check/rule_check.h"
#include "rules/loader.h"

namespace tensat::rules::check {
namespace {

constexpr int kWanted = 10;     // well-typed instances compared per rule
constexpr int kRequired = 3;    // fewer: the generator cannot instantiate the rule
constexpr int kAttempts = 4000; // random draws per rule at most

// The default set and the optional rules shipped beside it (rules/extra/).
std::vector<RuleSpec> all_rules() {
  try {
    std::vector<RuleSpec> rules = default_rules();
    for (auto& r : load_rules_dir(std::string(TENSAT_SOURCE_DIR) + "/rules/extra")) rules.push_back(std::move(r));
    return rules;
  } catch (...) {
    return {};  // LoaderDefault.LoadsShippedRules reports the error
  }
}

std::string test_name(const RuleSpec& r) {
  std::string s = r.name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class RuleSoundness : public ::testing::TestWithParam<RuleSpec> {};

TEST_P(RuleSoundness, BothSidesComputeTheSame) {
  const RuleSpec& r = GetParam();
  SCOPED_TRACE(r.file + ":" + std::to_string(r.line) + " " + r.name);
  std::mt19937_64 rng(std::hash<std::string>{}(r.name));
  std::map<Outcome, int> outcomes;
  std::map<Outcome, std::string> example;
  int ok = 0;
  for (int attempt = 0; attempt < kAttempts && ok < kWanted; ++attempt) {
    Instance inst;
    Outcome o = draw(r, rng, &inst);
    ++outcomes[o];
    if (o != Outcome::Ok) {
      if (!example.count(o)) example[o] = inst.why;
      continue;
    }
    std::string detail;
    double ratio = compare(inst, &detail);
    std::string lhs, rhs;
    for (auto id : inst.lhs) lhs += print_term(inst.w.g, id) + " ; ";
    for (auto id : inst.rhs) rhs += print_term(inst.w.g, id) + " ; ";
    ASSERT_LE(ratio, 1.0) << "rule " << r.name << " is numerically wrong: " << detail << "\n  lhs: " << lhs
                          << "\n  rhs: " << rhs;
    ++ok;
  }
  std::string summary;
  for (auto& [o, n] : outcomes)
    summary += std::string(outcome_name(o)) + "=" + std::to_string(n) + (example.count(o) ? " (e.g. " + example[o] + ")" : "") + "\n";
  EXPECT_GE(ok, kRequired) << "the shape generator cannot instantiate rule " << r.name
                           << " (well-typed instances: " << ok << ")\n" << summary;
}

INSTANTIATE_TEST_SUITE_P(Shipped, RuleSoundness, ::testing::ValuesIn(all_rules()),
                         [](const ::testing::TestParamInfo<RuleSpec>& info) { return test_name(info.param); });

}  // namespace
}  // namespace tensat::rules::check

namespace tensat::rules::check {
namespace {

// The harness must catch wrong rules: each of these plausible-looking variants (a condition
// dropped, a parameter wrong) is numerically false, and random instantiation must show it.
TEST(HarnessCatchesWrongRules, EachWrongRuleFails) {
  const char* wrong[] = {
      // merging grouped convolutions along output channels
      "w1: (conv ?sh ?sw ?p ?a ?x ?w1 none) ; (conv ?sh ?sw ?p ?a ?x ?w2 none) => "
      "(split_0 (split 1 (conv ?sh ?sw ?p ?a ?x (concat 0 ?w1 ?w2) none))) ; "
      "(split_1 (split 1 (conv ?sh ?sw ?p ?a ?x (concat 0 ?w1 ?w2) none)))",
      // linearity with a broadcast weight
      "w2: (conv ?sh ?sw ?p none ?x (ewadd ?w1 ?w2) none) => "
      "(ewadd (conv ?sh ?sw ?p none ?x ?w1 none) (conv ?sh ?sw ?p none ?x ?w2 none))",
      // interchange on the same axis
      "w3: (concat ?ax0 (concat ?ax1 ?a ?b) (concat ?ax1 ?c ?d)) => "
      "(concat ?ax1 (concat ?ax0 ?a ?c) (concat ?ax0 ?b ?d))",
      // transpose of a biased product
      "w4: (transpose 1_0 (matmul none ?a ?b ?bias)) => (matmul none (transpose 1_0 ?b) (transpose 1_0 ?a) ?bias)",
      // activation moved out of a sum
      "w5: (relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))",
      // different inputs concatenated without equal shapes (grouped conv of unequal halves)
      "w6: (concat 1 (conv ?sh ?sw ?p ?a ?x1 ?w1 none) (conv ?sh ?sw ?p ?a ?x2 ?w2 none)) => "
      "(conv ?sh ?sw ?p ?a (concat 1 ?x1 ?x2) (concat 0 ?w1 ?w2) none)",
      // linearity in a broadcast input (zero padding differs)
      "w7: (conv ?sh ?sw ?p none (ewadd ?x1 ?x2) ?w none) => "
      "(ewadd (conv ?sh ?sw ?p none ?x1 ?w none) (conv ?sh ?sw ?p none ?x2 ?w none))",
      // merge with the wrong count
      "w8: (conv ?sh ?sw ?p ?a ?x ?w ?b) => (conv ?sh ?sw ?p ?a ?x (merge 2 ?w) ?b) if (groups ?x ?w 4)",
      // bias moved inside an associativity step
      "w9: (matmul none ?a (matmul none ?b ?c none) ?bias) => (matmul none (matmul none ?a ?b ?bias) ?c none)",
  };
  for (const char* text : wrong) {
    auto rules = load_rules_text(text, "wrong");
    ASSERT_EQ(rules.size(), 1u);
    const RuleSpec& r = rules[0];
    std::mt19937_64 rng(7);
    bool caught = false;
    int ok = 0;
    for (int attempt = 0; attempt < kAttempts && !caught; ++attempt) {
      Instance inst;
      if (draw(r, rng, &inst) != Outcome::Ok) continue;
      ++ok;
      caught = compare(inst, nullptr) > 1.0;
    }
    EXPECT_TRUE(caught) << "wrong rule " << r.name << " passed " << ok << " random instances";
  }
}

}  // namespace
}  // namespace tensat::rules::check
