// Exporter: ir::Graph -> ONNX model.
//
// Keeps the graph interface of the source model (input and output names, order and types),
// its opset imports and metadata; re-emits opaque nodes verbatim; writes weight leaves as
// initializers; lowers fused activations back into separate ONNX nodes;
// flattens nested binary concats/splits on one axis into single n-ary ONNX nodes. The ONNX
// checker runs before writing (skipped with a warning where Debian's onnx 1.12 cannot judge
// the model: IR version > 8 or opset > 17). Files are written atomically (temp + rename).
// A model over protobuf's 2 GB limit, or any model with ExternalDataMode::Always, is written
// with its large tensors in a data file beside it (onnx's external data layout, location
// "OUT.data" relative to the model's folder; onnx_model/external_data.h).
//
// The exporter only writes: a graph that still computes weights (a weight-only subgraph
// such as a concat of two weights) must go through fold_weights (pipeline/weight_folding.h)
// first; export throws ExportError for such a node. The one exception is the transpose of a
// weight matrix that only matmuls read as B: written as Gemm with transB = 1 over the weight
// (lang/graph.h, transposed_weights_read_as_b), and fold_weights leaves it.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "exporter/dim_labels.h"
#include "lang/graph.h"
#include "lang/weights.h"
#include "onnx_model/external_data.h"
#include "onnx_model/model_context.h"
#include "support/atomic_file.h"

namespace tensat {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// When tensors go to an external data file: Auto when the model would not fit protobuf's
/// limit (the only way to write it), Always when asked (--external-data).
enum class ExternalDataMode : uint8_t { Auto, Always };

struct ExportOptions {
  bool run_checker = true;
  ExternalDataMode external_data = ExternalDataMode::Auto;
  size_t external_threshold = kExternalThreshold;  ///< smaller tensors stay in the model file
  size_t external_auto_limit = kProtobufLimit;     ///< Auto: external above this model size (tests lower it)
  /// Write the symbolic input dimensions the source declares (ModelContext::declared_inputs)
  /// instead of the fixed ones the graph was typed at: reshape targets copy or infer them,
  /// and the outputs and value_info name them (exporter/dim_labels.h). Throws DimLabelError
  /// where the graph cannot keep them; without symbolic inputs it changes nothing.
  bool keep_symbolic_dims = false;
};

struct ExportStats {
  std::map<std::string, int> op_counts;    ///< ONNX op types in the exported graph
  bool checker_ran = false;
  std::string checker_skipped_reason;
  std::string external_data;               ///< location of the data file written, "" if none
  size_t external_bytes = 0;               ///< its size
  /// keep_symbolic_dims: the symbolic input dimensions written ("x: N"), empty if none.
  std::vector<std::string> symbolic_dims;
  /// keep_symbolic_dims: the constants computed from the input shapes written as their
  /// computation (ModelContext::shape_values), by name.
  std::vector<std::string> shape_values;
};

/// An exported model in temporary files beside its destination, not visible until commit():
/// the model file and, where tensors went to external data, the data file (OUT.data).
class StagedExport {
 public:
  /// Creates the model's temporary file next to `path`; throws FileError.
  explicit StagedExport(std::string path);
  ~StagedExport();
  StagedExport(const StagedExport&) = delete;
  StagedExport& operator=(const StagedExport&) = delete;

  const std::string& path() const { return path_; }
  const std::string& model_temp_path() const { return model_.temp_path(); }
  /// The data file's final path (OUT.data) and its location as the model names it.
  std::string data_path() const { return path_ + ".data"; }
  std::string data_location() const;
  bool has_data_file() const { return data_ != nullptr; }
  /// For re-importing the staged model before commit (ImportOptions::external_data_files):
  /// the data file's location -> its temporary file.
  std::map<std::string, std::string> redirects() const;
  /// Makes the written files visible: the data file first, then the model. Throws FileError.
  void commit();

  AtomicFile& model_file() { return model_; }
  AtomicFile& open_data_file();  ///< creates the data file's temporary file
  void drop_data_file() { data_.reset(); }

 private:
  std::string path_;
  AtomicFile model_;
  std::unique_ptr<AtomicFile> data_;
};

/// Builds the ONNX model. Initializer data is copied from `weights`.
onnx::ModelProto export_model(const ir::Graph& g, const WeightStore& weights, const ModelContext& ctx,
                              const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Builds the model and writes it to `path` atomically (temp file + rename). To keep memory
/// low on large models, initializer bytes are moved out of `weights` while writing and moved
/// back afterwards.
void export_onnx_file(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, const std::string& path,
                      const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Builds the model and writes it into a StagedExport without committing it (the caller checks
/// the written files first, then commits). Same memory behaviour as export_onnx_file. Refuses
/// (ExportError) to write a data file over one the source model was read from.
void export_onnx_to(const ir::Graph& g, WeightStore& weights, const ModelContext& ctx, StagedExport& out,
                    const ExportOptions& opts = {}, ExportStats* stats = nullptr);

/// Writes any model atomically. Throws ExportError.
void write_model_atomic(const onnx::ModelProto& model, const std::string& path);

/// Runs the ONNX checker where Debian's onnx can judge the model; returns "" if it ran and
/// passed, else the reason it was skipped. Throws ExportError if the checker fails.
std::string check_model(const onnx::ModelProto& model);

}  // namespace tensat
