// GraphIndex: adjacency of an ExtractGraph in flat arrays, built once per extraction.
//
// The extractors ask for the same derived facts many times (a node's distinct child classes
// on every worklist visit, a class's parent nodes on every improvement); computing them on
// demand (ExtractGraph::child_classes() sorts into a fresh vector) dominated the greedy
// extractors' fixed cost on the 50k-node e-graphs. The index stores them in CSR form.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract {

class GraphIndex {
 public:
  explicit GraphIndex(const ExtractGraph& g);

  /// Distinct child classes of node n, sorted (ExtractGraph::child_classes(n)).
  std::span<const ClassIdx> kids(NodeIdx n) const {
    return {kids_.data() + kid_start_[n], kids_.data() + kid_start_[n + 1]};
  }
  /// The usable nodes that have class c as a child, each once, by increasing index.
  std::span<const NodeIdx> parents(ClassIdx c) const {
    return {parents_.data() + parent_start_[c], parents_.data() + parent_start_[c + 1]};
  }
  /// ExtractGraph::usable(n): not filtered, finite cost, not a child of its own class.
  bool usable(NodeIdx n) const { return usable_[n] != 0; }
  /// The class of node n (a dense copy of ENode::eclass: the hot loops touch nothing else
  /// of the node).
  ClassIdx eclass(NodeIdx n) const { return eclass_[n]; }

 private:
  std::vector<uint32_t> kid_start_, parent_start_;
  std::vector<ClassIdx> kids_;
  std::vector<NodeIdx> parents_;
  std::vector<char> usable_;
  std::vector<ClassIdx> eclass_;
};

}  // namespace tensat::extract
