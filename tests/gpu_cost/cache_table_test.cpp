// Cost cache (round trip, atomic write, corruption) and the table model (lookups, misses
// priced by the fallback and listed, corrupted and newer tables falling back with a warning,
// launch overheads, the built-in h100 table and its round trip through a file, the factory).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/cuda_model.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/roofline.h"
#include "gpu_cost/table_model.h"
#include "test_support.h"

namespace tensat::cost {
namespace {

using tensat::testing::LogCapture;
using tensat::testing::TempDir;
using tensat::testing::Types;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

TEST(CostCache, RoundTrip) {
  TempDir dir;
  std::string path = dir.file("costs.json");
  {
    CostCache c(path);
    EXPECT_EQ(c.size(), 0u);
    EXPECT_FALSE(c.load_failed());
    c.put("Tesla T4", "relu(f32[2,3])", 0.0123);
    c.put("Tesla T4", "ewadd(f32[2,3],f32[2,3])", 0.02);
    c.put("NVIDIA H100 80GB HBM3", "relu(f32[2,3])", 0.004);
    EXPECT_TRUE(c.dirty());
    EXPECT_TRUE(c.save());
    EXPECT_FALSE(c.dirty());
  }
  CostCache d(path);
  EXPECT_FALSE(d.load_failed());
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.get("Tesla T4", "relu(f32[2,3])"), 0.0123);
  EXPECT_EQ(d.get("NVIDIA H100 80GB HBM3", "relu(f32[2,3])"), 0.004);
  EXPECT_FALSE(d.get("Tesla T4", "tanh(f32[2,3])").has_value());
  EXPECT_FALSE(d.get("Tesla V100", "relu(f32[2,3])").has_value());
  EXPECT_EQ(d.devices(), (std::vector<std::string>{"NVIDIA H100 80GB HBM3", "Tesla T4"}));
}

TEST(CostCache, Version1FileLoadsAsSingleLaunchMethod) {
  TempDir dir;
  const std::string path = dir.file("v1.json");
  write_all(path, R"J({"format": "onnx-tensat-cost-cache", "version": 1,
                      "devices": {"Tesla T4": {"relu(f32[2,3])": 0.25}}})J");
  CostCache c(path);
  EXPECT_FALSE(c.load_failed());
  EXPECT_EQ(c.loaded_version(), 1);
  EXPECT_EQ(c.get("Tesla T4", "relu(f32[2,3])"), 0.25);
  EXPECT_EQ(c.method("Tesla T4"), kMethodSingleLaunch);
  EXPECT_FALSE(c.launch_ms("Tesla T4", "graph").has_value());
}

TEST(CostCache, Version2KeepsMethodAndLaunchOverheads) {
  TempDir dir;
  const std::string path = dir.file("v2.json");
  {
    CostCache c(path);
    c.set_method("d", "graph-replay");
    c.set_launch_ms("d", "eager", 0.004);
    c.set_launch_ms("d", "graph", 0.001);
    c.put("d", "relu(f32[4])", 0.5);
    ASSERT_TRUE(c.save());
  }
  EXPECT_NE(read_all(path).find("\"version\": 2"), std::string::npos);
  CostCache d(path);
  EXPECT_EQ(d.loaded_version(), 2);
  EXPECT_EQ(d.method("d"), "graph-replay");
  EXPECT_EQ(d.launch_ms("d", "eager"), 0.004);
  EXPECT_EQ(d.launch_ms("d", "graph"), 0.001);
  EXPECT_EQ(d.get("d", "relu(f32[4])"), 0.5);
}

TEST(CostCache, ANewMethodDropsCostsMeasuredAnotherWay) {
  CostCache c;
  c.put("d", "relu(f32[4])", 0.5);
  EXPECT_EQ(c.method("d"), kMethodSingleLaunch);
  c.set_method("d", kMethodSingleLaunch);  // same method: kept
  EXPECT_EQ(c.get("d", "relu(f32[4])"), 0.5);
  c.set_method("d", "graph-replay");
  EXPECT_FALSE(c.get("d", "relu(f32[4])").has_value());
  EXPECT_EQ(c.method("d"), "graph-replay");
}

TEST(CostCache, NewerVersionIsRefusedWithAWarning) {
  TempDir dir;
  const std::string path = dir.file("v3.json");
  write_all(path, R"({"format": "onnx-tensat-cost-cache", "version": 3, "devices": {}})");
  LogCapture log;
  CostCache c(path);
  EXPECT_TRUE(c.load_failed());
  EXPECT_EQ(c.size(), 0u);
  EXPECT_NE(c.load_error().find("version 3"), std::string::npos) << c.load_error();
  EXPECT_NE(log.text().find("newer onnx-tensat"), std::string::npos) << log.text();
}

TEST(CostCache, SameContentSameBytes) {
  TempDir dir;
  CostCache a(dir.file("a.json")), b(dir.file("b.json"));
  a.put("d", "x", 1.5);
  a.put("d", "y", 2.5);
  b.put("d", "y", 2.5);
  b.put("d", "x", 1.5);
  ASSERT_TRUE(a.save() && b.save());
  EXPECT_EQ(read_all(dir.file("a.json")), read_all(dir.file("b.json")));
}

TEST(CostCache, AtomicWriteLeavesNoTemporaryAndReplacesTheFile) {
  TempDir dir;
  std::string path = dir.file("sub/costs.json");  // the folder is created
  CostCache c(path);
  c.put("d", "relu(f32[4])", 0.5);
  ASSERT_TRUE(c.save());
  c.put("d", "relu(f32[8])", 0.75);
  ASSERT_TRUE(c.save());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "sub")) {
    ++files;
    EXPECT_EQ(e.path().filename(), "costs.json");
  }
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(CostCache(path).size(), 2u);
}

TEST(CostCache, SaveMergesEntriesWrittenByAnotherProcess) {
  TempDir dir;
  std::string path = dir.file("costs.json");
  CostCache first(path), second(path);
  first.put("d", "a", 1.0);
  second.put("d", "b", 2.0);
  second.put("d", "a", 3.0);
  ASSERT_TRUE(first.save());
  ASSERT_TRUE(second.save());
  CostCache merged(path);
  EXPECT_EQ(merged.get("d", "a"), 3.0);  // the later writer's own value wins
  EXPECT_EQ(merged.get("d", "b"), 2.0);
}

TEST(CostCache, UnwritablePathWarnsAndKeepsWorking) {
  TempDir dir;
  write_all(dir.file("plain"), "x");  // a file where the cache's folder should be
  LogCapture log;
  CostCache c(dir.file("plain/costs.json"));
  c.put("d", "a", 1.0);
  EXPECT_FALSE(c.save());
  EXPECT_NE(log.text().find("cannot"), std::string::npos) << log.text();
  EXPECT_EQ(c.get("d", "a"), 1.0);
}

TEST(CostCache, CorruptedFileWarnsAndStartsEmpty) {
  TempDir dir;
  for (const std::string bad : {"{not json", "[1,2,3]", R"({"format":"something else","version":1,"devices":{}})",
                                R"({"format":"onnx-tensat-cost-cache","version":99,"devices":{}})",
                                R"({"format":"onnx-tensat-cost-cache","version":1,"devices":{"d":[1]}})",
                                R"({"format":7})", ""}) {
    std::string path = dir.file("costs.json");
    write_all(path, bad);
    LogCapture log;
    CostCache c(path);
    EXPECT_TRUE(c.load_failed()) << bad;
    EXPECT_EQ(c.size(), 0u) << bad;
    EXPECT_NE(log.text().find("corrupted"), std::string::npos) << bad << "\n" << log.text();
    // Measuring again and saving repairs the file.
    c.put("d", "relu(f32[4])", 0.5);
    ASSERT_TRUE(c.save());
    CostCache repaired(path);
    EXPECT_FALSE(repaired.load_failed());
    EXPECT_EQ(repaired.get("d", "relu(f32[4])"), 0.5);
  }
}

TEST(CostCache, BadEntriesAreSkipped) {
  TempDir dir;
  std::string path = dir.file("costs.json");
  write_all(path, R"({"format":"onnx-tensat-cost-cache","version":1,
                      "devices":{"d":{"good":0.25,"negative":-1,"text":"fast","null":null}}})");
  LogCapture log;
  CostCache c(path);
  EXPECT_FALSE(c.load_failed());
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.get("d", "good"), 0.25);
  EXPECT_NE(log.text().find("negative"), std::string::npos) << log.text();
}

// ---- table model ------------------------------------------------------------------------

struct TableFixture : ::testing::Test {
  TempDir dir;
  std::string path = dir.file("table.json");
  Types relu, conv, conv_bias;
  std::string relu_sig, conv_sig, conv_bias_sig;
  void SetUp() override {
    relu.f32({1, 64, 56, 56});
    conv.num(1).num(1).sym("same").sym("relu").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).f32({64});
    conv_bias.num(1).num(1).sym("same").sym("none").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).f32({64});
    relu_sig = signature(Op::Relu, relu.list());
    conv_sig = signature(Op::Conv, conv.list());
    conv_bias_sig = signature(Op::Conv, conv_bias.list());
    CostCache c(path);
    c.put("Tesla T4", relu_sig, 0.042);
    c.put("Tesla T4", conv_sig, 0.5);
    c.put("Tesla T4", conv_bias_sig, 0.6);
    ASSERT_TRUE(c.save());
  }
};

TEST_F(TableFixture, LooksUpMeasuredCosts) {
  TableModel t(path, "", *find_profile("h100"));
  EXPECT_TRUE(t.usable());
  EXPECT_EQ(t.name(), "table:Tesla T4");
  EXPECT_EQ(t.version(), 2);
  EXPECT_EQ(t.method(), kMethodSingleLaunch);
  EXPECT_NE(t.detail().find("event-single-launch, v2; 3 signatures measured on Tesla T4"), std::string::npos)
      << t.detail();
  EXPECT_EQ(t.op_cost(Op::Relu, relu.list()), 0.042);
  EXPECT_EQ(t.op_cost(Op::Conv, conv.list()), 0.5);
  EXPECT_FALSE(t.price(Op::Conv, conv.list()).fallback);
  EXPECT_EQ(t.node_cost(Op::Conv, conv.list(), /*weight_only=*/true), 0.0);
  EXPECT_EQ(t.hits(), 3u);
  EXPECT_EQ(t.misses(), 0u);
  EXPECT_TRUE(t.covers({relu_sig, conv_sig}));
  EXPECT_TRUE(t.fallback_prices().empty());
}

TEST_F(TableFixture, AMissIsPricedByTheFallbackAndListed) {
  TableModel t(path, "Tesla T4", *find_profile("h100"));
  Types tanh_t;
  tanh_t.f32({1, 64, 56, 56});
  std::string sig = signature(Op::Tanh, tanh_t.list());
  EXPECT_FALSE(t.covers({relu_sig, sig}));
  // Three measurements fit nothing (fewer than kMinSamples), and no tanh was measured: the
  // roofline model of the table's device (a T4, whatever the profile asked for) prices it.
  double roof = RooflineModel(*find_profile("t4")).op_cost(Op::Tanh, tanh_t.list());
  Price p = t.price(Op::Tanh, tanh_t.list());
  EXPECT_TRUE(p.fallback);
  EXPECT_DOUBLE_EQ(p.ms, roof);
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Tanh, tanh_t.list()), roof);
  EXPECT_EQ(t.misses(), 2u);
  ASSERT_EQ(t.fallback_prices().size(), 1u);
  EXPECT_EQ(t.fallback_prices()[0].signature, sig);
  EXPECT_EQ(t.fallback_prices()[0].by, "roofline:t4");
  EXPECT_NE(t.fallback_name().find("calibrated to table:Tesla T4"), std::string::npos) << t.fallback_name();
  // Structural nodes never reach the table.
  Types r;
  r.sym("64_3136").f32({1, 64, 56, 56});
  EXPECT_EQ(t.op_cost(Op::Reshape, r.list()), 0.0);
  EXPECT_EQ(t.misses(), 2u);
}

TEST_F(TableFixture, UnknownDeviceOrMissingFileIsAnError) {
  EXPECT_THROW(TableModel(path, "Tesla V100", *find_profile("t4")), std::invalid_argument);
  EXPECT_THROW(TableModel(dir.file("nope.json"), "", *find_profile("t4")), std::invalid_argument);
}

TEST_F(TableFixture, CorruptedTableWarnsAndFallsBack) {
  for (const std::string& bad : {std::string("{\"format\": \"onnx-tensat-cost-cache\", \"vers"), std::string("[]"),
                                std::string(R"({"format":"onnx-tensat-cost-cache","version":2,"devices":{"d":{}}})")}) {
    write_all(path, bad);
    LogCapture log;
    TableModel t(path, "", *find_profile("t4"));
    EXPECT_FALSE(t.usable()) << bad;
    EXPECT_NE(log.text().find("cannot be used"), std::string::npos) << log.text();
    Price p = t.price(Op::Relu, relu.list());
    EXPECT_GT(p.ms, 0.0);
    EXPECT_TRUE(p.fallback);
    EXPECT_EQ(t.fallback_prices()[0].by, "roofline:t4");
    EXPECT_FALSE(t.covers({relu_sig}));
    EXPECT_NE(t.detail().find("unusable table"), std::string::npos) << t.detail();
  }
}

TEST_F(TableFixture, ANewerVersionIsRefusedWithAWarningAndFallsBack) {
  write_all(path, R"({"format": "onnx-tensat-cost-cache", "version": 3,
                      "devices": {"Tesla T4": {"method": "future", "costs": {}}}})");
  {
    LogCapture log;
    TableModel t(path, "", *find_profile("t4"));
    EXPECT_FALSE(t.usable());
    EXPECT_NE(t.problem().find("version 3"), std::string::npos) << t.problem();
    EXPECT_NE(log.text().find("newer onnx-tensat"), std::string::npos) << log.text();
    EXPECT_GT(t.op_cost(Op::Relu, relu.list()), 0.0);
  }
  // Through the factory, the profile's built-in table takes over (warning, never a crash).
  LogCapture log;
  CostOptions o;
  o.table_path = path;
  EXPECT_EQ(make_cost_model("table", o)->name(), "table:h100");
  EXPECT_NE(log.text().find("using the built-in table:h100"), std::string::npos) << log.text();
}

TEST_F(TableFixture, Version1TableLoadsAsSingleLaunchMethod) {
  write_all(path, R"({"format": "onnx-tensat-cost-cache", "version": 1,
                      "devices": {"Tesla T4": {")" + relu_sig + R"(": 0.25}}})");
  TableModel t(path, "", *find_profile("t4"));
  EXPECT_TRUE(t.usable());
  EXPECT_EQ(t.version(), 1);
  EXPECT_EQ(t.method(), kMethodSingleLaunch);
  EXPECT_EQ(t.launch_ms(), 0.0);
  EXPECT_EQ(t.op_cost(Op::Relu, relu.list()), 0.25);
}

TEST_F(TableFixture, LaunchOverheadIsAddedPerKernel) {
  {
    CostCache c(path);
    c.set_launch_ms("Tesla T4", "graph", 0.002);
    c.set_launch_ms("Tesla T4", "eager", 0.009);
    ASSERT_TRUE(c.save());
  }
  TableModel t(path, "", *find_profile("t4"));
  EXPECT_EQ(t.launch_ms(), 0.002);
  EXPECT_NE(t.detail().find("0.002 ms per kernel launch (graph)"), std::string::npos) << t.detail();
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Relu, relu.list()), 0.042 + 0.002);
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Conv, conv.list()), 0.5 + 0.002);            // bias + relu fused: 1 kernel
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Conv, conv_bias.list()), 0.6 + 2 * 0.002);   // conv, then the bias: 2
  // Asked again: the kernel counts kept with the entries (the first lookup computed them).
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Conv, conv_bias.list()), 0.6 + 2 * 0.002);
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Conv, conv.list()), 0.5 + 0.002);
  Types tanh_t;
  tanh_t.f32({1, 64, 56, 56});
  double roof = RooflineModel(*find_profile("t4")).op_cost(Op::Tanh, tanh_t.list());
  EXPECT_DOUBLE_EQ(t.op_cost(Op::Tanh, tanh_t.list()), roof + 0.002);  // a miss too
}

TEST(BuiltInTable, H100IsShippedAndEveryEntryIsUsable) {
  const EmbeddedTable* e = embedded_table("h100");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->file, "h100-fp32.json");
  EXPECT_EQ(embedded_table("t4"), nullptr);
  TableModel t(*e, *find_profile("h100"));
  EXPECT_TRUE(t.usable());
  EXPECT_EQ(t.name(), "table:h100");
  EXPECT_EQ(t.device(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.size(), 3100u);
  EXPECT_EQ(t.version(), 2);
  EXPECT_EQ(t.method(), CudaCostModel::kMethod);
  EXPECT_NE(t.detail().find("graph-replay-v3, v2; 3100 signatures"), std::string::npos) << t.detail();
  EXPECT_NE(t.detail().find("ms per kernel launch (graph)"), std::string::npos) << t.detail();
  EXPECT_EQ(t.calibrated().unusable(), 0u);  // every signature parses and type-checks
  EXPECT_EQ(t.calibrated().samples(), 3100u);
}

TEST(BuiltInTable, H200IsShippedMeasuredWithColdWeights) {
  // gpu_cost/tables/README.md: the benchmark models' signatures measured on an H200 by the
  // method the cuda model measures by today (graph-replay-v3: weights read from memory).
  const EmbeddedTable* e = embedded_table("h200");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->file, "h200-fp32.json");
  TableModel t(*e, *find_profile("h200"));
  EXPECT_TRUE(t.usable());
  EXPECT_EQ(t.name(), "table:h200");
  EXPECT_EQ(t.device(), "NVIDIA H200");
  EXPECT_EQ(t.size(), 1788u);
  EXPECT_EQ(t.method(), CudaCostModel::kMethod);
  EXPECT_EQ(t.calibrated().unusable(), 0u);
  EXPECT_NE(embedded_profile_list().find("h200"), std::string::npos) << embedded_profile_list();
  CostOptions o;
  o.profile = "h200";
  EXPECT_EQ(make_cost_model("table", o)->name(), "table:h200");
}

TEST(BuiltInTable, RoundTripThroughAFile) {
  // The built-in table written as a version-2 file by CostCache and read back as a table:
  // the same method, launch overhead and cost for every signature.
  TableModel builtin(*embedded_table("h100"), *find_profile("h100"));
  auto parsed = parse_cost_cache(std::string(embedded_table("h100")->text), nullptr);
  ASSERT_TRUE(parsed);
  const CostCache::Device& dev = parsed->devices.begin()->second;
  TempDir dir;
  const std::string path = dir.file("h100.json");
  {
    CostCache c(path);
    c.set_method(builtin.device(), dev.method);
    for (const auto& [mode, ms] : dev.launch_ms) c.set_launch_ms(builtin.device(), mode, ms);
    for (const auto& [sig, ms] : dev.costs) c.put(builtin.device(), sig, ms);
    ASSERT_TRUE(c.save());
  }
  TableModel copy(path, "", *find_profile("h100"));
  EXPECT_EQ(copy.version(), 2);
  EXPECT_EQ(copy.method(), CudaCostModel::kMethod);
  ASSERT_EQ(copy.size(), builtin.size());
  size_t n = 0;
  for (const auto& [sig, ms] : parsed->devices.begin()->second.costs) {
    auto p = parse_signature(sig);
    ASSERT_TRUE(p) << sig;
    // Each price is the measured cost plus the graph-mode launch overhead of its kernels.
    const double launches = builtin.op_cost(p->op, p->pointers()) - ms;
    EXPECT_GT(launches, 0.0) << sig;
    EXPECT_EQ(copy.op_cost(p->op, p->pointers()), builtin.op_cost(p->op, p->pointers())) << sig;
    ++n;
  }
  EXPECT_EQ(n, 3100u);
  EXPECT_EQ(copy.misses(), 0u);
  EXPECT_EQ(builtin.misses(), 0u);
}

TEST_F(TableFixture, FactoryChoosesTheTable) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present: auto picks cuda";
  EXPECT_EQ(make_cost_model("auto")->name(), "table:h100");  // the default profile's built-in table
  CostOptions o;
  o.profile = "t4";
  EXPECT_EQ(make_cost_model("auto", o)->name(), "roofline:t4");  // no measured table for a T4
  EXPECT_THROW(make_cost_model("table", o), std::invalid_argument);
  o.table_path = path;
  EXPECT_EQ(make_cost_model("auto", o)->name(), "table:Tesla T4");
  EXPECT_EQ(make_cost_model("table", o)->name(), "table:Tesla T4");
  o.table_path = dir.file("missing.json");
  EXPECT_THROW(make_cost_model("auto", o), std::invalid_argument);
}

}  // namespace
}  // namespace tensat::cost
