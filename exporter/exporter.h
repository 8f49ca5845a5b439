// Exporter: ir::Graph -> ONNX model.
//
// Keeps the graph interface of the source model (input and output names, order and types),
// its opset imports and metadata; re-emits opaque nodes verbatim; writes weight leaves as
// initializers; lowers fused activations back into separate ONNX nodes;
// flattens nested binary concats/splits on one axis into single n-ary ONNX nodes. The ONNX
// checker runs before writing (skipped with a warning where Debian's onnx 1.12 cannot judge
// the model: IR version > 8 or opset > 17). Files are written atomically (temp + rename).
//
// The exporter only writes: a graph that still computes weights (a weight-only subgraph
// such as a concat of two weights) must go through fold_weights (pipeline/weight_folding.h)
// first; export throws ExportError for such a node.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <stdexcept>
#include <string>

#include "lang/graph.h"
#include "lang/weights.h"
#include "onnx_model/model_context.h"
#include "support/atomic_file.h"

namespace tensat {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExportOptions {
  bool run_checker = true;
};

struct ExportStats {
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

/// Builds the model and writes it into an open AtomicFile without committing it (the caller
/// checks the written file first, then commits). Same memory behaviour as export_onnx_file.
void export_onnx_to(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, AtomicFile& file,
                    const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Writes any model atomically. Throws ExportError.
void write_model_atomic(const onnx::ModelProto& model, const std::string& path);

/// Runs the ONNX checker where Debian's onnx can judge the model; returns "" if it ran and
/// passed, else the reason it was skipped. Throws ExportError if the checker fails.
std::string check_model(const onnx::ModelProto& model);

}  // namespace tensat
