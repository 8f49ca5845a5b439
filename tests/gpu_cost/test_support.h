// Helpers for the gpu_cost tests: capturing spdlog output, temporary folders (tests/temp_dir.h), type lists.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "lang/types.h"
#include "gpu_cost/gpu_runtime.h"
#include "tests/temp_dir.h"

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
