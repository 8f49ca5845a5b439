// Every extractor on the extraction-gym TENSAT e-graphs (testdata/extraction-gym-tensat).
#include <gtest/gtest.h>

#include <filesystem>

#include "extract/extract.h"
#include "extract/serialize_json.h"

namespace tensat::extract {
namespace {

const std::filesystem::path kGymDir =
    std::filesystem::path(TENSAT_GYM_DIR);

class Gym : public ::testing::TestWithParam<std::string> {};

TEST_P(Gym, EveryMethodIsValidAndTheIlpIsNoWorse) {
  const auto path = kGymDir / (GetParam() + ".json");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  const ExtractGraph g = read_egraph_json(path.string());
  const auto greedy = extract_greedy(g);
  const auto dag = extract_greedy_dag(g);
  IlpOptions opts;
  opts.time_limit_s = 10;
  const auto ilp = extract_ilp(g, opts);
  for (const auto* r : {&greedy, &dag, &ilp}) {
    EXPECT_TRUE(r->acyclic) << r->method;
    EXPECT_EQ(extraction_problem(g, r->choice), "") << r->method;
  }
  EXPECT_LE(ilp.dag_cost, std::min(greedy.dag_cost, dag.dag_cost) + 1e-9);
  EXPECT_LE(ilp.best_bound, ilp.dag_cost + 1e-6);
  RecordProperty("greedy", std::to_string(greedy.dag_cost));
  RecordProperty("dag", std::to_string(dag.dag_cost));
  RecordProperty("ilp", std::to_string(ilp.dag_cost));
  RecordProperty("ilp_status", ilp.status);
}

INSTANTIATE_TEST_SUITE_P(Files, Gym,
                         ::testing::Values("vgg_acyclic", "resnet50_acyclic", "bert_acyclic",
                                           "vgg", "resnet50", "bert"));

}  // namespace
}  // namespace tensat::extract
