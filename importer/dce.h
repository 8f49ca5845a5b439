// Dead-code elimination on an ONNX graph before lowering: nodes whose results nothing reads
// (constant folding and CSE leave such nodes behind: the Shape that fed a folded Gather, a
// merged constant) and initializers nothing reads.
#pragma once

#include <onnx/onnx_pb.h>

namespace tensat::detail {

/// Removes, to a fixpoint, every node none of whose outputs is read by a node, a subgraph or
/// the graph's outputs, then every initializer nothing reads (an initializer that is also a
/// graph input stays: it is part of the interface). Returns the number of nodes removed.
int eliminate_dead_code(onnx::GraphProto& g);

}  // namespace tensat::detail
