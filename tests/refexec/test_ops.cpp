// Hand-computed cases, one or more per operator of the tensor language.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace tensat::refexec::testing {
namespace {

const Tensor k3x3 = tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(RefexecOps, InputAndWeightLeaves) {
  WeightStore w;
  w.put_f32("w", {2}, {10, 20});
  Tensor t = eval_term("(ewadd (input x@2) (weight w@2))", {{"x", tensor({2}, {1, 2})}}, w);
  expect_tensor(t, {2}, {11, 22});
}

TEST(RefexecOps, Zeros) {
  Tensor t = eval_term("(ewadd (input x@3) (zeros 3))", {{"x", tensor({3}, {1, 2, 3})}});
  expect_tensor(t, {3}, {1, 2, 3});
}

TEST(RefexecOps, EwaddBroadcastsTrailing) {
  Tensor t = eval_term("(ewadd (input a@2_2) (input b@2))",
                       {{"a", tensor({2, 2}, {1, 2, 3, 4})}, {"b", tensor({2}, {10, 20})}});
  expect_tensor(t, {2, 2}, {11, 22, 13, 24});
}

TEST(RefexecOps, EwmulBroadcastsBothSides) {
  Tensor t = eval_term("(ewmul (input a@2_1) (input b@1_3))",
                       {{"a", tensor({2, 1}, {1, 2})}, {"b", tensor({1, 3}, {1, 10, 100})}});
  expect_tensor(t, {2, 3}, {1, 10, 100, 2, 20, 200});
}

TEST(RefexecOps, EwaddRank3Broadcast) {
  // [2,1,3] + [2,1] -> [2,2,3]: out[i,j,k] = a[i,0,k] + b[j,0].
  Tensor t = eval_term("(ewadd (input a@2_1_3) (input b@2_1))",
                       {{"a", tensor({2, 1, 3}, {1, 2, 3, 4, 5, 6})}, {"b", tensor({2, 1}, {10, 20})}});
  expect_tensor(t, {2, 2, 3}, {11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26});
}

TEST(RefexecOps, EwmulPerChannel) {
  // [1,2,2,2] * [2,1,1]: scale each channel.
  Tensor t = eval_term("(ewmul (input a@1_2_2_2) (input s@2_1_1))",
                       {{"a", tensor({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                        {"s", tensor({2, 1, 1}, {2, -1})}});
  expect_tensor(t, {1, 2, 2, 2}, {2, 4, 6, 8, -5, -6, -7, -8});
}

TEST(RefexecOps, Activations) {
  Inputs in{{"x", tensor({4}, {-2, -0.5f, 0, 3})}};
  expect_tensor(eval_term("(relu (input x@4))", in), {4}, {0, 0, 0, 3});
  expect_tensor(eval_term("(tanh (input x@4))", in), {4},
                {std::tanh(-2.0f), std::tanh(-0.5f), 0, std::tanh(3.0f)});
  auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  expect_tensor(eval_term("(sigmoid (input x@4))", in), {4}, {sig(-2), sig(-0.5f), 0.5f, sig(3)});
}

TEST(RefexecOps, Matmul2x2) {
  Inputs in{{"a", tensor({2, 2}, {1, 2, 3, 4})}, {"b", tensor({2, 2}, {5, 6, 7, 8})}};
  expect_tensor(eval_term("(matmul none (input a@2_2) (input b@2_2) none)", in), {2, 2},
                {19, 22, 43, 50});
}

TEST(RefexecOps, MatmulBiasRelu) {
  WeightStore w;
  w.put_f32("bias", {2}, {1, -100});
  Inputs in{{"a", tensor({2, 2}, {1, 2, 3, 4})}, {"b", tensor({2, 2}, {5, 6, 7, 8})}};
  expect_tensor(eval_term("(matmul relu (input a@2_2) (input b@2_2) (weight bias@2))", in, w),
                {2, 2}, {20, 0, 44, 0});
}

TEST(RefexecOps, MatmulBatchedWithSharedRhs) {
  Inputs in{{"a", tensor({2, 1, 2}, {1, 2, 3, 4})}, {"b", tensor({2, 1}, {1, 1})}};
  expect_tensor(eval_term("(matmul none (input a@2_1_2) (input b@2_1) none)", in), {2, 1, 1},
                {3, 7});
}

TEST(RefexecOps, MatmulBatchedLhsBroadcast) {
  // a [1,2] against b [2, 2,1]: out[t] = a @ b[t].
  Inputs in{{"a", tensor({1, 2}, {1, 2})}, {"b", tensor({2, 2, 1}, {1, 1, 10, 100})}};
  expect_tensor(eval_term("(matmul none (input a@1_2) (input b@2_2_1) none)", in), {2, 1, 1},
                {3, 210});
}

TEST(RefexecOps, ConvValid) {
  Inputs in{{"x", k3x3}, {"w", tensor({1, 1, 2, 2}, {1, 1, 1, 1})}};
  expect_tensor(eval_term("(conv 1 1 valid none (input x@1_1_3_3) (input w@1_1_2_2) none)", in),
                {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(RefexecOps, ConvSame) {
  Inputs in{{"x", k3x3}, {"w", tensor({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}};
  expect_tensor(eval_term("(conv 1 1 same none (input x@1_1_3_3) (input w@1_1_3_3) none)", in),
                {1, 1, 3, 3}, {12, 21, 16, 27, 45, 33, 24, 39, 28});
  expect_tensor(eval_term("(conv 2 2 same none (input x@1_1_3_3) (input w@1_1_3_3) none)", in),
                {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(RefexecOps, ConvAsymmetricPadsBiasRelu) {
  // Pads top 1, left 0, bottom 0, right 1; 2x2 ones kernel.
  WeightStore w;
  w.put_f32("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  w.put_f32("b", {1}, {-20});
  Inputs in{{"x", k3x3}};
  expect_tensor(
      eval_term("(conv 1 1 p1_0_0_1 none (input x@1_1_3_3) (weight w@1_1_2_2) none)", in, w),
      {1, 1, 3, 3}, {3, 5, 3, 12, 16, 9, 24, 28, 15});
  expect_tensor(
      eval_term("(conv 1 1 p1_0_0_1 relu (input x@1_1_3_3) (weight w@1_1_2_2) (weight b@1))", in, w),
      {1, 1, 3, 3}, {0, 0, 0, 0, 0, 0, 4, 8, 0});
}

TEST(RefexecOps, ConvGroups) {
  Inputs in{{"x", tensor({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}};
  WeightStore w;
  w.put_f32("g", {2, 1, 1, 1}, {2, 3});   // groups = 2 / 1 = 2
  w.put_f32("d", {1, 2, 1, 1}, {1, 1});   // groups = 1
  expect_tensor(eval_term("(conv 1 1 valid none (input x@1_2_2_2) (weight g@2_1_1_1) none)", in, w),
                {1, 2, 2, 2}, {2, 4, 6, 8, 15, 18, 21, 24});
  expect_tensor(eval_term("(conv 1 1 valid none (input x@1_2_2_2) (weight d@1_2_1_1) none)", in, w),
                {1, 1, 2, 2}, {6, 8, 10, 12});
}

TEST(RefexecOps, ConvFusedTanhSigmoid) {
  Inputs in{{"x", tensor({1, 1, 1, 2}, {0.5f, -1})}, {"w", tensor({1, 1, 1, 1}, {2})}};
  expect_tensor(eval_term("(conv 1 1 valid tanh (input x@1_1_1_2) (input w@1_1_1_1) none)", in),
                {1, 1, 1, 2}, {std::tanh(1.0f), std::tanh(-2.0f)});
  expect_tensor(eval_term("(conv 1 1 valid sigmoid (input x@1_1_1_2) (input w@1_1_1_1) none)", in),
                {1, 1, 1, 2}, {1 / (1 + std::exp(-1.0f)), 1 / (1 + std::exp(2.0f))});
}

TEST(RefexecOps, PoolMax) {
  Tensor x({1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.data[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  expect_tensor(eval_term("(poolmax 2 2 2 2 valid (input x@1_1_4_4))", {{"x", x}}), {1, 1, 2, 2},
                {6, 8, 14, 16});
}

TEST(RefexecOps, PoolMaxIgnoresPadding) {
  // All values negative: a zero pad would win the max if it were counted.
  Tensor x = k3x3;
  for (auto& v : x.data) v = -v;
  expect_tensor(eval_term("(poolmax 3 3 1 1 same (input x@1_1_3_3))", {{"x", x}}), {1, 1, 3, 3},
                {-1, -1, -2, -1, -1, -2, -4, -4, -5});
}

TEST(RefexecOps, PoolAvgCountIncludePad) {
  // 2x2 window, stride 1, pads top 1 / left 1 / bottom 0 / right 0.
  Inputs in{{"x", k3x3}};
  expect_tensor(eval_term("(poolavg 2 2 1 1 p1_1_0_0 0 (input x@1_1_3_3))", in), {1, 1, 3, 3},
                {1, 1.5f, 2.5f, 2.5f, 3, 4, 5.5f, 6, 7});
  expect_tensor(eval_term("(poolavg 2 2 1 1 p1_1_0_0 1 (input x@1_1_3_3))", in), {1, 1, 3, 3},
                {0.25f, 0.75f, 1.25f, 1.25f, 3, 4, 2.75f, 6, 7});
}

TEST(RefexecOps, PoolAvgSameStride2) {
  // 3x3 same, stride 2 on 3x3: windows centred at (0,0),(0,2),(2,0),(2,2) -> 4 real cells each.
  Inputs in{{"x", k3x3}};
  expect_tensor(eval_term("(poolavg 3 3 2 2 same 0 (input x@1_1_3_3))", in), {1, 1, 2, 2},
                {3, 4, 6, 7});
  expect_tensor(eval_term("(poolavg 3 3 2 2 same 1 (input x@1_1_3_3))", in), {1, 1, 2, 2},
                {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9});
}

TEST(RefexecOps, Transpose) {
  expect_tensor(eval_term("(transpose 1_0 (input x@2_3))", {{"x", tensor({2, 3}, {1, 2, 3, 4, 5, 6})}}),
                {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor x({2, 2, 2});
  for (int i = 0; i < 8; ++i) x.data[static_cast<size_t>(i)] = static_cast<float>(i);
  // out[i,j,k] = x[j,k,i]
  expect_tensor(eval_term("(transpose 2_0_1 (input x@2_2_2))", {{"x", x}}), {2, 2, 2},
                {0, 2, 4, 6, 1, 3, 5, 7});
  expect_tensor(eval_term("(transpose 0 (input y@3))", {{"y", tensor({3}, {1, 2, 3})}}), {3},
                {1, 2, 3});
}

TEST(RefexecOps, Reshape) {
  Inputs in{{"x", tensor({2, 3}, {1, 2, 3, 4, 5, 6})}};
  expect_tensor(eval_term("(reshape 3_2 (input x@2_3))", in), {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor(eval_term("(reshape 6 (input x@2_3))", in), {6}, {1, 2, 3, 4, 5, 6});
}

TEST(RefexecOps, Enlarge) {
  WeightStore w;
  w.put_f32("w", {1, 1, 1, 1}, {5});
  w.put_f32("r", {1, 1, 1, 3}, {1, 2, 3});
  w.put_f32("ref", {2, 1, 3, 3}, std::vector<float>(18, 7.0f));
  expect_tensor(eval_term("(enlarge (weight w@1_1_1_1) (weight ref@2_1_3_3))", {}, w),
                {1, 1, 3, 3}, {0, 0, 0, 0, 5, 0, 0, 0, 0});
  expect_tensor(eval_term("(enlarge (weight r@1_1_1_3) (weight ref@2_1_3_3))", {}, w),
                {1, 1, 3, 3}, {0, 0, 0, 1, 2, 3, 0, 0, 0});
  // Only the reference's shape matters: its value is never read.
  expect_tensor(eval_term("(enlarge (weight w@1_1_1_1) (weight absent@1_1_3_3))", {}, w),
                {1, 1, 3, 3}, {0, 0, 0, 0, 5, 0, 0, 0, 0});
}

TEST(RefexecOps, Concat) {
  Inputs in{{"a", tensor({2, 1}, {1, 2})}, {"b", tensor({2, 2}, {3, 4, 5, 6})},
            {"c", tensor({1, 2}, {7, 8})}};
  expect_tensor(eval_term("(concat 1 (input a@2_1) (input b@2_2))", in), {2, 3}, {1, 3, 4, 2, 5, 6});
  expect_tensor(eval_term("(concat 0 (input b@2_2) (input c@1_2))", in), {3, 2}, {3, 4, 5, 6, 7, 8});
}

TEST(RefexecOps, Split) {
  Inputs in{{"x", tensor({2, 3}, {1, 2, 3, 4, 5, 6})}};
  expect_tensor(eval_term("(split_0 (split 1 1 (input x@2_3)))", in), {2, 1}, {1, 4});
  expect_tensor(eval_term("(split_1 (split 1 1 (input x@2_3)))", in), {2, 2}, {2, 3, 5, 6});
  expect_tensor(eval_term("(split_1 (split 0 1 (input x@2_3)))", in), {1, 3}, {4, 5, 6});
}

TEST(RefexecOps, SplitConcatRoundTrip) {
  for (int axis = 0; axis < 3; ++axis) {
    Shape s{4, 6, 5};
    Tensor x = random_tensor(s, 7 + static_cast<uint64_t>(axis));
    for (int64_t pos = 1; pos < s[static_cast<size_t>(axis)]; ++pos) {
      std::string sp = "(split " + std::to_string(axis) + " " + std::to_string(pos) + " (input x@4_6_5))";
      Tensor t = eval_term("(concat " + std::to_string(axis) + " (split_0 " + sp + ") (split_1 " + sp + "))",
                           {{"x", x}});
      expect_tensor(t, s, x.data, 0.0f);
    }
  }
}

TEST(RefexecOps, Merge) {
  // O=4, count=2: channels 0,1 take slot 0, channels 2,3 slot 1.
  WeightStore w;
  w.put_f32("w", {4, 1, 1, 1}, {1, 2, 3, 4});
  w.put_f32("v", {2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_tensor(eval_term("(merge 2 (weight w@4_1_1_1))", {}, w), {4, 2, 1, 1},
                {1, 0, 2, 0, 0, 3, 0, 4});
  // O=2, I=2, kernel 1x2, count=2: out[o, s*2 + i, :, :] = w[o, i], s = o.
  expect_tensor(eval_term("(merge 2 (weight v@2_2_1_2))", {}, w), {2, 4, 1, 2},
                {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 7, 8});
}

TEST(RefexecOps, MergedWeightComputesGroupedConv) {
  // TASO: a grouped conv with w [O, I, kh, kw] (groups = Cin / I) equals the dense conv
  // with merge(groups, w), whose zeros cut each output slot off the other groups' inputs.
  ir::Graph g;
  ir::NodeId x = g.input("x", {DType::F32, {1, 4, 5, 5}});
  ir::NodeId w = g.weight("w", {DType::F32, {6, 2, 3, 3}});
  auto conv = [&](ir::NodeId wt) {
    return g.op(Op::Conv, {g.num(1), g.num(1), g.sym("same"), g.sym("none"), x, wt, g.sym("none")});
  };
  ir::NodeId grouped = conv(w);                                // groups = 4 / 2 = 2
  ir::NodeId dense = conv(g.op(Op::Merge, {g.num(2), w}));     // groups = 4 / 4 = 1
  ir::NodeId root = g.op(Op::Noop, {grouped, dense});
  WeightStore ws;
  ws.put_f32("w", {6, 2, 3, 3}, random_tensor({6, 2, 3, 3}, 3).data);
  RunResult r = run_checked(g, root, ws, {{"x", random_tensor({1, 4, 5, 5}, 4)}});
  expect_close(r.outputs[1], r.outputs[0]);
}

}  // namespace
}  // namespace tensat::refexec::testing
