// Roofline model: values against hand computation for the T4 profile, profile lookup, the
// factory.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gpu_cost/cost_model.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/roofline.h"
#include "test_support.h"

namespace tensat::cost {
namespace {

using tensat::testing::Types;

// T4: 8.1e12 FLOP/s * 0.6, 320e9 B/s * 0.75, 0.005 ms per kernel.
constexpr double kT4Flops = 8.1e12 * 0.6;
constexpr double kT4Bw = 320e9 * 0.75;
constexpr double kLaunch = 0.005;

TEST(Roofline, OneByOneConvOnT4) {
  Types t;  // x [1,64,56,56], w [64,64,1,1], no bias, no activation: memory bound
  t.num(1).num(1).sym("same").sym("none").f32({1, 64, 56, 56}).f32({64, 64, 1, 1}).sym("none");
  Work w = op_work(Op::Conv, t.list());
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1 * 64 * 56 * 56 * 64 * 1 * 1);  // 25,690,112
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (64 * 56 * 56 + 64 * 64 + 64 * 56 * 56));  // 1,622,016
  EXPECT_EQ(w.kernels, 1);
  double expect = std::max(25690112.0 / kT4Flops, 1622016.0 / kT4Bw) * 1e3 + kLaunch;
  RooflineModel m(*find_profile("t4"));
  EXPECT_NEAR(m.op_cost(Op::Conv, t.list()), expect, 1e-12);
  EXPECT_NEAR(expect, 0.0117584, 1e-6);  // 1.62 MB at 240 GB/s = 6.76 us, + 5 us
}

TEST(Roofline, ThreeByThreeConvIsComputeBound) {
  Types t;  // ResNet-style 3x3, 256 channels at 14x14, bias + relu (fused: one kernel)
  t.num(1).num(1).sym("same").sym("relu").f32({1, 256, 14, 14}).f32({256, 256, 3, 3}).f32({256});
  Work w = op_work(Op::Conv, t.list());
  double conv_flops = 2.0 * 256 * 14 * 14 * 256 * 9;
  EXPECT_DOUBLE_EQ(w.flops, conv_flops + 2.0 * 256 * 14 * 14);
  EXPECT_EQ(w.kernels, 1);
  RooflineModel m(*find_profile("t4"));
  EXPECT_NEAR(m.op_cost(Op::Conv, t.list()), w.flops / kT4Flops * 1e3 + kLaunch, 1e-12);
}

TEST(Roofline, GroupedConvCountsCinPerGroup) {
  Types t;  // groups = 128 / 4 = 32
  t.num(2).num(2).sym("same").sym("none").f32({1, 128, 56, 56}).f32({128, 4, 3, 3}).sym("none");
  EXPECT_DOUBLE_EQ(op_work(Op::Conv, t.list()).flops, 2.0 * 128 * 28 * 28 * 4 * 9);
}

TEST(Roofline, MatmulOnT4) {
  Types t;  // BERT's projection: [64,1024] x [1024,1024]
  t.sym("none").f32({64, 1024}).f32({1024, 1024}).sym("none");
  Work w = op_work(Op::Matmul, t.list());
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 64 * 1024 * 1024);  // 134,217,728
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (64 * 1024 + 1024 * 1024 + 64 * 1024));  // 4,718,592
  EXPECT_EQ(w.kernels, 1);
  double expect = std::max(134217728.0 / kT4Flops, 4718592.0 / kT4Bw) * 1e3 + kLaunch;
  RooflineModel m(*find_profile("t4"));
  EXPECT_NEAR(m.op_cost(Op::Matmul, t.list()), expect, 1e-12);
  EXPECT_NEAR(expect, 0.0326168, 1e-6);  // compute bound: 27.6 us + 5 us
}

TEST(Roofline, BatchedMatmulAndBiasKernel) {
  Types t;  // BERT's attention: [16,64,64] x [16,64,64]
  t.sym("relu").f32({16, 64, 64}).f32({16, 64, 64}).sym("none");
  Work w = op_work(Op::Matmul, t.list());
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * 64 * 64 * 64 + 16 * 64 * 64);
  EXPECT_EQ(w.kernels, 2);  // GEMM + activation
}

TEST(Roofline, ElementwiseIsMemoryBound) {
  Types t;
  t.f32({1, 256, 28, 28}).f32({1, 256, 28, 28});
  double n = 256 * 28 * 28;
  RooflineModel m(*find_profile("t4"));
  EXPECT_NEAR(m.op_cost(Op::Ewadd, t.list()), 3 * 4 * n / kT4Bw * 1e3 + kLaunch, 1e-12);
}

TEST(Roofline, ProfilesDiffer) {
  Types t;
  t.sym("none").f32({64, 1024}).f32({1024, 1024}).sym("none");
  double t4 = RooflineModel(*find_profile("t4")).op_cost(Op::Matmul, t.list());
  double v100 = RooflineModel(*find_profile("V100")).op_cost(Op::Matmul, t.list());
  double a100 = RooflineModel(*find_profile("a100")).op_cost(Op::Matmul, t.list());
  double h100 = RooflineModel(*find_profile("h100")).op_cost(Op::Matmul, t.list());
  EXPECT_GT(t4, v100);
  EXPECT_GT(v100, a100);
  EXPECT_GT(a100, h100);
  EXPECT_EQ(find_profile("p100"), nullptr);
  EXPECT_EQ(profile_for_device("NVIDIA H100 80GB HBM3").name, "h100");
  EXPECT_EQ(profile_for_device("Tesla T4").name, "t4");
  EXPECT_EQ(profile_for_device("Some Future GPU").name, "t4");
  EXPECT_EQ(match_profile("Some Future GPU"), nullptr);
  EXPECT_EQ(match_profile("NVIDIA H200")->name, "h200");
  double h200 = RooflineModel(*find_profile("h200")).op_cost(Op::Matmul, t.list());
  EXPECT_GE(h100, h200);  // the same SMs, more memory bandwidth
}

TEST(Factory, NamesAndErrors) {
  EXPECT_EQ(make_cost_model("roofline")->name(), "roofline:h100");  // the default profile
  CostOptions o;
  o.profile = "a100";
  EXPECT_EQ(make_cost_model("roofline", o)->name(), "roofline:a100");
  o.profile = "p100";
  EXPECT_THROW(make_cost_model("roofline", o), std::invalid_argument);
  EXPECT_THROW(make_cost_model("magic"), std::invalid_argument);
  EXPECT_EQ(make_cost_model("table")->name(), "table:h100");  // no file: the built-in table
  o.profile = "t4";
  EXPECT_THROW(make_cost_model("table", o), std::invalid_argument);  // no file, none built in
}

TEST(Factory, AutoWithoutGpuIsTheH100Table) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present: auto picks cuda";
  EXPECT_EQ(make_cost_model("auto")->name(), "table:h100");
  CostOptions o;
  o.profile = "t4";
  EXPECT_EQ(make_cost_model("auto", o)->name(), "roofline:t4");
  EXPECT_THROW(make_cost_model("cuda"), std::invalid_argument);
}

TEST(Roofline, ConvBiasWithoutActivationIsASecondKernel) {
  Types t;  // cuDNN: the convolution, then cudnnAddTensor for the bias
  t.num(1).num(1).sym("same").sym("none").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).f32({64});
  Work w = op_work(Op::Conv, t.list());
  EXPECT_EQ(w.kernels, 2);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (64 * 56 * 56 + 64 * 64 * 9 + 64 + 3 * 64 * 56 * 56));
  Types r;  // with relu: one fused kernel
  r.num(1).num(1).sym("same").sym("relu").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).f32({64});
  EXPECT_EQ(op_work(Op::Conv, r.list()).kernels, 1);
}

}  // namespace
}  // namespace tensat::cost
