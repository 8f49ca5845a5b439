// ChangeTracker: which e-classes may hold new matches since the last search (incremental
// e-matching for the runner).
//
// A match of a pattern rooted at class R reads the e-nodes of the classes at the pattern's
// operator positions (at most op_height levels below R) and the identity and analysis data
// of the classes at its variable positions (at most height levels below R). If none of those
// changed since the last complete search of the rule, R's matches are the ones found then:
// all applied, found unchanged or rejected for a reason that cannot change (the runner
// remembers those outcomes), so searching R again only costs time.
//
// After each rebuild the tracker takes the e-graph's touched classes (EGraph::take_touched:
// e-node changes and data changes, kept apart) and computes, by breadth-first walks up the
// parent lists, each class's distance to the nearest class of either kind (capped at the
// largest pattern height). A rule then searches the classes of its root operator with an
// e-node change within its op_height or a data change within its height. A variable's class
// gaining e-nodes (the common case: a rewrite merged into it) re-searches nothing above it;
// a merge that changes its id changes its parents' e-nodes, which are tracked.
//
//   ChangeTracker t;  t.update(eg, 4);
//   const auto& roots = t.roots(eg, Op::Conv, /*op_height=*/1, /*height=*/2, revisit);
#pragma once

#include <cstdint>
#include <vector>

#include "egraph/egraph.h"

namespace tensat {

class ChangeTracker {
 public:
  /// Takes eg's touched classes and computes distances up to `max_height` (eg clean).
  void update(EGraph& eg, unsigned max_height);
  /// Canonical classes holding `op` with an e-node change within `op_height` or a data change
  /// within `height`, plus `extra` (canonicalized, deduplicated): the operator index's order
  /// (ascending ids) followed by the extra ones. The first part is cached per (op, op_height,
  /// height) until the next update: rules with the same root operator share it.
  /// The result stays valid until the next roots() or update().
  const std::vector<EClassId>& roots(const EGraph& eg, Op op, int op_height, int height,
                                     const std::vector<EClassId>& extra);
  /// Classes touched in the last update (canonical, distinct, either kind).
  size_t num_touched() const { return num_touched_; }

 private:
  void walk_up(const EGraph& eg, const std::vector<EClassId>& from, unsigned max_height,
               std::vector<uint8_t>& dist);

  const std::vector<EClassId>& near_roots(const EGraph& eg, Op op, int op_height, int height);

  std::vector<uint8_t> dist_nodes_, dist_data_;  ///< per class id; 255 = farther than max_height
  std::vector<EClassId> near_;  ///< classes within max_height of a change, ascending
  std::vector<EClassId> with_extra_;  ///< roots() when there are extra classes
  struct CachedRoots {
    Op op;
    int op_height, height;
    std::vector<EClassId> roots;
  };
  std::vector<CachedRoots> cache_;  ///< near_roots() results since the last update
  size_t cache_used_ = 0;           ///< entries of cache_ in use (kept allocated)
  std::vector<EClassId> touched_nodes_, touched_data_;
  std::vector<uint32_t> frontier_, next_, mark_;
  uint32_t epoch_ = 0;
  size_t num_touched_ = 0;
};

}  // namespace tensat
