// Constant evaluation of ONNX nodes (see const_eval.h).
#include "importer/const_eval.h"

#include <functional>
#include <unordered_map>

#include "importer/const_eval_support.h"
#include "importer/import_error.h"

namespace tensat::const_eval {

namespace {

using namespace detail;

using EvalFn = std::function<WeightData(const Node&, const onnx::NodeProto&)>;

const std::unordered_map<std::string, EvalFn>& table() {
  static const std::unordered_map<std::string, EvalFn> t = {
      {"Constant", [](const Node& n, const onnx::NodeProto& p) { return constant(n, p); }},
      {"Identity", [](const Node& n, const onnx::NodeProto&) { return n.value(0); }},
      {"Shape", [](const Node& n, const onnx::NodeProto&) { return shape_of(n); }},
      {"Size", [](const Node& n, const onnx::NodeProto&) {
         return i64_tensor({num_elements(n.type(0).shape)}, {});
       }},
      {"Reshape", [](const Node& n, const onnx::NodeProto&) { return reshape(n); }},
      {"Unsqueeze", [](const Node& n, const onnx::NodeProto&) { return unsqueeze(n); }},
      {"Squeeze", [](const Node& n, const onnx::NodeProto&) { return squeeze(n); }},
      {"Concat", [](const Node& n, const onnx::NodeProto&) { return concat(n); }},
      {"Gather", [](const Node& n, const onnx::NodeProto&) { return gather(n); }},
      {"Slice", [](const Node& n, const onnx::NodeProto&) { return slice(n); }},
      {"Transpose", [](const Node& n, const onnx::NodeProto&) { return transpose(n); }},
      {"Expand", [](const Node& n, const onnx::NodeProto&) { return expand(n); }},
      {"ConstantOfShape", [](const Node& n, const onnx::NodeProto&) { return constant_of_shape(n); }},
      {"Range", [](const Node& n, const onnx::NodeProto&) { return range(n); }},
      {"Cast", [](const Node& n, const onnx::NodeProto&) { return cast(n); }},
      {"Add", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '+'); }},
      {"Sub", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '-'); }},
      {"Mul", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '*'); }},
      {"Div", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '/'); }},
      {"Mod", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, '%'); }},
      {"Max", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, 'M'); }},
      {"Min", [](const Node& n, const onnx::NodeProto&) { return arithmetic(n, 'm'); }},
      {"Pow", [](const Node& n, const onnx::NodeProto&) { return power(n); }},
      {"Neg", [](const Node& n, const onnx::NodeProto&) { return neg(n); }},
      {"Abs", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Abs"); }},
      {"ReduceMax", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceMax"); }},
      {"ReduceMin", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceMin"); }},
      {"ReduceSum", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceSum"); }},
      {"ReduceProd", [](const Node& n, const onnx::NodeProto&) { return reduce(n, "ReduceProd"); }},
      {"Ceil", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Ceil"); }},
      {"Floor", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Floor"); }},
      {"Round", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Round"); }},
      {"Sqrt", [](const Node& n, const onnx::NodeProto&) { return unary(n, "Sqrt"); }},
      {"Equal", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Equal"); }},
      {"Less", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Less"); }},
      {"Greater", [](const Node& n, const onnx::NodeProto&) { return compare(n, "Greater"); }},
      {"LessOrEqual", [](const Node& n, const onnx::NodeProto&) { return compare(n, "LessOrEqual"); }},
      {"GreaterOrEqual", [](const Node& n, const onnx::NodeProto&) { return compare(n, "GreaterOrEqual"); }},
      {"CastLike", [](const Node& n, const onnx::NodeProto&) { return cast(n, true); }},
      {"Trilu", [](const Node& n, const onnx::NodeProto&) { return trilu(n); }},
      {"Not", [](const Node& n, const onnx::NodeProto&) { return logical(n, "Not"); }},
      {"And", [](const Node& n, const onnx::NodeProto&) { return logical(n, "And"); }},
      {"Or", [](const Node& n, const onnx::NodeProto&) { return logical(n, "Or"); }},
      {"Where", [](const Node& n, const onnx::NodeProto&) { return where(n); }},
  };
  return t;
}

}  // namespace

bool covers(const std::string& op_type) { return table().count(op_type) != 0; }

std::optional<std::vector<WeightData>> evaluate(const onnx::NodeProto& n, int64_t opset,
                                                const std::vector<std::optional<Operand>>& inputs, std::string* why,
                                                int64_t max_elements) {
  auto fail = [&](const std::string& reason) -> std::optional<std::vector<WeightData>> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!(n.domain().empty() || n.domain() == "ai.onnx")) return fail("domain '" + n.domain() + "'");
  auto it = table().find(n.op_type());
  if (it == table().end()) return fail("op type not evaluated");
  // An op used before its opset introduced it is not what the model means (runtimes refuse it).
  static const std::unordered_map<std::string, int64_t> kSince = {
      {"Mod", 10}, {"Round", 11}, {"LessOrEqual", 12}, {"GreaterOrEqual", 12}, {"Trilu", 14}, {"CastLike", 15}};
  if (auto s = kSince.find(n.op_type()); s != kSince.end() && opset < s->second)
    return fail(n.op_type() + " before opset " + std::to_string(s->second));
  if (n.output_size() != 1) return fail("not a single-output node");
  // Before opset 7 the element-wise ops broadcast only with broadcast=1, and then from their
  // `axis` on, not numpy's way (lower.cpp, legacy_broadcast_operand): operands of different
  // shapes are left to the node.
  if (opset < 7)
    for (const auto& a : n.attribute())
      if (a.name() == "broadcast")
        for (const auto& in : inputs)
          if (in && inputs[0] && in->type.shape != inputs[0]->type.shape)
            return fail("legacy broadcasting (opset < 7)");
  try {
    Node node(n, opset, inputs);
    WeightData out = it->second(node, n);
    if (out.type.dtype == DType::Other) return fail("result type not covered");
    if (n.op_type() != "Constant" && static_cast<int64_t>(out.count()) > max_elements)
      return fail("result of " + std::to_string(out.count()) + " elements is too large to fold");
    std::vector<WeightData> res;
    res.push_back(std::move(out));
    return res;
  } catch (const Skip& s) {
    return fail(s.why);
  } catch (const ImportError& e) {
    return fail(e.what());
  }
}

}  // namespace tensat::const_eval
