// GPU executor against the CPU reference executor (skipped without a GPU): every operator
// and parameter combination of the benchmark models, on small shapes, plus whole chains,
// several outputs, opaque values supplied by the caller, and end-to-end timing.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "lang/graph.h"
#include "lang/runtime_fusion.h"
#include "lang/weights.h"
#include "gpu_cost/gpu_executor.h"
#include "refexec/executor.h"
#include "test_support.h"

namespace tensat::gpu {
namespace {

using Inputs = std::unordered_map<std::string, Tensor>;

std::vector<float> random_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>((s >> 40) & 0xffffff) / 8388608.0f - 1.0f;
  }
  return v;
}

/// Builds graphs tersely: inputs and weights get deterministic random values.
struct Builder {
  ir::Graph g;
  WeightStore w;
  Inputs in;
  uint64_t seed = 1;

  ir::NodeId input(const std::string& name, Shape s) {
    Tensor t(s, random_values(static_cast<size_t>(num_elements(s)), seed++));
    in[name] = t;
    return g.input(name, TensorType{DType::F32, std::move(s)});
  }
  ir::NodeId weight(const std::string& name, Shape s) {
    w.put_f32(name, s, random_values(static_cast<size_t>(num_elements(s)), seed++));
    return g.weight(name, TensorType{DType::F32, std::move(s)});
  }
  ir::NodeId none() { return g.sym("none"); }
  ir::NodeId matmul(const std::string& act, ir::NodeId a, ir::NodeId b, ir::NodeId bias) {
    return g.op(Op::Matmul, {g.sym(act), a, b, bias});
  }
  ir::NodeId conv(int64_t sh, int64_t sw, const std::string& pad, const std::string& act, ir::NodeId x, ir::NodeId k,
                  ir::NodeId bias) {
    return g.op(Op::Conv, {g.num(sh), g.num(sw), g.sym(pad), g.sym(act), x, k, bias});
  }
  ir::NodeId pool(Op op, int64_t k, int64_t s, const std::string& pad, int cip, ir::NodeId x) {
    std::vector<ir::NodeId> c = {g.num(k), g.num(k), g.num(s), g.num(s), g.sym(pad)};
    if (op == Op::Poolavg) c.push_back(g.num(cip));
    c.push_back(x);
    return g.op(op, c);
  }
  void outputs(std::vector<ir::NodeId> outs) {
    g.set_root(outs.size() == 1 ? outs[0] : g.op(Op::Noop, outs));
  }
};

struct Case {
  std::string name;
  std::function<void(Builder&)> build;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }  // readable ctest names

std::vector<Case> cases() {
  using B = Builder;
  return {
      {"matmul", [](B& b) { b.outputs({b.matmul("none", b.input("x", {64, 128}), b.weight("w", {128, 96}), b.none())}); }},
      {"matmul_bias_relu", [](B& b) {
         b.outputs({b.matmul("relu", b.input("x", {8, 64}), b.weight("w", {64, 32}), b.weight("b", {32}))});
       }},
      {"matmul_sigmoid_tanh", [](B& b) {
         auto x = b.input("x", {1, 512});
         b.outputs({b.matmul("sigmoid", x, b.weight("w1", {512, 64}), b.none()),
                    b.matmul("tanh", x, b.weight("w2", {512, 64}), b.weight("b2", {64}))});
       }},
      {"matmul_batched", [](B& b) { b.outputs({b.matmul("none", b.input("q", {4, 16, 32}), b.input("k", {4, 32, 16}), b.none())}); }},
      {"matmul_broadcast_weight", [](B& b) {
         b.outputs({b.matmul("none", b.input("x", {2, 3, 8, 16}), b.weight("w", {16, 8}), b.none())});
       }},
      {"matmul_partial_broadcast", [](B& b) {
         b.outputs({b.matmul("none", b.input("a", {2, 1, 8, 16}), b.input("c", {1, 3, 16, 8}), b.none())});
       }},
      {"matmul_zeros_bias", [](B& b) {
         b.outputs({b.matmul("relu", b.input("x", {4, 16}), b.weight("w", {16, 8}), b.g.op(Op::Zeros, {b.g.num(8)}))});
       }},
      {"conv7x7s2_same_relu_bias", [](B& b) {
         b.outputs({b.conv(2, 2, "same", "relu", b.input("x", {1, 3, 32, 32}), b.weight("w", {16, 3, 7, 7}), b.weight("b", {16}))});
       }},
      // A conv that only a relu reads runs fused with it (lang/runtime_fusion.h); one that
      // another node reads too, or a graph output, runs apart.
      {"relu_of_conv_fused_at_run_time", [](B& b) {
         auto c = b.conv(1, 1, "same", "none", b.input("x", {1, 8, 14, 14}), b.weight("w", {16, 8, 3, 3}), b.weight("b", {16}));
         b.outputs({b.g.op(Op::Relu, {c})});
       }},
      {"relu_of_conv_read_twice", [](B& b) {
         auto c = b.conv(1, 1, "same", "none", b.input("x", {1, 8, 14, 14}), b.weight("w", {16, 8, 3, 3}), b.none());
         b.outputs({b.g.op(Op::Ewadd, {b.g.op(Op::Relu, {c}), c})});
       }},
      {"relu_of_conv_output_too", [](B& b) {
         auto c = b.conv(2, 2, "same", "none", b.input("x", {1, 8, 14, 14}), b.weight("w", {16, 8, 3, 3}), b.weight("b", {16}));
         b.outputs({c, b.g.op(Op::Relu, {c})});
       }},
      {"conv3x3_grouped_relu", [](B& b) {
         b.outputs({b.conv(1, 1, "same", "relu", b.input("x", {1, 32, 14, 14}), b.weight("w", {32, 4, 3, 3}), b.none())});
       }},
      {"conv3x3_grouped_stride2", [](B& b) {
         b.outputs({b.conv(2, 2, "same", "relu", b.input("x", {1, 32, 14, 14}), b.weight("w", {32, 4, 3, 3}), b.weight("b", {32}))});
       }},
      {"conv1x1_bias_noact", [](B& b) {
         b.outputs({b.conv(1, 1, "same", "none", b.input("x", {1, 32, 14, 14}), b.weight("w", {64, 32, 1, 1}), b.weight("b", {64}))});
       }},
      {"conv1x1_noact", [](B& b) {
         b.outputs({b.conv(1, 1, "valid", "none", b.input("x", {2, 32, 7, 7}), b.weight("w", {16, 32, 1, 1}), b.none())});
       }},
      {"depthwise5x5s2", [](B& b) {
         b.outputs({b.conv(2, 2, "same", "none", b.input("x", {1, 16, 15, 15}), b.weight("w", {16, 1, 5, 5}), b.none())});
       }},
      {"depthwise7x7", [](B& b) {
         b.outputs({b.conv(1, 1, "same", "none", b.input("x", {1, 8, 12, 12}), b.weight("w", {8, 1, 7, 7}), b.none())});
       }},
      {"separable", [](B& b) {
         auto d = b.conv(1, 1, "same", "none", b.input("x", {1, 16, 10, 10}), b.weight("dw", {16, 1, 3, 3}), b.none());
         b.outputs({b.conv(1, 1, "same", "none", d, b.weight("pw", {24, 16, 1, 1}), b.none())});
       }},
      {"conv_asymmetric_pads_sigmoid", [](B& b) {
         b.outputs({b.conv(1, 1, "p0_1_1_0", "sigmoid", b.input("x", {1, 8, 9, 9}), b.weight("w", {8, 8, 2, 2}), b.none())});
       }},
      {"conv_explicit_pads_tanh_bias", [](B& b) {
         b.outputs({b.conv(2, 1, "p1_2_1_2", "tanh", b.input("x", {1, 4, 11, 9}), b.weight("w", {6, 4, 3, 5}), b.weight("b", {6}))});
       }},
      {"poolmax3x3s2_same", [](B& b) { b.outputs({b.pool(Op::Poolmax, 3, 2, "same", 0, b.input("x", {1, 8, 17, 17}))}); }},
      {"poolmax2x2s2_valid", [](B& b) { b.outputs({b.pool(Op::Poolmax, 2, 2, "valid", 0, b.input("x", {1, 8, 16, 16}))}); }},
      {"poolavg3x3_same_exclude", [](B& b) { b.outputs({b.pool(Op::Poolavg, 3, 1, "same", 0, b.input("x", {1, 8, 9, 9}))}); }},
      {"poolavg3x3_same_include", [](B& b) { b.outputs({b.pool(Op::Poolavg, 3, 1, "same", 1, b.input("x", {1, 8, 9, 9}))}); }},
      {"poolavg8x8_global", [](B& b) { b.outputs({b.pool(Op::Poolavg, 8, 1, "valid", 0, b.input("x", {1, 32, 8, 8}))}); }},
      {"poolmax_asymmetric", [](B& b) { b.outputs({b.pool(Op::Poolmax, 3, 2, "p0_0_1_1", 0, b.input("x", {1, 4, 10, 10}))}); }},
      {"poolavg_asymmetric_include", [](B& b) { b.outputs({b.pool(Op::Poolavg, 3, 2, "p1_1_0_0", 1, b.input("x", {1, 4, 10, 10}))}); }},
      {"poolavg_asymmetric_exclude", [](B& b) { b.outputs({b.pool(Op::Poolavg, 3, 2, "p0_1_1_0", 0, b.input("x", {1, 4, 10, 10}))}); }},
      {"ewadd_ewmul", [](B& b) {
         auto x = b.input("x", {1, 16, 8, 8}), y = b.input("y", {1, 16, 8, 8});
         b.outputs({b.g.op(Op::Ewadd, {x, y}), b.g.op(Op::Ewmul, {x, y})});
       }},
      {"ew_broadcast", [](B& b) {
         auto x = b.input("x", {1, 16, 8, 8});
         b.outputs({b.g.op(Op::Ewmul, {x, b.weight("s", {16, 1, 1})}), b.g.op(Op::Ewadd, {b.input("r", {4, 1}), b.input("c", {1, 5})})});
       }},
      {"ew_fast_paths", [](B& b) {  // gpu_kernels.cu: float4 (n >= 4096), per-channel, per-element and scalar operands
         auto x = b.input("x", {1, 16, 16, 16}), o = b.input("o", {1, 3, 5, 7}), t = b.input("t", {4, 6, 16, 16});
         b.outputs({b.g.op(Op::Ewadd, {b.g.op(Op::Ewmul, {x, b.weight("s", {16, 1, 1})}), b.weight("h", {16, 1, 1})}),
                    b.g.op(Op::Ewmul, {o, b.weight("so", {3, 1, 1})}), b.g.op(Op::Ewadd, {o, b.weight("one", {1})}),
                    b.g.op(Op::Ewadd, {t, b.input("c6", {6, 1, 1})}), b.g.op(Op::Ewmul, {b.input("r16", {16}), t}),
                    b.g.op(Op::Relu, {x}), b.g.op(Op::Sigmoid, {o}),
                    b.g.op(Op::Ewadd, {x, b.weight("one4", {1})}), b.g.op(Op::Ewmul, {b.weight("s1", {16, 1, 1}), x}),
                    // conv, then bias + tanh in one kernel (four floats per thread: 256 per channel)
                    b.conv(1, 1, "same", "tanh", x, b.weight("w", {16, 16, 1, 1}), b.weight("b", {16})),
                    // under 4096 elements: one per thread
                    b.g.op(Op::Ewadd, {b.input("u", {1, 16, 8, 8}), b.weight("us", {16, 1, 1})}),
                    b.g.op(Op::Relu, {b.input("v", {1, 512})})});
       }},
      {"concat_split_widened", [](B& b) {  // rows of 16 and 8 bytes moved as wider elements (16 KB and more)
         auto x = b.input("x", {1, 16, 16, 16}), y = b.input("y", {1, 8, 16, 16});
         auto s = b.g.op(Op::Split, {b.g.num(3), b.g.num(2), b.input("z", {1, 64, 16, 8})});
         b.outputs({b.g.op(Op::Concat, {b.g.num(1), x, y}),
                    b.g.op(Op::Concat, {b.g.num(3), b.input("p", {1, 64, 16, 2}), b.input("q", {1, 64, 16, 6})}),
                    b.g.op(Op::Split0, {s}), b.g.op(Op::Split1, {s}),
                    b.g.op(Op::Concat, {b.g.num(1), b.input("sa", {1, 8, 4, 4}), b.input("sb", {1, 4, 4, 4})})});
       }},
      {"activations", [](B& b) {
         auto x = b.input("x", {3, 7, 11});
         b.outputs({b.g.op(Op::Relu, {x}), b.g.op(Op::Tanh, {x}), b.g.op(Op::Sigmoid, {x})});
       }},
      {"parameterized_activations", [](B& b) {  // act's tensor is its second child (after the symbol)
         auto x = b.input("x", {1, 8, 9, 9});
         b.outputs({b.g.op(Op::Act, {b.g.sym("relu6"), x}), b.g.op(Op::Act, {b.g.sym("clip_-1.5_0.25"), x}),
                    b.g.op(Op::Act, {b.g.sym("leaky_0.1"), x}),
                    b.conv(1, 1, "same", "relu6", x, b.weight("w", {4, 8, 3, 3}), b.weight("b", {4})),
                    b.matmul("leaky_0.1", b.input("m", {4, 16}), b.weight("mw", {16, 8}), b.none())});
       }},
      {"transposes", [](B& b) {
         auto x = b.input("x", {2, 3, 4, 5});
         auto y = b.input("y", {1, 4, 5});
         b.outputs({b.g.op(Op::Transpose, {b.g.sym("3_1_0_2"), x}), b.g.op(Op::Transpose, {b.g.sym("1_0_2"), y}),
                    b.g.op(Op::Transpose, {b.g.sym("1_0"), b.input("m", {6, 9})})});
       }},
      {"bert_attention", [](B& b) {
         auto x = b.g.op(Op::Relu, {b.input("x", {16, 64})});
         auto proj = [&](const std::string& n) {
           auto m = b.matmul("none", x, b.weight(n, {64, 64}), b.none());
           return b.g.op(Op::Transpose, {b.g.sym("1_0_2"), b.g.op(Op::Reshape, {b.g.sym("16_4_16"), m})});
         };
         auto q = proj("wq"), k = proj("wk"), v = proj("wv");
         auto kt = b.g.op(Op::Transpose, {b.g.sym("0_2_1"), k});
         auto att = b.matmul("none", b.matmul("none", q, kt, b.none()), v, b.none());
         auto back = b.g.op(Op::Reshape, {b.g.sym("16_64"), b.g.op(Op::Transpose, {b.g.sym("1_0_2"), att})});
         b.outputs({b.matmul("none", back, b.weight("wo", {64, 64}), b.none())});
       }},
      {"concats", [](B& b) {
         auto x = b.input("x", {1, 8, 5, 5}), y = b.input("y", {1, 4, 5, 5});
         b.outputs({b.g.op(Op::Concat, {b.g.num(1), x, y}), b.g.op(Op::Concat, {b.g.num(0), b.input("a", {3, 4}), b.input("c", {2, 4})}),
                    b.g.op(Op::Concat, {b.g.num(3), x, b.input("z", {1, 8, 5, 2})})});
       }},
      {"split_parts", [](B& b) {
         auto s = b.g.op(Op::Split, {b.g.num(1), b.g.num(3), b.input("x", {2, 8, 4})});
         auto s2 = b.g.op(Op::Split, {b.g.num(0), b.g.num(1), b.input("y", {3, 5})});
         b.outputs({b.g.op(Op::Split0, {s}), b.g.op(Op::Split1, {s}), b.g.op(Op::Split1, {s2}), b.g.op(Op::Split0, {s2})});
       }},
      {"split_of_merged_matmul", [](B& b) {
         auto x = b.input("x", {4, 16});
         auto w = b.g.op(Op::Concat, {b.g.num(1), b.weight("w1", {16, 8}), b.weight("w2", {16, 8})});
         auto bias = b.g.op(Op::Concat, {b.g.num(0), b.weight("b1", {8}), b.weight("b2", {8})});
         auto s = b.g.op(Op::Split, {b.g.num(1), b.g.num(8), b.matmul("relu", x, w, bias)});
         b.outputs({b.g.op(Op::Split0, {s}), b.g.op(Op::Split1, {s})});
       }},
      {"enlarge_then_conv", [](B& b) {
         auto k = b.g.op(Op::Enlarge, {b.weight("w1", {8, 4, 1, 1}), b.weight("w3", {8, 4, 3, 3})});
         b.outputs({k, b.conv(1, 1, "same", "relu", b.input("x", {1, 4, 6, 6}), k, b.none())});
       }},
      {"enlarge_3_to_5", [](B& b) { b.outputs({b.g.op(Op::Enlarge, {b.weight("w", {4, 2, 3, 3}), b.weight("r", {4, 2, 5, 5})})}); }},
      {"merge", [](B& b) { b.outputs({b.g.op(Op::Merge, {b.g.num(2), b.weight("w", {8, 2, 3, 3})})}); }},
      {"resnext_block", [](B& b) {
         auto x = b.input("x", {1, 16, 8, 8});
         auto a = b.conv(1, 1, "same", "relu", x, b.weight("w1", {32, 16, 1, 1}), b.weight("b1", {32}));
         auto g = b.conv(1, 1, "same", "relu", a, b.weight("w2", {32, 4, 3, 3}), b.weight("b2", {32}));
         auto c = b.conv(1, 1, "same", "none", g, b.weight("w3", {16, 32, 1, 1}), b.weight("b3", {16}));
         b.outputs({b.g.op(Op::Relu, {b.g.op(Op::Ewadd, {c, x})})});
       }},
  };
}

::testing::AssertionResult all_close(const Tensor& got, const Tensor& want) {
  if (got.shape != want.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape) << " vs " << shape_str(want.shape);
  for (size_t i = 0; i < want.size(); ++i) {
    float tol = 1e-4f + 1e-3f * std::fabs(want.data[i]);
    if (!(std::fabs(got.data[i] - want.data[i]) <= tol))
      return ::testing::AssertionFailure() << "element " << i << ": GPU " << got.data[i] << " vs CPU " << want.data[i];
  }
  return ::testing::AssertionSuccess();
}

class GpuExecutorMatchesCpu : public ::testing::TestWithParam<Case> {};

TEST_P(GpuExecutorMatchesCpu, Outputs) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  GetParam().build(b);
  auto cpu = refexec::run(b.g, b.w, b.in);
  auto gpu = gpu::run(b.g, b.w, b.in);
  ASSERT_EQ(cpu.outputs.size(), gpu.outputs.size());
  for (size_t i = 0; i < cpu.outputs.size(); ++i) EXPECT_TRUE(all_close(gpu.outputs[i], cpu.outputs[i])) << "output " << i;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuExecutorMatchesCpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(GpuExecutor, OpaqueValuesAreSupplied) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  auto x = b.input("x", {2, 3});
  auto r = b.g.op(Op::Relu, {x});
  auto op = b.g.op(Op::Opaque, {b.g.sym(make_opaque_id(0, {TensorType{DType::F32, {2, 3}}})), r});
  b.outputs({b.g.op(Op::Ewadd, {op, x})});
  RunOptions opts;
  opts.provided[op] = Tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto cpu = refexec::run(b.g, b.w, b.in, opts);
  auto gpu = gpu::run(b.g, b.w, b.in, opts);
  EXPECT_TRUE(all_close(gpu.outputs[0], cpu.outputs[0]));
  EXPECT_THROW(gpu::run(b.g, b.w, b.in), ExecError);  // opaque value missing
}

TEST(GpuExecutor, ErrorsNameTheProblem) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  auto x = b.input("x", {2, 3});
  b.outputs({b.g.op(Op::Relu, {x})});
  try {
    gpu::run(b.g, b.w, {});
    FAIL() << "no error for a missing input";
  } catch (const ExecError& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  Inputs wrong{{"x", Tensor({3, 2})}};
  EXPECT_THROW(gpu::run(b.g, b.w, wrong), ExecError);
}

TEST(GpuExecutor, KeepAllValues) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  auto x = b.input("x", {2, 3});
  auto r = b.g.op(Op::Relu, {x});
  b.outputs({b.g.op(Op::Tanh, {r})});
  RunOptions opts;
  opts.keep_all = true;
  auto gpu = gpu::run(b.g, b.w, b.in, opts);
  ASSERT_TRUE(gpu.values.count(r));
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(gpu.values.at(r).data[i], std::max(0.0f, b.in["x"].data[i]));
}

TEST(GpuExecutor, TimeIsPositive) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  cases()[0].build(b);
  Context ctx;
  double t1 = time_ms(ctx, b.g, b.w, b.in, 2, 5);
  double t2 = time_ms(ctx, b.g, b.w, b.in, 2, 5);
  EXPECT_GT(t1, 0.0);
  EXPECT_GT(t2, 0.0);
}

// tanh, relu, tanh, ... `n` times over an input of `shape`, the last one the output.
ir::NodeId activation_chain(Builder& b, const Shape& shape, int n) {
  ir::NodeId v = b.input("x", shape);
  for (int i = 0; i < n; ++i) v = b.g.op(i % 2 ? Op::Relu : Op::Tanh, {v});
  b.outputs({v});
  return v;
}

// A chain of 12 relus over 1 MiB values: the arena holds two of them, not twelve, and the
// result is right in both modes.
TEST(GpuExecutor, ArenaReusesMemoryAndGraphReplayMatchesEager) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  const ir::NodeId v = activation_chain(b, {256, 1024}, 12);
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, {});
  EXPECT_EQ(p.steps(), 12);
  EXPECT_EQ(p.arena_unshared_bytes(), 12u * 1024 * 1024);
  EXPECT_LE(p.arena_bytes(), 2u * 1024 * 1024);
  auto cpu = refexec::run(b.g, b.w, b.in);
  p.launch();
  ctx.synchronize();
  EXPECT_TRUE(all_close(p.fetch(v), cpu.outputs[0]));
  p.replay();
  ctx.synchronize();
  EXPECT_TRUE(all_close(p.fetch(v), cpu.outputs[0]));
}

// Weight-only nodes are computed once when the program is built, not at run time.
TEST(GpuExecutor, WeightOnlyNodesAreNotSteps) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  auto w = b.g.op(Op::Transpose, {b.g.sym("1_0"), b.weight("w", {64, 32})});
  b.outputs({b.matmul("none", b.input("x", {8, 32}), w, b.none())});
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, {});
  EXPECT_EQ(p.steps(), 1);
  p.launch();
  ctx.synchronize();
  EXPECT_TRUE(all_close(p.fetch(b.g.outputs()[0]), refexec::run(b.g, b.w, b.in).outputs[0]));
}

// A conv that only a relu reads is one step, the conv with the relu fused (lang/runtime_fusion.h),
// priced as such (step_op, step_children), with the CPU reference's result; the conv's own
// value is not kept. keep_all keeps them apart (two steps, both values).
TEST(GpuExecutor, ConvThatOnlyAReluReadsIsOneStep) {
  TENSAT_REQUIRE_GPU();
  if (!ir::runtime_fusion_enabled()) GTEST_SKIP() << "TENSAT_RUNTIME_FUSION=0";
  Builder b;
  auto c = b.conv(1, 1, "same", "none", b.input("x", {1, 8, 14, 14}), b.weight("w", {16, 8, 3, 3}), b.weight("b", {16}));
  auto r = b.g.op(Op::Relu, {c});
  b.outputs({r});
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, {});
  ASSERT_EQ(p.steps(), 1);
  EXPECT_EQ(p.step_node(0), r);
  EXPECT_EQ(p.step_op(0), Op::Conv);
  EXPECT_EQ(p.step_children(0).at(3)->sym, "relu");
  EXPECT_EQ(p.step_kernels(0), 1);
  EXPECT_FALSE(p.has_value(c));
  p.launch();
  ctx.synchronize();
  const auto cpu = refexec::run(b.g, b.w, b.in);
  EXPECT_TRUE(all_close(p.fetch(r), cpu.outputs[0]));
  RunOptions keep;
  keep.keep_all = true;
  Program apart(ctx, b.g, b.w, b.in, keep);
  ASSERT_EQ(apart.steps(), 2);  // the conv (and its bias: two kernels), the relu
  EXPECT_EQ(apart.step_op(0), Op::Conv);
  EXPECT_EQ(apart.step_children(0).at(3)->sym, "none");
  EXPECT_EQ(apart.step_op(1), Op::Relu);
  EXPECT_TRUE(apart.has_value(c));
}

TEST(GpuTiming, BothModesWithTheirSpread) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  cases()[0].build(b);
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, {}, true);
  TimingOptions o;
  o.repeats = 60;
  Timing t = time_program(ctx, p, o);
  ASSERT_TRUE(t.graph.ok) << t.graph.error;
  ASSERT_TRUE(t.eager.ok) << t.eager.error;
  EXPECT_EQ(t.graph.stats.samples, 60);
  EXPECT_EQ(t.eager.stats.samples, 60);
  EXPECT_GT(t.graph.stats.median_ms, 0.0);
  EXPECT_GE(t.graph.stats.iqr_ms(), 0.0);
  EXPECT_LE(t.graph.stats.q1_ms, t.graph.stats.median_ms);
  EXPECT_LE(t.graph.stats.median_ms, t.graph.stats.q3_ms);
  EXPECT_STREQ(t.primary_mode(), "graph");
}

// The per-step profile: one entry per step in order, the step's node and kernels, and the
// steps' medians sum to about the whole replay (the events between steps add a little); each
// step is also timed alone; the values afterwards are a launch's.
TEST(GpuTiming, StepProfileCoversEveryStepAndAddsUpToTheReplay) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  const ir::NodeId v = activation_chain(b, {512, 1024}, 8);
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, {}, true);
  std::string why;
  std::vector<StepTime> prof = profile_steps(ctx, p, 3, 30, true, &why, true);
  EXPECT_EQ(why, "");
  ASSERT_EQ(prof.size(), 8u);
  double sum = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(prof[static_cast<size_t>(i)].id, p.step_node(i));
    EXPECT_EQ(prof[static_cast<size_t>(i)].kernels, p.step_kernels(i));
    EXPECT_EQ(prof[static_cast<size_t>(i)].stats.samples, 30);
    EXPECT_GT(prof[static_cast<size_t>(i)].stats.median_ms, 0.0);
    EXPECT_GT(prof[static_cast<size_t>(i)].isolated_ms, 0.0);
    sum += prof[static_cast<size_t>(i)].stats.median_ms;
  }
  // Profiling re-ran the steps in order: the values are those of a launch, without launching.
  ctx.synchronize();
  EXPECT_TRUE(all_close(p.fetch(v), refexec::run(b.g, b.w, b.in).outputs[0]));
  TimingOptions o;
  o.repeats = 60;
  Timing t = time_program(ctx, p, o);
  ASSERT_TRUE(t.graph.ok) << t.graph.error;
  EXPECT_GT(sum, 0.7 * t.graph.stats.median_ms);
  EXPECT_LT(sum, 1.5 * t.graph.stats.median_ms + 0.02);
}

TEST(GpuTiming, OpaqueNodesWithoutKernelAreLeftOut) {
  TENSAT_REQUIRE_GPU();
  Builder b;
  auto x = b.input("x", {2, 3});
  auto op = b.g.op(Op::Opaque, {b.g.sym(make_opaque_id(0, {TensorType{DType::F32, {2, 3}}})), x});
  b.outputs({b.g.op(Op::Relu, {op})});
  exec::OpaqueOps ops(1);
  ops[0].op_type = "NonZeroSomething";
  ops[0].slots = {0};
  RunOptions opts;
  opts.opaque = &ops;
  EXPECT_THROW(run(b.g, b.w, b.in, opts), ExecError);  // no value, no kernel
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, opts, true);
  Timing t = time_program(ctx, p, {});
  EXPECT_EQ(t.left_out.at("NonZeroSomething"), 1);
  EXPECT_EQ(t.steps, 1);
}

TEST(GpuTiming, PairedTimingOfTwoPrograms) {
  TENSAT_REQUIRE_GPU();
  Builder a, b;
  cases()[0].build(a);
  cases()[0].build(b);
  Context ctx;
  Program pa(ctx, a.g, a.w, a.in, {}, true), pb(ctx, b.g, b.w, b.in, {}, true);
  TimingOptions o;
  o.repeats = 50;
  auto [ta, tb] = time_pair(ctx, pa, pb, o);
  ASSERT_TRUE(ta.graph.ok && tb.graph.ok);
  EXPECT_GE(ta.graph.stats.samples, 50);
  // The same graph twice, timed in alternating rounds: the medians agree within 10%.
  EXPECT_NEAR(tb.graph.stats.median_ms / ta.graph.stats.median_ms, 1.0, 0.1);
}

}  // namespace
}  // namespace tensat::gpu
