// Restriction to base nodes: a smaller problem whose optimum bounds the whole one from both
// sides (extract/README.md, "Restriction").
//
// A *base node* of a class reads only mandatory classes (used by every acyclic extraction,
// Requirements::mandatory, over the reduced problem) and free classes. Restricting a class K to
// its base nodes removes its other nodes; its slack is δ_K = max(0, cheapest base node −
// cheapest other node), over the nodes left after the dominance below. In the restricted
// problem R every base node of a restricted class is also *lowered* by δ_K (its cheapest then
// costs min(cheapest base, cheapest other node of K)). Then:
//
//   * every extraction of R is one of the whole problem, costing what it costs in R plus δ_K
//     for each restricted class it uses: R's best, so priced, is an upper bound;
//   * OPT(R) ≤ OPT: take an optimal extraction S of the reduced problem, mapped by the
//     dominance (no dearer), and replace the node of every restricted class by its cheapest
//     base node. Its children are mandatory (S uses them already) or free (a free class S does
//     not use comes in at cost 0; its free node reads only free classes), so only the node
//     changes, and its lowered cost is at most the cost of whatever node S had there; classes
//     no longer read drop out. On an acyclic class graph (required) the new edges close no
//     cycle. So every lower bound of R is one of the whole problem;
//   * OPT − Σ δ_K ≤ OPT(R): an extraction of R costs at least its real cost minus the slack.
//   * An optimal extraction of R that uses no restricted class with δ_K > 0 costs the same
//     in R and really, so it is optimal for the whole problem. Where it does use such classes,
//     leaving them open (`keep_open`) and solving again tightens R (ilp.cpp's refinement).
//
// Why: where the alternatives of such classes reach into non-mandatory classes elsewhere,
// they join what would be independent blocks (blocks.h). On NasNet-A (table:h100, k_multi 1)
// the concat trees of concat(x, x) for each cell output x reach into the previous cell's
// concat tree, so the whole network is one block of 3 270 classes (9 444 columns) whose LP is
// not solved within the budget; restricted (103 classes, slack 0.0734, within the 2% allowed) its largest
// block has 264 classes (extract/README.md, "Restriction", for what that gains).
#pragma once
#include <vector>

#include "extract/extract_graph.h"
#include "extract/reduce.h"

namespace tensat::extract {

struct Restriction {
  ExtractGraph graph;              ///< the e-graph with the restricted classes' other nodes filtered
  std::vector<ClassIdx> classes;   ///< the restricted classes
  double slack = 0.0;              ///< Σ δ_K over them
  std::vector<double> delta;       ///< per restricted class its δ_K (what its base nodes are lowered by)
  /// Per restricted class its cheapest base node (what map_to_restricted() puts there).
  std::vector<NodeIdx> base;
  /// Nodes filtered as dominated once mandatory classes count as given (no slack).
  size_t dominated = 0;
  /// Per node: the node of its class that dominates it there, or -1.
  std::vector<int64_t> replacement;
  /// The largest block (blocks.h), in classes, of the problem and of the restricted one.
  size_t largest_block_before = 0, largest_block_after = 0;
};

/// First filters, at no slack, every node n dominated by a node m of its class: cost(m) <=
/// cost(n) and m's children that are neither mandatory nor free are among n's (the same
/// swap). Then restricts the classes still reachable with the least slack first, while the
/// total stays within `max_slack` (only classes that have another node besides their base
/// nodes), never a class marked in `keep_open` (per class; null: none). Needs requirements over
/// `red` that were computed, and an acyclic class graph over its alive nodes; returns nothing
/// restricted or dominated where either fails.
Restriction restrict_to_base_nodes(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                   double max_slack, const std::vector<char>* keep_open = nullptr);

/// An extraction of the reduced problem (alive nodes of `red`) made one of the restricted
/// problem (the construction of the bound above): a dominated node gives way to the node that
/// dominates it, each restricted class takes its cheapest base node, unchosen free classes
/// are filled with their free node. Costs no more in R (in the real costs, at most r.slack
/// more). Empty when the result is not
/// a valid extraction of r.graph (a broken invariant, reported by the caller).
Choice map_to_restricted(const ExtractGraph& g, const Reduction& red, const Restriction& r, const Choice& choice);

}  // namespace tensat::extract
