// Splitting the extraction ILP at its mandatory classes (extract/README.md, "Blocks").
//
// Every extraction uses the mandatory classes (reduce.h, requirements()). Link two classes
// when a candidate node of one has the other, not mandatory, as a child; a block is a
// connected part of that relation. A node's children outside its block are mandatory, so
// they are there whatever the other blocks choose: on an acyclic class graph the problem is
// the sum of independent problems, one per block (its mandatory classes "= 1", the classes of
// other blocks given), and the optimum is the sum of theirs. Inception-v3 (pipeline, k_multi
// 1) falls apart into 42 blocks of at most 323 columns instead of one of 2188.
#pragma once

#include <vector>

#include "extract/extract_graph.h"
#include "extract/reduce.h"

namespace tensat::extract {

struct Blocks {
  /// Per class: its block, or -1 (not alive, or free).
  std::vector<int> of_class;
  /// Per block: its classes, in increasing order; blocks are numbered by their first class.
  std::vector<std::vector<ClassIdx>> classes;
  size_t count() const { return classes.size(); }
};

/// The blocks of the reduced problem `red` (candidates: alive nodes of alive, non-free
/// classes) with its requirements `req`. Empty (count() 0) when the requirements were not
/// computed or the class graph of the candidates has a cycle: then acyclicity couples the
/// blocks and the problem does not split.
/// `index` is g's (graph_index.h); the first form builds one.
Blocks find_blocks(const ExtractGraph& g, const Reduction& red, const Requirements& req);
Blocks find_blocks(const ExtractGraph& g, const GraphIndex& index, const Reduction& red, const Requirements& req);

/// Per part (a block, or a union of blocks, numbered by `part_of`: per class its part or -1)
/// its landmark floor: the sum of the costs of the landmarks (LM-cut's, as nodes, with their
/// costs m; lm_cut.h) whose nodes all lie in it. Every extraction uses a node of each landmark
/// and a node's landmark costs add up to at most its cost, so every extraction's part costs at
/// least its floor (extract/README.md, "Blocks").
std::vector<double> landmark_floors(const ExtractGraph& g, const std::vector<int>& part_of, size_t parts,
                                    const std::vector<std::vector<NodeIdx>>& landmarks,
                                    const std::vector<double>& costs);

}  // namespace tensat::extract
