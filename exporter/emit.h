// The emitter's entry point, shared by exporter.cpp (which implements it) and writer.cpp.
// Internal to the exporter.
#pragma once

#include "exporter/exporter.h"

namespace tensat::detail {

/// Builds the ONNX model of `g`. With `movable` (the same store as `weights`), initializer
/// bytes are moved out of it into the model instead of copied; the caller moves them back.
onnx::ModelProto emit_model(const ir::Graph& g, const WeightStore& weights, const ModelContext& ctx,
                            WeightStore* movable, const ExportOptions& opts, ExportStats& stats);

}  // namespace tensat::detail
