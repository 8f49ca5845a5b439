// Operator table of the tensor language.
#include "lang/op.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace tensat {

namespace {
// name, arity min/max, params, foldable, free, act_param (order of enum Op)
constexpr std::array<OpInfo, kNumOps> kOps = {{
    {"num", 0, 0, 0, true, true, -1},
    {"sym", 0, 0, 0, true, true, -1},
    {"input", 1, 1, 1, false, true, -1},
    {"weight", 1, 1, 1, true, true, -1},
    {"zeros", 1, 1, 1, true, true, -1},
    {"ewadd", 2, 2, 0, true, false, -1},
    {"ewmul", 2, 2, 0, true, false, -1},
    {"matmul", 4, 4, 1, true, false, 0},
    {"conv", 7, 7, 4, true, false, 3},
    {"relu", 1, 1, 0, true, false, -1},
    {"tanh", 1, 1, 0, true, false, -1},
    {"sigmoid", 1, 1, 0, true, false, -1},
    {"act", 2, 2, 1, true, false, 0},
    {"poolmax", 6, 6, 5, true, false, -1},
    {"poolavg", 7, 7, 6, true, false, -1},
    {"transpose", 2, 2, 1, true, false, -1},
    {"reshape", 2, 2, 1, true, true, -1},
    {"enlarge", 2, 2, 0, true, false, -1},
    {"concat", 3, 3, 1, true, false, -1},
    {"split", 3, 3, 2, true, false, -1},
    {"split_0", 1, 1, 0, true, true, -1},
    {"split_1", 1, 1, 0, true, true, -1},
    {"merge", 2, 2, 1, true, false, -1},
    {"noop", 1, -1, 0, false, true, -1},
    {"opaque", 1, -1, 1, false, false, -1},
    {"select", 2, 2, 1, false, true, -1},
}};
}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)]; }
std::string_view op_name(Op op) { return op_info(op).name; }

std::optional<Op> op_from_name(std::string_view name) {
  for (int i = 0; i < kNumOps; ++i) {
    if (kOps[static_cast<size_t>(i)].name == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

namespace {

std::string float_str(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest form that reads back exactly
  return std::string(buf, r.ptr);
}

std::optional<float> parse_float(std::string_view s) {
  float v = 0;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// Reads the activation a symbol spells, canonical or not.
std::optional<Act> read_act(std::string_view s) {
  if (s == "none") return Act::None;
  if (s == "relu") return Act::Relu;
  if (s == "sigmoid") return Act::Sigmoid;
  if (s == "tanh") return Act::Tanh;
  if (s == "relu6") return Act::clip(0.0f, 6.0f);
  if (s.substr(0, 5) == "clip_") {
    std::string_view rest = s.substr(5);
    // A bound never contains '_' (it may have a sign or an exponent: clip_-1_1e+10).
    size_t u = rest.find('_');
    if (u == std::string_view::npos) return std::nullopt;
    auto lo = parse_float(rest.substr(0, u)), hi = parse_float(rest.substr(u + 1));
    if (!lo || !hi) return std::nullopt;
    return Act::clip(*lo, *hi);
  }
  if (s.substr(0, 6) == "leaky_") {
    auto a = parse_float(s.substr(6));
    if (!a) return std::nullopt;
    return Act::leaky(*a);
  }
  return std::nullopt;
}

}  // namespace

Act Act::clip(float lo, float hi) {
  Act a(Clip);
  a.lo = lo;
  a.hi = hi;
  return a;
}

Act Act::leaky(float alpha) {
  Act a(Leaky);
  a.alpha = alpha;
  return a;
}

std::string act_name(const Act& a) {
  switch (a.kind) {
    case Act::None: return "none";
    case Act::Relu: return "relu";
    case Act::Sigmoid: return "sigmoid";
    case Act::Tanh: return "tanh";
    case Act::Clip:
      if (!std::signbit(a.lo) && a.lo == 0.0f && a.hi == 6.0f) return "relu6";
      return "clip_" + float_str(a.lo) + "_" + float_str(a.hi);
    case Act::Leaky: return "leaky_" + float_str(a.alpha);
  }
  return "none";
}

std::optional<Act> act_from_name(std::string_view s) {
  auto a = read_act(s);
  if (!a || act_name(*a) != s) return std::nullopt;  // one spelling per activation
  return a;
}

}  // namespace tensat
