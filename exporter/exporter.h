// Exporter: ir::Graph -> ONNX model.
//
// Keeps the graph interface of the source model (input and output names, order and types),
// its opset imports and metadata; re-emits opaque nodes verbatim; computes weight-only
// subgraphs (concat/enlarge/merge/transpose/reshape... of weights) into new initializers
// with the CPU reference executor; lowers fused activations back into separate ONNX nodes;
// flattens nested binary concats/splits on one axis into single n-ary ONNX nodes. The ONNX
// checker runs before writing (skipped with a warning where Debian's onnx 1.12 cannot judge
// the model: IR version > 8 or opset > 17). Files are written atomically (temp + rename).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <stdexcept>
#include <string>

#include "egraph/graph.h"
#include "egraph/weights.h"
#include "importer/model_context.h"

namespace tensat {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExportOptions {
  bool run_checker = true;
};

struct ExportStats {
  int folded_weights = 0;                  ///< weight-only subgraphs computed into initializers
  std::map<std::string, int> op_counts;    ///< ONNX op types in the exported graph
  bool checker_ran = false;
  std::string checker_skipped_reason;
};

/// Builds the ONNX model. Initializer data is copied from `weights`.
onnx::ModelProto export_model(const ir::Graph& g, const WeightStore& weights, const ModelContext& ctx,
                              const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Builds the model and writes it to `path` atomically (temp file + rename). To keep memory
/// low on large models, initializer bytes are moved out of `weights` while writing and moved
/// back afterwards.
void export_onnx_file(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, const std::string& path,
                      const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Writes any model atomically. Throws ExportError.
void write_model_atomic(const onnx::ModelProto& model, const std::string& path);

/// Runs the ONNX checker where Debian's onnx can judge the model; returns "" if it ran and
/// passed, else the reason it was skipped. Throws ExportError if the checker fails.
std::string check_model(const onnx::ModelProto& model);

}  // namespace tensat
