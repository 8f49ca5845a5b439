// Weight folding (pipeline/weight_folding.h): weight-only subgraphs become weight leaves with
// their computed values, so that the exporter only writes.
#include <gtest/gtest.h>
#include <map>
#include <onnx/defs/parser.h>

#include "exporter/exporter.h"
#include "importer/importer.h"
#include "tests/importer/import_text.h"
#include "lang/sexpr.h"
#include "pipeline/weight_folding.h"

namespace tensat {
namespace {

TEST(WeightFolding, TransposedGemmWeightIsWrittenAsGemmTransB) {
  // Gemm with transB=1 imports as matmul(a, transpose(w)). The transpose is not folded: the
  // exporter writes Gemm(a, w, transB = 1) over w itself, as the source had it (not a copy of
  // w^T: 411 MB on VGG-11-BN). From opset 11 on Gemm needs no C; before, a zero C.
  for (int opset : {13, 9}) {
    SCOPED_TRACE(opset);
    auto r = imp(R"(
<ir_version: 8, opset_import: ["" : )" + std::to_string(opset) + R"(]>
g (float[3,4] a) => (y) <float[2,4] w = {1,2,3,4,5,6,7,8}> {
  y = Gemm <transB = 1> (a, w)
})");
    const std::string before = r.weights.get("w").bytes;
    FoldStats st;
    ir::Graph g = fold_weights(r.graph, r.weights, &st);
    EXPECT_EQ(st.folded, 0);
    ExportStats es;
    auto m = export_model(g, r.weights, r.ctx, {}, &es);
    ASSERT_EQ(m.graph().node_size(), 1);
    const auto& n = m.graph().node(0);
    EXPECT_EQ(n.op_type(), "Gemm");
    ASSERT_EQ(n.input_size(), opset >= 11 ? 2 : 3);
    EXPECT_EQ(n.input(0), "a");
    EXPECT_EQ(n.input(1), "w");
    ASSERT_EQ(n.attribute_size(), 1);
    EXPECT_EQ(n.attribute(0).name(), "transB");
    EXPECT_EQ(n.attribute(0).i(), 1);
    ASSERT_EQ(m.graph().initializer_size(), opset >= 11 ? 1 : 2);
    const auto& t = m.graph().initializer(0);
    EXPECT_EQ(t.name(), "w");
    ASSERT_EQ(t.dims_size(), 2);
    EXPECT_EQ(t.dims(0), 2);
    EXPECT_EQ(t.dims(1), 4);
    EXPECT_EQ(t.raw_data(), before);
    if (opset < 11) {
      const auto& c = m.graph().initializer(1);
      EXPECT_EQ(c.name(), n.input(2));
      ASSERT_EQ(c.dims_size(), 1);
      EXPECT_EQ(c.dims(0), 2);
      EXPECT_EQ(c.raw_data(), std::string(8, '\0'));
    }
  }
}

TEST(WeightFolding, TransposedGemmWeightWithABiasKeepsIt) {
  // With C: Gemm(a, w, c, transB = 1), and before opset 7 broadcast = 1 for a C of [N].
  for (int opset : {13, 6}) {
    SCOPED_TRACE(opset);
    auto r = imp(R"(
<ir_version: 3, opset_import: ["" : )" + std::to_string(opset) + R"(]>
g (float[3,4] a) => (y) <float[2,4] w = {1,2,3,4,5,6,7,8}, float[2] c = {1,2}> {
  y = Gemm <transB = 1)" + (opset < 7 ? std::string(", broadcast = 1") : "") + R"(> (a, w, c)
})");
    FoldStats st;
    ir::Graph g = fold_weights(r.graph, r.weights, &st);
    EXPECT_EQ(st.folded, 0);
    auto m = export_model(g, r.weights, r.ctx);
    ASSERT_EQ(m.graph().node_size(), 1);
    const auto& n = m.graph().node(0);
    EXPECT_EQ(n.op_type(), "Gemm");
    ASSERT_EQ(n.input_size(), 3);
    EXPECT_EQ(n.input(1), "w");
    EXPECT_EQ(n.input(2), "c");
    std::map<std::string, int64_t> attrs;
    for (const auto& a : n.attribute()) attrs[a.name()] = a.i();
    EXPECT_EQ(attrs["transB"], 1);
    EXPECT_EQ(attrs.count("broadcast"), opset < 7 ? 1u : 0u);
    if (opset < 7) {
      EXPECT_EQ(attrs["broadcast"], 1);
    }
  }
}

TEST(WeightFolding, TransposedWeightIsFoldedWhereGemmCannotReadIt) {
  // Folded where another node reads the transpose too (computed once), or where A is not a
  // matrix (Gemm takes matrices); left where a matmul over a matrix is its only reader.
  struct Case {
    const char* term;
    int folded;
  };
  for (const Case& c : {
           Case{"(noop (matmul none (input x@3_4) (transpose 1_0 (weight w@2_4)) none) "
                "(ewadd (input y@4_2) (transpose 1_0 (weight w@2_4))))",
                1},
           Case{"(matmul none (input x@2_3_4) (transpose 1_0 (weight w@2_4)) none)", 1},
           Case{"(matmul none (transpose 1_0 (weight w@2_4)) (input x@2_3) none)", 1},
           Case{"(noop (matmul none (input x@3_4) (transpose 1_0 (weight w@2_4)) none) "
                "(relu (transpose 1_0 (weight w@2_4))))",
                2},  // a reader with one child (itself weight-only: folded too)
           Case{"(noop (transpose 1_0 (weight w@2_4)))", 1},  // an output
           Case{"(noop (matmul none (input x@3_4) (transpose 1_0 (weight w@2_4)) none) "
                "(matmul relu (input z@5_4) (transpose 1_0 (weight w@2_4)) (weight b@2)))",
                0},
       }) {
    SCOPED_TRACE(c.term);
    ir::Graph g;
    WeightStore w;
    w.put_f32("w", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    w.put_f32("b", {2}, {1, 2});
    g.set_root(parse_term(g, c.term));
    FoldStats st;
    ir::Graph f = fold_weights(g, w, &st);
    EXPECT_EQ(st.folded, c.folded);
    bool transposes = false;
    for (ir::NodeId i = 0; i < f.size(); ++i) transposes = transposes || f.node(i).op == Op::Transpose;
    EXPECT_EQ(transposes, c.folded == 0);
  }
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
