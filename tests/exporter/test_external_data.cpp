// External data in and out (onnx_model/external_data.h through the importer and the exporter):
// the location check (absolute paths, `..`, symlinks leaving the folder), reading with offsets,
// writing on request and above the size limit, staged files, and never overwriting the data
// file the source model was read from.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "exporter/exporter.h"
#include "importer/importer.h"
#include "lang/sexpr.h"
#include "onnx_model/external_data.h"
#include "tests/importer/onnx_text.h"

namespace tensat {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tensat_ext_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string floats_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// y = x * w with w [4] stored externally at `location` (offset, length as given).
onnx::ModelProto model_with_external_w(const std::string& location, int64_t offset = -1, int64_t length = -1) {
  onnx::ModelProto m = parse(M("(float[2,4] x) => (y)", {T("w", {4})}, "y = Mul (x, w)"));
  onnx::TensorProto& w = *m.mutable_graph()->mutable_initializer(0);
  w.clear_float_data();
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* kv = w.add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return m;
}

void save(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream f(p, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&f));
}

std::string import_error(const fs::path& p) {
  try {
    import_onnx_file(p.string());
  } catch (const ImportError& e) {
    return e.what();
  }
  return "(no ImportError)";
}

const std::vector<float> kW = {1.5f, -2.0f, 0.25f, 4.0f};

TEST_F(ExternalData, ReadsRelativeToTheModelsFolderWithOffset) {
  write_bytes(dir_ / "model" / "weights.bin", std::string(8, 'x') + floats_bytes(kW) + "tail");
  save(model_with_external_w("weights.bin", 8, 16), dir_ / "model" / "m.onnx");
  ImportResult r = import_onnx_file((dir_ / "model" / "m.onnx").string());
  const WeightData& w = r.weights.get("w");
  ASSERT_EQ(w.count(), 4u);
  EXPECT_EQ(std::vector<float>(w.f32(), w.f32() + 4), kW);
  ASSERT_EQ(r.ctx.external_data_files.size(), 1u);
  EXPECT_EQ(r.ctx.external_data_files[0], fs::canonical(dir_ / "model" / "weights.bin").string());
}

TEST_F(ExternalData, SubfolderAndLengthToTheEnd) {
  fs::create_directories(dir_ / "model" / "data");
  write_bytes(dir_ / "model" / "data" / "w.bin", floats_bytes(kW));
  save(model_with_external_w("data/w.bin"), dir_ / "model" / "m.onnx");
  ImportResult r = import_onnx_file((dir_ / "model" / "m.onnx").string());
  EXPECT_EQ(std::vector<float>(r.weights.get("w").f32(), r.weights.get("w").f32() + 4), kW);
}

TEST_F(ExternalData, RefusesLocationsOutsideTheFolder) {
  write_bytes(dir_ / "secret.bin", floats_bytes(kW));
  save(model_with_external_w("../secret.bin"), dir_ / "model" / "dotdot.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "dotdot.onnx").find("leaves the model's folder"), std::string::npos)
      << import_error(dir_ / "model" / "dotdot.onnx");
  save(model_with_external_w((dir_ / "secret.bin").string()), dir_ / "model" / "abs.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "abs.onnx").find("absolute path"), std::string::npos);
  // A `..` inside a path that would come back into the folder is refused too (exact rule).
  save(model_with_external_w("sub/../w.bin"), dir_ / "model" / "inner.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "inner.onnx").find("'..'"), std::string::npos);
  // A symlink in the folder that points outside it.
  fs::create_symlink(dir_ / "secret.bin", dir_ / "model" / "link.bin");
  save(model_with_external_w("link.bin"), dir_ / "model" / "link.onnx");
  std::string e = import_error(dir_ / "model" / "link.onnx");
  EXPECT_NE(e.find("outside the model's folder"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("link.onnx"), std::string::npos) << e;  // names the model file
}

TEST_F(ExternalData, SymlinkInsideTheFolderIsFine) {
  write_bytes(dir_ / "model" / "real.bin", floats_bytes(kW));
  fs::create_symlink(dir_ / "model" / "real.bin", dir_ / "model" / "alias.bin");
  save(model_with_external_w("alias.bin"), dir_ / "model" / "m.onnx");
  EXPECT_NO_THROW(import_onnx_file((dir_ / "model" / "m.onnx").string()));
}

TEST_F(ExternalData, MissingFileAndShortFileAreInputErrors) {
  save(model_with_external_w("nothere.bin"), dir_ / "model" / "m.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "m.onnx").find("nothere.bin"), std::string::npos);
  write_bytes(dir_ / "model" / "short.bin", floats_bytes(kW));
  save(model_with_external_w("short.bin", 8, 16), dir_ / "model" / "s.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "s.onnx").find("outside"), std::string::npos);
  write_bytes(dir_ / "model" / "w3.bin", floats_bytes({1, 2, 3}));  // 3 floats for a [4] tensor
  save(model_with_external_w("w3.bin"), dir_ / "model" / "t.onnx");
  EXPECT_NE(import_error(dir_ / "model" / "t.onnx").find("bytes"), std::string::npos);
}

TEST_F(ExternalData, ResolveLocationDirectly) {
  write_bytes(dir_ / "model" / "a.bin", "1234");
  EXPECT_EQ(resolve_location((dir_ / "model").string(), "a.bin"), fs::canonical(dir_ / "model" / "a.bin").string());
  EXPECT_EQ(resolve_location((dir_ / "model").string(), "./a.bin"), fs::canonical(dir_ / "model" / "a.bin").string());
  EXPECT_THROW(resolve_location((dir_ / "model").string(), ""), ExternalDataError);
  EXPECT_THROW(resolve_location((dir_ / "model").string(), "."), ExternalDataError);
  EXPECT_THROW(resolve_location((dir_ / "model").string(), "/etc/passwd"), ExternalDataError);
  EXPECT_THROW(resolve_location((dir_ / "model").string(), "../model/a.bin"), ExternalDataError);
}

// ---- writing ---------------------------------------------------------------------------------

const char* kWide = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,64] x) => (y) {
  y = MatMul (x, w)
})";

ImportResult wide_model(const fs::path& at) {
  onnx::ModelProto m = parse(kWide);
  *m.mutable_graph()->add_initializer() = [] {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(64);
    t.add_dims(32);
    std::vector<float> v(64 * 32);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) - 3.0f;
    t.set_raw_data(floats_bytes(v));
    return t;
  }();
  save(m, at);
  return import_onnx_file(at.string());
}

TEST_F(ExternalData, WrittenOnRequestAndReadBack) {
  ImportResult r = wide_model(dir_ / "model" / "in.onnx");
  ExportOptions eo;
  eo.external_data = ExternalDataMode::Always;
  ExportStats st;
  const fs::path out = dir_ / "model" / "out.onnx";
  export_onnx_file(r.graph, r.weights, r.ctx, out.string(), eo, &st);
  EXPECT_EQ(st.external_data, "out.onnx.data");
  EXPECT_EQ(st.external_bytes, 64u * 32u * 4u);
  ASSERT_TRUE(fs::exists(dir_ / "model" / "out.onnx.data"));
  EXPECT_EQ(fs::file_size(dir_ / "model" / "out.onnx.data"), 64u * 32u * 4u);
  EXPECT_LT(fs::file_size(out), 1000u);  // the model file holds no weights
  ASSERT_TRUE(r.weights.contains("w"));  // the bytes went back into the store
  EXPECT_EQ(r.weights.get("w").bytes.size(), 64u * 32u * 4u);
  ImportResult back = import_onnx_file(out.string());
  EXPECT_EQ(back.weights.get("w").bytes, r.weights.get("w").bytes);
  EXPECT_EQ(print_term(back.graph, back.graph.outputs()[0]), print_term(r.graph, r.graph.outputs()[0]));
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(dir_ / "model"))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(ExternalData, AutomaticAboveTheLimitOnly) {
  ImportResult r = wide_model(dir_ / "model" / "in.onnx");
  ExportStats small;
  export_onnx_file(r.graph, r.weights, r.ctx, (dir_ / "model" / "plain.onnx").string(), {}, &small);
  EXPECT_EQ(small.external_data, "");
  EXPECT_FALSE(fs::exists(dir_ / "model" / "plain.onnx.data"));
  ExportOptions eo;
  eo.external_auto_limit = 4096;  // stands in for protobuf's 2 GB (the model is ~8 KB)
  ExportStats big;
  export_onnx_file(r.graph, r.weights, r.ctx, (dir_ / "model" / "big.onnx").string(), eo, &big);
  EXPECT_EQ(big.external_data, "big.onnx.data");
  EXPECT_TRUE(fs::exists(dir_ / "model" / "big.onnx.data"));
}

TEST_F(ExternalData, StagedExportIsReadableBeforeCommitThroughRedirects) {
  ImportResult r = wide_model(dir_ / "model" / "in.onnx");
  ExportOptions eo;
  eo.external_data = ExternalDataMode::Always;
  const fs::path out = dir_ / "model" / "out.onnx";
  {
    StagedExport staged(out.string());
    export_onnx_to(r.graph, r.weights, r.ctx, staged, eo);
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(dir_ / "model" / "out.onnx.data"));
    ImportOptions io;
    io.external_data_files = staged.redirects();
    ImportResult back = import_onnx_file(staged.model_temp_path(), io);
    EXPECT_EQ(back.weights.get("w").bytes, r.weights.get("w").bytes);
    // Without the redirect the staged model names a data file that is not there yet.
    EXPECT_THROW(import_onnx_file(staged.model_temp_path()), ImportError);
  }  // not committed: nothing stays behind
  std::vector<fs::path> left;
  for (const auto& e : fs::directory_iterator(dir_ / "model")) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<fs::path>{"in.onnx"});
}

TEST_F(ExternalData, NeverOverwritesTheSourceModelsDataFile) {
  // The source model keeps its weights in "out.onnx.data": writing out.onnx with external
  // data would replace the file the source model still needs.
  write_bytes(dir_ / "model" / "out.onnx.data", floats_bytes(kW));
  save(model_with_external_w("out.onnx.data"), dir_ / "model" / "src.onnx");
  ImportResult r = import_onnx_file((dir_ / "model" / "src.onnx").string());
  ExportOptions eo;
  eo.external_data = ExternalDataMode::Always;
  eo.external_threshold = 4;
  EXPECT_THROW(export_onnx_file(r.graph, r.weights, r.ctx, (dir_ / "model" / "out.onnx").string(), eo), ExportError);
  std::ifstream f(dir_ / "model" / "out.onnx.data", std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(kept, floats_bytes(kW));
}

}  // namespace
}  // namespace tensat
