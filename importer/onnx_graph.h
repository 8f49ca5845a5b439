// Small helpers over an ONNX graph (onnx::GraphProto) shared by the importer's walk and its
// passes before lowering (constant folding, CSE, DCE): what a node reads, subgraph references.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tensat::detail {

/// Appends the names a subgraph reads but does not define itself (outer-scope references),
/// each once.
void collect_outer_refs(const onnx::GraphProto& sub, std::vector<std::string>& out);

/// True if the node has a graph-valued attribute (If, Loop, Scan, ...).
bool has_subgraph(const onnx::NodeProto& n);

/// Every name the node reads: its non-empty inputs, then its subgraphs' outer references.
std::vector<std::string> node_reads(const onnx::NodeProto& n);

/// Split's parts of a dimension `dim` into `parts` outputs without sizes: ceil(dim / parts)
/// each, the last one smaller, possibly empty (Split-18's num_outputs); nullopt if it would be
/// negative (ONNX Runtime refuses that).
std::optional<std::vector<int64_t>> split_chunks(int64_t dim, int64_t parts);

/// True for the default ONNX domain ("" or "ai.onnx").
inline bool default_domain(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

}  // namespace tensat::detail
