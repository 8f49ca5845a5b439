// Building the opaque nodes' descriptions (see opaque_ops.h).
#include "pipeline/opaque_ops.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cstring>

#include "onnx_model/dtype.h"

namespace tensat {

namespace {

template <typename T>
std::optional<WeightData> typed_tensor(const onnx::TensorProto& t, DType d) {
  WeightData w;
  w.type.dtype = d;
  w.type.shape.assign(t.dims().begin(), t.dims().end());
  std::vector<T> v = onnx::ParseData<T>(&t);
  if (v.size() != w.count()) return std::nullopt;
  w.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(w.bytes.data(), v.data(), w.bytes.size());
  return w;
}

// A tensor attribute's data (float32/64, int32/64; what ConstantOfShape's value uses), or
// nullopt for other element types and external data.
std::optional<WeightData> attr_tensor(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  try {
    switch (dtype_or_other(t.data_type())) {
      case DType::F32: return typed_tensor<float>(t, DType::F32);
      case DType::F64: return typed_tensor<double>(t, DType::F64);
      case DType::I64: return typed_tensor<int64_t>(t, DType::I64);
      case DType::I32: return typed_tensor<int32_t>(t, DType::I32);
      default: return std::nullopt;
    }
  } catch (const std::exception&) {
    return std::nullopt;  // malformed data: the node stays a region boundary
  }
}

exec::OpaqueAttr convert(const onnx::AttributeProto& a) {
  using K = exec::OpaqueAttr::Kind;
  exec::OpaqueAttr v;
  switch (a.type()) {
    case onnx::AttributeProto::INT: v.kind = K::Int, v.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: v.kind = K::Float, v.f = a.f(); break;
    case onnx::AttributeProto::STRING: v.kind = K::String, v.s = a.s(); break;
    case onnx::AttributeProto::INTS: v.kind = K::Ints, v.ints.assign(a.ints().begin(), a.ints().end()); break;
    case onnx::AttributeProto::FLOATS: v.kind = K::Floats, v.floats.assign(a.floats().begin(), a.floats().end()); break;
    case onnx::AttributeProto::STRINGS: v.kind = K::Strings, v.strings.assign(a.strings().begin(), a.strings().end()); break;
    case onnx::AttributeProto::TENSOR:
      v.t = attr_tensor(a.t());
      v.kind = v.t ? K::Tensor : K::Other;
      break;
    default: v.kind = K::Other; break;
  }
  return v;
}

}  // namespace

exec::OpaqueOps describe_opaque_ops(const ModelContext& ctx) {
  exec::OpaqueOps ops;
  ops.reserve(ctx.opaque.size());
  for (const OpaqueNode& on : ctx.opaque) {
    const onnx::NodeProto& n = on.node;
    exec::OpaqueOp op;
    op.op_type = n.op_type();
    op.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    op.name = n.name().empty() && n.output_size() > 0 ? n.output(0) : n.name();
    op.opset = op.domain.empty() ? ctx.default_opset : 0;
    for (const auto& o : ctx.header.opset_import())
      if ((o.domain() == "ai.onnx" ? "" : o.domain()) == op.domain) op.opset = o.version();
    for (const auto& a : n.attribute()) op.attrs[a.name()] = convert(a);
    for (int i = 0; i < n.input_size(); ++i)
      if (!n.input(i).empty()) op.slots.push_back(i);
    op.slots.insert(op.slots.end(), on.implicit_inputs.size(), -1);
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace tensat
