// Twin parts: parts of the split ILP (blocks.h) that are the same problem, solved once
// (extract/README.md, "Twins").
//
// A part's problem is fixed by its classes, which of them are mandatory, and per class its
// candidate nodes (alive in the reduced problem) with their costs and child classes, the
// classes outside the part being given (blocks.h). Two parts with a bijection between their
// classes and between their nodes that keeps all of that (costs bit for bit) have the same
// optimum, and an extraction of one maps onto the other at the same cost (the copy needs the
// free classes its nodes read filled in, copy_from_rep()). The rows the ILP adds (landmarks,
// separated cuts) are valid inequalities of a part's problem, so a bound of one part's ILP
// bounds the other's optimum. Repeated cells give such parts: NasNet-A's
// restricted problem (restriction.h) has 12 normal-cell blocks of 209 columns in 3 groups.
//
// The bijection is proposed by hashing (bottom-up over the acyclic class graph, then once
// top-down over the readers) and then checked exactly; a proposal that fails the check gives
// no twin, never a wrong one.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "extract/extract_graph.h"
#include "extract/reduce.h"

namespace tensat::extract {

struct TwinMap {
  size_t rep = 0;                                       ///< the part it is the same problem as
  std::vector<std::pair<ClassIdx, ClassIdx>> classes;   ///< (the rep's class, this part's class)
  std::vector<std::pair<NodeIdx, NodeIdx>> nodes;       ///< (the rep's node, this part's node)
};

/// Per part (`masks`: per part, per class whether it belongs to it), its map onto a part
/// before it in `order` that is the same problem (itself a representative, never a twin), or
/// nothing. Needs the requirements over `red` (their mandatory classes) and an acyclic class
/// graph over the alive nodes (find_blocks() checks both; with a cycle there are no twins).
/// `index` is g's (graph_index.h); the first form builds one.
std::vector<std::optional<TwinMap>> find_twins(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                               const std::vector<std::vector<char>>& masks,
                                               const std::vector<size_t>& order);
std::vector<std::optional<TwinMap>> find_twins(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                               const Requirements& req, const std::vector<std::vector<char>>& masks,
                                               const std::vector<size_t>& order);

/// The exact check: whether part t (its classes `classes`) is the same problem as part r (its
/// classes `rep_classes`; both lists all of the part's classes, each once), the classes paired in order (`part_of`: per class its part, or -1:
/// outside every part, given). Every pair must agree on being mandatory, and the alive nodes of
/// each pair must pair up with the same cost bits and children that correspond (a child in the
/// part by the pairing, one outside on both sides). The map where it holds.
std::optional<TwinMap> check_twin(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                  const std::vector<int>& part_of, size_t r, const std::vector<ClassIdx>& rep_classes,
                                  size_t t, const std::vector<ClassIdx>& classes);

/// `choice` with the twin's classes chosen as the rep's classes are in `choice` (the twin's
/// classes the rep does not use left unchosen), the free classes it left unchosen filled with
/// their free node (a copied node may read a weight the twin did not read before), pruned to
/// what the roots reach. The part costs what the rep's part costs. Empty where the rep's part
/// uses a node that is no candidate (the caller checks the whole, offer()).
Choice copy_from_rep(const ExtractGraph& g, const Reduction& red, const TwinMap& t, const Choice& choice);

}  // namespace tensat::extract
