// Constant folding of an ONNX graph before lowering: every node whose outputs the constant
// evaluator (const_eval.h) computes from known values becomes an initializer. Known values are
// initializers (not those that are also graph inputs: a user may override them), Constant
// nodes and folded nodes; for Shape and Size the static type of the input is enough.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "importer/const_eval.h"
#include "lang/types.h"

namespace tensat::detail {

/// Folds the nodes of `g` (default domain, opset `opset`) to a fixpoint: each folded node is
/// removed and its output becomes an initializer of the same name. `types`: static types of
/// values known from graph inputs and ONNX shape inference. Identity of a known value is folded
/// like any node where the value is small (at most `max_elements`); a larger one (a weight)
/// is aliased without a copy (the node stays, lowering removes it). Results without elements are used
/// for further folding but stay nodes (a weight leaf has no empty dimension). `where` names
/// the model in errors. Returns the number of nodes removed.
/// `shape_derived` (kept across calls) collects the values folded from the shape of a tensor
/// that is not a constant (Shape, Size) and everything computed from them: at the fixed input
/// shapes they are constants, with symbolic input dimensions they would not be.
/// `shapes_of_run_time` (if given, kept across calls) collects the outputs of the Shape and
/// Size nodes among them that read a tensor computed at run time (not another such value).
/// `max_elements`: the largest result folded (const_eval::evaluate).
int fold_constants(onnx::GraphProto& g, int64_t opset, const std::unordered_map<std::string, TensorType>& types,
                   const std::string& where, std::unordered_set<std::string>& shape_derived,
                   std::unordered_set<std::string>* shapes_of_run_time = nullptr,
                   int64_t max_elements = const_eval::kMaxNewElements);

}  // namespace tensat::detail
