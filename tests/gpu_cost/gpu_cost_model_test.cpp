// GPU measurements (skipped without a GPU): every benchmark operator measures positive and
// repeatable costs; the disk cache makes a second run measure nothing; a corrupted cache
// file is re-measured; the GPU runtime basics.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "gpu_cost/cost_model.h"
#include "gpu_cost/cuda_model.h"
#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/gpu_runtime.h"
#include "test_support.h"

namespace tensat::cost {
namespace {

using tensat::testing::LogCapture;
using tensat::testing::TempDir;
using tensat::testing::Types;

struct Sig {
  Op op;
  Types types;
};

// The operator and parameter combinations of the benchmark models (BENCHMARKS.md), at
// their real sizes.
std::vector<Sig> benchmark_signatures() {
  std::vector<Sig> v;
  auto add = [&](Op op) -> Types& {
    v.push_back({op, {}});
    return v.back().types;
  };
  add(Op::Matmul).sym("none").f32({64, 1024}).f32({1024, 1024}).sym("none");          // BERT
  add(Op::Matmul).sym("none").f32({16, 64, 64}).f32({16, 64, 64}).sym("none");        // attention
  add(Op::Matmul).sym("relu").f32({1, 512}).f32({512, 512}).f32({512});              // NasRNN
  add(Op::Transpose).sym("1_0_2").f32({64, 16, 64});
  add(Op::Conv).num(2).num(2).sym("same").sym("relu").f32({1, 3, 224, 224}).f32({64, 3, 7, 7}).f32({64});
  add(Op::Conv).num(1).num(1).sym("same").sym("relu").f32({1, 128, 56, 56}).f32({128, 4, 3, 3}).sym("none");
  add(Op::Conv).num(1).num(1).sym("same").sym("none").f32({1, 128, 56, 56}).f32({256, 128, 1, 1}).f32({256});
  add(Op::Conv).num(2).num(2).sym("same").sym("none").f32({1, 128, 56, 56}).f32({128, 1, 5, 5}).sym("none");
  add(Op::Conv).num(1).num(1).sym("p0_0_1_1").sym("sigmoid").f32({1, 16, 14, 14}).f32({16, 16, 2, 2}).sym("none");
  add(Op::Poolmax).num(3).num(3).num(2).num(2).sym("same").f32({1, 64, 112, 112});
  add(Op::Poolmax).num(2).num(2).num(2).num(2).sym("valid").f32({1, 64, 224, 224});
  add(Op::Poolavg).num(3).num(3).num(1).num(1).sym("same").num(0).f32({1, 128, 28, 28});
  add(Op::Poolavg).num(8).num(8).num(1).num(1).sym("valid").num(1).f32({1, 2048, 8, 8});
  add(Op::Poolavg).num(3).num(3).num(2).num(2).sym("p0_0_1_1").num(1).f32({1, 32, 15, 15});
  add(Op::Ewadd).f32({1, 256, 56, 56}).f32({1, 256, 56, 56});
  add(Op::Ewmul).f32({1, 512}).f32({1, 512});
  add(Op::Ewadd).f32({1, 64, 56, 56}).f32({64, 1, 1});
  add(Op::Relu).f32({1, 256, 56, 56});
  add(Op::Tanh).f32({1, 512});
  add(Op::Sigmoid).f32({1, 512});
  add(Op::Concat).num(1).f32({1, 64, 55, 55}).f32({1, 64, 55, 55});
  add(Op::Concat).num(0).f32({64, 1024}).f32({64, 1024});
  add(Op::Split).num(1).num(64).f32({1, 128, 55, 55});
  add(Op::Enlarge).f32({64, 64, 1, 1}).f32({64, 64, 3, 3});
  add(Op::Merge).num(2).f32({128, 4, 3, 3});
  return v;
}

TEST(GpuRuntime, ContextAndBuffers) {
  TENSAT_REQUIRE_GPU();
  gpu::Context ctx;
  EXPECT_FALSE(ctx.device_name().empty());
  EXPECT_GT(ctx.free_memory(), 0u);
  gpu::DeviceBuffer b(16 * sizeof(float));
  std::vector<float> in(16, 2.5f), out(16, 0.0f);
  gpu::upload(ctx, b.data(), in.data(), 64);
  gpu::download(ctx, out.data(), b.data(), 64);
  EXPECT_EQ(in, out);
  gpu::fill_zero(ctx, b.data(), 64);
  gpu::download(ctx, out.data(), b.data(), 64);
  EXPECT_EQ(out, std::vector<float>(16, 0.0f));
}

TEST(GpuMeasure, EveryBenchmarkOperatorPositiveAndRepeatable) {
  TENSAT_REQUIRE_GPU();
  gpu::Context ctx;
  for (auto& s : benchmark_signatures()) {
    auto c = s.types.list();
    std::string sig = signature(s.op, c);
    double a = gpu::measure_op(ctx, s.op, c, 3, 15);
    double b = gpu::measure_op(ctx, s.op, c, 3, 15);
    EXPECT_GT(a, 0.0) << sig;
    EXPECT_GT(b, 0.0) << sig;
    EXPECT_LT(a, 1000.0) << sig;
    // Repeatable: medians of graph replays within 25% of each other.
    EXPECT_LT(std::max(a, b) / std::min(a, b), 1.25) << sig << ": " << a << " vs " << b;
  }
}

TEST(GpuMeasure, LaunchOverheadsArePositiveAndSmall) {
  TENSAT_REQUIRE_GPU();
  gpu::Context ctx;
  gpu::LaunchOverhead o = gpu::measure_launch_overhead(ctx);
  EXPECT_GT(o.graph_ms, 0.0);
  EXPECT_GT(o.eager_ms, 0.0);
  EXPECT_LT(o.graph_ms, 0.05);
  EXPECT_LT(o.eager_ms, 0.05);
  std::printf("launch overhead per kernel: graph %.5f ms, eager %.5f ms\n", o.graph_ms, o.eager_ms);
}

TEST(GpuMeasure, EveryOperatorIsCapturedInAGraph) {
  TENSAT_REQUIRE_GPU();
  gpu::Context ctx;
  for (auto& s : benchmark_signatures()) {
    auto c = s.types.list();
    gpu::OpTiming t = gpu::time_op(ctx, s.op, c, 2, 5);
    EXPECT_TRUE(t.graph) << signature(s.op, c) << ": " << t.capture_error;
    EXPECT_GE(t.copies, 2);
  }
}

TEST(GpuMeasure, MemoryIsReleasedAfterEachMeasurement) {
  TENSAT_REQUIRE_GPU();
  gpu::Context ctx;
  Types t;
  t.num(1).num(1).sym("same").sym("relu").f32({1, 256, 56, 56}).f32({256, 256, 3, 3}).f32({256});
  gpu::measure_op(ctx, Op::Conv, t.list(), 1, 2);
  size_t before = ctx.free_memory();
  gpu::measure_op(ctx, Op::Conv, t.list(), 1, 2);
  size_t after = ctx.free_memory();
  // Nothing accumulates: free memory returns to within 64 MiB.
  EXPECT_LT(before > after ? before - after : 0, size_t{64} << 20);
}

TEST(GpuCostModel, SecondRunMeasuresNothingNew) {
  TENSAT_REQUIRE_GPU();
  TempDir dir;
  CostOptions o;
  o.cache_path = dir.file("cache.json");
  auto sigs = benchmark_signatures();
  std::vector<double> first;
  {
    CudaCostModel m(o);
    for (auto& s : sigs) first.push_back(m.op_cost(s.op, s.types.list()));
    EXPECT_EQ(m.measured(), sigs.size());
    // Same signature again in the same run: from memory.
    EXPECT_EQ(m.op_cost(sigs[0].op, sigs[0].types.list()), first[0]);
    EXPECT_EQ(m.measured(), sigs.size());
  }
  CudaCostModel m2(o);
  for (size_t i = 0; i < sigs.size(); ++i) EXPECT_EQ(m2.op_cost(sigs[i].op, sigs[i].types.list()), first[i]);
  EXPECT_EQ(m2.measured(), 0u);
  EXPECT_EQ(m2.cache_hits(), sigs.size());
  // scripts/run-gpu-tests.sh brings the measured benchmark costs home as a cost table.
  if (const char* keep = std::getenv("TENSAT_COST_CACHE")) {
    CostCache home(keep);
    home.set_method(m2.device(), CudaCostModel::kMethod);
    home.set_launch_ms(m2.device(), "graph", m2.launch_ms("graph"));
    home.set_launch_ms(m2.device(), "eager", m2.launch_ms("eager"));
    for (const auto& [sig, ms] : *m2.cache().entries(m2.device())) home.put(m2.device(), sig, ms);
    EXPECT_TRUE(home.save());
  }
}

TEST(GpuCostModel, CacheRecordsMethodAndLaunchOverheads) {
  TENSAT_REQUIRE_GPU();
  TempDir dir;
  CostOptions o;
  o.cache_path = dir.file("cache.json");
  Types t;
  t.f32({1, 256, 56, 56});
  double with_launch = 0, bare = 0, lg = 0;
  {
    CudaCostModel m(o);
    with_launch = m.op_cost(Op::Relu, t.list());
    bare = m.bare_cost(Op::Relu, t.list());
    lg = m.launch_ms("graph");
    EXPECT_GT(lg, 0.0);
    EXPECT_NEAR(with_launch, bare + lg, 1e-12);  // relu: one kernel
  }
  CostCache c(o.cache_path);
  EXPECT_EQ(c.method(CudaCostModel(o).device()), CudaCostModel::kMethod);
  EXPECT_TRUE(c.launch_ms(c.devices().at(0), "graph"));
  EXPECT_TRUE(c.launch_ms(c.devices().at(0), "eager"));
}

TEST(GpuCostModel, CorruptedCacheIsMeasuredAgain) {
  TENSAT_REQUIRE_GPU();
  TempDir dir;
  CostOptions o;
  o.cache_path = dir.file("cache.json");
  {
    std::ofstream out(o.cache_path);
    out << "{\"format\": \"onnx-tensat-cost-cache\", \"devices\": {";
  }
  LogCapture log;
  Types t;
  t.f32({1, 256, 56, 56});
  {
    CudaCostModel m(o);
    EXPECT_GT(m.op_cost(Op::Relu, t.list()), 0.0);
    EXPECT_EQ(m.measured(), 1u);
  }
  EXPECT_NE(log.text().find("corrupted"), std::string::npos) << log.text();
  CostCache repaired(o.cache_path);
  EXPECT_FALSE(repaired.load_failed());
  EXPECT_EQ(repaired.size(), 1u);
}

TEST(GpuCostModel, FactoryAndFreeNodes) {
  TENSAT_REQUIRE_GPU();
  auto m = make_cost_model("auto");
  EXPECT_EQ(m->name().rfind("cuda:", 0), 0u) << m->name();
  Types r;
  r.sym("64_1024").f32({64, 16, 64});
  EXPECT_EQ(m->op_cost(Op::Reshape, r.list()), 0.0);
  Types w;
  w.f32({64, 64, 1, 1}).f32({64, 64, 3, 3});
  EXPECT_EQ(m->node_cost(Op::Enlarge, w.list(), true), 0.0);
  EXPECT_GT(m->node_cost(Op::Enlarge, w.list(), false), 0.0);
}

}  // namespace
}  // namespace tensat::cost
