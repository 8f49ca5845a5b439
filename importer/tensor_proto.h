// Conversions between onnx::TensorProto and WeightData (the language's constant tensors: a
// type and raw little-endian bytes), for initializers, Constant nodes and folded constants.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "lang/weights.h"

namespace tensat {

/// The data of `t` (raw_data or the typed repeated fields), copied. nullopt for an element
/// type the language does not model; throws ImportError naming `where` and the tensor for a
/// negative dimension, data that does not fit the shape, or data still in an external file.
std::optional<WeightData> tensor_data(const onnx::TensorProto& t, const std::string& where);

/// As tensor_data, but moves raw_data out of `t` instead of copying it (large initializers).
std::optional<WeightData> take_tensor_data(onnx::TensorProto& t, const std::string& where);

/// The values of an int64 or int32 tensor; nullopt for any other element type.
std::optional<std::vector<int64_t>> integer_values(const WeightData& w);

/// An initializer named `name` holding `w` (raw_data).
onnx::TensorProto tensor_from_data(const std::string& name, const WeightData& w);

}  // namespace tensat
