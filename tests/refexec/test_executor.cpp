// The executor's graph walk: several outputs, provided values (opaque nodes and region
// cuts), keep_all, error reporting, and random_tensor's determinism.
#include <gtest/gtest.h>

#include "test_util.h"

namespace tensat::refexec::testing {
namespace {

TensorType f32(Shape s) { return TensorType{DType::F32, std::move(s)}; }

// Runs and returns the ExecError message (fails the test if nothing is thrown).
std::string exec_error(const ir::Graph& g, const WeightStore& w, const Inputs& in,
                       const RunOptions& opts = {}) {
  try {
    run(g, w, in, opts);
  } catch (const ExecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ExecError";
  return "";
}

TEST(RefexecExecutor, NoopRootGivesOutputsInOrder) {
  ir::Graph g;
  ir::NodeId root = parse_term(g, "(noop (relu (input x@2)) (input x@2) (relu (input x@2)))");
  RunResult r = run_checked(g, root, {}, {{"x", tensor({2}, {-1, 2})}});
  ASSERT_EQ(r.outputs.size(), 3u);
  expect_tensor(r.outputs[0], {2}, {0, 2});
  expect_tensor(r.outputs[1], {2}, {-1, 2});
  expect_tensor(r.outputs[2], {2}, {0, 2});
}

TEST(RefexecExecutor, FreesIntermediatesWithoutChangingResults) {
  // A chain with a value used twice late: results must not depend on keep_all.
  ir::Graph g;
  ir::NodeId root = parse_term(
      g, "(ewadd (relu (ewmul (input x@3) (input x@3))) (tanh (relu (ewmul (input x@3) (input x@3)))))");
  g.set_root(root);
  Inputs in{{"x", tensor({3}, {-1, 0.5f, 2})}};
  RunOptions keep;
  keep.keep_all = true;
  RunResult a = run(g, {}, in), b = run(g, {}, in, keep);
  expect_close(a.outputs[0], b.outputs[0], 0);
  EXPECT_TRUE(a.values.empty());
  EXPECT_FALSE(b.values.empty());
}

TEST(RefexecExecutor, ValuesAreFreedAfterTheirLastUse) {
  // relu^6 of a [1000] input: at most two 4000-byte values are alive at once, unless
  // keep_all keeps all six.
  std::string term = "(input x@1000)";
  for (int i = 0; i < 6; ++i) term = "(relu " + term + ")";
  ir::Graph g;
  g.set_root(parse_term(g, term));
  Inputs in{{"x", random_tensor({1000}, 5)}};
  RunOptions keep;
  keep.keep_all = true;
  EXPECT_EQ(run(g, {}, in).peak_bytes, 2 * 4000u);
  EXPECT_EQ(run(g, {}, in, keep).peak_bytes, 6 * 4000u);
}

TEST(RefexecExecutor, TransposedWeightReadAsMatmulBIsNotComputed) {
  // Gemm(transB = 1) imports as (matmul A (transpose 1_0 W) C): the matmul reads W in place
  // as a transposed B; the same values as over a stored W^T, and no copy of W^T is made
  // (peak_bytes counts the output alone). A of rank 3 folds its batch into the rows.
  WeightStore w;
  const Tensor wv = random_tensor({5, 4}, 7), bias = random_tensor({5}, 8);
  std::vector<float> wt(20);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 4; ++c) wt[static_cast<size_t>(c * 5 + r)] = wv.data[static_cast<size_t>(r * 4 + c)];
  w.put_f32("w", {5, 4}, wv.data);
  w.put_f32("wt", {4, 5}, wt);
  w.put_f32("b", {5}, bias.data);
  for (const char* a : {"3_4", "2_3_4"}) {
    SCOPED_TRACE(a);
    const std::string x = std::string("(input x@") + a + ")";
    ir::Graph g1, g2;
    g1.set_root(parse_term(g1, "(matmul relu " + x + " (transpose 1_0 (weight w@5_4)) (weight b@5))"));
    g2.set_root(parse_term(g2, "(matmul relu " + x + " (weight wt@4_5) (weight b@5))"));
    const Shape xs = a == std::string("3_4") ? Shape{3, 4} : Shape{2, 3, 4};
    Inputs in{{"x", random_tensor(xs, 9)}};
    RunResult r1 = run(g1, w, in), r2 = run(g2, w, in);
    expect_close(r1.outputs[0], r2.outputs[0], 1e-5f);
    EXPECT_EQ(r1.peak_bytes, r1.outputs[0].data.size() * sizeof(float));
    // Another reader of the transpose (or keep_all) computes it: the same values.
    RunOptions keep;
    keep.keep_all = true;
    expect_close(run(g1, w, in, keep).outputs[0], r2.outputs[0], 1e-5f);
  }
  ir::Graph g3;
  g3.set_root(parse_term(g3, "(noop (matmul none (input x@3_4) (transpose 1_0 (weight w@5_4)) none) "
                             "(transpose 1_0 (weight w@5_4)))"));
  RunResult r3 = run(g3, w, {{"x", random_tensor({3, 4}, 9)}});
  expect_tensor(r3.outputs[1], {4, 5}, wt);
  EXPECT_EQ(r3.peak_bytes, (15 + 20) * sizeof(float));
  // A provided transpose is read as given, not as the weight.
  ir::Graph g4;
  const ir::NodeId t = parse_term(g4, "(transpose 1_0 (weight w@5_4))");
  g4.set_root(g4.op(Op::Matmul, {g4.sym("none"), parse_term(g4, "(input x@3_4)"), t, g4.sym("none")}));
  RunOptions given;
  given.provided.emplace(t, Tensor(Shape{4, 5}, std::vector<float>(20, 0.0f)));
  expect_tensor(run(g4, w, {{"x", random_tensor({3, 4}, 9)}}, given).outputs[0], {3, 5}, std::vector<float>(15, 0.0f));
}

TEST(RefexecExecutor, SplitPartsSurviveUntilBothAreTaken) {
  ir::Graph g;
  ir::NodeId s = parse_term(g, "(split 0 1 (relu (input x@3)))");
  ir::NodeId root = g.op(Op::Noop, {g.op(Op::Split1, {s}), g.op(Op::Split0, {s}), g.op(Op::Split1, {s})});
  g.set_root(root);
  RunResult r = run(g, {}, {{"x", tensor({3}, {1, -2, 3})}});
  expect_tensor(r.outputs[0], {2}, {0, 3});
  expect_tensor(r.outputs[1], {1}, {1});
  expect_tensor(r.outputs[2], {2}, {0, 3});
}

TEST(RefexecExecutor, SingleOutputOpaqueNeedsProvidedValue) {
  ir::Graph g;
  ir::NodeId x = g.input("x", f32({1, 2}));
  ir::NodeId op = g.op(Op::Opaque, {g.sym(make_opaque_id(0, {f32({1, 2})})), x});
  ir::NodeId root = g.op(Op::Relu, {op});
  g.set_root(root);
  Inputs in{{"x", tensor({1, 2}, {1, 2})}};
  std::string msg = exec_error(g, {}, in);
  EXPECT_NE(msg.find("opaque"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%" + std::to_string(op)), std::string::npos) << msg;

  RunOptions opts;
  opts.provided.emplace(op, tensor({1, 2}, {-3, 4}));
  RunResult r = run(g, {}, in, opts);
  expect_tensor(r.outputs[0], {1, 2}, {0, 4});
}

TEST(RefexecExecutor, MultiOutputOpaqueUsesProvidedSelects) {
  ir::Graph g;
  ir::NodeId x = g.input("x", f32({2}));
  ir::NodeId op = g.op(Op::Opaque, {g.sym(make_opaque_id(3, {f32({2}), f32({1})})), x});
  ir::NodeId s0 = g.op(Op::Select, {g.num(0), op});
  ir::NodeId s1 = g.op(Op::Select, {g.num(1), op});
  ir::NodeId root = g.op(Op::Ewadd, {s0, s1});
  g.set_root(root);
  std::string msg = exec_error(g, {}, {{"x", tensor({2}, {0, 0})}});
  EXPECT_NE(msg.find("select"), std::string::npos) << msg;

  RunOptions opts;
  opts.provided.emplace(s0, tensor({2}, {1, 2}));
  opts.provided.emplace(s1, tensor({1}, {10}));
  // The opaque node's inputs are not needed once its outputs are provided: no "x" given.
  RunResult r = run(g, {}, {}, opts);
  expect_tensor(r.outputs[0], {2}, {11, 12});
}

TEST(RefexecExecutor, ProvidedValueCutsTheGraph) {
  ir::Graph g;
  ir::NodeId inner = parse_term(g, "(relu (weight missing@2))");
  ir::NodeId root = g.op(Op::Tanh, {inner});
  g.set_root(root);
  RunOptions opts;
  opts.provided.emplace(inner, tensor({2}, {0, 1}));
  RunResult r = run(g, {}, {}, opts);  // the missing weight is never read
  expect_tensor(r.outputs[0], {2}, {0, std::tanh(1.0f)});
}

TEST(RefexecExecutor, ProvidedValueWithWrongShapeIsAnError) {
  ir::Graph g;
  ir::NodeId x = parse_term(g, "(input x@2)");
  g.set_root(g.op(Op::Relu, {x}));
  RunOptions opts;
  opts.provided.emplace(x, tensor({3}, {0, 1, 2}));
  EXPECT_NE(exec_error(g, {}, {}, opts).find("[3]"), std::string::npos);
}

TEST(RefexecExecutor, MissingInputIsAnError) {
  ir::Graph g;
  g.set_root(parse_term(g, "(relu (input data@1_2))"));
  std::string msg = exec_error(g, {}, {});
  EXPECT_NE(msg.find("'data'"), std::string::npos) << msg;
}

TEST(RefexecExecutor, InputWithWrongShapeIsAnError) {
  ir::Graph g;
  g.set_root(parse_term(g, "(relu (input data@1_2))"));
  std::string msg = exec_error(g, {}, {{"data", tensor({2}, {1, 2})}});
  EXPECT_NE(msg.find("data"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,2]"), std::string::npos) << msg;
}

TEST(RefexecExecutor, MissingWeightIsAnError) {
  ir::Graph g;
  g.set_root(parse_term(g, "(relu (weight conv1_w@2))"));
  std::string msg = exec_error(g, {}, {});
  EXPECT_NE(msg.find("conv1_w"), std::string::npos) << msg;
}

TEST(RefexecExecutor, NonFloatWeightIsAnError) {
  ir::Graph g;
  g.set_root(g.op(Op::Reshape, {g.num(2), g.weight("shape", TensorType{DType::I64, {2}})}));
  WeightStore w;
  w.put("shape", WeightData{TensorType{DType::I64, {2}}, std::string(16, '\0')});
  std::string msg = exec_error(g, w, {});
  EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
  EXPECT_NE(msg.find("i64"), std::string::npos) << msg;
}

TEST(RefexecExecutor, WeightStoredWithOtherShapeIsAnError) {
  ir::Graph g;
  g.set_root(parse_term(g, "(relu (weight w@2_2))"));
  WeightStore w;
  w.put_f32("w", {4}, {1, 2, 3, 4});
  EXPECT_NE(exec_error(g, w, {}).find("[4]"), std::string::npos);
}

TEST(RefexecExecutor, GraphWithoutRootIsAnError) {
  ir::Graph g;
  parse_term(g, "(relu (input x@2))");
  EXPECT_NE(exec_error(g, {}, {}).find("root"), std::string::npos);
}

TEST(RefexecExecutor, UnusedNodesAreNotEvaluated) {
  // The graph holds a node needing a missing weight, but the root does not use it.
  ir::Graph g;
  parse_term(g, "(relu (weight nowhere@2))");
  g.set_root(parse_term(g, "(relu (input x@2))"));
  RunResult r = run(g, {}, {{"x", tensor({2}, {-1, 1})}});
  expect_tensor(r.outputs[0], {2}, {0, 1});
}

TEST(RefexecExecutor, RandomTensorIsDeterministic) {
  Tensor a = random_tensor({3, 5}, 42), b = random_tensor({3, 5}, 42), c = random_tensor({3, 5}, 43);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  Tensor d = random_tensor({1000}, 1, -2.0f, 3.0f);
  float lo = 10, hi = -10;
  for (float v : d.data) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -2.0f);
  EXPECT_LT(hi, 3.0f);
  EXPECT_LT(lo, -1.5f);  // spread over the range
  EXPECT_GT(hi, 2.5f);
  // Pinned values: the sequence must not change between builds or platforms.
  // (Values are k / 2^23 - 1, exact in float, so exact comparison is right.)
  EXPECT_EQ(random_tensor({3}, 0).data, (std::vector<float>{0.304896951f, -0.667207122f, 0.0197579861f}));
}

}  // namespace
}  // namespace tensat::refexec::testing
