// Helpers for the gpu_cost tests: capturing spdlog output, temporary folders, type lists.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lang/types.h"
#include "gpu_cost/gpu_runtime.h"

namespace tensat::testing {

/// Routes the default spdlog logger into a string for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() : old_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> old_;
};

/// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tensat_gpu_cost_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Owns ValueTypes and hands out the pointer list a signature is made of.
class Types {
 public:
  Types& num(int64_t v) { return add(ValueType::of_int(v)); }
  Types& sym(std::string s) { return add(ValueType::of_sym(std::move(s))); }
  Types& f32(Shape s) { return add(ValueType::of_tensor(TensorType{DType::F32, std::move(s)})); }
  Types& tensor(DType d, Shape s) { return add(ValueType::of_tensor(TensorType{d, std::move(s)})); }
  Types& add(ValueType v) {
    store_.push_back(std::make_unique<ValueType>(std::move(v)));
    return *this;
  }
  std::vector<const ValueType*> list() const {
    std::vector<const ValueType*> v;
    for (const auto& p : store_) v.push_back(p.get());
    return v;
  }

 private:
  std::vector<std::unique_ptr<ValueType>> store_;
};

#define TENSAT_REQUIRE_GPU()                                      \
  do {                                                            \
    if (!::tensat::gpu::available()) GTEST_SKIP() << "skipped: no GPU"; \
  } while (0)

}  // namespace tensat::testing
