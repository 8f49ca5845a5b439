// The output types libonnx 1.12 leaves out (importer/shape_fallback.h): unit tests on inline
// graphs, then whole imports of the nodes PyTorch's exports contain (MaxViT's Einsum, Gelu at
// opset 20, Pad with axes at opset 18).
#include <gtest/gtest.h>

#include <optional>

#include "importer/import_error.h"
#include "importer/shape_fallback.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

// The dimensions the pass gives `name`, or nullopt if it leaves it untyped.
std::optional<std::vector<int64_t>> typed(const std::string& text, const std::string& name) {
  onnx::ModelProto m = parse(text);
  detail::infer_missing_types(*m.mutable_graph(), m.opset_import(0).version());
  for (const auto& vi : m.graph().value_info()) {
    if (vi.name() != name) continue;
    std::vector<int64_t> d;
    for (const auto& x : vi.type().tensor_type().shape().dim()) d.push_back(x.dim_value());
    return d;
  }
  return std::nullopt;
}

std::string einsum(const std::string& inputs, const std::string& eq) {
  return "<ir_version: 8, opset_import: [\"\" : 13]>\ng (" + inputs + ") => (y) {\n  y = Einsum <equation = \"" + eq +
         "\"> (a, b)\n}";
}

TEST(ShapeFallback, EinsumExplicitWithSpaces) {
  // MaxViT's attention, as PyTorch writes it.
  EXPECT_EQ(typed(einsum("float[1,64,2,49,32] a, float[1,64,2,49,32] b", "B G H I D, B G H J D -> B G H I J"), "y"),
            (std::vector<int64_t>{1, 64, 2, 49, 49}));
  EXPECT_EQ(typed(einsum("float[2,3] a, float[3,4] b", "ij,jk->ki"), "y"), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(typed(einsum("float[3,3] a, float[3] b", "ii,i->"), "y"), (std::vector<int64_t>{}));
}

TEST(ShapeFallback, EinsumImplicitAndEllipsis) {
  // Implicit: the labels used once, alphabetically.
  EXPECT_EQ(typed(einsum("float[2,3] a, float[3,4] b", "ij,jk"), "y"), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(typed(einsum("float[2,3] a, float[3,4] b", "kj,ji"), "y"), (std::vector<int64_t>{4, 2}));
  // The ellipsis dimensions broadcast and come first.
  EXPECT_EQ(typed(einsum("float[5,1,2,3] a, float[6,3,4] b", "...ij,...jk->...ik"), "y"),
            (std::vector<int64_t>{5, 6, 2, 4}));
  EXPECT_EQ(typed(einsum("float[5,2,3] a, float[3,4] b", "...ij,jk"), "y"), (std::vector<int64_t>{5, 2, 4}));
}

TEST(ShapeFallback, EinsumThatContradictsItsInputsStaysUntyped) {
  EXPECT_FALSE(typed(einsum("float[2,3] a, float[4,5] b", "ij,jk->ik"), "y"));    // j is 3 and 4
  EXPECT_FALSE(typed(einsum("float[2,3,4] a, float[3,4] b", "ij,jk->ik"), "y"));  // rank 3, two labels
  EXPECT_FALSE(typed(einsum("float[2,3] a, float[3,4] b", "ij,jk->iz"), "y"));    // z is no operand's
  EXPECT_FALSE(typed(einsum("float[2,3] a, float[3,4] b", "ij,jk->ii"), "y"));    // i twice
  EXPECT_FALSE(typed(einsum("float[2,3] a, float[3,4] b", "ij,jk,kl->il"), "y"));  // three terms, two inputs
  EXPECT_FALSE(typed(einsum("float[5,2,3] a, float[6,3,4] b", "...ij,...jk->...ik"), "y"));  // 5 vs 6
  // Implicit with both cases: numpy and ONNX Runtime disagree on the order.
  EXPECT_FALSE(typed(einsum("float[2,3] a, float[3,4] b", "ab,bC"), "y"));
}

TEST(ShapeFallback, GeluAndPadWithAxes) {
  EXPECT_EQ(typed(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[2,5] x) => (y) {
  y = Gelu <approximate = "tanh"> (x)
})",
                  "y"),
            (std::vector<int64_t>{2, 5}));
  const char* pad = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,5,5] x) => (y) <int64[4] p = {1, 2, -1, 0}, int64[2] axes = {1, -1}> {
  y = Pad (x, p, , axes)
})";
  EXPECT_EQ(typed(pad, "y"), (std::vector<int64_t>{1, 4, 5, 7}));  // axis 1: +1 -1, axis 3: +2 +0
  // pads from a graph input: not known here.
  EXPECT_FALSE(typed(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,5,5] x, int64[2] p) => (y) <int64[1] axes = {1}> {
  y = Pad (x, p, , axes)
})",
                     "y"));
}

// Opset 18+ versions libonnx 1.12 would infer by their opset 17 rules.
TEST(ShapeFallback, OpsetEighteenReductionsSplitAndPools) {
  auto model = [](const std::string& opset, const std::string& sig, const std::string& inits,
                  const std::string& body) {
    return "<ir_version: 9, opset_import: [\"\" : " + opset + "]>\ng (" + sig + ") => (y) " + inits + " {\n" +
           body + "\n}";
  };
  const std::string x = "float[2,3,4,5] x";
  EXPECT_EQ(typed(model("18", x, "<int64[2] a = {1, -1}>", "y = ReduceMean <keepdims = 0> (x, a)"), "y"),
            (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(typed(model("18", x, "<int64[1] a = {2}>", "y = ReduceMax (x, a)"), "y"), (std::vector<int64_t>{2, 3, 1, 5}));
  EXPECT_EQ(typed(model("18", x, "", "y = ReduceL2 <keepdims = 0> (x)"), "y"), (std::vector<int64_t>{}));
  EXPECT_EQ(typed(model("18", x, "", "y = ReduceMin <noop_with_empty_axes = 1> (x)"), "y"),
            (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_FALSE(typed(model("18", x + ", int64[1] a", "", "y = ReduceMax (x, a)"), "y"));  // axes at run time
  // A repeated axis is reduced once (ONNX Runtime accepts it); empty axes from a Constant
  // node (an empty initializer becomes one) are all axes, or none with noop_with_empty_axes.
  EXPECT_EQ(typed(model("18", x, "<int64[2] a = {1, -3}>", "y = ReduceMax (x, a)"), "y"),
            (std::vector<int64_t>{2, 1, 4, 5}));
  auto all = imp(model("18", x, "", "e = Constant <value = int64[0] {}> ()\n y = ReduceMean <keepdims = 0> (x, e)"));
  EXPECT_EQ(all.graph.type(all.graph.outputs()[0]).tensor.shape, (Shape{}));
  auto none = imp(model("18", x, "", "e = Constant <value = int64[0] {}> ()\n y = ReduceMean <noop_with_empty_axes = 1> (x, e)"));
  EXPECT_EQ(none.graph.type(none.graph.outputs()[0]).tensor.shape, (Shape{2, 3, 4, 5}));
  // Split-18 of x into the outputs `outs`, with the split sizes `s` where not "".
  auto split18 = [](const std::string& x, const std::string& outs, const std::string& s, const std::string& attrs) {
    return "<ir_version: 9, opset_import: [\"\" : 18]>\ng (" + x + " x) => (" + outs + ") " +
           (s.empty() ? "" : "<int64[2] s = {" + s + "}> ") + "{\n  " + outs + " = Split <" + attrs + "> (x" +
           (s.empty() ? "" : ", s") + ")\n}";
  };
  // Split-18: num_outputs with a smaller last part, sizes as input, equal parts.
  const std::string split = split18("float[1,4,7]", "a, b, c", "", "axis = -1, num_outputs = 3");
  EXPECT_EQ(typed(split, "a"), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(typed(split, "c"), (std::vector<int64_t>{1, 4, 1}));
  const std::string sizes = split18("float[1,4,7]", "a, b", "5, 2", "axis = 2");
  EXPECT_EQ(typed(sizes, "a"), (std::vector<int64_t>{1, 4, 5}));
  EXPECT_EQ(typed(sizes, "b"), (std::vector<int64_t>{1, 4, 2}));
  EXPECT_FALSE(typed(split18("float[1,4,7]", "a, b", "5, 3", "axis = 2"), "a"));
  // Refused by ONNX Runtime, left untyped: a negative last part (5 in 4: 2, 2, 2, -1), both
  // sizes and num_outputs, neither.
  EXPECT_FALSE(typed(split18("float[1,5]", "a, b, c, d", "", "axis = 1, num_outputs = 4"), "a"));
  EXPECT_FALSE(typed(split18("float[1,4,7]", "a, b", "5, 2", "axis = 2, num_outputs = 2"), "a"));
  EXPECT_FALSE(typed(split18("float[1,4,8]", "a, b", "", "axis = 2"), "a"));
  // AveragePool-19 with dilations; LpPool-18 with ceil_mode stays untyped.
  EXPECT_EQ(typed(model("19", "float[1,2,9,9] x", "",
                        "y = AveragePool <kernel_shape = [3, 3], dilations = [2, 2], strides = [2, 1], pads = [1, 0, 1, 0]> (x)"),
                  "y"),
            (std::vector<int64_t>{1, 2, 4, 5}));  // (9 + 2 - 5) / 2 + 1, (9 - 5) / 1 + 1
  EXPECT_EQ(typed(model("19", "float[1,2,9,9] x", "", "y = AveragePool <kernel_shape = [2, 2], strides = [2, 2], auto_pad = \"SAME_UPPER\"> (x)"),
                  "y"),
            (std::vector<int64_t>{1, 2, 5, 5}));
  // ceil_mode: typed where the last window starts inside the input (9: windows at 0,2,4,6,8),
  // not where it would start in the right padding (8 with stride 4: a third window at 8).
  EXPECT_EQ(typed(model("18", "float[1,2,9,9] x", "", "y = LpPool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (x)"),
                  "y"),
            (std::vector<int64_t>{1, 2, 5, 5}));
  EXPECT_FALSE(typed(model("19", "float[1,2,8,8] x", "", "y = AveragePool <kernel_shape = [2, 2], strides = [4, 4], ceil_mode = 1> (x)"),
                     "y"));
  // Below their opsets the same nodes are libonnx's (no type from here).
  EXPECT_FALSE(typed(model("17", x, "<int64[2] a = {1, -1}>", "y = ReduceMean <keepdims = 0, axes = [1]> (x)"), "y"));
}

TEST(ShapeFallback, QuantizeAndDequantizeElementTypes) {
  // The element type the pass gives `y` in an opset 21 graph "SIGNATURE => (y) INITS { BODY }".
  auto elem = [](const std::string& sig, const std::string& inits, const std::string& body) {
    onnx::ModelProto m = parse("<ir_version: 10, opset_import: [\"\" : 21]>\ng (" + sig + ") => (y) " + inits + " {\n  " +
                               body + "\n}");
    detail::infer_missing_types(*m.mutable_graph(), 21);
    for (const auto& vi : m.graph().value_info())
      if (vi.name() == "y") return vi.type().tensor_type().elem_type();
    return 0;
  };
  EXPECT_EQ(elem("float[2,3] x", "<float s = {0.5}>", "y = QuantizeLinear <output_dtype = 3> (x, s)"),
            onnx::TensorProto::INT8);
  EXPECT_EQ(elem("float[2,3] x", "<float s = {0.5}, int16 z = {0}>", "y = QuantizeLinear (x, s, z)"),
            onnx::TensorProto::INT16);
  EXPECT_EQ(elem("float[2,3] x", "<float s = {0.5}>", "y = QuantizeLinear (x, s)"), onnx::TensorProto::UINT8);
  EXPECT_EQ(elem("int8[2,3] x, float16 s", "", "y = DequantizeLinear (x, s)"), onnx::TensorProto::FLOAT16);
}

// An initializer that is also a graph input can be replaced at run time: no constant pads.
TEST(ShapeFallback, OverridableInitializersAreNotConstants) {
  EXPECT_FALSE(typed(R"(
<ir_version: 9, opset_import: ["" : 18]>
g (float[3,5] x, int64[2] p) => (y) <int64[2] p = {1, 2}, int64[1] axes = {1}> {
  y = Pad (x, p, , axes)
})",
                     "y"));
}

TEST(ShapeFallback, WhatIsHiddenFromLibonnx) {
  // Gelu-20 has no schema in libonnx 1.12: its output is untyped in the pass, so the Shape and
  // the Relu reading it are hidden (libonnx's data propagation crashed on that Shape); the
  // Split-18 is hidden for its version; the Sigmoid reads only x and is not.
  onnx::ModelProto m = parse(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[2,6] x) => (y, z, a, b) {
  g = Gelu (x)
  s = Shape (g)
  y = Relu (g)
  z = Sigmoid (x)
  a, b = Split <axis = 1, num_outputs = 2> (x)
})");
  EXPECT_EQ(detail::nodes_hidden_from_libonnx(m), (std::vector<int>{1, 2, 4}));
  // With the Gelu's output typed (as shape_fallback does), nothing reading it is hidden.
  detail::infer_missing_types(*m.mutable_graph(), 20);
  EXPECT_EQ(detail::nodes_hidden_from_libonnx(m), (std::vector<int>{4}));
  // A hidden node's output typed only by its graph output declaration is typed for its readers.
  onnx::ModelProto o = parse(R"(
<ir_version: 9, opset_import: ["" : 18]>
g (float[1,3,4,8] x) => (float[1,3,5,8] q, y) <int64[2] p = {1, 0}, int64[1] axes = {2}> {
  q = Pad (x, p, , axes)
  y = Hardmax (q)
})");
  EXPECT_EQ(detail::nodes_hidden_from_libonnx(o), (std::vector<int>{0}));
}

// ONNX Runtime's fused operators (domain com.microsoft), as its graph optimizations write them.
std::string contrib(const std::string& inputs, const std::string& body, const std::string& outputs = "y") {
  return "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng (" + inputs + ") => (" + outputs +
         ") {\n" + body + "\n}";
}

TEST(ShapeFallback, ContribFusedConv) {
  // Conv's output: pads, strides, dilations, groups, auto_pad; the activation changes nothing.
  EXPECT_EQ(typed(contrib("float[1,8,10,12] x, float[16,8,3,3] w",
                          "y = com.microsoft.FusedConv <activation = \"Relu\", pads = [1, 1, 1, 1]> (x, w)"),
                  "y"),
            (std::vector<int64_t>{1, 16, 10, 12}));
  EXPECT_EQ(typed(contrib("float[2,8,11,11] x, float[6,4,3,3] w, float[6] b",
                          "y = com.microsoft.FusedConv <group = 2, strides = [2, 2], dilations = [2, 1]> (x, w, b)"),
                  "y"),
            (std::vector<int64_t>{2, 6, 4, 5}));
  EXPECT_EQ(typed(contrib("float[1,3,7,9] x, float[5,3,2,2] w",
                          "y = com.microsoft.FusedConv <auto_pad = \"SAME_UPPER\", strides = [2, 2]> (x, w)"),
                  "y"),
            (std::vector<int64_t>{1, 5, 4, 5}));
  // Channels that do not match the weight, a kernel_shape other than the weight's, a window
  // larger than the padded input: untyped (the import then names the node).
  EXPECT_FALSE(typed(contrib("float[1,8,10,10] x, float[16,4,3,3] w", "y = com.microsoft.FusedConv (x, w)"), "y"));
  EXPECT_FALSE(typed(
      contrib("float[1,8,10,10] x, float[16,8,3,3] w", "y = com.microsoft.FusedConv <kernel_shape = [5, 5]> (x, w)"),
      "y"));
  EXPECT_FALSE(typed(contrib("float[1,8,2,2] x, float[16,8,3,3] w", "y = com.microsoft.FusedConv (x, w)"), "y"));
}

TEST(ShapeFallback, ContribFusedMatMul) {
  EXPECT_EQ(typed(contrib("float[2,1,5,3] a, float[4,3,6] b", "y = com.microsoft.FusedMatMul <alpha = 0.5> (a, b)"),
                  "y"),
            (std::vector<int64_t>{2, 4, 5, 6}));
  EXPECT_EQ(typed(contrib("float[5,3] a, float[6,3] b", "y = com.microsoft.FusedMatMul <transB = 1> (a, b)"), "y"),
            (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(typed(contrib("float[8,3,5] a, float[8,3,6] b", "y = com.microsoft.FusedMatMul <transA = 1> (a, b)"),
                  "y"),
            (std::vector<int64_t>{8, 5, 6}));
  EXPECT_FALSE(typed(contrib("float[3,5] a, float[3,6] b", "y = com.microsoft.FusedMatMul (a, b)"), "y"));  // 5 vs 3
  EXPECT_FALSE(typed(contrib("float[2,3,5] a, float[3,5,6] b", "y = com.microsoft.FusedMatMul (a, b)"), "y"));
  EXPECT_FALSE(typed(
      contrib("float[2,3,5] a, float[2,5,6] b", "y = com.microsoft.FusedMatMul <transBatchA = 1> (a, b)"), "y"));
  EXPECT_FALSE(typed(contrib("float[5] a, float[5,6] b", "y = com.microsoft.FusedMatMul (a, b)"), "y"));  // rank 1
  // FusedGemm: Gemm's [M, N].
  EXPECT_EQ(typed(contrib("float[4,3] a, float[5,3] b, float[5] c",
                          "y = com.microsoft.FusedGemm <transB = 1, activation = \"Relu\"> (a, b, c)"),
                  "y"),
            (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(typed(contrib("float[3,4] a, float[3,5] b", "y = com.microsoft.FusedGemm <transA = 1> (a, b)"), "y"),
            (std::vector<int64_t>{4, 5}));
  EXPECT_FALSE(typed(contrib("float[4,3] a, float[5,3] b", "y = com.microsoft.FusedGemm (a, b)"), "y"));
}

TEST(ShapeFallback, ContribElementwiseAndSkipLayerNormalization) {
  for (const char* op : {"Gelu", "QuickGelu"})
    EXPECT_EQ(typed(contrib("float[2,7,16] x", std::string("y = com.microsoft.") + op + " (x)"), "y"),
              (std::vector<int64_t>{2, 7, 16}))
        << op;
  for (const char* op : {"FastGelu", "BiasGelu"})
    EXPECT_EQ(typed(contrib("float[2,7,16] x, float[16] b", std::string("y = com.microsoft.") + op + " (x, b)"), "y"),
              (std::vector<int64_t>{2, 7, 16}))
        << op;
  const std::string in = "float[2,7,16] x, float[2,7,16] s, float[16] g, float[16] b";
  EXPECT_EQ(typed(contrib(in, "y = com.microsoft.SkipLayerNormalization <epsilon = 1e-5> (x, s, g, b)"), "y"),
            (std::vector<int64_t>{2, 7, 16}));
  // The sum output (3), with the mean and inv_std_var outputs left out.
  EXPECT_EQ(typed(contrib(in, "y, , , sum = com.microsoft.SkipLayerNormalization (x, s, g, b)", "y, sum"), "sum"),
            (std::vector<int64_t>{2, 7, 16}));
  // Asked for the mean (training): not covered, so neither output is typed.
  EXPECT_FALSE(typed(contrib(in, "y, mean = com.microsoft.SkipLayerNormalization (x, s, g, b)", "y, mean"), "y"));
  // The RMS normalizations: SkipSimplifiedLayerNormalization (no beta) as SkipLayerNormalization;
  // SimplifiedLayerNormalization, which ONNX Runtime writes in the ONNX domain, X's type, not
  // with its inv_std_var output (training).
  EXPECT_EQ(typed(contrib(in, "y, , , sum = com.microsoft.SkipSimplifiedLayerNormalization (x, s, g)", "y, sum"),
                  "sum"),
            (std::vector<int64_t>{2, 7, 16}));
  EXPECT_EQ(typed(contrib(in, "y = SimplifiedLayerNormalization <axis = -1, epsilon = 1e-6> (x, g)"), "y"),
            (std::vector<int64_t>{2, 7, 16}));
  EXPECT_FALSE(typed(contrib(in, "y, r = SimplifiedLayerNormalization (x, g)", "y, r"), "y"));
  // EmbedLayerNormalization: [B, S, H] from the ids and the word embedding (input 2, also
  // with the optional segment ids left out), int32 mask_index [B], the sum [B, S, H].
  const std::string emb = "int32[2,7] ids, float[50,16] word, float[7,16] pos, float[16] g, float[16] b";
  const std::string three = "y, mask, sum = com.microsoft.EmbedLayerNormalization (ids, , word, pos, , g, b)";
  EXPECT_EQ(typed(contrib(emb, three, "y, mask, sum"), "y"), (std::vector<int64_t>{2, 7, 16}));
  EXPECT_EQ(typed(contrib(emb, three, "y, mask, sum"), "mask"), (std::vector<int64_t>{2}));
  EXPECT_EQ(typed(contrib(emb, "y, , sum = com.microsoft.EmbedLayerNormalization (ids, , word, pos, , g, b)", "y, sum"),
                  "sum"),
            (std::vector<int64_t>{2, 7, 16}));
  // Another contrib operator, and another domain: untyped.
  EXPECT_FALSE(typed(contrib("float[2,7,16] x", "y = com.microsoft.BiasSoftmax (x, x)"), "y"));
  EXPECT_FALSE(typed(R"(
<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
g (float[2,7,16] x) => (y) {
  y = com.example.Gelu (x)
})",
                     "y"));
}

TEST(ShapeFallback, ContribOperatorsImportAsOpaqueNodes) {
  // A fused operator between rewritable ones: the graph around it imports and gets types.
  auto r = imp(contrib("float[1,8,6,6] x, float[8,8,3,3] w, float[1,8,6,6] z",
                       "c = com.microsoft.FusedConv <activation = \"Relu\", pads = [1, 1, 1, 1]> (x, w)\n"
                       "  y = Add (c, z)"));
  EXPECT_EQ(r.graph.type(r.graph.outputs()[0]).tensor.shape, (Shape{1, 8, 6, 6}));
  // One it does not cover: the message names the node, its domain and what is covered.
  const std::string m = import_error(contrib("float[2,7,16] x, float[16,48] w, float[48] b",
                                             "y = com.microsoft.Attention <num_heads = 2> (x, w, b)"));
  EXPECT_NE(m.find("com.microsoft:Attention"), std::string::npos) << m;
  EXPECT_NE(m.find("ONNX Runtime's operators (domain 'com.microsoft')"), std::string::npos) << m;
  EXPECT_NE(m.find("FusedConv"), std::string::npos) << m;
  // Another domain's: named, without the advice about ONNX Runtime.
  const std::string o = import_error(R"(
<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
g (float[2,7,16] x) => (y) {
  g = com.example.Gelu (x)
  y = Relu (g)
})");
  EXPECT_NE(o.find("com.example:Gelu"), std::string::npos) << o;
  EXPECT_NE(o.find("domain 'com.example'"), std::string::npos) << o;
  EXPECT_EQ(o.find("ONNX Runtime"), std::string::npos) << o;
}

// Whole imports: each of these stopped with "cannot determine the type and static shape".
TEST(ShapeFallback, ImportsGoOnAfterTheNode) {
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,3,4] a, float[1,2,5,4] b) => (y) {
  e = Einsum <equation = "b h i d, b h j d -> b h i j"> (a, b)
  y = Relu (e)
})");
  EXPECT_EQ(r.graph.type(r.graph.outputs()[0]).tensor.shape, (Shape{1, 2, 3, 5}));
  auto g = imp(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[2,5] x) => (y) {
  h = Gelu (x)
  y = Relu (h)
})");
  EXPECT_EQ(g.graph.type(g.graph.outputs()[0]).tensor.shape, (Shape{2, 5}));
  // A Shape of a Gelu-20 output: a segmentation fault in libonnx 1.12 before 2026-11-26.
  auto s = imp(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[2,5] x) => (y) {
  h = Gelu (x)
  s = Shape (h)
  r = Relu (h)
  y = Reshape (r, s)
})");
  EXPECT_EQ(root_term(s), "(relu (opaque 0|f32[2,5] (input x@2_5)))");  // the Reshape to its own shape: gone
  // Pad-18 with its axes in another order than the dimensions': libonnx 1.12 gave [4,7]
  // (pads applied to axes 0, 1); the pads are for axis 1, then axis 0.
  auto p = imp(R"(
<ir_version: 9, opset_import: ["" : 18]>
g (float[3,5] x) => (y) <int64[4] pads = {1, 2, 0, 0}, int64[2] axes = {1, 0}> {
  q = Pad (x, pads, , axes)
  s = Shape (q)
  r = Relu (q)
  y = Reshape (r, s)
})");
  EXPECT_EQ(p.graph.type(p.graph.outputs()[0]).tensor.shape, (Shape{5, 6}));
  // Nodes out of topological order: a Shape listed before its input's producer crashed
  // libonnx's data propagation; the importer sorts the nodes first.
  auto t = imp(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (y) {
  s = Shape (r)
  y = Reshape (r, s)
  r = Relu (x)
})");
  EXPECT_EQ(root_term(t), "(relu (input x@2_5))");
}

}  // namespace
}  // namespace tensat
