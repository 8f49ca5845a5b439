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
  detail::infer_missing_types(*m.mutable_graph());
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
}

}  // namespace
}  // namespace tensat
