// Restriction to base nodes: a smaller problem whose optimum bounds the whole one from both
// sides (extract/README.md, "Swaps and restriction").
//
// A *base node* of a class reads only mandatory classes (used by every acyclic extraction,
// Requirements::mandatory, over the reduced problem) and free classes. Swapping the node of a
// class K for a base node b adds nothing else to an extraction, and it drops what only that
// node needed: the *credit* of a node n of K is its cost plus, for each child class of n that
// no extraction reaches once K reads only given classes (its readers are all K or such
// classes, grown from K: the "drop set"), that class's *exclusive cost* (the least cost of one
// of its nodes plus, for each child class whose one reader it is, that class's exclusive
// cost). Whatever S pays for those classes is gone after the swap, so the swap saves at least
// credit(n) − cost(b). (Two swapped classes never claim the same class: a class that reads
// one in another's drop set is in that drop set too, so it is gone, not swapped.)
//
//   * *Swaps* (find_swaps): a node dominated once mandatory classes count as given
//     (dominators()), and a node whose credit is at least the cost of its class's cheapest
//     base node, can go with no loss: an optimal extraction that uses them, swapped, costs no
//     more. This is a reduction: the problem without them has the same optimum. The ILP run
//     (ilp.cpp) applies it before its blocks where it at least halves the largest block.
//   * *Restriction* to base nodes of a class K removes its other nodes; its slack is
//     δ_K = max(0, cheapest base node − least credit of the others), over the nodes left after
//     the swaps. In the restricted problem R every base node of a restricted class is also
//     *lowered* by δ_K (its cheapest then costs min(cheapest base, least other credit)). Then:
//
//   * every extraction of R is one of the whole problem, costing what it costs in R plus δ_K
//     for each restricted class it uses: R's best, so priced, is an upper bound;
//   * OPT(R) ≤ OPT: take an optimal extraction S of the reduced problem, mapped by the swaps
//     (no dearer), and replace the node of every restricted class by its cheapest base node.
//     Its children are mandatory (S uses them already) or free (a free class S does not use
//     comes in at cost 0; its free node reads only free classes), so nothing is added, and
//     its lowered cost is at most the credit of whatever node S had there; the classes no
//     longer read drop out. On an acyclic class graph (required) the new edges close no
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
// not solved within the budget. Credited with what only they need (a conv+relu's unfused
// alternative relu(conv(x)) pays for its conv too), most of those alternatives go as swaps,
// and the largest block has 264 classes with no slack at all (extract/README.md,
// "Swaps and restriction").
#pragma once
#include <vector>

#include "extract/blocks.h"
#include "extract/extract_graph.h"
#include "extract/reduce.h"

namespace tensat::extract {

struct Restriction {
  /// The e-graph with every node filtered that is not a candidate of `red`, that the swaps
  /// remove, or that is a restricted class's other node (and its base nodes lowered).
  ExtractGraph graph;
  std::vector<ClassIdx> classes;   ///< the restricted classes
  double slack = 0.0;              ///< Σ δ_K over them
  std::vector<double> delta;       ///< per restricted class its δ_K (what its base nodes are lowered by)
  /// Per restricted class its cheapest base node (what map_to_restricted() puts there).
  std::vector<NodeIdx> base;
  /// Nodes filtered by the swaps (find_swaps): dominated, or swapped for a base node.
  size_t dominated = 0, swapped = 0;
  /// Per node: the node of its class it gives way to in the swaps, or -1.
  std::vector<int64_t> replacement;
  /// The largest block (blocks.h), in classes, of the problem and of the restricted one.
  size_t largest_block_before = 0, largest_block_after = 0;
};

/// The swaps of a reduced problem (see above).
struct Swaps {
  /// Per node: the node of its class it gives way to (never one that gives way itself), or
  /// -1; empty where nothing could be swapped (requirements not computed, or a cyclic class graph).
  std::vector<int64_t> replacement;
  size_t dominated = 0;  ///< nodes dominated once mandatory classes count as given
  size_t swapped = 0;    ///< nodes whose credit is at least their class's cheapest base node
  size_t largest_block = 0;  ///< the largest block (blocks.h) before them, in classes
  /// The blocks before them (of `red` with `req`; what find_blocks gives there): the ILP's
  /// blocks where the swaps are not taken.
  Blocks blocks;
};

/// The swaps over the candidate nodes of `red` (alive), with requirements over `red` that were
/// computed; nothing where they were not, or where the class graph of the candidates has a
/// cycle (the swap argument needs it acyclic).
/// `index` is g's (graph_index.h); the first form builds one.
Swaps find_swaps(const ExtractGraph& g, const Reduction& red, const Requirements& req);
Swaps find_swaps(const ExtractGraph& g, const GraphIndex& index, const Reduction& red, const Requirements& req);

/// The size of the largest of the blocks (find_swaps' Swaps::blocks) none of whose classes has
/// a node that gives way in `replacement` (Swaps::replacement; 0 where there is none). The swaps leave such a block as it is: its candidate nodes stay, and which
/// of its classes are mandatory follows from them alone (a path into a block enters at a
/// mandatory class of it, blocks.h; extract/README.md, "Swaps and restriction"). So the largest
/// block after the swaps has at least that many classes, and where that is more than half the
/// largest before, the swaps are not taken without computing their blocks.
size_t largest_untouched_block(const ExtractGraph& g, const Blocks& blocks, const std::vector<int64_t>& replacement);

/// `choice` (an extraction over the candidates of `red`) with every node that gives way
/// replaced, unchosen free classes filled with their free node, pruned to the roots: an
/// extraction without those nodes that costs no more.
Choice apply_swaps(const ExtractGraph& g, const Reduction& red, const std::vector<int64_t>& replacement,
                   const Choice& choice);

/// R keeps only the candidates of `red` (R is reduced again from scratch: a node `red` found
/// dominated by one removed here would be a candidate again). First the swaps (find_swaps).
/// Then restricts the classes still reachable with the least
/// slack first, while the total stays within `max_slack` (only classes that have another node
/// besides their base nodes), never a class marked in `keep_open` (per class; null: none).
/// Needs requirements over `red` that were computed, and an acyclic class graph over its alive
/// nodes; returns nothing restricted or swapped where either fails. `index` is g's.
Restriction restrict_to_base_nodes(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                   const Requirements& req, double max_slack,
                                   const std::vector<char>* keep_open = nullptr);

/// An extraction of the reduced problem (alive nodes of `red`) made one of the restricted
/// problem (the construction of the bound above): each restricted class takes its cheapest
/// base node, then apply_swaps(). Costs no more in R (in the real costs, at most r.slack
/// more). Empty when the result is not
/// a valid extraction of r.graph (a broken invariant, reported by the caller).
Choice map_to_restricted(const ExtractGraph& g, const Reduction& red, const Restriction& r, const Choice& choice);

}  // namespace tensat::extract
