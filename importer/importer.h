// Importer: ONNX model -> ir::Graph + WeightStore + ModelContext.
//
// Nodes map one to one onto the tensor language where they can (a Conv followed by a Relu
// stays two nodes: fusing is the rules' job). BatchNormalization is folded into a preceding
// Conv whose output it alone reads (else it becomes ewmul + ewadd with per-channel weights);
// Gemm is lowered to matmul (+ transposes of weights, scaled weights for alpha/beta);
// Flatten to reshape; Identity and inference-mode Dropout are removed; Constant becomes a
// weight; Shape (of a static tensor) an int64 weight; n-ary Concat a left-deep tree of binary concats; Split a chain of binary splits.
// Every other node, or a covered node with attributes the language cannot represent
// exactly (dilation != 1, ceil_mode, non-f32 types, ...), is kept verbatim as an opaque node.
// The graph outputs are joined by a noop root, in order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "lang/graph.h"
#include "lang/weights.h"
#include "importer/import_error.h"
#include "onnx_model/model_context.h"

namespace tensat {

struct ImportOptions {
  /// --input-shape NAME:1x3x224x224 overrides (also fixes symbolic dimensions).
  std::map<std::string, Shape> input_shapes;
  /// Folder that external data locations are relative to (import_onnx_file: the model's own
  /// folder; import_onnx_model: none unless set, and a model with external data is refused).
  std::string external_data_dir;
  /// External data location -> file to read instead, unchecked: re-importing a staged output
  /// whose data file is not yet in place (pipeline verification).
  std::map<std::string, std::string> external_data_files;
  /// A constant folded from the input shapes that the graph reads as data (a range of
  /// positions, a mask) becomes an input leaf of its name, its value in the weight store and
  /// its computation from the source in ModelContext::shape_values, so that an output with
  /// symbolic dimensions can compute it at run time (pipeline/shape_values.h). Those that
  /// cannot be computed that way stay weights.
  bool shape_values_at_run_time = false;
};

struct ImportStats {
  int onnx_nodes = 0;
  int opaque_nodes = 0;
  int folded_batchnorms = 0;
  int folded_nodes = 0;    ///< nodes evaluated to constants before lowering (const_fold.h)
  int cse_merged = 0;      ///< nodes and constants merged before lowering (cse.h)
  int dead_nodes = 0;      ///< nodes removed before lowering because nothing reads them (dce.h)
  std::map<std::string, int> onnx_op_counts;   ///< by ONNX op type, of the source model
  std::map<std::string, int> opaque_reasons;   ///< "OpType: reason" -> count
};

/// What the import resolved against the fixed input shapes (--input-shape) that an output with
/// symbolic dimensions could not follow (exporter/dim_labels.h): dimension `axis` of `node`
/// (a Slice dropped as covering the axis at its fixed size, SAME padding with a stride), or,
/// without a node, a constant computed from the input shapes that lowering built into the
/// graph (a Clip bound, a batch norm's statistics, a bias).
struct FixedDimUse {
  std::optional<ir::NodeId> node;  ///< in ImportResult::graph
  size_t axis = 0;
  std::string what;
  /// Without a node: the constant computed from the input shapes that lowering read as a Slice's
  /// bounds, axes or steps, Split sizes or a Reshape target. Such a use stands only where that
  /// constant is one of ModelContext::shape_values whose elements are labelled fixed (or, with
  /// `may_follow`, a Reshape target's, fixed or input symbols) and computed without selecting by
  /// the shapes (ShapeValue::selects).
  std::string value;
  bool may_follow = false;
};

struct ImportResult {
  ir::Graph graph;
  WeightStore weights;
  ModelContext ctx;
  ImportStats stats;
  std::vector<FixedDimUse> fixed_dim_uses;
  /// For ModelContext::shape_values: each tensor computed at run time whose shape they read
  /// -> its node in `graph` (absent where the graph does not compute it).
  std::unordered_map<std::string, ir::NodeId> shape_read_nodes;
};

/// Reads and imports a model file. Throws ImportError for bad input.
ImportResult import_onnx_file(const std::string& path, const ImportOptions& opts = {});

/// Imports an in-memory model (its initializer data is moved out). `source` names it in
/// error messages.
ImportResult import_onnx_model(onnx::ModelProto model, const std::string& source,
                               const ImportOptions& opts = {});

/// Parses "NAME:1x3x224x224" (the --input-shape flag); throws ImportError if malformed.
std::pair<std::string, Shape> parse_input_shape_flag(const std::string& flag);

}  // namespace tensat
