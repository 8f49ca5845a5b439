// Inline ONNX models in onnx's text format (onnx::OnnxParser) for the importer and exporter
// tests: deterministic float tensors, int64 vectors, a model template.
#pragma once

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "lang/types.h"

namespace tensat {

// "float[6,4,3,3] name = {...}" with deterministic values in [lo, hi).
inline std::string T(const std::string& name, const Shape& s, float lo = -1.0f, float hi = 1.0f, uint64_t seed = 1) {
  std::ostringstream o;
  o << "float[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << "] " << name << " = {";
  int64_t n = num_elements(s);
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL + std::hash<std::string>{}(name);
  for (int64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    float u = static_cast<float>((x >> 40) & 0xFFFFFF) / static_cast<float>(1 << 24);
    o << (i ? "," : "") << lo + (hi - lo) * u;
  }
  o << "}";
  return o.str();
}

inline std::string I(const std::string& name, const std::vector<int64_t>& v) {
  std::ostringstream o;
  o << "int64[" << v.size() << "] " << name << " = {";
  for (size_t i = 0; i < v.size(); ++i) o << (i ? "," : "") << v[i];
  o << "}";
  return o.str();
}

inline onnx::ModelProto parse(const std::string& text) {
  onnx::ModelProto m;
  auto st = onnx::OnnxParser::Parse(m, text.c_str());
  EXPECT_TRUE(st.IsOK()) << st.ErrorMessage() << "\n" << text.substr(0, 2000);
  return m;
}

// A model with the given header ("" : opset), signature, initializers and body.
inline std::string M(const std::string& sig, const std::vector<std::string>& inits, const std::string& body,
              int opset = 13, const std::string& extra_opsets = "", int ir = 8) {
  std::string s = "<ir_version: " + std::to_string(ir) + ", opset_import: [\"\" : " + std::to_string(opset) +
                  extra_opsets + "]>\ng " + sig + "\n";
  if (!inits.empty()) {
    s += "<";
    for (size_t i = 0; i < inits.size(); ++i) s += (i ? ", " : "") + inits[i];
    s += ">\n";
  }
  return s + "{\n" + body + "\n}\n";
}

}  // namespace tensat
