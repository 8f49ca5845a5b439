// Operator table of the tensor language.
#include "lang/op.h"

#include <array>

namespace tensat {

namespace {
// name, arity min/max, params, foldable, free, act_param
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

std::string_view act_name(Act a) {
  switch (a) {
    case Act::None: return "none";
    case Act::Relu: return "relu";
    case Act::Sigmoid: return "sigmoid";
    case Act::Tanh: return "tanh";
  }
  return "none";
}

std::optional<Act> act_from_name(std::string_view s) {
  if (s == "none") return Act::None;
  if (s == "relu") return Act::Relu;
  if (s == "sigmoid") return Act::Sigmoid;
  if (s == "tanh") return Act::Tanh;
  return std::nullopt;
}

}  // namespace tensat
