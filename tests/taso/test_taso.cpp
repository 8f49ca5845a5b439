// TASO's rule collection (rules/taso/): reading graph_subst.pb, the conversion to our language
// (checked by hand against the decoded protobuf), numeric soundness of every imported rule
// (the same harness and thresholds as tests/rules/test_soundness.cpp), rule files by
// extension, and the prover (a known identity proved, a false equation refused).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "egraph/rewrite.h"
#include "lang/sexpr.h"
#include "refexec/executor.h"
#include "rules/check/rule_check.h"
#include "rules/loader.h"
#include "rules/taso/instances.h"
#include "rules/taso/prover.h"
#include "rules/taso/rule_files.h"
#include "rules/taso/taso_rules.h"

namespace tensat::taso {
namespace {

const std::string kPb = TENSAT_TASO_PB;

std::string spec_text(const RuleSpec& r) {
  std::string s;
  for (size_t i = 0; i < r.lhs.size(); ++i) s += (i ? " ; " : "") + r.lhs[i].str();
  s += " => ";
  for (size_t i = 0; i < r.rhs.size(); ++i) s += (i ? " ; " : "") + r.rhs[i].str();
  for (size_t i = 0; i < r.conditions.size(); ++i) s += (i ? ", " : " if ") + r.conditions[i].str();
  return s;
}

const RuleSpec& by_name(const std::vector<RuleSpec>& rs, const std::string& name) {
  for (const auto& r : rs)
    if (r.name == name) return r;
  throw std::runtime_error("no rule " + name);
}

// ---- reading -----------------------------------------------------------------------------------

TEST(TasoRead, CollectionHas133Rules) {
  auto coll = read_taso_collection(kPb);
  EXPECT_EQ(coll.size(), 133u);
  ImportReport rep;
  auto rules = load_taso_rules(kPb, &rep);
  EXPECT_EQ(rep.total, 133u);
  EXPECT_EQ(rep.imported + rep.skipped.size(), 133u) << rep.str();
  EXPECT_EQ(rules.size(), rep.imported);
  // Every TASO rule is expressible in our language.
  EXPECT_EQ(rep.imported, 133u) << rep.str();
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].name, "taso-" + std::to_string(rules[i].line));
    EXPECT_EQ(rules[i].file, kPb);
  }
}

TEST(TasoRead, Rule0DecodedByHand) {
  // rule 0: src 0 = MATMUL(in1, in4) ACTI=0; src 1 = MATMUL(src0, in5) ACTI=0;
  //         dst 0 = MATMUL(in4, in5); dst 1 = MATMUL(in1, dst0); map src1 -> dst1.
  auto coll = read_taso_collection(kPb);
  const TasoRule& r = coll.at(0);
  ASSERT_EQ(r.src.size(), 2u);
  ASSERT_EQ(r.dst.size(), 2u);
  ASSERT_EQ(r.mapped.size(), 1u);
  EXPECT_EQ(r.src[0].type, OP_MATMUL);
  ASSERT_EQ(r.src[0].inputs.size(), 2u);
  EXPECT_EQ(r.src[0].inputs[0].op, -1);
  EXPECT_EQ(r.src[0].inputs[1].op, -4);
  int acti = -1;
  EXPECT_TRUE(r.src[0].param(PM_ACTI, &acti));
  EXPECT_EQ(acti, 0);
  EXPECT_EQ(r.src[1].inputs[0].op, 0);
  EXPECT_EQ(r.src[1].inputs[1].op, -5);
  EXPECT_EQ(r.dst[1].inputs[0].op, -1);
  EXPECT_EQ(r.dst[1].inputs[1].op, 0);
  EXPECT_EQ(r.mapped[0].src_op, 1);
  EXPECT_EQ(r.mapped[0].dst_op, 1);
  auto rules = load_taso_rules(kPb);
  EXPECT_EQ(spec_text(by_name(rules, "taso-0")),
            "(matmul none (matmul none ?i1 ?i4 none) ?i5 none) => (matmul none ?i1 (matmul none ?i4 ?i5 none) none)");
}

TEST(TasoRead, ConvRulesByHand) {
  auto coll = read_taso_collection(kPb);
  // rule 64: CONV2D(in7, in10) KH=3 KW=3 SH=1 SW=1 PAD=0 (SAME) ACTI=0, RELU -> CONV2D ACTI=2.
  const TasoRule& r64 = coll.at(64);
  ASSERT_EQ(r64.src.size(), 2u);
  EXPECT_EQ(r64.src[0].type, OP_CONV2D);
  EXPECT_EQ(r64.src[1].type, OP_RELU);
  int v = -1;
  EXPECT_TRUE(r64.src[0].param(PM_PAD, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(r64.src[0].param(PM_KERNEL_H, &v));
  EXPECT_EQ(v, 3);
  EXPECT_TRUE(r64.dst[0].param(PM_ACTI, &v));
  EXPECT_EQ(v, 2);
  auto rules = load_taso_rules(kPb);
  EXPECT_EQ(spec_text(by_name(rules, "taso-64")),
            "(relu (conv 1 1 same none ?i7 ?i10 none)) => (conv 1 1 same relu ?i7 ?i10 none) if (groups ?i7 ?i10 1)");
  // rule 127: two convs sharing the input -> conv over stacked weights + split on axis 1 (two
  // mapped outputs: a multi-pattern rule).
  const TasoRule& r127 = coll.at(127);
  ASSERT_EQ(r127.mapped.size(), 2u);
  EXPECT_EQ(r127.dst[2].type, OP_SPLIT);
  EXPECT_EQ(r127.mapped[1].dst_ts, 1);
  const RuleSpec& s127 = by_name(rules, "taso-127");
  EXPECT_TRUE(s127.is_multi());
  EXPECT_EQ(spec_text(s127),
            "(conv 1 1 same none ?i7 ?i10 none) ; (conv 1 1 same none ?i7 ?i11 none) => "
            "(split_0 (split 1 (conv 1 1 same none ?i7 (concat 0 ?i10 ?i11) none))) ; "
            "(split_1 (split 1 (conv 1 1 same none ?i7 (concat 0 ?i10 ?i11) none))) "
            "if (rank ?i10 4), (rank ?i11 4), (groups ?i7 ?i10 1), (groups ?i7 ?i11 1)");
  // rule 84: concat interchange; NUMDIM=2 becomes rank conditions on every operand.
  EXPECT_EQ(spec_text(by_name(rules, "taso-84")),
            "(concat 0 (concat 1 ?i1 ?i2) (concat 1 ?i4 ?i5)) => (concat 1 (concat 0 ?i1 ?i4) (concat 0 ?i2 ?i5)) "
            "if (rank ?i1 2), (rank ?i2 2), (rank ?i4 2), (rank ?i5 2)");
}

// ---- conversion failures are reported, never dropped -------------------------------------------

TasoOp op(int type, std::vector<TasoTensor> in, std::vector<std::pair<int, int>> params = {}) {
  TasoOp o;
  o.type = type;
  o.inputs = std::move(in);
  o.params = std::move(params);
  return o;
}

TEST(TasoConvert, UnsupportedOperatorIsReportedWithReason) {
  TasoRule r;
  r.src.push_back(op(OP_POOL2D_MAX, {{-1, 0}}));
  r.dst.push_back(op(OP_RELU, {{-1, 0}}));
  r.mapped.push_back({0, 0, 0, 0});
  RuleSpec spec;
  std::string why;
  EXPECT_FALSE(convert_taso_rule(r, 7, "x.pb", &spec, &why));
  EXPECT_NE(why.find("POOL2D_MAX"), std::string::npos) << why;
}

TEST(TasoConvert, SplitInsideATargetIsReported) {
  // relu(split_0(split(concat(a, b)))) on the target side: the split sugar is only sound at a root.
  TasoRule r;
  r.src.push_back(op(OP_RELU, {{-1, 0}}));
  r.dst.push_back(op(OP_CONCAT, {{-1, 0}, {-2, 0}}, {{PM_AXIS, 1}, {PM_NUMDIM, 2}}));
  r.dst.push_back(op(OP_SPLIT, {{0, 0}}, {{PM_AXIS, 1}, {PM_NUM_OUTPUTS, 2}}));
  r.dst.push_back(op(OP_RELU, {{1, 0}}));
  r.mapped.push_back({0, 2, 0, 0});
  RuleSpec spec;
  std::string why;
  EXPECT_FALSE(convert_taso_rule(r, 3, "x.pb", &spec, &why));
  EXPECT_NE(why.find("root"), std::string::npos) << why;
}

TEST(TasoConvert, MissingParameterAndBadReferencesAreReported) {
  RuleSpec spec;
  std::string why;
  TasoRule r;
  r.src.push_back(op(OP_MATMUL, {{-1, 0}, {-2, 0}}));  // no ACTI
  r.dst.push_back(op(OP_MATMUL, {{-1, 0}, {-2, 0}}, {{PM_ACTI, 0}}));
  r.mapped.push_back({0, 0, 0, 0});
  EXPECT_FALSE(convert_taso_rule(r, 0, "x.pb", &spec, &why));
  EXPECT_NE(why.find("ACTI"), std::string::npos) << why;
  TasoRule r2;
  r2.src.push_back(op(OP_RELU, {{-1, 0}}));
  r2.dst.push_back(op(OP_RELU, {{-3, 0}}));  // input 3 is not on the source side
  r2.mapped.push_back({0, 0, 0, 0});
  EXPECT_FALSE(convert_taso_rule(r2, 0, "x.pb", &spec, &why));
  EXPECT_NE(why.find("input 3"), std::string::npos) << why;
  TasoRule r3 = r;
  r3.mapped[0].dst_op = 5;
  EXPECT_FALSE(convert_taso_rule(r3, 0, "x.pb", &spec, &why));
}

TEST(TasoConvert, TransposePermutationIsDecoded) {
  // TASO encodes perm (1, 0, 2) over 3 dims as 1*9 + 0*3 + 2 = 11.
  TasoRule r;
  r.src.push_back(op(OP_TRANSPOSE, {{-1, 0}}, {{PM_NUMDIM, 3}, {PM_PERM, 11}, {PM_OUTSHUFFLE, 0}}));
  r.src.push_back(op(OP_TRANSPOSE, {{0, 0}}, {{PM_NUMDIM, 3}, {PM_PERM, 11}, {PM_OUTSHUFFLE, 0}}));
  r.dst.push_back(op(OP_RELU, {{-1, 0}}));
  r.dst.push_back(op(OP_RELU, {{0, 0}}));
  r.mapped.push_back({1, 0, 0, 0});
  std::string why;
  EXPECT_EQ(taso_rule_text(r, 9, &why), "taso-9: (transpose 1_0_2 (transpose 1_0_2 ?i1)) => (relu ?i1) if (rank ?i1 3)") << why;
}

TEST(TasoRead, MalformedFileThrows) {
  auto dir = std::filesystem::temp_directory_path() / "tensat_taso_test";
  std::filesystem::create_directories(dir);
  auto bad = (dir / "bad.pb").string();
  std::ofstream(bad, std::ios::binary) << "\x0a\xff\xff\xff\xff\x0f garbage";
  EXPECT_THROW(read_taso_collection(bad), TasoError);
  EXPECT_THROW(read_taso_collection((dir / "missing.pb").string()), TasoError);
}

// ---- rule files by extension ---------------------------------------------------------------------

TEST(RuleFiles, OursTasoOrBoth) {
  auto ours = load_rule_files({});
  EXPECT_EQ(ours.size(), rules::default_rules().size());
  std::vector<ImportReport> reps;
  auto taso = load_rule_files({kPb}, &reps);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(taso.size(), reps[0].imported);
  auto both = load_rule_files({TENSAT_SOURCE_DIR "/rules", kPb});
  EXPECT_EQ(both.size(), ours.size() + taso.size());
  auto one = load_rule_files({TENSAT_SOURCE_DIR "/rules/matmul.rules"});
  EXPECT_FALSE(one.empty());
  EXPECT_THROW(load_rule_files({kPb, kPb}), RuleFilesError);           // duplicate names
  EXPECT_THROW(load_rule_files({"/tmp/whatever.txt"}), RuleFilesError);  // unknown kind
  // every imported rule compiles in the engine
  EXPECT_NO_THROW(compile_rewrites(taso));
}

// ---- numeric soundness of every imported rule (thresholds of tests/rules/test_soundness.cpp) ----

constexpr int kWanted = 10;
constexpr int kRequired = 3;
constexpr int kAttempts = 4000;

std::vector<RuleSpec> imported() {
  try {
    return load_taso_rules(kPb);
  } catch (...) {
    return {};  // TasoRead.CollectionHas133Rules reports it
  }
}

class TasoSoundness : public ::testing::TestWithParam<RuleSpec> {};

TEST_P(TasoSoundness, BothSidesComputeTheSame) {
  namespace h = rules::check;
  const RuleSpec& r = GetParam();
  SCOPED_TRACE(r.name + ": " + spec_text(r));
  std::mt19937_64 rng(std::hash<std::string>{}(r.name));
  std::map<h::Outcome, int> outcomes;
  std::map<h::Outcome, std::string> example;
  int ok = 0;
  for (int attempt = 0; attempt < kAttempts && ok < kWanted; ++attempt) {
    h::Instance inst;
    h::Outcome o = h::draw(r, rng, &inst);
    ++outcomes[o];
    if (o != h::Outcome::Ok) {
      if (!example.count(o)) example[o] = inst.why;
      continue;
    }
    std::string detail;
    double ratio = h::compare(inst, &detail);
    std::string lhs, rhs;
    for (auto id : inst.lhs) lhs += print_term(inst.w.g, id) + " ; ";
    for (auto id : inst.rhs) rhs += print_term(inst.w.g, id) + " ; ";
    ASSERT_LE(ratio, 1.0) << "imported rule " << r.name << " is numerically wrong: " << detail << "\n  lhs: " << lhs
                          << "\n  rhs: " << rhs;
    ++ok;
  }
  std::string summary;
  for (auto& [o, n] : outcomes)
    summary += std::string(h::outcome_name(o)) + "=" + std::to_string(n) +
               (example.count(o) ? " (e.g. " + example[o] + ")" : "") + "\n";
  EXPECT_GE(ok, kRequired) << "the shape generator cannot instantiate " << r.name << " (well-typed instances: " << ok
                           << ")\n" << summary;
}

INSTANTIATE_TEST_SUITE_P(Imported, TasoSoundness, ::testing::ValuesIn(imported()),
                         [](const ::testing::TestParamInfo<RuleSpec>& info) {
                           std::string s = info.param.name;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// ---- the prover -----------------------------------------------------------------------------------

std::vector<Rewrite> our_rules() { return compile_rewrites(rules::default_rules()); }

TEST(Prover, MatmulAssociativity) {
  std::map<std::string, VarShape> shapes{{"?a", {{8, 4}, false}}, {"?b", {{4, 6}, false}}, {"?c", {{6, 2}, false}}};
  std::string why;
  auto goal = instantiate({parse_sexpr("(matmul none ?a (matmul none ?b ?c none) none)")},
                          {parse_sexpr("(matmul none (matmul none ?a ?b none) ?c none)")}, {}, shapes, 1, &why);
  ASSERT_TRUE(goal) << why;
  ProveResult r = prove(goal->g, goal->pairs, our_rules(), ProveLimits{});
  EXPECT_TRUE(r.proved) << prove_result_json(r);
  EXPECT_EQ(r.stop, "proved");
  EXPECT_GE(r.iterations, 1u);
  // A longer chain: ((a b) c) d = a (b (c d)).
  shapes["?d"] = {{2, 3}, false};
  goal = instantiate({parse_sexpr("(matmul none (matmul none (matmul none ?a ?b none) ?c none) ?d none)")},
                     {parse_sexpr("(matmul none ?a (matmul none ?b (matmul none ?c ?d none) none) none)")}, {}, shapes, 1,
                     &why);
  ASSERT_TRUE(goal) << why;
  r = prove(goal->g, goal->pairs, our_rules(), ProveLimits{});
  EXPECT_TRUE(r.proved) << prove_result_json(r);
}

TEST(Prover, ShapesBySearchWhenNotGiven) {
  std::string why;
  auto goal = instantiate({parse_sexpr("(ewadd ?a ?b)")}, {parse_sexpr("(ewadd ?b ?a)")}, {}, {}, 3, &why);
  ASSERT_TRUE(goal) << why;
  EXPECT_TRUE(prove(goal->g, goal->pairs, our_rules(), ProveLimits{}).proved);
}

// TASO found concat associativity false: its split cuts at the most recent concat boundary,
// which ((a b) c) and (a (b c)) place differently. With a, b, c all 4x2, splitting ((a b) c) on
// axis 1 gives (a b) first; splitting (a (b c)) gives a, then (b c). So
//   split_0(split 1 ((a b) c))  =  (a b)   and   split_1(split 1 (a (b c)))  =  (b c)
// have the same shape 4x4, yet differ. Our rules include concat associativity (merging the two
// concat trees), but a split carries its position, so the false equation must stay unproved.
TEST(Prover, RefusesConcatAssociativityAcrossSplitTrees) {
  std::map<std::string, VarShape> shapes{{"?a", {{4, 2}, false}}, {"?b", {{4, 2}, false}}, {"?c", {{4, 2}, false}}};
  const char* lhs = "(split_0 (split 1 (concat 1 (concat 1 ?a ?b) ?c)))";
  const char* rhs = "(split_1 (split 1 (concat 1 ?a (concat 1 ?b ?c))))";
  std::string why;
  auto goal = instantiate({parse_sexpr(lhs)}, {parse_sexpr(rhs)}, {}, shapes, 1, &why);
  ASSERT_TRUE(goal) << why;
  ASSERT_EQ(goal->g.type(goal->pairs[0].first), goal->g.type(goal->pairs[0].second));
  ProveResult r = prove(goal->g, goal->pairs, our_rules(), ProveLimits{});
  EXPECT_FALSE(r.proved) << goal->str();
  EXPECT_NE(r.stop, "proved");
  // ... and it is indeed false: evaluate both sides on random data.
  ir::Graph g = goal->g;
  g.set_root(g.op(Op::Noop, {goal->pairs[0].first, goal->pairs[0].second}));
  std::unordered_map<std::string, refexec::Tensor> inputs;
  for (const char* v : {"a", "b", "c"}) inputs[v] = refexec::random_tensor({4, 2}, std::hash<std::string>{}(v));
  auto res = refexec::run(g, WeightStore{}, inputs);
  ASSERT_EQ(res.outputs.size(), 2u);
  EXPECT_NE(res.outputs[0].data, res.outputs[1].data);
  // The true variant (same split of the re-associated concat) is proved.
  goal = instantiate({parse_sexpr(lhs)}, {parse_sexpr("(concat 1 ?a ?b)")}, {}, shapes, 1, &why);
  ASSERT_TRUE(goal) << why;
  EXPECT_TRUE(prove(goal->g, goal->pairs, our_rules(), ProveLimits{}).proved);
}

TEST(Prover, DifferentTypesAreNotProved) {
  std::map<std::string, VarShape> shapes{{"?a", {{4, 2}, false}}, {"?b", {{4, 3}, false}}};
  std::string why;
  auto goal = instantiate({parse_sexpr("(relu ?a)")}, {parse_sexpr("(relu ?b)")}, {}, shapes, 1, &why);
  ASSERT_TRUE(goal) << why;
  ProveResult r = prove(goal->g, goal->pairs, our_rules(), ProveLimits{});
  EXPECT_FALSE(r.proved);
  EXPECT_EQ(r.stop, "types-differ");
}

TEST(Prover, FalseEquationOfEqualTypesSaturatesUnproved) {
  std::map<std::string, VarShape> shapes{{"?a", {{4, 4}, false}}, {"?b", {{4, 4}, false}}};
  std::string why;
  auto goal = instantiate({parse_sexpr("(relu (ewadd ?a ?b))")}, {parse_sexpr("(ewadd (relu ?a) (relu ?b))")}, {}, shapes,
                          1, &why);
  ASSERT_TRUE(goal) << why;
  ProveResult r = prove(goal->g, goal->pairs, our_rules(), ProveLimits{});
  EXPECT_FALSE(r.proved);
}

TEST(Prover, MultiOutputTasoRuleNeedsAllPairs) {
  // TASO rule 127 (two convolutions sharing an input = one convolution + split) by our rules.
  auto rules = load_taso_rules(kPb);
  std::string why;
  auto goals = rule_instances(by_name(rules, "taso-127"), 1, 5, &why);
  ASSERT_EQ(goals.size(), 1u) << why;
  ASSERT_EQ(goals[0].pairs.size(), 2u);
  ProveResult r = prove(goals[0].g, goals[0].pairs, our_rules(), ProveLimits{});
  EXPECT_TRUE(r.proved) << goals[0].str() << prove_result_json(r);
  EXPECT_EQ(r.pair_proved, (std::vector<bool>{true, true}));
  // With no rules at all, nothing beyond syntactic identity is proved.
  ProveResult none = prove(goals[0].g, goals[0].pairs, {}, ProveLimits{});
  EXPECT_FALSE(none.proved);
  EXPECT_EQ(none.stop, "saturated");
}

TEST(Completeness, AFewTasoRulesByOurRules) {
  CompletenessReport rep =
      check_taso_completeness(kPb, our_rules(), ProveLimits{}, 1, 1, {0, 22, 31, 64, 77, 84, 114, 125});
  ASSERT_EQ(rep.total(), 8u);
  EXPECT_EQ(rep.proved(), 8u) << rep.str();
}

// The completeness figure of rules/taso/README.md: our rules derive every TASO substitution.
TEST(Completeness, AllTasoRulesByOurRules) {
  CompletenessReport rep = check_taso_completeness(kPb, our_rules(), ProveLimits{}, 2, 1);
  ASSERT_EQ(rep.total(), 133u);
  EXPECT_EQ(rep.proved(), 133u) << rep.str();
  // Sanity: with no rules, nothing is proved (the sides are never syntactically equal).
  CompletenessReport none = check_taso_completeness(kPb, {}, ProveLimits{}, 1, 1);
  EXPECT_EQ(none.proved(), 0u);
}

}  // namespace
}  // namespace tensat::taso
