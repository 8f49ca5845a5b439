// The dimensions a Shape node returns: [start, end) of its input's (opset 15 attributes,
// negative ones counted from the end, clamped to the rank; an empty range where end <= start).
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace tensat {

inline std::pair<int64_t, int64_t> shape_op_range(const onnx::NodeProto& n, int64_t rank) {
  int64_t start = 0, end = rank;
  for (const auto& a : n.attribute()) {
    if (a.name() == "start") start = a.i();
    if (a.name() == "end") end = a.i();
  }
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {start, end};
}

/// Operators that choose between values or round them (Min, Max, Where, a comparison, Div, ...):
/// on sizes, their result may follow a symbol, or stay fixed, over some sizes only.
inline bool selecting_op(const std::string& op) {
  static const std::set<std::string> ops = {"Min",     "Max",  "Clip",           "Where", "Mod",         "Div",
                                            "Equal",   "Greater", "GreaterOrEqual", "Less",  "LessOrEqual", "Not",
                                            "And",     "Or",   "Xor",            "Ceil",  "Floor",       "Round",
                                            "ReduceMin", "ReduceMax", "Abs", "Sign"};
  return ops.count(op) != 0;
}

}  // namespace tensat
