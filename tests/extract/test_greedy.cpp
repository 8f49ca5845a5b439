// Tests of the greedy and greedy-DAG extractors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "extract/greedy.h"
#include "extract/serialize_json.h"
#include "tests/extract/builders.h"
#include "tests/extract/reference_greedy_dag.h"

namespace tensat::extract {
namespace {

TEST(Greedy, MissesTheSharedMatmulMerge) {
  const ExtractGraph g = testing::matmul_merge();
  for (const auto& r : {extract_greedy(g), extract_greedy_dag(g)}) {
    EXPECT_TRUE(r.acyclic);
    EXPECT_NEAR(r.dag_cost, 2.0, 1e-12) << r.method;
  }
}

TEST(Greedy, DagCountsSharedSubtermsOnce) {
  // R = h(X); X = p(S, T) [1] | leaf [3]; T = t(S) [0.5]; S = s [1]. As a tree p costs 3.5
  // (S twice), so greedy takes the leaf (3); as a DAG p costs 2.5.
  ExtractGraph g;
  const ClassIdx s = g.add_class(), t = g.add_class(), x = g.add_class(), r = g.add_class();
  g.add_node(s, "s", {}, 1.0);
  g.add_node(t, "t", {s}, 0.5);
  g.add_node(x, "p", {s, t}, 1.0);
  g.add_node(x, "leaf", {}, 3.0);
  g.add_node(r, "h", {x}, 0.0);
  g.roots = {r};
  EXPECT_NEAR(extract_greedy(g).dag_cost, 3.0, 1e-12);
  const auto d = extract_greedy_dag(g);
  EXPECT_NEAR(d.dag_cost, 2.5, 1e-12);
  EXPECT_NEAR(d.tree_cost, 3.5, 1e-12);
}

TEST(Greedy, AvoidsCyclesAndFilteredNodes) {
  ExtractGraph g = testing::two_cycle();
  for (const auto& r : {extract_greedy(g), extract_greedy_dag(g)}) {
    EXPECT_TRUE(r.acyclic);
    EXPECT_NEAR(r.dag_cost, 9.0, 1e-12) << r.method;  // both leaves
  }
  g.nodes[1].filtered = true;  // leafA gone: A must use f(B)
  for (const auto& r : {extract_greedy(g), extract_greedy_dag(g)}) {
    EXPECT_EQ(r.choice[0], 0);
    EXPECT_NEAR(r.dag_cost, 5.0, 1e-12) << r.method;
  }
}

TEST(Greedy, ThrowsWhenTheRootHasNoAcyclicOption) {
  ExtractGraph g = testing::two_cycle();
  g.nodes[1].filtered = true;
  g.nodes[3].filtered = true;
  EXPECT_THROW(extract_greedy(g), InputError);
  EXPECT_THROW(extract_greedy_dag(g), InputError);
}

// Tree costs double at every level of c_i = add(c_{i-1}, c_{i-1}) and overflow past ~1024
// levels: an overflowed sum of finite costs still gets a node (it used to leave the root
// without one: "no finite acyclic extraction", and the ILP's warm start threw with it).
TEST(Greedy, TreeCostsThatOverflowStillGiveAnExtraction) {
  ExtractGraph g;
  ClassIdx prev = g.add_class("x");
  g.add_node(prev, "Input", {}, 1.0);
  for (int i = 0; i < 1100; ++i) {
    const ClassIdx c = g.add_class();
    g.add_node(c, "add", {prev, prev}, 1.0);
    g.add_node(c, "mul", {prev, prev}, 2.0);
    prev = c;
  }
  g.roots = {prev};
  for (const ExtractResult& r : {extract_greedy(g), extract_greedy_dag(g)}) {
    EXPECT_EQ(extraction_problem(g, r.choice), "") << r.method;
    EXPECT_NEAR(r.dag_cost, 1101.0, 1e-9) << r.method;  // every add and the input, once each
  }
}

// Greedy DAG's work cap (the ILP's guided start uses it): past the cap it gives up with an
// empty choice, deterministically; without a cap the same graph gives a valid extraction.
TEST(Greedy, DagItemCapGivesUpWithAnEmptyChoice) {
  const ExtractGraph g = testing::module_chain(3, 20, 4);
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  EXPECT_TRUE(greedy_dag_choice(g, costs, nullptr, 50).empty());
  const Choice full = greedy_dag_choice(g, costs);
  EXPECT_EQ(extraction_problem(g, full), "");
  EXPECT_EQ(greedy_dag_choice(g, costs, nullptr, 100'000'000), full);
}

// A caller that no longer needs the result (the ILP's guided start once the LPs closed the
// problem) sets the stop flag: an empty choice comes back; unset, the flag changes nothing.
TEST(Greedy, DagStopFlagGivesUpWithAnEmptyChoice) {
  const ExtractGraph g = testing::module_chain(3, 20, 4);
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  std::atomic<bool> stop{true};
  EXPECT_TRUE(greedy_dag_choice(g, costs, nullptr, 0, &stop).empty());
  stop = false;
  EXPECT_EQ(greedy_dag_choice(g, costs, nullptr, 0, &stop), greedy_dag_choice(g, costs));
}

// Each node is united once (the settled order, greedy.h), so the items of the accepted sets
// are at most (usable nodes) x (classes), however many ties the costs have. Residual-like
// costs (four nodes in five free) on a chain of 150 modules: the FIFO worklist of before
// re-improved the sets along the chain far past that (3e9 items on 400 modules).
TEST(Greedy, DagUnitesEachNodeOnceWhateverTheTies) {
  const ExtractGraph g = testing::module_chain(5, 150, 4);
  std::vector<double> costs(g.nodes.size());
  size_t usable = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    costs[n] = n % 5 == 0 ? g.nodes[n].cost : 0.0;
    usable += g.usable(static_cast<NodeIdx>(n)) ? 1 : 0;
  }
  const Choice c = greedy_dag_choice(g, costs, nullptr, usable * g.classes.size());
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(extraction_problem(g, c), "");
}

TEST(Greedy, RandomGraphsGiveValidExtractions) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    for (bool acyclic : {true, false}) {
      const ExtractGraph g = testing::random_egraph(seed, 12, acyclic);
      try {
        const auto t = extract_greedy(g);
        const auto d = extract_greedy_dag(g);
        EXPECT_TRUE(t.acyclic && d.acyclic);
      } catch (const InputError&) {
        // a random cyclic graph may have no acyclic extraction: both must agree
        EXPECT_THROW(extract_greedy_dag(g), InputError) << seed;
      }
    }
  }
}

// The optimised greedy DAG (CostSetUnion, GraphIndex) must make exactly the choices of the
// straightforward version: the same nodes, so bit-identical costs.
void expect_same_as_reference(const ExtractGraph& g, const std::string& what) {
  testing::ReferenceDag ref;
  try {
    ref = testing::reference_greedy_dag(g);
  } catch (const InputError&) {
    EXPECT_THROW(extract_greedy_dag(g), InputError) << what;
    return;
  }
  const auto got = extract_greedy_dag(g);
  EXPECT_EQ(got.choice, ref.choice) << what;
  EXPECT_EQ(got.status == "fallback-greedy", ref.fallback) << what;
  const double a = got.dag_cost, b = dag_cost(g, ref.choice);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << what << ": " << a << " vs " << b;
  // The worklist order (the ILP's warm start runs it beside the settled one).
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  testing::ReferenceDag fifo;
  try {
    fifo = testing::reference_greedy_dag_worklist(g);
  } catch (const InputError&) {
    EXPECT_THROW(greedy_dag_choice(g, costs, nullptr, 0, nullptr, DagOrder::Worklist), InputError) << what;
    return;
  }
  bool fell_back = false;
  EXPECT_EQ(greedy_dag_choice(g, costs, &fell_back, 0, nullptr, DagOrder::Worklist), fifo.choice) << what;
  EXPECT_EQ(fell_back, fifo.fallback) << what;
}

TEST(Greedy, DagMatchesTheReferenceOnRandomGraphs) {
  for (uint32_t seed = 0; seed < 300; ++seed) {
    // Small graphs, then 1300-1800 classes (sets of hundreds: both membership strategies).
    const int classes =
        seed < 200 ? 10 + static_cast<int>(seed % 40) : 300 + static_cast<int>(seed) * 5;
    for (bool acyclic : {true, false})
      for (int zero : {0, 40}) {
        ExtractGraph g = testing::random_egraph(seed, classes, acyclic, zero);
        if (seed % 3 == 0) g.roots = {0, 1};
        expect_same_as_reference(g, "seed " + std::to_string(seed) + " acyclic " +
                                        std::to_string(acyclic) + " zero% " + std::to_string(zero));
      }
  }
}

TEST(Greedy, DagMatchesTheReferenceOnPipelineAndGymEgraphs) {
  std::vector<std::filesystem::path> files = {
      std::filesystem::path(TENSAT_TEST_DATA_DIR) / "eg_bert.json",
      std::filesystem::path(TENSAT_TEST_DATA_DIR) / "eg_nasrnn.json"};
  const auto gym = std::filesystem::path(TENSAT_GYM_DIR);
  for (const char* name : {"vgg", "resnet50", "bert"})
    if (const auto f = gym / (std::string(name) + ".json"); std::filesystem::exists(f))
      files.push_back(f);
  for (const auto& f : files) expect_same_as_reference(read_egraph_json(f.string()), f.string());
}

}  // namespace
}  // namespace tensat::extract
