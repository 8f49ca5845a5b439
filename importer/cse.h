// Common-subexpression elimination on an ONNX graph before lowering: identical nodes on
// identical inputs are merged before the e-graph sees them (the lowered nodes are hash-consed
// by ir::Graph anyway; this also merges nodes kept opaque, and equal constants).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>
#include <unordered_set>

namespace tensat::detail {

/// Initializers of at most this many bytes are compared by value (larger ones by name only).
inline constexpr size_t kCseMaxConstantBytes = size_t{1} << 20;

/// First merges equal initializers (same type, shape and bytes, at most kCseMaxConstantBytes;
/// not those that are graph inputs), then, in file order, every node of the default domain
/// whose op type, attributes and inputs equal an earlier node's: its readers read the earlier
/// node's outputs instead and it is removed. An output that is a graph output or is read by a
/// subgraph keeps its name through an Identity of the earlier output. Nodes with random
/// results (RandomNormal, Multinomial, Bernoulli, Dropout, ...) are never merged. Returns the
/// number of nodes and initializers merged away. An initializer in `shape_derived` (computed
/// from the input shapes, const_fold.h) is merged only with another such one: the name kept
/// must carry the mark; with `merge_shape_derived` false, never (each is written back as its
/// own computation, ModelContext::shape_values: two equal at the fixed shapes may differ at
/// others).
int eliminate_common_subexpressions(onnx::GraphProto& g, const std::unordered_set<std::string>& shape_derived,
                                    bool merge_shape_derived = true);

}  // namespace tensat::detail
