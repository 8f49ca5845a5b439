// The sliding-window attributes of an ONNX Conv, ONNX Runtime's FusedConv and the N-D pools:
// strides, dilations, pads and auto_pad, with ONNX's defaults. The importer computes window
// sizes from them (shape_fallback.cpp, window_dims) and the exporter labels symbolic ones
// (exporter/dim_labels_opaque.cpp, label_conv).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tensat {

struct WindowAttrs {
  enum class AutoPad { NotSet, Valid, SameUpper, SameLower };
  std::vector<int64_t> strides, dilations;  ///< one per spatial axis (default 1)
  std::vector<int64_t> pads;                ///< begins, then ends (default 0)
  AutoPad auto_pad = AutoPad::NotSet;       ///< "" and "NOTSET" are NotSet
  bool same() const { return auto_pad == AutoPad::SameUpper || auto_pad == AutoPad::SameLower; }
};

/// n's window attributes over `spatial` axes; nullopt, with *why, where one has another length
/// or auto_pad is none of ONNX's values.
std::optional<WindowAttrs> window_attrs(const onnx::NodeProto& n, size_t spatial, std::string* why = nullptr);

}  // namespace tensat
