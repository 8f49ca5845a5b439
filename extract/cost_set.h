// CostSet: the per-class state of the greedy-DAG extractor (greedy.h), and CostSetUnion, the
// one operation it needs: "the union of the children's sets plus this node, if it is cheaper
// than the class's current set".
//
// A cost set is a closed set of (class, node) pairs, at most one node per class, sorted by
// class, whose total is the sum of its node costs added in class order (0.0 + c_1 + c_2 + ...).
// The union keeps the first set's node when several sets contain a class.
//
// Why a dedicated type: the straightforward version (merge every child set into a new vector,
// insert the node, sum, compare) spends its time merging sets of hundreds of classes for
// candidates that are then rejected, and re-summing sets whose classes are mostly shared.
// CostSetUnion computes exactly the same result (the same pairs, the same floating-point
// total, so the same accept/reject decisions) but rejects most candidates from bounds before
// building anything:
//   * the first set is kept whole, and adding non-negative terms to a floating-point sum in a
//     fixed order never decreases it, so total(union) >= total(first set): a candidate whose
//     first set already reaches the bound is rejected at once;
//   * otherwise only the classes that the other sets add to the first one are collected (the
//     first set's classes are stamped in a per-class array, or found by galloping search when
//     the other sets are much smaller), and their costs give the union's total up to a
//     relative rounding error of about |union| * 2^-53; a candidate clearly above the bound is
//     rejected, and only the remaining ones (accepted, or within that margin) are built and
//     summed exactly, in class order, in one pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract {

struct CostItem {
  ClassIdx cls;
  NodeIdx node;  ///< the node chosen for cls
  friend bool operator==(const CostItem&, const CostItem&) = default;
};

struct CostSet {
  std::vector<CostItem> items;  ///< sorted by class, one item per class
  double total = 0.0;           ///< sum of the node costs, added in class order

  size_t size() const { return items.size(); }
  bool empty() const { return items.empty(); }
  /// The node of class c in the set, or -1.
  int64_t node_of(ClassIdx c) const;
};

/// Builds cost-set unions against a fixed table of node costs (all >= 0 and finite). Holds
/// per-class scratch space, so one object serves many calls (not thread-safe).
class CostSetUnion {
 public:
  CostSetUnion(size_t num_classes, std::vector<double> node_costs);

  /// U = sets[0] ∪ sets[1] ∪ ... (the first set containing a class gives its node)
  ///     ∪ {(own_class, own_node)}.
  /// Returns true and stores U in `out` (total summed in class order) when own_class is not
  /// in the other sets' union (that would be a cycle) and total(U) < bound; otherwise returns
  /// false and leaves `out` unspecified. `sets` must be non-empty and none may be empty.
  bool union_below(std::span<const CostSet* const> sets, ClassIdx own_class, NodeIdx own_node,
                   double bound, CostSet& out);

  /// Plain union (first set wins), total summed in class order; for the roots' sets.
  CostSet union_of(std::span<const CostSet* const> sets);

  /// Counters since construction, for logs and tests.
  struct Stats {
    size_t calls = 0;
    size_t cut_first = 0;   ///< rejected: the first set (plus the own node) reaches the bound
    size_t cycles = 0;      ///< rejected because the union contains own_class
    size_t cut_approx = 0;  ///< rejected by the rounding-safe estimate of the total
    size_t built = 0;       ///< built and summed exactly
  };
  const Stats& stats() const { return stats_; }

 private:
  // A fresh stamp value for the next call.
  void next_epoch();
  // The (class, node) pairs of sets[1..] whose class is not in sets[0], the earlier set
  // winning, into new_ (stamped with epoch_), their cost sum into new_sum_.
  void collect_new(std::span<const CostSet* const> sets);
  // sets[0] merged with new_ (sorted here) into out, total summed in class order.
  void build(const CostSet& first, CostSet& out);

  std::vector<double> cost_;
  double margin_;                 // relative rounding margin of the estimate, > 2 * |U| * 2^-53
  std::vector<uint32_t> stamp_;   // per class: the call that stamped it (first set or collected)
  uint32_t epoch_ = 0;
  std::vector<CostItem> new_;
  double new_sum_ = 0.0;
  Stats stats_;
};

}  // namespace tensat::extract
