// TensorProto <-> WeightData (see tensor_proto.h).
#include "importer/tensor_proto.h"

#include <cstring>

#include "importer/import_error.h"
#include "onnx_model/dtype.h"

namespace tensat {

namespace {

// Type and checks shared by both readers; nullopt for an unmodelled element type.
std::optional<TensorType> tensor_type(const onnx::TensorProto& t, const std::string& where) {
  auto dt = dtype_from_onnx(t.data_type());
  if (!dt) return std::nullopt;
  TensorType type{*dt, {}};
  for (auto d : t.dims()) {
    if (d < 0) throw ImportError(where + ": tensor '" + t.name() + "' has a negative dimension");
    type.shape.push_back(d);
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw ImportError(where + ": tensor '" + t.name() + "' still refers to external data (internal: not loaded)");
  return type;
}

// Fills w.bytes from the typed repeated fields of t (no raw_data).
void from_typed_fields(const onnx::TensorProto& t, WeightData& w, const std::string& where) {
  size_t n = static_cast<size_t>(num_elements(w.type.shape));
  w.bytes.resize(n * dtype_size(w.type.dtype));
  auto copy_from = [&](const auto& field, auto conv) {
    if (static_cast<size_t>(field.size()) != n) return false;
    for (size_t i = 0; i < n; ++i) conv(i, field.Get(static_cast<int>(i)));
    return true;
  };
  bool ok = false;
  switch (w.type.dtype) {
    case DType::F32:
      ok = copy_from(t.float_data(), [&](size_t i, float v) { std::memcpy(&w.bytes[i * 4], &v, 4); });
      break;
    case DType::F64:
      ok = copy_from(t.double_data(), [&](size_t i, double v) { std::memcpy(&w.bytes[i * 8], &v, 8); });
      break;
    case DType::I64:
      ok = copy_from(t.int64_data(), [&](size_t i, int64_t v) { std::memcpy(&w.bytes[i * 8], &v, 8); });
      break;
    case DType::I32:
      ok = copy_from(t.int32_data(), [&](size_t i, int32_t v) { std::memcpy(&w.bytes[i * 4], &v, 4); });
      break;
    case DType::I8:
    case DType::U8:
    case DType::Bool:
      ok = copy_from(t.int32_data(), [&](size_t i, int32_t v) { w.bytes[i] = static_cast<char>(v); });
      break;
    case DType::F16:
      ok = copy_from(t.int32_data(), [&](size_t i, int32_t v) {
        uint16_t h = static_cast<uint16_t>(v);
        std::memcpy(&w.bytes[i * 2], &h, 2);
      });
      break;
    case DType::Other: break;
  }
  if (!ok && n == 0) ok = true;
  if (!ok) throw ImportError(where + ": tensor '" + t.name() + "' has inconsistent data size");
}

void check_size(const onnx::TensorProto& t, const WeightData& w, const std::string& where) {
  size_t need = static_cast<size_t>(num_elements(w.type.shape)) * dtype_size(w.type.dtype);
  if (w.bytes.size() != need)
    throw ImportError(where + ": tensor '" + t.name() + "' holds " + std::to_string(w.bytes.size()) +
                      " bytes, its shape needs " + std::to_string(need));
}

}  // namespace

std::optional<WeightData> tensor_data(const onnx::TensorProto& t, const std::string& where) {
  auto type = tensor_type(t, where);
  if (!type) return std::nullopt;
  WeightData w;
  w.type = *type;
  if (t.has_raw_data()) {
    w.bytes = t.raw_data();
  } else {
    from_typed_fields(t, w, where);
  }
  check_size(t, w, where);
  return w;
}

std::optional<WeightData> take_tensor_data(onnx::TensorProto& t, const std::string& where) {
  auto type = tensor_type(t, where);
  if (!type) return std::nullopt;
  WeightData w;
  w.type = *type;
  if (t.has_raw_data()) {
    w.bytes.swap(*t.mutable_raw_data());
  } else {
    from_typed_fields(t, w, where);
  }
  check_size(t, w, where);
  return w;
}

std::optional<std::vector<int64_t>> integer_values(const WeightData& w) {
  std::vector<int64_t> v(w.count());
  if (w.type.dtype == DType::I64) {
    if (!v.empty()) std::memcpy(v.data(), w.bytes.data(), v.size() * 8);
  } else if (w.type.dtype == DType::I32) {
    for (size_t i = 0; i < v.size(); ++i) {
      int32_t x = 0;
      std::memcpy(&x, w.bytes.data() + i * 4, 4);
      v[i] = x;
    }
  } else {
    return std::nullopt;
  }
  return v;
}

onnx::TensorProto tensor_from_data(const std::string& name, const WeightData& w) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx_dtype(w.type.dtype));
  for (auto d : w.type.shape) t.add_dims(d);
  t.set_raw_data(w.bytes);
  return t;
}

}  // namespace tensat
