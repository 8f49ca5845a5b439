// Weight folding (pipeline/weight_folding.h): weight-only subgraphs become weight leaves with
// their computed values, so that the exporter only writes.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include "exporter/exporter.h"
#include "importer/importer.h"
#include "tests/importer/import_text.h"
#include "lang/sexpr.h"
#include "pipeline/weight_folding.h"

namespace tensat {
namespace {

TEST(WeightFolding, TransposedGemmWeightBecomesOneInitializer) {
  // Gemm with transB=1 imports as matmul(a, transpose(w)); folding computes w^T once.
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3,4] a) => (y) <float[2,4] w = {1,2,3,4,5,6,7,8}> {
  y = Gemm <transB = 1> (a, w)
})");
  FoldStats st;
  ir::Graph g = fold_weights(r.graph, r.weights, &st);
  EXPECT_EQ(st.folded, 1);
  for (ir::NodeId i = 0; i < g.size(); ++i) EXPECT_NE(g.node(i).op, Op::Transpose);
  ExportStats es;
  auto m = export_model(g, r.weights, r.ctx, {}, &es);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "MatMul");
  ASSERT_EQ(m.graph().initializer_size(), 1);
  const auto& t = m.graph().initializer(0);
  ASSERT_EQ(t.dims_size(), 2);
  EXPECT_EQ(t.dims(0), 4);
  EXPECT_EQ(t.dims(1), 2);
  const float* v = reinterpret_cast<const float*>(t.raw_data().data());
  EXPECT_FLOAT_EQ(v[1], 5.0f);  // w^T[0][1] = w[1][0]
  EXPECT_FLOAT_EQ(v[6], 4.0f);  // w^T[3][0] = w[0][3]
}

TEST(WeightFolding, ConcatOfWeightsAndZerosBiasAreComputed) {
  // What merge rules produce: a product over concatenated weights, a zeros bias.
  ir::Graph g;
  WeightStore w;
  w.put_f32("w1", {2, 2}, {1, 2, 3, 4});
  w.put_f32("w2", {2, 1}, {5, 6});
  g.set_root(parse_term(g, "(matmul none (input x@3_2) (concat 1 (weight w1@2_2) (weight w2@2_1)) (zeros 3))"));
  FoldStats st;
  ir::Graph f = fold_weights(g, w, &st);
  EXPECT_EQ(st.folded, 2);  // the concat and the zeros
  int weights = 0;
  for (ir::NodeId i = 0; i < f.size(); ++i) {
    EXPECT_NE(f.node(i).op, Op::Concat);
    EXPECT_NE(f.node(i).op, Op::Zeros);
    if (f.node(i).op == Op::Weight) ++weights;
  }
  EXPECT_EQ(weights, 2);  // w1 and w2 are no longer read
  const WeightData& c = w.get("tensat_folded");
  ASSERT_EQ(c.type.shape, (Shape{2, 3}));
  const std::vector<float> want = {1, 2, 5, 3, 4, 6};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(c.f32()[i], want[i]);
  const WeightData& z = w.get("tensat_folded_1");
  ASSERT_EQ(z.type.shape, (Shape{3}));
  for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(z.f32()[i], 0.0f);
}

TEST(WeightFolding, NothingToFoldLeavesTheGraphAsItWas) {
  ir::Graph g;
  WeightStore w;
  w.put_f32("w", {4, 4}, std::vector<float>(16, 1.0f));
  g.set_root(parse_term(g, "(relu (matmul none (input x@2_4) (weight w@4_4) none))"));
  FoldStats st;
  ir::Graph f = fold_weights(g, w, &st);
  EXPECT_EQ(st.folded, 0);
  EXPECT_EQ(print_graph(f), print_graph(g.compact()));
  EXPECT_EQ(w.size(), 1u);
}

}  // namespace
}  // namespace tensat
