// The k_multi 0 seed computed beside the explorations (pipeline/seed.h, K0Seed): the seed it
// gives does not depend on which thread computes it or when limit() comes; none where the
// k_multi 0 e-graph reaches a quarter of the larger one; stop() ends it without limit().
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "egraph/bridge.h"
#include "gpu_cost/roofline.h"
#include "pipeline/rule_sources.h"
#include "pipeline/seed.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

// Two products of one input and their sum: the multi-pattern rules merge the products.
const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[64,256] x, float[256,256] w1, float[256,256] w2) => (y) {
  a = MatMul(x, w1)
  b = MatMul(x, w2)
  c = Relu(a)
  d = Relu(b)
  y = Add(c, d)
})";

struct Fixture {
  ImportResult imported = imp(kModel);
  std::vector<Rewrite> rules = compile_rewrites(load_rule_sources({}));
  cost::RooflineModel model{*cost::find_profile("t4")};
  Costing costing{model};
  RunnerConfig explore;
  extract::ExtractOptions extract;
  Fixture() { extract.method = extract::Method::Ilp; }
  SeedContext ctx() { return SeedContext{imported.graph, rules, explore, costing, extract, nullptr}; }
};

// The k_multi 0 result computed here, one step after the other: its exploration's report and
// the extraction's cost.
std::pair<RunReport, double> serial_k0(Fixture& f) {
  EGraph eg;
  const EClassId root = add_graph(eg, f.imported.graph);
  RunnerConfig rc = f.explore;
  rc.k_multi = 0;
  const RunReport run = Runner(eg).with_config(rc).run(f.rules);
  const ENodePrices prices = f.costing.price(eg);
  const ExtractView view = to_extract_graph(eg, root, prices.cost);
  extract::ExtractOptions eo = f.extract;
  eo.ilp.concurrent_start = false;
  return {run, extract::extract(view.graph, eo).dag_cost};
}

TEST(K0Seed, GivesTheSerialResultWhereTheLargerEGraphIsFourTimesItsPeak) {
  Fixture f;
  const auto [run, cost] = serial_k0(f);
  ASSERT_GT(run.peak_nodes, 0u);
  // limit() at once, or 20 ms later (this small e-graph's seed is then most likely extracted):
  // the same answers whenever it comes.
  for (int i = 0; i < 3; ++i) {
    {
      K0Seed seed(f.ctx());
      if (i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seed.limit(4 * (run.peak_nodes + 1));
      const std::optional<Seed>& s = seed.get();
      ASSERT_TRUE(s.has_value()) << i;
      EXPECT_EQ(s->k_multi, 0u);
      EXPECT_EQ(s->cost, cost) << i;
      EXPECT_NEAR(f.costing.price(s->graph).total, cost, 1e-9 * cost);
      EXPECT_GE(seed.own_s(), 0.0);
      seed.limit(1);  // (a second call changes nothing)
      EXPECT_TRUE(seed.get().has_value());
    }
    {
      K0Seed seed(f.ctx());
      if (i == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seed.limit(4 * run.peak_nodes);  // (its peak reaches a quarter: no seed)
      EXPECT_FALSE(seed.get().has_value()) << i;
    }
  }
}

TEST(K0Seed, StopsWithoutALimit) {
  Fixture f;
  {
    K0Seed seed(f.ctx());
    seed.stop();
    EXPECT_FALSE(seed.get().has_value());
  }
  {
    K0Seed seed(f.ctx());  // (the destructor stops it)
  }
  SUCCEED();
}

}  // namespace
}  // namespace tensat
