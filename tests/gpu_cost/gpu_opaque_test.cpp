// Opaque ONNX operators on the GPU executor (skipped without a GPU): every case of
// tests/refexec/opaque_cases.h against its hand-computed values and the CPU reference, in
// eager mode and replayed as a CUDA graph.
#include <gtest/gtest.h>

#include <cmath>

#include "../refexec/opaque_cases.h"
#include "gpu_cost/gpu_executor.h"
#include "refexec/executor.h"
#include "test_support.h"

namespace tensat::gpu {
namespace {

using tensat::testing::OpaqueCase;
using tensat::testing::OpaqueGraph;

void expect_values(const Tensor& got, const Shape& shape, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(shape_str(got.shape), shape_str(shape)) << what;
  ASSERT_EQ(got.data.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << what << " element " << i;
}

class GpuOpaque : public ::testing::TestWithParam<OpaqueCase> {};

TEST_P(GpuOpaque, MatchesHandValuesAndCpu) {
  TENSAT_REQUIRE_GPU();
  OpaqueGraph b;
  GetParam().build(b);
  RunOptions opts;
  opts.opaque = &b.ops;
  RunResult cpu = refexec::run(b.g, b.w, b.in, opts);
  Context ctx;
  Program p(ctx, b.g, b.w, b.in, opts);
  p.launch();
  ctx.synchronize();
  expect_values(p.fetch(b.out), GetParam().shape, GetParam().want, "eager");
  expect_values(p.fetch(b.out), cpu.outputs[0].shape, cpu.outputs[0].data, "eager vs cpu");
  // The same program replayed as a CUDA graph gives the same values.
  ctx.synchronize();
  p.replay();
  ctx.synchronize();
  expect_values(p.fetch(b.out), GetParam().shape, GetParam().want, "graph replay");
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuOpaque, ::testing::ValuesIn(tensat::testing::opaque_cases()),
                         [](const ::testing::TestParamInfo<OpaqueCase>& i) { return i.param.name; });

}  // namespace
}  // namespace tensat::gpu
