// Safe reductions of an extraction problem before the ILP (documented in extract/README.md).
//
// Every rule keeps at least one optimal acyclic extraction: a removed node is either never
// part of any acyclic extraction, or it has a kept replacement in its class that is no more
// expensive and whose child classes are a subset of its own (so the swap adds no edge and
// cannot close a cycle).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "extract/extract_graph.h"
#include "extract/graph_index.h"

namespace tensat::extract {

struct Reduction {
  std::vector<char> node_alive;       ///< the node remains a candidate
  std::vector<char> class_alive;      ///< reachable from the roots through alive nodes
  std::vector<char> class_free;       ///< alive class fixed to its zero-cost free node
  std::vector<int64_t> free_node;     ///< per class: the free node, or -1
  std::vector<int64_t> replacement;   ///< per node: the kept node that replaces it, or -1

  struct Stats {
    size_t unusable = 0;     ///< filtered, infinite cost, or a child of its own class
    size_t ungrounded = 0;   ///< a child class has no finite acyclic option
    size_t dominated = 0;    ///< a cheaper-or-equal node with a subset of the children exists
    size_t free = 0;         ///< nodes removed because their class is free
    size_t unreachable = 0;  ///< not reachable from the roots through alive nodes
    size_t nodes_left = 0;   ///< alive nodes of alive, non-free classes (ILP columns)
    size_t classes_left = 0; ///< alive, non-free classes
  } stats;
};

/// Computes the reduction; throws InputError when a root class has no acyclic option.
/// `index` is g's (graph_index.h); the first form builds one.
Reduction reduce(const ExtractGraph& g);
Reduction reduce(const ExtractGraph& g, const GraphIndex& index);

/// Dominance among the candidate nodes `cand` of one class: m dominates n when cost(m) <=
/// cost(n) and m's child classes that are not `given` are among n's (a swap adds only given
/// children: free ones in reduce(), also mandatory ones in restriction.h). Candidates are
/// visited by (cost, #children, index), so a dominator always comes first, and comparing
/// against kept nodes suffices (dominance is transitive). Returns per candidate the index
/// (into `cand`) of a kept candidate that dominates it, or -1 where it is kept. `index` is g's
/// (its child lists are sorted and distinct).
template <class Given>
std::vector<int64_t> dominators(const ExtractGraph& g, const GraphIndex& index, const std::vector<NodeIdx>& cand,
                                Given&& given);

/// Maps a valid extraction to one that uses only alive nodes (dominated nodes replaced, free
/// classes set to their free node). The result is valid and its DAG cost is not higher.
/// Throws InternalError when a node has no replacement (the input was not valid).
Choice map_to_reduced(const ExtractGraph& g, const Reduction& r, const Choice& choice);

/// The reduction with the nodes whose `keep` entry is 0 removed as well (e.g. eliminated by a
/// bound, lm_cut.h): classes no longer reachable from the roots through alive nodes, and their
/// nodes, are dropped; the statistics' nodes_left and classes_left are updated. The caller
/// vouches that the removed nodes are in no extraction it still needs.
Reduction restrict_nodes(const ExtractGraph& g, const Reduction& r, const std::vector<char>& keep);

/// Class requirements of the reduced problem, for a tighter ILP (see extract/README.md).
/// D is *required* by C when every acyclic extraction that uses C also uses D (each alive
/// node of C has D as a child, or a child that requires D). Only alive, non-free classes
/// take part (free classes cost nothing and get no variable).
struct Requirements {
  /// Per class: the immediately required classes (the transitive reduction: D is listed for
  /// C unless it is required by another class that C requires). Sorted.
  std::vector<std::vector<ClassIdx>> immediate;
  /// Per class: every acyclic extraction must use it (required by a root, or a root).
  std::vector<char> mandatory;
  /// Per class: it requires itself, so no acyclic extraction uses it (only in cyclic graphs).
  std::vector<char> unusable;
  bool computed = false;  ///< false when the fixpoint did not settle within its pass limit
  size_t pairs = 0;       ///< total size of `immediate`

  /// The full relation as bitsets over dense ids (alive, non-free classes).
  std::vector<int64_t> dense;        ///< per class: its dense id, or -1
  std::vector<ClassIdx> class_of;    ///< per dense id: the class
  size_t words = 0;                  ///< 64-bit words per bitset
  std::vector<uint64_t> bits;        ///< class_of.size() * words
  const uint64_t* of(ClassIdx c) const { return &bits[static_cast<size_t>(dense[c]) * words]; }
};

/// Computes the requirements by a greatest-fixpoint iteration over bitsets (one pass, in a
/// children-first order, where the class graph is acyclic; else passes until nothing changes,
/// giving up, computed = false, after max_passes).
/// `index` is g's (graph_index.h); the first form builds one.
Requirements requirements(const ExtractGraph& g, const Reduction& r, int max_passes = 30);
Requirements requirements(const ExtractGraph& g, const GraphIndex& index, const Reduction& r, int max_passes = 30);

/// One line summarising the statistics, for logs.
std::string describe(const Reduction::Stats& s);

template <class Given>
std::vector<int64_t> dominators(const ExtractGraph& g, const GraphIndex& index, const std::vector<NodeIdx>& cand,
                                Given&& given) {
  // The candidates' non-given children in one flat list (candidate i: start[i] .. start[i + 1]).
  std::vector<uint32_t> start(cand.size() + 1, 0);
  std::vector<ClassIdx> flat;
  for (size_t i = 0; i < cand.size(); ++i) {
    for (ClassIdx k : index.kids(cand[i]))
      if (!given(k)) flat.push_back(k);
    start[i + 1] = static_cast<uint32_t>(flat.size());
  }
  const auto size = [&](size_t i) { return start[i + 1] - start[i]; };
  std::vector<size_t> order(cand.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tuple(g.nodes[cand[a]].cost, size(a), cand[a]) < std::tuple(g.nodes[cand[b]].cost, size(b), cand[b]);
  });
  std::vector<int64_t> by(cand.size(), -1);
  std::vector<size_t> kept;
  for (size_t i : order) {
    const auto j = std::find_if(kept.begin(), kept.end(), [&](size_t k) {
      return std::includes(flat.begin() + start[i], flat.begin() + start[i + 1], flat.begin() + start[k],
                           flat.begin() + start[k + 1]);
    });
    if (j == kept.end()) kept.push_back(i);
    else by[i] = static_cast<int64_t>(*j);
  }
  return by;
}

}  // namespace tensat::extract
