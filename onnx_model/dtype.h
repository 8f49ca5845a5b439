// Element types between ONNX (TensorProto::DataType) and the tensor language (DType).
#pragma once

#include <cstdint>
#include <optional>

#include "lang/types.h"

namespace tensat {

/// The language's DType of an ONNX element type; nullopt for one it does not model
/// (int16, bfloat16, string, ...).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
/// As dtype_from_onnx, with DType::Other for unmodelled types (carried by opaque nodes only).
inline DType dtype_or_other(int32_t onnx_type) { return dtype_from_onnx(onnx_type).value_or(DType::Other); }
/// The ONNX element type of a DType (UNDEFINED for DType::Other).
int32_t onnx_dtype(DType d);

}  // namespace tensat
