// Verification (pipeline/verify.h): which opaque nodes the two models must share.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "pipeline/verify.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

const char* kOriginal = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5,5] x) => (y) {
  s = Softmax <axis = 1> (x)
  y = Relu (s)
})";

// The optimized model has an opaque node the original does not (as the exporter writes a Pad
// for the enlarge of a computed kernel): it is computed, and the outputs are compared.
// Verification of b against a on the CPU fails, and its message contains `text`.
void expect_failure(const ImportResult& a, const ImportResult& b, const std::string& text) {
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find(text), std::string::npos) << r.failure;
}

TEST(Verify, AnOpaqueNodeOnlyTheOptimizedModelHasIsComputed) {
  auto a = imp(kOriginal);
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5,5] x) => (y) <int64[8] zeros = {0,0,0,0,0,0,0,0}> {
  s = Softmax <axis = 1> (x)
  p = Pad (s, zeros)
  y = Relu (p)
})");
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_EQ(r.compared, 2);  // the output and the Softmax's input, not the Pad's
  EXPECT_EQ(r.max_abs_err, 0.0);
}

// ... unless the executors cannot compute it: a random value in its place would be compared
// with the original's real one.
TEST(Verify, AnOpaqueNodeOnlyTheOptimizedModelHasThatCannotBeComputedFails) {
  auto a = imp(kOriginal);
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5,5] x) => (y) {
  s = Softmax <axis = 1> (x)
  h = Hardmax <axis = 1> (s)
  y = Relu (h)
})");
  expect_failure(a, b,
                 "the optimized model has an opaque node the other model has not and the executors cannot compute ('h')");
}

// An opaque node of the original that the optimized model lost is computed in the original,
// and the outputs tell: here they differ.
TEST(Verify, AnOpaqueNodeTheOptimizedModelLostIsComparedThroughTheOutputs) {
  auto a = imp(kOriginal);
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5,5] x) => (y) {
  y = Relu (x)
})");
  expect_failure(a, b, "output 'y': element");
}

// The weight folding can leave an opaque node with only constant inputs (PyTorch's Swin and
// MaxViT: an Unsqueeze of a folded attention bias); re-imported, it is folded away. The
// original computes it, and the outputs agree.
TEST(Verify, AnOpaqueNodeFoldedIntoAConstantIsComparedThroughTheOutputs) {
  auto a = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] w = {0,0,0,0}> {
  s = Softmax <axis = 1> (w)
  y = Add (x, s)
})");
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] c = {0.25,0.25,0.25,0.25}> {
  y = Add (x, c)
})");
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_EQ(r.compared, 1);  // the output; the Softmax's input has nothing to compare with
  EXPECT_EQ(r.max_abs_err, 0.0);
  // A wrong constant is found.
  auto wrong = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] c = {0.25,0.25,0.25,0.5}> {
  y = Add (x, c)
})");
  EXPECT_FALSE(verify_models(a, wrong, Executor::Cpu, 1).passed);
}

// A weight read by an opaque node (a norm's scale, an embedding table) is compared where it
// is stored, not copied out of a run: equal ones count as compared with no error, a changed
// element is found and named.
TEST(Verify, AWeightAnOpaqueNodeReadsIsComparedAsStored) {
  auto model = [](const char* scale) {
    return imp(std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (y) <float[4] s = {)") +
               scale + R"(}, float[4] b = {0,0,0,1}> {
  n = LayerNormalization <axis = -1> (x, s, b)
  y = Relu (n)
})");
  };
  auto a = model("1,2,3,4");
  const VerifyResult same = verify_models(a, model("1,2,3,4"), Executor::Cpu, 1);
  EXPECT_TRUE(same.passed) << same.failure;
  EXPECT_EQ(same.compared, 4);  // the output, and the norm's x, scale and bias
  EXPECT_EQ(same.max_abs_err, 0.0);
  const VerifyResult changed = verify_models(a, model("1,2,3.5,4"), Executor::Cpu, 1);
  EXPECT_FALSE(changed.passed);
  EXPECT_NE(changed.failure.find("n#2 of an opaque node: element 2 is 3.5"), std::string::npos) << changed.failure;
}

// ... unless the executors cannot compute the original's node.
TEST(Verify, AnOpaqueNodeOnlyTheOriginalHasThatCannotBeComputedFails) {
  auto a = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] w = {0,1,0,0}> {
  h = Hardmax <axis = 1> (w)
  y = Add (x, h)
})");
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] c = {0,1,0,0}> {
  y = Add (x, c)
})");
  expect_failure(a, b,
                 "the original model has an opaque node the other model has not and the executors cannot compute ('h')");
}

// Hardmax of w1 = {0,1,0,0} and of w2 (given) added to x; the same with the one Hardmax of w1.
std::string two_hardmaxes(const std::string& w2) {
  return R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] w1 = {0,1,0,0}, float[1,4] w2 = {)" +
         w2 + R"(}> {
  h1 = Hardmax <axis = 1> (w1)
  h2 = Hardmax <axis = 1> (w2)
  a1 = Add (x, h1)
  y = Add (a1, h2)
})";
}
const char* kOneHardmax = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] w1 = {0,1,0,0}> {
  h1 = Hardmax <axis = 1> (w1)
  a1 = Add (x, h1)
  y = Add (a1, h1)
})";

// x of shape `dims`; with `twin_axis`, h1 = Hardmax(x) and h2 = Hardmax(Identity(x)) on that axis,
// else h1 only; then `rest`.
std::string hardmaxes(const std::string& dims, std::optional<int> twin_axis, const std::string& rest) {
  std::string body = "  h1 = Hardmax <axis = 1> (x)\n";
  if (twin_axis)
    body = "  x2 = Identity (x)\n" + body + "  h2 = Hardmax <axis = " + std::to_string(*twin_axis) + "> (x2)\n";
  return "\n<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[" + dims + "] x) => (y) {\n" + body + rest + "}";
}

// Two Hardmax nodes computing the same (their operands an Identity apart in the original), merged
// into one in the optimized model, as a re-import's CSE does: the one the optimized model lacks
// gets its twin's value, and the outputs agree.
TEST(Verify, AnOpaqueTwinTheOptimizedModelMergedGetsItsTwinsValue) {
  auto a = imp(hardmaxes("1,4", 1, "  r1 = Relu (h1)\n  y = Add (r1, h2)\n"));
  auto b = imp(hardmaxes("1,4", std::nullopt, "  r1 = Relu (h1)\n  y = Add (r1, h1)\n"));
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_EQ(r.max_abs_err, 0.0);
  // Equal constants under two names are the same operand too.
  EXPECT_TRUE(verify_models(imp(two_hardmaxes("0,1,0,0")), imp(kOneHardmax), Executor::Cpu, 1).passed);
  // So are twins' results, through an operator of the language (Funnel's Sin/Cos tables, then
  // their concat, then a GatherElements of it).
  auto c = imp(hardmaxes("1,4", 1,
                         "  r1 = Relu (h1)\n  r2 = Relu (h2)\n  k1 = Hardmax <axis = 1> (r1)\n"
                         "  k2 = Hardmax <axis = 1> (r2)\n  y = Add (k1, k2)\n"));
  auto d = imp(hardmaxes("1,4", std::nullopt, "  r1 = Relu (h1)\n  k1 = Hardmax <axis = 1> (r1)\n  y = Add (k1, k1)\n"));
  const VerifyResult chained = verify_models(c, d, Executor::Cpu, 1);
  EXPECT_TRUE(chained.passed) << chained.failure;
}

// ... but not a node that computes something else (another axis, other constants).
TEST(Verify, AnOpaqueNodeThatIsNoTwinStillFails) {
  auto a = imp(two_hardmaxes("0,0,1,0"));
  auto b = imp(kOneHardmax);
  expect_failure(a, b, "the original model has an opaque node the other model has not and the executors cannot "
                       "compute ('h2')");
  auto c = imp(hardmaxes("2,4", 0, "  y = Add (h1, h2)\n"));
  auto d = imp(hardmaxes("2,4", std::nullopt, "  y = Add (h1, h1)\n"));
  expect_failure(c, d, "the original model has an opaque node the other model has not and the executors cannot "
                       "compute ('h2')");
}

// A multi-output opaque node (its outputs are always region boundaries) only one model has
// cannot be compared: named, not a confusing mismatch of random values.
TEST(Verify, AMultiOutputOpaqueNodeOnlyOneModelHasFails) {
  auto a = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <int64[1] k = {4}> {
  v, i = TopK <axis = 1> (x, k)
  y = Relu (v)
})");
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) {
  y = Relu (x)
})");
  expect_failure(a, b, "the original model has a multi-output opaque node the other model has not ('v')");
}

// Different outputs are named.
TEST(Verify, DifferentOutputsAreNamed) {
  auto a = imp(kOriginal);
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5,5] x) => (z) {
  s = Softmax <axis = 1> (x)
  z = Relu (s)
})");
  expect_failure(a, b, "(output 'y' is only in the original)");
}

// Before opset 7 an opaque Sub broadcasts from its axis, not numpy's way: the executors do
// not compute it (a region boundary in both models) rather than compute it wrongly.
TEST(Verify, LegacyBroadcastOfAnOpaqueNodeIsARegionBoundary) {
  const char* text = R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[1,4,1,4] x, float[4] b) => (y) {
  d = Sub <broadcast = 1, axis = 1> (x, b)
  y = Relu (d)
})";
  auto a = imp(text), b = imp(text);
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_EQ(r.opaque_regions, 1);
  EXPECT_EQ(r.opaque_computed, 0);
}

// A large absolute error of large values is small against the tensor's scale.
TEST(Verify, ScaledErrorIsTheErrorAgainstTheTensorsLargestValue) {
  auto a = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] big = {1e9, 2e9, 3e9, 4e9}> {
  y = Add (x, big)
})");
  auto b = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (y) <float[1,4] big = {1e9, 2e9, 3e9, 4.0001e9}> {
  y = Add (x, big)
})");
  const VerifyResult r = verify_models(a, b, Executor::Cpu, 1);
  EXPECT_TRUE(r.passed) << r.failure;
  EXPECT_GT(r.max_abs_err, 1e4);
  EXPECT_NEAR(r.max_scaled_err, r.max_abs_err / 4.0001e9, 1e-9);
}

}  // namespace
}  // namespace tensat
