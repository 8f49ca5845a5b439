// The measured never-slower rule on the GPU (skipped without one): both models timed in
// alternating rounds (pipeline/measure.h), the original written unless the optimized one is
// faster by more than the measured spread, and the reports saying so
// ("kept original: not faster on this GPU (x ms vs y ms)"). The arithmetic of the rule is
// tested without a GPU (timing_stats_test.cpp), the predicted rule end to end by
// tests/python/never_slower.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "importer/importer.h"
#include "pipeline/measure.h"
#include "pipeline/pipeline.h"
#include "test_support.h"

namespace tensat {
namespace {

std::string model(const std::string& name) {
  const char* d = std::getenv("TENSAT_MODELS_DIR");
  return std::string(d ? d : TENSAT_DEFAULT_MODELS_DIR) + "/" + name + ".onnx";
}

void expect_timed(const gpu::Timing& t, int repeats) {
  ASSERT_TRUE(t.graph.ok || t.eager.ok) << t.graph.error << " / " << t.eager.error;
  EXPECT_GE(t.primary().stats.samples, repeats);
  EXPECT_GT(t.primary().stats.median_ms, 0);
  EXPECT_GE(t.primary().stats.iqr_ms(), 0);
}

// The same model against itself cannot be faster by more than the noise: the original stays.
TEST(GpuNeverSlower, AModelIsNotFasterThanItself) {
  TENSAT_REQUIRE_GPU();
  const std::string path = model("squeezenet");
  ASSERT_TRUE(std::filesystem::exists(path)) << path << ": generate the benchmark models first";
  ImportResult a = import_onnx_file(path), b = import_onnx_file(path);
  MeasureResult m = measure_models(a, b, 1, 50);
  ASSERT_TRUE(m.ok) << m.error;
  expect_timed(m.before, 50);
  expect_timed(m.after, 50);
  EXPECT_FALSE(m.verdict.keep_optimized) << m.verdict.reason << ", spread " << m.verdict.spread_ms << " ms";
  EXPECT_EQ(m.verdict.reason.rfind("not faster on this GPU (", 0), 0u) << m.verdict.reason;
}

// The pipeline with --measure on writes what the measured verdict says, and says it.
TEST(GpuNeverSlower, PipelineWritesWhatTheMeasurementDecides) {
  TENSAT_REQUIRE_GPU();
  for (const char* name : {"squeezenet", "resnext50"}) {
    SCOPED_TRACE(name);
    const std::string path = model(name);
    ASSERT_TRUE(std::filesystem::exists(path)) << path << ": generate the benchmark models first";
    const std::string out =
        (std::filesystem::temp_directory_path() / ("never_slower_" + std::to_string(getpid()) + ".onnx")).string();
    PipelineOptions o;
    o.input = path;
    o.output = out;
    o.verify = VerifyMode::Off;
    o.measure = MeasureMode::On;
    o.measure_repeats = 50;
    o.quiet = true;
    PipelineReport rep;
    run_pipeline(o, rep);
    ASSERT_TRUE(rep.written);
    if (rep.kept_original && rep.kept_reason.rfind("kept original: not faster by the cost model (", 0) == 0) {
      // Kept by the predicted rule (the measured rule then has nothing to decide): the output,
      // the original, is still timed, so the report has a whole-model figure.
      ASSERT_TRUE(rep.measure.ok) << rep.measure.error;
      expect_timed(rep.measure.before, 50);
      EXPECT_FALSE(rep.measure.verdict.keep_optimized);
      EXPECT_EQ(rep.measure.verdict.reason, "the output is the original (" + rep.kept_reason + ")");
      std::filesystem::remove(out);
      continue;
    }
    ASSERT_TRUE(rep.measure.ok) << rep.measure.error;
    expect_timed(rep.measure.before, 50);
    expect_timed(rep.measure.after, 50);
    const gpu::Verdict& v = rep.measure.verdict;
    EXPECT_EQ(v.keep_optimized, v.before_ms - v.after_ms > v.spread_ms);
    EXPECT_EQ(rep.kept_original, !v.keep_optimized);
    const nlohmann::json j = rep.to_json();
    ASSERT_TRUE(j.contains("measured"));
    EXPECT_EQ(j["measured"]["faster"].get<bool>(), v.keep_optimized);
    ImportResult written = import_onnx_file(out), original = import_onnx_file(path);
    if (rep.kept_original) {
      EXPECT_EQ(rep.kept_reason, "kept original: " + v.reason);
      EXPECT_EQ(rep.kept_reason.rfind("kept original: not faster on this GPU (", 0), 0u) << rep.kept_reason;
      EXPECT_EQ(j["kept_reason"].get<std::string>(), rep.kept_reason);
      EXPECT_EQ(rep.cost_after, rep.cost_before);
      EXPECT_EQ(written.graph.nodes().size(), original.graph.nodes().size());
      // The input file itself, byte for byte.
      auto bytes = [](const std::string& f) {
        std::ifstream in(f, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
      };
      EXPECT_TRUE(bytes(out) == bytes(path)) << "the kept original is not the input file";
    } else {
      EXPECT_LT(v.after_ms, v.before_ms);
      EXPECT_FALSE(j.contains("kept_reason"));
    }
    std::printf("%s: original %.4f ms, optimized %.4f ms (%s, spread %.4f ms): %s\n", name, v.before_ms, v.after_ms,
                rep.measure.mode.c_str(), v.spread_ms, rep.kept_original ? rep.kept_reason.c_str() : "optimized written");
    std::filesystem::remove(out);
  }
}

}  // namespace
}  // namespace tensat
