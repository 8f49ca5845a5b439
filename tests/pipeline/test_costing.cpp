// Costing (pipeline/costing.h): only real work is charged (weight-only nodes and constant
// computations, including opaque nodes ONNX Runtime folds, are free in a graph and in an
// e-graph alike), fallback prices are kept apart, and the analysis of what rests on them.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "egraph/bridge.h"
#include "gpu_cost/cost_cache.h"
#include "gpu_cost/roofline.h"
#include "gpu_cost/table_model.h"
#include "importer/importer.h"
#include "tests/importer/import_text.h"
#include "pipeline/costing.h"

namespace tensat {
namespace {

// e = op(operand), an ONNX node the language does not model (opaque), then y = product.
std::string model_with(const std::string& opaque_op, const std::string& operand,
                       const std::string& product = "MatMul(x, e)") {
  return R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,8] x) => (y) <float[8,8] w = {)" +
         [] {
           std::string v;
           for (int i = 0; i < 64; ++i) v += (i ? "," : "") + std::to_string(i % 7);
           return v;
         }() +
         R"(}> {
  e = )" + opaque_op + "(" + operand + R"()
  y = )" + product + R"(
})";
}

cost::RooflineModel t4() { return cost::RooflineModel(*cost::find_profile("t4")); }

double matmul_cost() {
  auto m = t4();
  ValueType a = ValueType::of_tensor({DType::F32, {4, 8}}), b = ValueType::of_tensor({DType::F32, {8, 8}});
  ValueType none = ValueType::of_sym("none");
  return m.op_cost(Op::Matmul, {&none, &a, &b, &none});
}

TEST(Costing, AnOpaqueNodeOverWeightsIsConstantAndFree) {
  auto r = imp(model_with("Exp", "w"));
  ASSERT_EQ(r.stats.opaque_nodes, 1);
  auto model = t4();
  const Costing costing(model, opaque_folding(r.ctx));
  ASSERT_EQ(opaque_folding(r.ctx), std::vector<OpaqueFolding>{OpaqueFolding::WhenInputsConstant});
  EXPECT_DOUBLE_EQ(costing.price(r.graph).total, matmul_cost());
  // Without knowing what ONNX Runtime folds, the opaque node is charged its estimate.
  EXPECT_GT(graph_cost(r.graph, model), matmul_cost());
  // The same in an e-graph: the opaque e-node costs nothing, the product its kernel.
  EGraph eg;
  add_graph(eg, r.graph);
  ENodePrices p = costing.price(eg);
  double total = 0;
  for (EClassId c : eg.class_ids()) {
    for (ENodeId n : eg.eclass(c).nodes) {
      if (eg.node(n).op == Op::Opaque) {
        EXPECT_EQ(p.cost[n.v], 0.0);
      }
      total += p.cost[n.v];
    }
  }
  EXPECT_DOUBLE_EQ(total, matmul_cost());
}

TEST(Costing, AnOpaqueNodeOverTheInputIsCharged) {
  auto r = imp(model_with("Exp", "x", "MatMul(e, w)"));
  auto model = t4();
  const Costing costing(model, opaque_folding(r.ctx));
  EXPECT_GT(costing.price(r.graph).total, matmul_cost());
  EXPECT_DOUBLE_EQ(costing.price(r.graph).total, graph_cost(r.graph, model));
}

TEST(Costing, RandomNodesAreNeverFoldedSizeAlways) {
  auto rnd = imp(model_with("RandomNormalLike", "w"));
  ASSERT_EQ(opaque_folding(rnd.ctx), std::vector<OpaqueFolding>{OpaqueFolding::Never});
  auto model = t4();
  EXPECT_GT(Costing(model, opaque_folding(rnd.ctx)).price(rnd.graph).total, matmul_cost());
  // Shape and Size are folded before lowering whenever their input's shape is static (the
  // importer's constant evaluation), so classify such nodes directly: always constant work.
  ModelContext ctx;
  for (const char* t : {"Size", "Shape", "Add"}) {
    OpaqueNode o;
    o.node.set_op_type(t);
    ctx.opaque.push_back(o);
  }
  EXPECT_EQ(opaque_folding(ctx), (std::vector<OpaqueFolding>{OpaqueFolding::Always, OpaqueFolding::Always,
                                                             OpaqueFolding::WhenInputsConstant}));
  // ... and the importer indeed leaves no Size node behind for a static input.
  auto shape = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,8] x) => (int64 s) {
  s = Size(x)
})");
  EXPECT_TRUE(shape.ctx.opaque.empty());
}

TEST(Costing, FallbackPricesAreKeptApart) {
  // A table with the matmul only: the relu after it misses.
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,8] x, float[8,8] w) => (y) {
  m = MatMul(x, w)
  y = Sigmoid(m)
})");
  const std::string dir = std::filesystem::temp_directory_path() / ("tensat_costing_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/t.json";
  {
    cost::CostCache c(path);
    c.put("Tesla T4", "matmul(none,f32[4,8],f32[8,8],none)", 0.25);
    ASSERT_TRUE(c.save());
  }
  cost::TableModel table(path, "", *cost::find_profile("t4"));
  GraphPrice p = Costing(table).price(r.graph);
  ASSERT_EQ(table.fallback_prices().size(), 1u);
  EXPECT_EQ(table.fallback_prices()[0].signature, "sigmoid(f32[4,8])");
  EXPECT_DOUBLE_EQ(p.total, 0.25 + table.fallback_prices()[0].ms);
  EXPECT_DOUBLE_EQ(p.fallback, table.fallback_prices()[0].ms);
  std::filesystem::remove_all(dir);
}

TEST(Costing, ComparisonRobustness) {
  // Before 1.0 measured; after 0.6 measured + 0.3 estimated: at 2x the estimate, 1.2 > 1.0.
  EXPECT_FALSE(comparison_robust({1.0, 0.0}, {0.9, 0.3}));
  EXPECT_TRUE(comparison_robust({1.0, 0.0}, {0.9, 0.05}));
  // Estimates on both sides, equal: scaling them never reverses the order.
  EXPECT_TRUE(comparison_robust({1.5, 0.5}, {1.4, 0.5}));
  // Nothing estimated: the plain comparison.
  EXPECT_TRUE(comparison_robust({1.0, 0.0}, {0.9, 0.0}));
  EXPECT_FALSE(comparison_robust({1.0, 0.0}, {1.1, 0.0}));
}

// c0 (root): A -> c1 or B -> c1; c1: a leaf. The extraction chose A.
extract::ExtractGraph two_way(double a, double b) {
  extract::ExtractGraph g;
  auto c0 = g.add_class("c0"), c1 = g.add_class("c1");
  g.add_node(c0, "A", {c1}, a);
  g.add_node(c0, "B", {c1}, b);
  g.add_node(c1, "L", {}, 0.0);
  g.roots.push_back(c0);
  return g;
}

FallbackDecisions decide(double a, double a_fb, double b, double b_fb) {
  auto g = two_way(a, b);
  return analyze_fallback_decisions(g, {a_fb, b_fb, 0.0}, {0, 2},
                                    [&](extract::NodeIdx n) { return g.nodes[n].op; });
}

TEST(FallbackDecisions, AnEstimateOnOneSideThatCouldReverseTheChoice) {
  FallbackDecisions d = decide(1.0, 1.0, 1.2, 0.0);  // A is an estimate: at 2x it costs 2.0 > 1.2
  EXPECT_EQ(d.decisions, 1u);
  EXPECT_EQ(d.both_sides, 0u);
  EXPECT_EQ(d.sensitive, 1u);
  ASSERT_EQ(d.examples.size(), 1u);
  EXPECT_EQ(d.examples[0].eclass, "c0");
  EXPECT_EQ(d.examples[0].chosen, "A");
  EXPECT_EQ(d.examples[0].alternative, "B");
  EXPECT_DOUBLE_EQ(d.examples[0].chosen_fallback_ms, 1.0);
}

TEST(FallbackDecisions, EstimatesOnBothSides) {
  FallbackDecisions d = decide(1.0, 1.0, 1.2, 1.2);  // scaling both alike never reverses
  EXPECT_EQ(d.decisions, 1u);
  EXPECT_EQ(d.both_sides, 1u);
  EXPECT_EQ(d.sensitive, 0u);
  EXPECT_TRUE(d.examples[0].both_sides);
}

TEST(FallbackDecisions, AClearWinOrNoEstimateIsNotReported) {
  EXPECT_EQ(decide(1.0, 0.0, 1.2, 0.0).decisions, 0u);  // measured on both sides
  FallbackDecisions far = decide(0.1, 0.1, 5.0, 0.0);    // an estimate, but 2x off changes nothing
  EXPECT_EQ(far.decisions, 1u);
  EXPECT_EQ(far.sensitive, 0u);
}

TEST(FallbackDecisions, AlternativesPayForClassesTheSolutionDoesNotCompute) {
  // c0: A -> c1 (chosen) or B -> c2; c2 is not computed by the solution, its only node is
  // an estimate of 0.5: B's marginal cost is 0.3 + 0.5, of which 0.5 is an estimate.
  extract::ExtractGraph g;
  auto c0 = g.add_class("c0"), c1 = g.add_class("c1"), c2 = g.add_class("c2");
  g.add_node(c0, "A", {c1}, 0.7);
  g.add_node(c0, "B", {c2}, 0.3);
  g.add_node(c1, "L", {}, 0.0);
  g.add_node(c2, "E", {}, 0.5);
  g.roots.push_back(c0);
  FallbackDecisions d = analyze_fallback_decisions(g, {0.0, 0.0, 0.0, 0.5}, {0, 2, -1},
                                                   [&](extract::NodeIdx n) { return g.nodes[n].op; });
  EXPECT_EQ(d.decisions, 1u);
  EXPECT_EQ(d.sensitive, 1u);  // at 0.5x the estimate B costs 0.55 < 0.7
  ASSERT_EQ(d.examples.size(), 1u);
  EXPECT_DOUBLE_EQ(d.examples[0].alternative_ms, 0.8);
  EXPECT_DOUBLE_EQ(d.examples[0].alternative_fallback_ms, 0.5);
}

}  // namespace
}  // namespace tensat
