// The importer's passes before lowering (constant folding with shape inference, CSE, DCE) and
// the lowerings PyTorch exports need (Slice, MatMul + Add bias, Clip, LeakyRelu), on inline
// ONNX models written as torch.onnx.export writes them.
#include <gtest/gtest.h>

#include "importer/importer.h"
#include "lang/sexpr.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

// x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
const char* kViewChain =
    "s = Shape (x)\n"
    "i0 = Constant <value = int64 {0}> ()\n"
    "d = Gather <axis = 0> (s, i0)\n"
    "ax = Constant <value = int64[1] {0}> ()\n"
    "u = Unsqueeze (d, ax)\n"
    "m1 = Constant <value = int64[1] {-1}> ()\n"
    "shape = Concat <axis = 0> (u, m1)\n"
    "f = Reshape (x, shape)\n"
    "y = Relu (f)";

TEST(ImportSimplify, ShapeChainFoldsIntoAStaticReshape) {
  auto r = imp(M("(float[2,3,4] x) => (y)", {}, kViewChain));
  EXPECT_EQ(root_term(r), "(relu (reshape 2_12 (input x@2_3_4)))");
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  EXPECT_GE(r.stats.folded_nodes, 5);  // Constants, Shape, Gather, Unsqueeze, Concat
  EXPECT_EQ(r.stats.onnx_nodes, 9);    // counted on the source model
  EXPECT_EQ(r.stats.onnx_op_counts.at("Gather"), 1);
}

// Each block's Reshape target comes from the shape of the block before it, through a Cast
// libonnx's data propagation does not follow: each block takes one more round of folding and
// shape inference (PyTorch's Swin-T needs 17). Folding goes on until nothing more folds.
TEST(ImportSimplify, ShapeChainsThroughManyBlocksAllFold) {
  std::string body;
  std::string y = "x";
  constexpr int kBlocks = 20;
  for (int i = 0; i < kBlocks; ++i) {
    const std::string k = std::to_string(i);
    body += "s" + k + " = Shape (" + y + ")\n";
    body += "i" + k + " = Constant <value = int64 {1}> ()\n";
    body += "g" + k + " = Gather <axis = 0> (s" + k + ", i" + k + ")\n";
    body += "c" + k + " = Cast <to = 7> (g" + k + ")\n";
    body += "ax" + k + " = Constant <value = int64[1] {0}> ()\n";
    body += "u" + k + " = Unsqueeze (c" + k + ", ax" + k + ")\n";
    body += "m" + k + " = Constant <value = int64[1] {-1}> ()\n";
    body += "t" + k + " = Concat <axis = 0> (m" + k + ", u" + k + ")\n";
    body += "r" + k + " = Reshape (" + y + ", t" + k + ")\n";
    y = i + 1 == kBlocks ? "y" : "y" + k;
    body += y + " = Relu (r" + k + ")\n";
  }
  auto r = imp(M("(float[2,12] x) => (y)", {}, body));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  std::string want = "(input x@2_12)";
  for (int i = 0; i < kBlocks; ++i) want = "(relu " + want + ")";
  EXPECT_EQ(root_term(r), want);
}

// RAFT's coordinate grid: Expand's shape comes from ConstantOfShape, which libonnx 1.12 does
// not propagate, so the first round types Expand and Tile as [unk, 2, 2, 2]. After Expand is
// folded, the next round must type Tile [1, 2, 2, 2]: the stale partial type is dropped first.
TEST(ImportSimplify, PartialTypesOfAnEarlierRoundAreRefined) {
  auto r = imp(M("(float[1,2,2,2] x) => (y)",
                 {I("four", {4}), I("reps", {1, 1, 1, 1})},
                 "d = Constant <value = float[1,2,2,2] {1, 2, 3, 4, 5, 6, 7, 8}> ()\n"
                 "s = ConstantOfShape <value = int64[1] {1}> (four)\n"
                 "e = Expand (d, s)\n"
                 "t = Tile (e, reps)\n"
                 "y = Add (x, t)"));
  EXPECT_EQ(r.graph.type(r.graph.outputs()[0]).tensor.shape, (Shape{1, 2, 2, 2}));
  EXPECT_EQ(r.stats.opaque_nodes, 1);  // the Tile
}

TEST(ImportSimplify, SliceBoundsFromShapesBecomeSplits) {
  // x[:, : x.size(1) // 2] and x[:, x.size(1) // 2 :], PyTorch's chunk(2, 1)
  auto r = imp(M("(float[1,6,2,2] x) => (a, b)", {},
                 "s = Shape (x)\n i1 = Constant <value = int64 {1}> ()\n c = Gather <axis = 0> (s, i1)\n"
                 "two = Constant <value = int64 {2}> ()\n h = Div (c, two)\n"
                 "ax = Constant <value = int64[1] {0}> ()\n hu = Unsqueeze (h, ax)\n cu = Unsqueeze (c, ax)\n"
                 "z = Constant <value = int64[1] {0}> ()\n one = Constant <value = int64[1] {1}> ()\n"
                 "a = Slice (x, z, hu, one)\n b = Slice (x, hu, cu, one)"));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  auto outs = r.graph.outputs();
  EXPECT_EQ(print_term(r.graph, outs[0]), "(split_0 (split 1 3 (input x@1_6_2_2)))");
  EXPECT_EQ(print_term(r.graph, outs[1]), "(split_1 (split 1 3 (input x@1_6_2_2)))");
}

TEST(ImportSimplify, SliceOfTheMiddleAndStepsAndNonConstant) {
  auto r = imp(M("(float[2,10] x) => (y)", {I("st", {2}), I("en", {-3}), I("ax", {1})}, "y = Slice (x, st, en, ax)"));
  EXPECT_EQ(root_term(r), "(split_0 (split 1 5 (split_1 (split 1 2 (input x@2_10)))))");
  auto s = imp(M("(float[2,10] x) => (y)", {I("st", {0}), I("en", {10}), I("ax", {1}), I("sp", {2})},
                 "y = Slice (x, st, en, ax, sp)"));
  EXPECT_EQ(s.stats.opaque_nodes, 1);  // step 2: kept verbatim, typed by shape inference
  // A bound from a graph input: no static shape, refused with the node's name.
  try {
    imp(M("(float[2,10] x, int64[1] e) => (y)", {I("st", {0})}, "y = Slice (x, st, e)"));
    FAIL() << "expected ImportError";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'y' (Slice)"), std::string::npos) << e.what();
  }
}

TEST(ImportSimplify, SplitWithComputedSizes) {
  auto r = imp(M("(float[1,8,2,2] x) => (a, b)", {I("three", {3})},
                 "s = Shape (x)\n i1 = Constant <value = int64[1] {1}> ()\n c = Gather <axis = 0> (s, i1)\n"
                 "rest = Sub (c, three)\n sizes = Concat <axis = 0> (three, rest)\n"
                 "a, b = Split <axis = 1> (x, sizes)"));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  EXPECT_EQ(print_term(r.graph, r.graph.outputs()[1]), "(split_1 (split 1 3 (input x@1_8_2_2)))");
}

TEST(ImportSimplify, WhereEqualExpandChain) {
  // PyTorch's x.expand(b, -1, -1): Where(Equal(shape, -1), ones, shape) -> Expand
  auto r = imp(M("(float[1,4,1] x) => (y)", {I("shape", {3, -1, 5}), I("m1", {-1}), I("ones", {1, 1, 1})},
                 "e = Equal (shape, m1)\n w = Where (e, ones, shape)\n y = Expand (x, w)"));
  ASSERT_EQ(r.stats.opaque_nodes, 1);  // Expand itself stays (not in the language)
  EXPECT_EQ(r.ctx.opaque[0].node.op_type(), "Expand");
  EXPECT_EQ(r.graph.type(r.graph.outputs()[0]).tensor.shape, (Shape{3, 4, 5}));
  EXPECT_GE(r.stats.folded_nodes, 2);
}

TEST(ImportSimplify, ShapeOfAReshapeWithAComputedTargetFolds) {
  // a's shape is known only once its target (a Where, which ONNX's data propagation does not
  // cover) is folded and shape inference runs again; then Shape(a) folds too.
  auto r = imp(M("(float[2,3,4] x) => (y)", {I("t", {6, -1}), I("m1", {-1}), I("four", {4, 4})},
                 "e = Equal (t, m1)\n w = Where (e, four, t)\n a = Reshape (x, w)\n s = Shape (a)\n"
                 "y = Reshape (x, s)"));
  EXPECT_EQ(root_term(r), "(reshape 6_4 (input x@2_3_4))");
  EXPECT_EQ(r.stats.opaque_nodes, 0);
}

TEST(ImportSimplify, OverridableInitializerIsNotAConstant) {
  // IR >= 4: an initializer that is also a graph input may be overridden at run time.
  auto r = imp(M("(float[2,3,4] x, int64[2] t) => (y)", {I("t", {6, 4})}, "y = Reshape (x, t)", 13, "", 4));
  EXPECT_EQ(r.stats.folded_nodes, 0);
  EXPECT_EQ(r.stats.opaque_nodes, 1);
}

TEST(ImportSimplify, Ir3InitializerDeclaredAnInputIsAConstant) {
  // IR 3 declares every initializer an input; they are constants (as ONNX Runtime takes them),
  // so the Reshape's target is known.
  auto r = imp(M("(float[2,3,4] x, int64[2] t) => (y)", {I("t", {6, 4})}, "y = Reshape (x, t)", 9, "", 3));
  EXPECT_EQ(root_term(r), "(reshape 6_4 (input x@2_3_4))");
  EXPECT_EQ(r.stats.opaque_nodes, 0);
}

// A causal mask as ONNX's expanded Attention builds it: Trilu of ones, CastLike the scores (only
// their type is needed), folded into a constant.
TEST(ImportSimplify, CausalMaskFoldsThroughTriluAndCastLike) {
  auto r = imp(M("(float[3,3] x) => (y)", {I("s", {3, 3})},
                 "o = ConstantOfShape <value = int64[1] {1}> (s)\n t = Trilu <upper = 0> (o)\n"
                 "m = CastLike (t, x)\n y = Mul (x, m)", 18));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  EXPECT_EQ(count(r, "ewmul"), 1);
}

TEST(ImportSimplify, CommonSubexpressionsMerge) {
  // Two Softmax nodes (opaque) on the same input, two equal Constants, two equal shape chains.
  auto r = imp(M("(float[2,6] x) => (y)", {},
                 "a = Softmax <axis = 1> (x)\n b = Softmax <axis = 1> (x)\n"
                 "c1 = Constant <value = float {2}> ()\n c2 = Constant <value = float {2}> ()\n"
                 "p = Mul (a, c1)\n q = Mul (b, c2)\n y = Add (p, q)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
  EXPECT_GE(r.stats.cse_merged, 2);
  EXPECT_EQ(count(r, "ewmul"), 1);  // the two products are now the same node
  // Different attributes: not merged.
  auto s = imp(M("(float[2,6] x) => (y)", {},
                 "a = Softmax <axis = 1> (x)\n b = Softmax <axis = 0> (x)\n y = Add (a, b)"));
  EXPECT_EQ(s.stats.opaque_nodes, 2);
}

TEST(ImportSimplify, RandomNodesAreNeverMerged) {
  auto r = imp(M("(float[2,6] x) => (y)", {},
                 "a = RandomUniformLike <seed = 1.0> (x)\n b = RandomUniformLike <seed = 1.0> (x)\n y = Sub (a, b)"));
  EXPECT_EQ(r.stats.opaque_nodes, 3);
  EXPECT_EQ(r.stats.cse_merged, 0);
}

TEST(ImportSimplify, MergedNodeThatIsAGraphOutputKeepsItsName) {
  auto r = imp(M("(float[2,6] x) => (a, b)", {}, "a = Softmax <axis = 1> (x)\n b = Softmax <axis = 1> (x)"));
  EXPECT_EQ(r.stats.opaque_nodes, 1);
  auto outs = r.graph.outputs();
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(r.ctx.output_names, (std::vector<std::string>{"a", "b"}));
}

TEST(ImportSimplify, DeadNodesAndInitializersAreDropped) {
  auto r = imp(M("(float[2,6] x) => (y)", {T("unused", {6}), T("w", {6})},
                 "dead = Softmax <axis = 1> (x)\n dead2 = Exp (dead)\n y = Mul (x, w)"));
  EXPECT_EQ(r.stats.opaque_nodes, 0);
  EXPECT_EQ(r.stats.dead_nodes, 2);
  EXPECT_FALSE(r.weights.contains("unused"));
  EXPECT_TRUE(r.weights.contains("w"));
}

TEST(ImportSimplify, UndefinedInputIsStillAnErrorInADeadNode) {
  try {
    imp(M("(float[2,6] x) => (y)", {}, "dead = Exp (nowhere)\n y = Relu (x)"));
    FAIL() << "expected ImportError";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("undefined tensor 'nowhere'"), std::string::npos) << e.what();
  }
}

// ---- lowerings for PyTorch exports -----------------------------------------------------------

TEST(ImportLinear, MatMulPlusBiasIsOneMatmul) {
  // nn.Linear on a 3-D input: MatMul(x, W^T) then Add(bias, y), bias first as PyTorch writes it
  auto r = imp(M("(float[2,5,8] x) => (y)", {T("w", {8, 4}), T("b", {4})}, "m = MatMul (x, w)\n y = Add (b, m)"));
  EXPECT_EQ(root_term(r), "(matmul none (input x@2_5_8) (weight w@8_4) (weight b@4))");
  // A [1,1,N] bias is reshaped into a new [N] weight.
  auto s = imp(M("(float[2,5,8] x) => (y)", {T("w", {8, 4}), T("b", {1, 1, 4})}, "m = MatMul (x, w)\n y = Add (m, b)"));
  EXPECT_EQ(count(s, "ewadd"), 0);
  EXPECT_EQ(s.graph.type(s.graph.outputs()[0]).tensor.shape, (Shape{2, 5, 4}));
}

TEST(ImportLinear, AddThatIsNotABiasStaysAnAdd) {
  // [5,4] broadcast over rows: not a bias of the columns
  auto r = imp(M("(float[2,5,8] x) => (y)", {T("w", {8, 4}), T("b", {5, 4})}, "m = MatMul (x, w)\n y = Add (m, b)"));
  EXPECT_EQ(count(r, "ewadd"), 1);
  // A bias of higher rank than the product would change the sum's shape.
  auto s = imp(M("(float[5,8] x) => (y)", {T("w", {8, 4}), T("b", {1, 1, 4})}, "m = MatMul (x, w)\n y = Add (m, b)"));
  EXPECT_EQ(count(s, "ewadd"), 1);
  // The product has another reader: it stays, the sum is an add.
  auto t = imp(M("(float[5,8] x) => (y, m)", {T("w", {8, 4}), T("b", {4})}, "m = MatMul (x, w)\n y = Add (m, b)"));
  EXPECT_EQ(count(t, "ewadd"), 1);
}

TEST(ImportActivation, ClipWithConstantBoundsIsAnActivation) {
  auto r = imp(M("(float[2,6] x) => (y)", {},
                 "lo = Constant <value = float {0}> ()\n hi = Constant <value = float {6}> ()\n y = Clip (x, lo, hi)"));
  EXPECT_EQ(root_term(r), "(act relu6 (input x@2_6))");
  auto s = imp(M("(float[2,6] x) => (y)", {}, "lo = Constant <value = float {-1.5}> ()\n y = Clip (x, lo)"));
  EXPECT_EQ(root_term(s), "(act clip_-1.5_3.4028235e+38 (input x@2_6))");
  auto t = imp(M("(float[2,6] x) => (y)", {}, "y = Clip <min = -1.0, max = 0.5> (x)", 9));  // Clip-6
  EXPECT_EQ(root_term(t), "(act clip_-1_0.5 (input x@2_6))");
  auto u = imp(M("(float[2,6] x, float lo) => (y)", {}, "y = Clip (x, lo)"));
  EXPECT_EQ(u.stats.opaque_nodes, 1);  // bound from an input
}

TEST(ImportActivation, LeakyReluKeepsItsSlopeExactly) {
  auto r = imp(M("(float[2,6] x) => (y)", {}, "y = LeakyRelu <alpha = 0.01> (x)"));
  EXPECT_EQ(root_term(r), "(act leaky_0.01 (input x@2_6))");
  auto s = imp(M("(float[2,6] x) => (y)", {}, "y = LeakyRelu (x)"));  // default alpha 0.01
  EXPECT_EQ(root_term(s), root_term(r));
}

}  // namespace
}  // namespace tensat
