// Whole models on the GPU (skipped without one): every benchmark model (onnx-tensat-gen, read
// from $TENSAT_MODELS_DIR, default the build's test-models/) runs on the GPU executor and
// matches the CPU reference executor; its graph-mode timing is repeatable within 3% across
// three processes; and the cuda cost model's operator costs add up to within 15% of the
// graph-mode time (gpu_cost/README.md, "Costs that add up").
//
// The three processes are this binary run again with --gtest_filter=GpuModelsChild.Time and
// TENSAT_TIME_CHILD=MODEL: it prints "TENSAT_TIMING_MS=<median>" and exits.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu_cost/cuda_model.h"
#include "gpu_cost/gpu_executor.h"
#include "importer/importer.h"
#include "pipeline/costing.h"
#include "pipeline/measure.h"
#include "pipeline/opaque_ops.h"
#include "refexec/executor.h"
#include "test_support.h"

namespace tensat {
namespace {

const char* const kModels[] = {"nasrnn", "bert", "resnext50", "nasneta", "squeezenet", "vgg19", "inceptionv3", "resnet50"};

std::string models_dir() {
  if (const char* d = std::getenv("TENSAT_MODELS_DIR")) return d;
  return TENSAT_DEFAULT_MODELS_DIR;
}

std::string model_path(const std::string& name) { return models_dir() + "/" + name + ".onnx"; }

// The model loaded with its opaque descriptions (kept alive for RunOptions::opaque).
struct Loaded {
  ImportResult imp;
  exec::OpaqueOps ops;
  exec::RunOptions opts;
};

std::unique_ptr<Loaded> load(const std::string& name) {
  const std::string path = model_path(name);
  if (!std::filesystem::exists(path)) return nullptr;
  auto m = std::make_unique<Loaded>();
  m->imp = import_onnx_file(path);
  m->ops = describe_opaque_ops(m->imp.ctx);
  m->opts.opaque = &m->ops;
  return m;
}

#define TENSAT_LOAD_MODEL(var, name)                                                                 \
  auto var = load(name);                                                                             \
  ASSERT_TRUE(var) << model_path(name) << " is missing: generate the models with onnx-tensat-gen " \
                   << "into $TENSAT_MODELS_DIR (scripts/run-gpu-tests.sh does)"

double graph_median_ms(gpu::Context& ctx, const Loaded& m, int repeats) {
  gpu::Program p(ctx, m.imp.graph, m.imp.weights, timing_inputs(m.imp.graph, 17), m.opts, true);
  gpu::TimingOptions o;
  o.repeats = repeats;
  o.eager = false;
  gpu::Timing t = gpu::time_program(ctx, p, o);
  EXPECT_TRUE(t.graph.ok) << t.graph.error;
  return t.graph.stats.median_ms;
}

class GpuModels : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuModels, MatchesTheCpuReference) {
  TENSAT_REQUIRE_GPU();
  TENSAT_LOAD_MODEL(m, GetParam());
  exec::Inputs in = timing_inputs(m->imp.graph, 17);
  exec::RunResult cpu = refexec::run(m->imp.graph, m->imp.weights, in, m->opts);
  exec::RunResult gpu = gpu::run(m->imp.graph, m->imp.weights, in, m->opts);
  ASSERT_EQ(cpu.outputs.size(), gpu.outputs.size());
  for (size_t o = 0; o < cpu.outputs.size(); ++o) {
    const auto& want = cpu.outputs[o].data;
    const auto& got = gpu.outputs[o].data;
    ASSERT_EQ(want.size(), got.size());
    double scale = 0;
    for (float v : want) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      // The verification tolerance (pipeline/verify.h): float32 results of different kernels.
      const double tol = 1e-4 * std::max(1.0, scale) + 1e-3 * std::fabs(want[i]);
      if (!(std::fabs(got[i] - want[i]) <= tol) && ++bad <= 3)
        ADD_FAILURE() << GetParam() << " output " << o << " element " << i << ": GPU " << got[i] << " vs CPU "
                      << want[i];
    }
    EXPECT_EQ(bad, 0u);
  }
}

// Runs this binary again as a child that times one model; returns its median (ms).
double time_in_child(const std::string& model) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = "TENSAT_TIME_CHILD=" + model + " '" + self + "' --gtest_filter=GpuModelsChild.Time 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::array<char, 512> line{};
  double ms = -1;
  std::string all;
  while (fgets(line.data(), line.size(), p)) {
    all += line.data();
    if (std::sscanf(line.data(), "TENSAT_TIMING_MS=%lf", &ms) == 1) continue;
  }
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << all;
  EXPECT_GT(ms, 0) << all;
  return ms;
}

TEST(GpuModelsChild, Time) {
  const char* model = std::getenv("TENSAT_TIME_CHILD");
  if (!model) GTEST_SKIP() << "runs only as a child of GpuModels.TimingRepeatsAcrossProcesses";
  TENSAT_REQUIRE_GPU();
  TENSAT_LOAD_MODEL(m, model);
  gpu::Context ctx;
  std::printf("TENSAT_TIMING_MS=%.6f\n", graph_median_ms(ctx, *m, 100));
}

TEST_P(GpuModels, TimingRepeatsAcrossProcesses) {
  TENSAT_REQUIRE_GPU();
  ASSERT_TRUE(std::filesystem::exists(model_path(GetParam()))) << model_path(GetParam());
  std::vector<double> t;
  for (int i = 0; i < 3; ++i) t.push_back(time_in_child(GetParam()));
  const double lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
  ASSERT_GT(lo, 0);
  EXPECT_LE(hi / lo - 1.0, 0.03) << GetParam() << ": " << t[0] << ", " << t[1] << ", " << t[2] << " ms";
  std::printf("%s: graph-mode medians in three processes: %.4f %.4f %.4f ms\n", GetParam().c_str(), t[0], t[1], t[2]);
}

TEST_P(GpuModels, OperatorCostsAddUpToTheGraphTime) {
  TENSAT_REQUIRE_GPU();
  TENSAT_LOAD_MODEL(m, GetParam());
  cost::CostOptions co;
  if (const char* keep = std::getenv("TENSAT_COST_CACHE")) co.cache_path = keep;
  double predicted = 0, measured = 0;
  {
    cost::CudaCostModel model(co);
    predicted = graph_cost(m->imp.graph, model);  // sum of op costs + kernels * launch_ms["graph"]
  }
  gpu::Context ctx;
  measured = graph_median_ms(ctx, *m, 100);
  ASSERT_GT(measured, 0);
  EXPECT_NEAR(predicted / measured, 1.0, 0.15)
      << GetParam() << ": sum of operator costs " << predicted << " ms, graph replay " << measured << " ms";
  std::printf("%s: sum of operator costs %.4f ms, graph replay %.4f ms (ratio %.3f)\n", GetParam().c_str(), predicted,
              measured, predicted / measured);
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuModels, ::testing::ValuesIn(std::vector<std::string>(std::begin(kModels), std::end(kModels))),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace tensat
