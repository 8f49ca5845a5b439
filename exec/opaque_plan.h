// How an executor evaluates the opaque nodes of a graph, decided once per run, the same way
// for the CPU reference executor and the GPU executor:
//
//   host      the node's value is a constant: every data input is a constant (a weight, or a
//             host node before it) and the host evaluation applies (opaque_host.h: shape
//             computations, data movement, small arithmetic). Computed here, once.
//   kernel    the node runs at run time on float32 data (opaque_decode.h descriptions);
//             its parameter inputs (pads, axes, indices, ...) are constants read here.
//   boundary  anything else (an op without a kernel, a parameter that is not constant,
//             integer data at run time, several outputs): the caller must provide its value
//             (RunOptions::provided), as verification does for region boundaries.
//
// Without an OpaqueOps list every opaque node is a boundary (the executors' behaviour before
// opaque kernels existed).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/opaque_decode.h"
#include "exec/opaque_op.h"
#include "exec/tensor.h"
#include "lang/graph.h"
#include "lang/weights.h"

namespace tensat::exec {

enum class OpaqueHow : uint8_t { NotOpaque, Host, Kernel, Boundary };

class OpaquePlan {
 public:
  /// Plans every opaque node of g (and every select of a multi-output one). Nodes in
  /// `provided` are boundaries whose value the caller gives: they are not evaluated.
  OpaquePlan(const ir::Graph& g, const WeightStore& weights, const OpaqueOps* ops,
             const std::unordered_map<ir::NodeId, Tensor>& provided);

  OpaqueHow how(ir::NodeId n) const { return how_[n]; }
  /// The host value of a constant node: a weight (any element type) or a Host opaque node;
  /// nullptr otherwise.
  const WeightData* constant(ir::NodeId n) const { return constant_[n]; }
  /// The description of a Kernel node.
  const opaque::Decoded& decoded(ir::NodeId n) const { return decoded_.at(n); }
  /// The ONNX op type of an opaque node ("opaque" without an OpaqueOps list); a select
  /// reports its opaque node's type.
  std::string op_type(ir::NodeId n) const;
  /// Why a Boundary node cannot be evaluated ("Softmax: axis out of range", ...).
  const std::string& why(ir::NodeId n) const;
  /// Node ids of the children a Kernel node reads at run time (Decoded::data order).
  std::vector<ir::NodeId> data_children(ir::NodeId n) const;

 private:
  const ir::Graph& g_;
  const OpaqueOps* ops_;
  std::vector<OpaqueHow> how_;
  std::vector<const WeightData*> constant_;
  std::unordered_map<ir::NodeId, opaque::Decoded> decoded_;
  std::unordered_map<ir::NodeId, std::string> why_;
  std::deque<WeightData> owned_;  // host values (stable addresses)
};

}  // namespace tensat::exec
