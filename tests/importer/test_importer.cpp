// Importer unit tests: one inline ONNX model (onnx's text format) per case, checking the
// imported ir::Graph (terms, op counts, types), the ModelContext and the ImportErrors.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "lang/sexpr.h"
#include "importer/importer.h"
#include "tests/importer/import_text.h"
#include "refexec/executor.h"

namespace tensat {
namespace {

Shape out_shape(const ImportResult& r, size_t i = 0) { return r.graph.type(r.graph.outputs().at(i)).tensor.shape; }

// ---- Conv ----------------------------------------------------------------------------------

TEST(ImportConv, BiasSamePads) {
  auto r = imp(M("(float[1,4,9,9] x) => (float[1,6,9,9] y)", {T("w", {6, 4, 3, 3}), T("b", {6})},
                 "y = Conv <kernel_shape=[3,3], pads=[1,1,1,1]> (x, w, b)"));
  EXPECT_EQ(root_term(r), "(conv 1 1 same none (input x@1_4_9_9) (weight w@6_4_3_3) (weight b@6))");
  EXPECT_EQ(r.stats.opaque_nodes, 0);
}

TEST(ImportConv, GroupStridesNoBias) {
  auto r = imp(M("(float[1,4,9,9] x) => (y)", {T("w", {8, 2, 3, 3})},
                 "y = Conv <group=2, strides=[2,2], pads=[1,1,1,1]> (x, w)"));
  EXPECT_EQ(root_term(r), "(conv 2 2 same none (input x@1_4_9_9) (weight w@8_2_3_3) none)");
  EXPECT_EQ(out_shape(r), (Shape{1, 8, 5, 5}));
}

TEST(ImportConv, ValidAndAsymmetricPadsExplicit) {
  auto r = imp(M("(float[1,4,9,9] x) => (y, z)", {T("w", {3, 4, 3, 2})},
                 "y = Conv <pads=[0,1,2,1], strides=[2,1]> (x, w)\n z = Conv (x, w)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(conv 2 1 p0_1_2_1 none (input x@1_4_9_9) (weight w@3_4_3_2) none)");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(conv 1 1 valid none (input x@1_4_9_9) (weight w@3_4_3_2) none)");
  EXPECT_EQ(out_shape(r, 0), (Shape{1, 3, 5, 10}));
}

TEST(ImportConv, EvenKernelSymmetricPadsAreNotSame) {
  auto r = imp(M("(float[1,4,8,8] x) => (y)", {T("w", {3, 4, 2, 2})}, "y = Conv <pads=[1,1,1,1]> (x, w)"));
  EXPECT_EQ(root_term(r), "(conv 1 1 p1_1_1_1 none (input x@1_4_8_8) (weight w@3_4_2_2) none)");
}

TEST(ImportConv, AutoPadSameUpperAndLower) {
  auto r = imp(M("(float[1,4,9,9] x) => (y, z)", {T("w", {3, 4, 4, 4})},
                 "y = Conv <auto_pad=\"SAME_UPPER\", strides=[2,2]> (x, w)\n"
                 "z = Conv <auto_pad=\"SAME_LOWER\", strides=[2,2]> (x, w)"));
  auto outs = r.graph.outputs();
  // out 5, total pad (5-1)*2+4-9 = 3: upper puts the extra one at the end, lower at the start.
  EXPECT_NE(print_term(r.graph, outs[0]).find(" p1_1_2_2 "), std::string::npos) << print_term(r.graph, outs[0]);
  EXPECT_NE(print_term(r.graph, outs[1]).find(" p2_2_1_1 "), std::string::npos) << print_term(r.graph, outs[1]);
}

TEST(ImportConv, DilationIsOpaqueVerbatim) {
  auto r = imp(M("(float[1,4,9,9] x) => (y)", {T("w", {3, 4, 3, 3})},
                 "c = Conv <dilations=[2,2]> (x, w)\n y = Relu (c)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
  EXPECT_EQ(count(r, "conv"), 0);
  ASSERT_EQ(r.ctx.opaque.size(), 1u);
  EXPECT_EQ(r.ctx.opaque[0].node.op_type(), "Conv");
  EXPECT_EQ(r.ctx.opaque[0].node.attribute_size(), 1);
  EXPECT_EQ(r.ctx.opaque[0].child_inputs, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(root_term(r), "(relu (opaque 0|f32[1,3,5,5] (input x@1_4_9_9) (weight w@3_4_3_3)))");
  EXPECT_EQ(r.stats.opaque_reasons.count("Conv: dilation != 1"), 1u);
}

TEST(ImportConv, Conv1dIsOpaque) {
  auto r = imp(M("(float[1,4,9] x) => (y)", {T("w", {3, 4, 3})}, "y = Conv (x, w)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

// ---- BatchNormalization --------------------------------------------------------------------

std::vector<std::string> bn_params() {
  return {T("s", {6}, 0.5f, 1.5f), T("bb", {6}), T("mu", {6}), T("var", {6}, 0.5f, 2.0f)};
}

TEST(ImportBatchNorm, FoldedIntoPrecedingConv) {
  auto inits = bn_params();
  inits.push_back(T("w", {6, 4, 3, 3}));
  auto r = imp(M("(float[1,4,9,9] x) => (y)", inits,
                 "c = Conv <pads=[1,1,1,1]> (x, w)\n y = BatchNormalization <epsilon=0.001> (c, s, bb, mu, var)"));
  EXPECT_EQ(r.stats.folded_batchnorms, 1);
  EXPECT_EQ(count(r, "conv"), 1);
  EXPECT_EQ(count(r, "ewmul") + count(r, "ewadd"), 0);
  EXPECT_EQ(root_term(r), "(conv 1 1 same none (input x@1_4_9_9) (weight y.folded_weight@6_4_3_3) "
                         "(weight y.folded_bias@6))");
}

TEST(ImportBatchNorm, FoldedValuesMatchUnfolded) {
  // The same Conv+BN, once foldable, once not (the conv output is also a graph output):
  // the BatchNorm outputs must agree numerically.
  auto inits = bn_params();
  inits.push_back(T("w", {6, 4, 3, 3}));
  inits.push_back(T("b", {6}));
  std::string body = "c = Conv <pads=[1,1,1,1]> (x, w, b)\n y = BatchNormalization <epsilon=0.001> (c, s, bb, mu, var)";
  auto folded = imp(M("(float[1,4,9,9] x) => (y)", inits, body));
  auto unfolded = imp(M("(float[1,4,9,9] x) => (y, c)", inits, body));
  EXPECT_EQ(folded.stats.folded_batchnorms, 1);
  EXPECT_EQ(unfolded.stats.folded_batchnorms, 0);
  EXPECT_EQ(count(unfolded, "ewmul"), 1);
  EXPECT_EQ(count(unfolded, "ewadd"), 1);
  std::unordered_map<std::string, refexec::Tensor> in{{"x", refexec::random_tensor({1, 4, 9, 9}, 7)}};
  auto a = refexec::run(folded.graph, folded.weights, in);
  auto b = refexec::run(unfolded.graph, unfolded.weights, in);
  ASSERT_EQ(a.outputs[0].size(), b.outputs[0].size());
  for (size_t i = 0; i < a.outputs[0].size(); ++i)
    ASSERT_NEAR(a.outputs[0].data[i], b.outputs[0].data[i], 1e-4f * (1 + std::abs(b.outputs[0].data[i])));
}

TEST(ImportBatchNorm, NotFoldedWhenConvHasAnotherReader) {
  auto inits = bn_params();
  inits.push_back(T("w", {6, 4, 3, 3}));
  auto r = imp(M("(float[1,4,9,9] x) => (y, z)", inits,
                 "c = Conv <pads=[1,1,1,1]> (x, w)\n y = BatchNormalization (c, s, bb, mu, var)\n z = Relu (c)"));
  EXPECT_EQ(r.stats.folded_batchnorms, 0);
  EXPECT_EQ(count(r, "conv"), 1);
  EXPECT_EQ(print_term(r.graph, r.graph.outputs()[0]).substr(0, 14), "(ewadd (ewmul ");
}

TEST(ImportBatchNorm, OnAnInputBecomesScaleShift) {
  auto r = imp(M("(float[2,6,5,5] x) => (y)", bn_params(), "y = BatchNormalization (x, s, bb, mu, var)"));
  EXPECT_EQ(r.stats.folded_batchnorms, 0);
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  auto t = root_term(r);
  EXPECT_NE(t.find("@6_1_1)"), std::string::npos) << t;  // per-channel weights broadcast over H, W
}

TEST(ImportBatchNorm, NonConstantParametersAreOpaque) {
  auto r = imp(M("(float[2,6,5,5] x, float[6] s) => (y)", {T("bb", {6}), T("mu", {6}), T("var", {6}, 0.5f, 2.0f)},
                 "y = BatchNormalization (x, s, bb, mu, var)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

// ---- Gemm / MatMul -------------------------------------------------------------------------

TEST(ImportGemm, TransBWithBiasVector) {
  auto r = imp(M("(float[3,5] a) => (y)", {T("b", {4, 5}), T("c", {4})}, "y = Gemm <transB=1> (a, b, c)"));
  EXPECT_EQ(root_term(r), "(matmul none (input a@3_5) (transpose 1_0 (weight b@4_5)) (weight c@4))");
  EXPECT_EQ(out_shape(r), (Shape{3, 4}));
}

TEST(ImportGemm, TransAAndRowBias) {
  auto r = imp(M("(float[5,3] a) => (y)", {T("b", {5, 4}), T("c", {1, 4})}, "y = Gemm <transA=1> (a, b, c)"));
  auto t = root_term(r);
  EXPECT_EQ(t.rfind("(matmul none (transpose 1_0 (input a@5_3)) (weight b@5_4) (weight ", 0), 0u) << t;
  EXPECT_EQ(count(r, "ewadd"), 0);  // [1,N] bias becomes the matmul's [N] bias
}

TEST(ImportGemm, AlphaBetaScaleWeights) {
  auto r = imp(M("(float[3,5] a) => (y)", {T("b", {5, 4}), T("c", {4})},
                 "y = Gemm <alpha=0.5, beta=2.0> (a, b, c)"));
  EXPECT_EQ(count(r, "matmul"), 1);
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  // The scaled weights are new weights with the scaled values.
  const auto& nodes = r.graph.nodes();
  bool found_b = false, found_c = false;
  for (const auto& n : nodes) {
    if (n.op != Op::Weight) continue;
    auto leaf = parse_leaf_id(r.graph.node(n.children[0]).sym);
    if (leaf->name == "b" || leaf->name == "c") ADD_FAILURE() << "unscaled weight " << leaf->name << " used";
    const WeightData& w = r.weights.get(leaf->name);
    if (w.type.shape == Shape{5, 4}) {
      found_b = true;
      EXPECT_FLOAT_EQ(w.f32()[3], 0.5f * r.weights.get("b").f32()[3]);
    }
    if (w.type.shape == Shape{4}) {
      found_c = true;
      EXPECT_FLOAT_EQ(w.f32()[2], 2.0f * r.weights.get("c").f32()[2]);
    }
  }
  EXPECT_TRUE(found_b && found_c);
}

TEST(ImportGemm, FullAndColumnBiasAddedAfter) {
  auto r = imp(M("(float[3,5] a) => (y, z)", {T("b", {5, 4}), T("c", {3, 4}), T("d", {3, 1})},
                 "y = Gemm (a, b, c)\n z = Gemm (a, b, d)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(ewadd (matmul none (input a@3_5) (weight b@5_4) none) (weight c@3_4))");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(ewadd (matmul none (input a@3_5) (weight b@5_4) none) (weight d@3_1))");
}

TEST(ImportGemm, ScalarBias) {
  auto r = imp(M("(float[3,5] a) => (y)", {T("b", {5, 4}), T("c", {1})}, "y = Gemm (a, b, c)"));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  EXPECT_EQ(out_shape(r), (Shape{3, 4}));
}

TEST(ImportGemm, NonConstantBWithAlphaIsOpaque) {
  auto r = imp(M("(float[3,5] a, float[5,4] b) => (y)", {}, "y = Gemm <alpha=2.0> (a, b)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

TEST(ImportMatMul, TwoDAndBatchedBroadcast) {
  auto r = imp(M("(float[3,5] a, float[2,3,5] a3) => (y, z)", {T("b", {5, 4})},
                 "y = MatMul (a, b)\n z = MatMul (a3, b)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(matmul none (input a@3_5) (weight b@5_4) none)");
  EXPECT_EQ(r.graph.type(outs[1]).tensor.shape, (Shape{2, 3, 4}));
}

// ---- element-wise, activations --------------------------------------------------------------

TEST(ImportElementwise, AddMulBroadcasting) {
  auto r = imp(M("(float[2,3,4,5] x) => (y)", {T("c", {3, 1, 1}), T("r", {1, 5}), "float s = {1.5}"},
                 "t = Add (x, c)\n u = Mul (t, r)\n y = Mul (u, s)"));
  EXPECT_EQ(root_term(r),
            "(ewmul (ewmul (ewadd (input x@2_3_4_5) (weight c@3_1_1)) (weight r@1_5)) (weight s@))");
  EXPECT_EQ(out_shape(r), (Shape{2, 3, 4, 5}));
}

TEST(ImportElementwise, Activations) {
  auto r = imp(M("(float[2,3] x) => (y)", {}, "a = Relu (x)\n b = Tanh (a)\n y = Sigmoid (b)"));
  EXPECT_EQ(root_term(r), "(sigmoid (tanh (relu (input x@2_3))))");
}

TEST(ImportElementwise, IntegerAddIsOpaque) {
  auto r = imp(M("(int64[2,3] x) => (y)", {}, "y = Add (x, x)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

// ---- pooling -------------------------------------------------------------------------------

TEST(ImportPool, MaxPoolStridesPads) {
  auto r = imp(M("(float[1,3,10,11] x) => (y)", {},
                 "y = MaxPool <kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]> (x)"));
  EXPECT_EQ(root_term(r), "(poolmax 3 3 2 2 same (input x@1_3_10_11))");
  EXPECT_EQ(out_shape(r), (Shape{1, 3, 5, 6}));
}

TEST(ImportPool, AveragePoolCountIncludePad) {
  auto r = imp(M("(float[1,3,10,11] x) => (y, z)", {},
                 "y = AveragePool <kernel_shape=[3,3], pads=[1,0,1,2]> (x)\n"
                 "z = AveragePool <kernel_shape=[3,3], pads=[1,0,1,2], count_include_pad=1> (x)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(poolavg 3 3 1 1 p1_0_1_2 0 (input x@1_3_10_11))");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(poolavg 3 3 1 1 p1_0_1_2 1 (input x@1_3_10_11))");
}

TEST(ImportPool, CeilModeIsOpaque) {
  auto r = imp(M("(float[1,3,10,11] x) => (y)", {}, "y = MaxPool <kernel_shape=[3,3], strides=[2,2], ceil_mode=1> (x)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

TEST(ImportPool, GlobalAveragePool) {
  auto r = imp(M("(float[2,3,7,5] x) => (y)", {}, "y = GlobalAveragePool (x)"));
  EXPECT_EQ(root_term(r), "(poolavg 7 5 1 1 valid 0 (input x@2_3_7_5))");
  EXPECT_EQ(out_shape(r), (Shape{2, 3, 1, 1}));
}

// ---- Concat / Split ------------------------------------------------------------------------

TEST(ImportConcat, NaryBecomesLeftDeepTree) {
  auto r = imp(M("(float[2,6,4,4] x, float[2,3,4,4] x2) => (y)", {T("c", {2, 1, 4, 4})},
                 "y = Concat <axis=1> (x, c, x, x2)"));
  EXPECT_EQ(root_term(r),
            "(concat 1 (concat 1 (concat 1 (input x@2_6_4_4) (weight c@2_1_4_4)) (input x@2_6_4_4)) "
            "(input x2@2_3_4_4))");
  EXPECT_EQ(out_shape(r), (Shape{2, 16, 4, 4}));
}

TEST(ImportConcat, NegativeAxis) {
  auto r = imp(M("(float[2,6] x) => (y)", {}, "y = Concat <axis=-1> (x, x)"));
  EXPECT_EQ(root_term(r), "(concat 1 (input x@2_6) (input x@2_6))");
}

TEST(ImportSplit, EqualPartsThreeOutputs) {
  auto r = imp(M("(float[2,6,4,4] x) => (a, b, c)", {}, "a, b, c = Split <axis=1> (x)"));
  auto outs = r.graph.outputs();
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(print_term(r.graph, outs[0]), "(split_0 (split 1 2 (input x@2_6_4_4)))");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(split_0 (split 1 2 (split_1 (split 1 2 (input x@2_6_4_4)))))");
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out_shape(r, i), (Shape{2, 2, 4, 4}));
}

TEST(ImportSplit, SizesAsInput) {
  auto r = imp(M("(float[2,6,4,4] x) => (a, b, c, d)", {I("sz", {1, 2, 2, 1})}, "a, b, c, d = Split <axis=1> (x, sz)"));
  std::vector<int64_t> want{1, 2, 2, 1};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out_shape(r, i)[1], want[i]);
  EXPECT_EQ(count(r, "split"), 3);
}

TEST(ImportSplit, SizesAsAttributeOpset11) {
  auto r = imp(M("(float[2,6,4,4] x) => (a, b)", {}, "a, b = Split <axis=2, split=[1,3]> (x)", 11));
  EXPECT_EQ(out_shape(r, 0), (Shape{2, 6, 1, 4}));
  EXPECT_EQ(out_shape(r, 1), (Shape{2, 6, 3, 4}));
}

TEST(ImportSplit, OneOutputIsIdentity) {
  auto r = imp(M("(float[2,6] x) => (a)", {}, "a = Split <axis=1> (x)"));
  EXPECT_EQ(root_term(r), "(input x@2_6)");
}

// A detector's post-processing: the output shape depends on the values, which the message says.
TEST(ImportOpaque, DataDependentShapeIsRefusedWithTheReason) {
  std::string err = import_error(M("(float[2,6] x) => (y)", {}, "y = NonZero (x)"));
  EXPECT_NE(err.find("node 'y' (NonZero): the shape of its output 'y' depends on the input's values"),
            std::string::npos)
      << err;
}

// A converter's leftover that is no ONNX operator (tf2onnx's PartitionedCall) is named as such.
TEST(ImportOpaque, UnknownOperatorIsNamed) {
  std::string err = import_error(M("(float[2,6] x) => (y)", {}, "y = PartitionedCall (x)"));
  EXPECT_NE(err.find("'PartitionedCall' is not an ONNX operator that libonnx 1.12 knows"), std::string::npos) << err;
}

TEST(ImportSplit, NonConstantSizesWithUnknownShapesAreRefused) {
  // Opaque, but ONNX shape inference cannot know the output shapes: an honest ImportError.
  std::string err = import_error(M("(float[2,6] x, int64[2] s) => (a, b)", {}, "a, b = Split <axis=1> (x, s)"));
  EXPECT_NE(err.find("cannot determine the type and static shape of its output 'a'"), std::string::npos) << err;
}

// ---- Reshape / Flatten / Transpose ------------------------------------------------------------

TEST(ImportReshape, ZeroAndMinusOne) {
  auto r = imp(M("(float[2,6,4,4] x) => (y)", {I("s", {0, -1, 8})}, "y = Reshape (x, s)"));
  EXPECT_EQ(root_term(r), "(reshape 2_12_8 (input x@2_6_4_4))");
}

TEST(ImportReshape, StaticTargetAndNoOp) {
  auto r = imp(M("(float[2,6,4,4] x) => (y, z)", {I("s", {4, 3, 16}), I("same", {2, 6, 4, 4})},
                 "y = Reshape (x, s)\n z = Reshape (x, same)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(reshape 4_3_16 (input x@2_6_4_4))");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(input x@2_6_4_4)");
}

TEST(ImportReshape, TargetFromConstantNode) {
  auto r = imp(M("(float[2,6,4,4] x) => (y)", {},
                 "s = Constant <value = int64[2] {2, -1}> ()\n y = Reshape (x, s)"));
  EXPECT_EQ(root_term(r), "(reshape 2_96 (input x@2_6_4_4))");
}

TEST(ImportFlatten, Axes) {
  auto r = imp(M("(float[2,6,4,4] x) => (a, b, c)", {},
                 "a = Flatten (x)\n b = Flatten <axis=0> (x)\n c = Flatten <axis=-1> (x)"));
  EXPECT_EQ(out_shape(r, 0), (Shape{2, 96}));
  EXPECT_EQ(out_shape(r, 1), (Shape{1, 192}));
  EXPECT_EQ(out_shape(r, 2), (Shape{48, 4}));
  EXPECT_EQ(count(r, "reshape"), 3);
}

TEST(ImportTranspose, PermAndDefault) {
  auto r = imp(M("(float[2,6,4,5] x) => (a, b)", {}, "a = Transpose <perm=[0,2,3,1]> (x)\n b = Transpose (x)"));
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(transpose 0_2_3_1 (input x@2_6_4_5))");
  EXPECT_EQ(r.graph.type(outs[1]).tensor.shape, (Shape{5, 4, 6, 2}));
}

// ---- removed nodes, constants ---------------------------------------------------------------

TEST(ImportRemoved, IdentityAndInferenceDropout) {
  auto r = imp(M("(float[2,6] x) => (y)", {"float ratio = {0.5}"},
                 "i = Identity (x)\n d = Dropout (i, ratio)\n y = Relu (d)"));
  EXPECT_EQ(root_term(r), "(relu (input x@2_6))");
}

TEST(ImportRemoved, DropoutOpset10WithUnusedMask) {
  auto r = imp(M("(float[2,6] x) => (y)", {}, "d, m = Dropout <ratio=0.3> (x)\n y = Relu (d)", 10));
  EXPECT_EQ(root_term(r), "(relu (input x@2_6))");
}

TEST(ImportRemoved, TrainingDropoutIsOpaque) {
  auto r = imp(M("(float[2,6] x) => (y)", {"float ratio = {0.5}", "bool t = {1}"},
                 "d = Dropout (x, ratio, t)\n y = Relu (d)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

TEST(ImportConstant, BecomesAWeight) {
  auto r = imp(M("(float[2,3] x) => (y)", {}, "k = Constant <value = float[3] {1, 2, 3}> ()\n y = Add (x, k)"));
  auto t = root_term(r);
  EXPECT_EQ(t.rfind("(ewadd (input x@2_3) (weight k", 0), 0u) << t;
  EXPECT_EQ(count(r, "weight"), 1);
  EXPECT_EQ(r.stats.opaque_nodes, 0);
}

TEST(ImportConstant, ShapeOfStaticTensorIsAWeight) {
  auto r = imp(M("(float[2,6,4,4] x) => (y, s)", {},
                 "t = Shape (x)\n y = Reshape (x, t)\n s = Shape <start=1, end=-1> (x)", 15));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(input x@2_6_4_4)");
  auto leaf = parse_leaf_id(r.graph.node(r.graph.node(outs[1]).children[0]).sym);
  ASSERT_TRUE(leaf);
  const WeightData& w = r.weights.get(leaf->name);
  ASSERT_EQ(w.type, (TensorType{DType::I64, {2}}));
  const auto* v = reinterpret_cast<const int64_t*>(w.bytes.data());
  EXPECT_EQ(v[0], 6);
  EXPECT_EQ(v[1], 4);
}

// ---- opaque nodes, several outputs, interface ------------------------------------------------

TEST(ImportOpaque, VerbatimWithAttributes) {
  auto r = imp(M("(float[2,6] x) => (y)", {},
                 "r = Relu (x)\n l = Elu <alpha=0.2> (r)\n s = Softmax <axis=1> (l)\n y = Tanh (s)"));
  EXPECT_EQ(r.stats.opaque_nodes, 2);
  ASSERT_EQ(r.ctx.opaque.size(), 2u);
  EXPECT_EQ(r.ctx.opaque[0].node.op_type(), "Elu");
  EXPECT_FLOAT_EQ(r.ctx.opaque[0].node.attribute(0).f(), 0.2f);
  EXPECT_EQ(r.ctx.opaque[1].node.op_type(), "Softmax");
  EXPECT_EQ(root_term(r), "(tanh (opaque 1|f32[2,6] (opaque 0|f32[2,6] (relu (input x@2_6)))))");
}

TEST(ImportOpaque, MultiOutputWithSelect) {
  auto r = imp(M("(float[2,6] x) => (y, idx)", {I("k", {2})},
                 "v, idx = TopK <axis=-1> (x, k)\n y = Relu (v)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]),
            "(relu (select 0 (opaque 0|f32[2,2]|i64[2,2] (input x@2_6) (weight k@1:i64))))");
  EXPECT_EQ(r.graph.type(outs[1]).tensor.dtype, DType::I64);
}

TEST(ImportOpaque, CustomDomainKeptWithDomain) {
  // A custom-domain op has no schema here: its output type comes from the model's value_info.
  auto r = imp(M("(float[2,6] x) => (y)", {"float[2,6] g"}, "g = com.microsoft.Gelu (x)\n y = Relu (g)", 13,
                 ", \"com.microsoft\" : 1"));
  ASSERT_EQ(r.ctx.opaque.size(), 1u);
  EXPECT_EQ(r.ctx.opaque[0].node.domain(), "com.microsoft");
  EXPECT_EQ(r.ctx.opaque[0].node.op_type(), "Gelu");
}

TEST(ImportOutputs, SeveralOutputsJoinedWithNoop) {
  auto r = imp(M("(float[2,6] x) => (a, b, c)", {}, "a = Relu (x)\n b = Sigmoid (a)\n c = Identity (a)"));
  const auto& root = r.graph.node(r.graph.root());
  EXPECT_EQ(root.op, Op::Noop);
  ASSERT_EQ(root.children.size(), 3u);
  EXPECT_EQ(root.children[0], root.children[2]);  // c is a
  EXPECT_EQ(r.ctx.output_names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ImportInterface, InitializerThatIsAlsoAnInputStaysOverridable) {
  auto r = imp(M("(float[1,6,4,4] x, float[3,6,3,3] w) => (y)", {T("w", {3, 6, 3, 3})},
                 "y = Conv <pads=[1,1,1,1]> (x, w)", 13, "", 4));
  EXPECT_EQ(root_term(r), "(conv 1 1 same none (input x@1_6_4_4) (input w@3_6_3_3) none)");
  ASSERT_EQ(r.ctx.overridable_initializers.size(), 1u);
  EXPECT_EQ(r.ctx.overridable_initializers[0].name(), "w");
  EXPECT_EQ(r.ctx.input_names, (std::vector<std::string>{"x", "w"}));
  EXPECT_FALSE(r.weights.contains("w"));
}

// IR < 4 declares every initializer an input as well, and ONNX Runtime takes them as constants
// (it lists only x): weights, not inputs; the header keeps IR 3 for the exporter, without them.
TEST(ImportInterface, InitializerDeclaredAnInputUnderIr3IsAWeight) {
  auto r = imp(M("(float[1,6,4,4] x, float[3,6,3,3] w) => (y)", {T("w", {3, 6, 3, 3})},
                 "y = Conv <pads=[1,1,1,1]> (x, w)", 9, "", 3));
  EXPECT_EQ(root_term(r), "(conv 1 1 same none (input x@1_6_4_4) (weight w@3_6_3_3) none)");
  EXPECT_TRUE(r.ctx.overridable_initializers.empty());
  EXPECT_TRUE(r.ctx.initializers_as_inputs);
  EXPECT_EQ(r.ctx.input_names, (std::vector<std::string>{"x"}));
  EXPECT_TRUE(r.weights.contains("w"));
  EXPECT_EQ(r.ctx.header.ir_version(), 3);
  ASSERT_EQ(r.ctx.header.graph().input_size(), 1);
  EXPECT_EQ(r.ctx.header.graph().input(0).name(), "x");
  // --input-shape for it says what it is.
  ImportOptions o;
  o.input_shapes["w"] = {3, 6, 3, 3};
  const std::string err = import_error(M("(float[1,6,4,4] x, float[3,6,3,3] w) => (y)", {T("w", {3, 6, 3, 3})},
                                         "y = Conv <pads=[1,1,1,1]> (x, w)", 9, "", 3), o);
  EXPECT_NE(err.find("'w', an initializer"), std::string::npos) << err;
}

// Sum (the residual add of old exports) is a chain of adds; before opset 8 its inputs have one
// shape, so a Sum that broadcasts there is not what it says and stays opaque.
TEST(ImportElementwise, SumIsAChainOfAdds) {
  auto r = imp(M("(float[1,4] a, float[1,4] b, float[1,4] c) => (y)", {}, "y = Sum (a, b, c)"));
  EXPECT_EQ(root_term(r), "(ewadd (ewadd (input a@1_4) (input b@1_4)) (input c@1_4))");
  auto one = imp(M("(float[1,4] a) => (y)", {}, "y = Sum (a)"));
  EXPECT_EQ(one.stats.opaque_nodes, 0);
  auto old = imp(M("(float[1,4] a, float[4] b) => (y)", {}, "y = Sum (a, b)", 6));
  EXPECT_EQ(old.stats.opaque_nodes, 1);
}

// Before opset 7: broadcasting needs broadcast=1, and `axis` places b (lower.cpp,
// legacy_broadcast_operand); numpy's reading of b [4] on [1,4,2,4] would be along the last axis.
TEST(ImportElementwise, LegacyBroadcastFollowsItsAxis) {
  auto r = imp(M("(float[1,4,2,4] x, float[4] b) => (y)", {}, "y = Mul <broadcast = 1, axis = 1> (x, b)", 6));
  EXPECT_EQ(root_term(r), "(ewmul (input x@1_4_2_4) (reshape 1_4_1_1 (input b@4)))");
  auto trailing = imp(M("(float[1,4,2,4] x, float[4] b) => (y)", {}, "y = Mul <broadcast = 1> (x, b)", 6));
  EXPECT_EQ(root_term(trailing), "(ewmul (input x@1_4_2_4) (input b@4))");
  auto off = imp(M("(float[1,4,2,4] x, float[4] b) => (y)", {}, "y = Mul (x, b)", 6));
  EXPECT_EQ(off.stats.opaque_nodes, 1);  // no broadcast=1: an invalid model, left as it is
  // A 1 inside b facing a larger dimension is not legacy broadcasting (and could not be
  // written back): left as it is.
  auto inner = imp(M("(float[2,3,4] x, float[2,1,4] b) => (y)", {}, "y = Add <broadcast = 1> (x, b)", 6));
  EXPECT_EQ(inner.stats.opaque_nodes, 1);
}

// A MatMul's legacy bias with axis=0 is per row, not the Gemm bias numpy's reading would make it.
TEST(ImportElementwise, LegacyRowBiasOfAMatMulIsNotAGemmBias) {
  auto r = imp(M("(float[4,4] x, float[4,4] w, float[4] b) => (y)", {},
                 "m = MatMul (x, w)\n y = Add <broadcast = 1, axis = 0> (m, b)", 6));
  const auto x = refexec::random_tensor({4, 4}, 1), w = refexec::random_tensor({4, 4}, 2),
             b = refexec::random_tensor({4}, 3);
  const auto y = refexec::run(r.graph, r.weights, {{"x", x}, {"w", w}, {"b", b}}).outputs.at(0);
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 4; ++j) {
      float want = b.data[i];
      for (size_t k = 0; k < 4; ++k) want += x.data[i * 4 + k] * w.data[k * 4 + j];
      EXPECT_NEAR(y.data[i * 4 + j], want, 1e-5) << i << "," << j;
    }
}

// An initializer without elements (Resize's empty roi) is a Constant node, opaque and kept
// verbatim (it was an internal error: "weight: malformed identifier 'roi@0'").
TEST(ImportInterface, InitializerWithoutElementsIsAConstantNode) {
  auto r = imp(M("(float[1,2,4,4] x) => (y)", {"float[0] roi = {}", "float[4] sc = {1.0, 1.0, 2.0, 2.0}"},
                 "u = Resize <mode = \"nearest\"> (x, roi, sc)\n y = Relu (u)"));
  EXPECT_FALSE(r.weights.contains("roi"));
  int constants = 0;
  for (const auto& on : r.ctx.opaque) constants += on.node.op_type() == "Constant" && on.node.output(0) == "roi";
  EXPECT_EQ(constants, 1);
}

TEST(ImportInterface, SymbolicDimensionNeedsInputShape) {
  std::string text = M("(float[N,6,4,4] x) => (y)", {}, "y = Relu (x)");
  std::string err = import_error(text);
  EXPECT_NE(err.find("'x'"), std::string::npos) << err;
  EXPECT_NE(err.find("--input-shape"), std::string::npos) << err;
  EXPECT_NE(err.find("'N'"), std::string::npos) << err;
  ImportOptions o;
  o.input_shapes["x"] = {3, 6, 4, 4};
  auto r = imp(text, o);
  EXPECT_EQ(out_shape(r), (Shape{3, 6, 4, 4}));
}

TEST(ImportInterface, InputShapeWrongNameOrRank) {
  std::string text = M("(float[1,6,4,4] x) => (y)", {}, "y = Relu (x)");
  ImportOptions o;
  o.input_shapes["nope"] = {1, 6, 4, 4};
  EXPECT_NE(import_error(text, o).find("'nope'"), std::string::npos);
  ImportOptions o2;
  o2.input_shapes["x"] = {1, 6, 4};
  EXPECT_NE(import_error(text, o2).find("rank"), std::string::npos);
}

TEST(ImportInterface, InputShapeFlagParsing) {
  auto [name, shape] = parse_input_shape_flag("input.1:1x3x224x224");
  EXPECT_EQ(name, "input.1");
  EXPECT_EQ(shape, (Shape{1, 3, 224, 224}));
  EXPECT_THROW(parse_input_shape_flag("x"), ImportError);
  EXPECT_THROW(parse_input_shape_flag("x:1x0"), ImportError);
  EXPECT_THROW(parse_input_shape_flag("x:1xa"), ImportError);
}

// ---- bad input -----------------------------------------------------------------------------

TEST(ImportErrors, UndefinedTensorNamesNode) {
  std::string err = import_error(M("(float[2,6] x) => (y)", {}, "y = Add (x, ghost)"));
  EXPECT_NE(err.find("'ghost'"), std::string::npos) << err;
  EXPECT_NE(err.find("node"), std::string::npos) << err;
}

TEST(ImportErrors, CycleNamesNode) {
  std::string err = import_error(M("(float[2,6] x) => (y)", {}, "a = Add (x, b)\n b = Relu (a)\n y = Relu (b)"));
  EXPECT_NE(err.find("cycle"), std::string::npos) << err;
}

TEST(ImportErrors, UndeclaredDomain) {
  std::string err = import_error(M("(float[2,6] x) => (y)", {}, "y = my.domain.Foo (x)"));
  EXPECT_NE(err.find("my.domain"), std::string::npos) << err;
  EXPECT_NE(err.find("opset_import"), std::string::npos) << err;
}

TEST(ImportErrors, OutputNotProduced) {
  std::string err = import_error(M("(float[2,6] x) => (y, z)", {}, "y = Relu (x)"));
  EXPECT_NE(err.find("'z'"), std::string::npos) << err;
}

TEST(ImportErrors, MissingFileAndEmptyFile) {
  try {
    import_onnx_file("/nonexistent/model.onnx");
    FAIL();
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos);
  }
  std::string p = ::testing::TempDir() + "empty.onnx";
  { std::ofstream(p).flush(); }
  EXPECT_THROW(import_onnx_file(p), ImportError);
}

}  // namespace
}  // namespace tensat
