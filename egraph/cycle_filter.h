// Cycle filtering (TENSAT Section 5.2): keep the e-graph minus filtered e-nodes acyclic, so
// extraction can choose any unfiltered node without building a cyclic term.
//
//   efficient  Before applying, once per iteration, a snapshot of the class graph is taken:
//              the child classes of each class (through unfiltered e-nodes) and a post-order
//              number (descendants come first). It is the paper's descendants map, stored
//              implicitly: "is M a descendant of C" is answered by a DFS from C pruned to
//              classes numbered above M (nothing numbered below M can reach it), so most
//              queries end at once. Classes created during the iteration are not in the
//              snapshot: a query from one walks the live e-graph down to the first classes
//              the snapshot knows and asks it from there (reaches_mixed). Each match is
//              pre-filtered against it: a right-hand side
//              whose new e-nodes point at a class C with M reachable from C (or C == M) would
//              make the matched class M its own ancestor, and is skipped. A right-hand side
//              that is an existing class (no new e-node, e.g. `=> ?x`) is never refused:
//              see would_cycle(). The snapshot is not
//              updated during the iteration (as in the paper), so after the rebuild
//              remove_cycles() finds the remaining cycles by DFS and filters the newest e-node
//              on each until none is left. Whether there is a cycle at all is decided from
//              the snapshot's order (check_new_cycles in the .cpp): a cycle needs an edge of a
//              changed class against that order, and only the classes above the lowest such
//              edge are walked; most iterations have none, and none is walked.
//   vanilla    Each match is checked by a fresh reachability search on the current e-graph.
//              Same post-pass.
//   none       No checks; the e-graph may become cyclic.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/rewrite.h"

namespace tensat {

enum class CycleFilterMode : uint8_t { None, Vanilla, Efficient };
std::string_view cycle_filter_name(CycleFilterMode m);
std::optional<CycleFilterMode> cycle_filter_from_name(std::string_view s);

class CycleFilter : public CycleGuard {
 public:
  explicit CycleFilter(CycleFilterMode mode) : mode_(mode) {}
  CycleFilterMode mode() const { return mode_; }

  /// Efficient mode: takes the per-iteration snapshot (the e-graph must be clean).
  void begin_iteration(const EGraph& eg);
  bool would_cycle(const EGraph& eg, EClassId matched, const std::vector<EClassId>& pointed,
                   std::optional<EClassId> existing_root) override;
  /// Filters the newest e-node on every remaining cycle (the e-graph must be clean).
  /// Returns the number of e-nodes filtered.
  size_t remove_cycles(EGraph& eg);
  /// remove_cycles() for an e-graph that had no cycle (through unfiltered e-nodes) after the
  /// last remove_cycles() and whose e-nodes changed only at `touched` (EGraph::touched_nodes)
  /// since: a new cycle runs through a touched class, so the full pass runs only when a walk
  /// from those classes finds a cycle. Same result as remove_cycles(), usually much cheaper.
  size_t remove_new_cycles(EGraph& eg, const std::vector<EClassId>& touched);
  /// remove_new_cycles() right after an iteration whose begin_iteration() took the snapshot,
  /// `touched` covering every class whose e-nodes changed since then (the runner's case).
  /// Efficient mode decides whether there is a cycle from the snapshot's order (see
  /// check_new_cycles in the .cpp), reading mostly what changed; other modes, or a snapshot
  /// that was cyclic, walk as remove_new_cycles() does. Same result.
  size_t remove_new_cycles_after_iteration(EGraph& eg, const std::vector<EClassId>& touched);

  uint64_t queries() const { return queries_; }
  /// remove_new_cycles_after_iteration() calls decided from the snapshot's order / by
  /// remove_new_cycles().
  uint64_t post_passes_checked() const { return checked_; }
  uint64_t post_passes_walked() const { return walked_; }

 private:
  bool reaches_snapshot(const EGraph& eg, EClassId from, EClassId to);
  bool reaches_live(const EGraph& eg, EClassId from, EClassId to);
  bool reaches_mixed(const EGraph& eg, EClassId from, EClassId to);
  // DFS over the live e-graph (filtered nodes skipped) from `from` looking for `to`; a class
  // with id < known_below is answered by the snapshot instead of being walked (0: never).
  bool walk_live(const EGraph& eg, EClassId from, EClassId to, std::vector<uint32_t>& visited, uint32_t& epoch,
                 std::vector<uint32_t>& stack, uint32_t known_below);
  bool reaches(const EGraph& eg, EClassId from, EClassId to);
  enum class Verdict : uint8_t { Acyclic, Cyclic, Unknown };
  Verdict check_new_cycles(const EGraph& eg, const std::vector<EClassId>& touched);

  CycleFilterMode mode_;
  // snapshot (efficient mode): CSR child lists and post-order numbers, indexed by class id;
  // low_[c]: the least number in c's DFS subtree, whose numbers are exactly low_[c]..order_[c]
  // (a class numbered in that range is reachable from c through the tree's edges)
  std::vector<uint32_t> offsets_, kids_, order_, low_;
  size_t snap_classes_ = 0;
  bool snap_acyclic_ = false;
  // DFS scratch
  std::vector<uint32_t> visited_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> stack_;
  std::vector<uint32_t> new_visited_, new_stack_;  ///< reaches_mixed's own DFS
  // snapshot and post-pass scratch, kept between iterations
  std::vector<uint32_t> tmp_, frame_of_;
  std::vector<uint8_t> color_;
  std::vector<std::pair<uint32_t, uint32_t>> snap_stack_;
  uint32_t new_epoch_ = 0;
  // proves_acyclic scratch: per class created since the snapshot, its rank and DFS state
  struct RankFrame {
    uint32_t cls;
    EGraph::NodeRun::iterator node, end;  ///< the class's packed e-nodes, from the current one
    uint32_t child;
  };
  std::vector<RankFrame> rank_stack_;
  using Rank = std::pair<uint32_t, uint32_t>;  ///< (snapshot order, depth above it), lexicographic
  std::vector<Rank> new_rank_;
  std::vector<uint32_t> rising_;
  std::vector<uint8_t> new_state_;
  std::vector<uint32_t> touched_mark_;
  uint32_t touched_epoch_ = 0;
  uint64_t queries_ = 0;
  uint64_t checked_ = 0, walked_ = 0;
};

/// True if the e-graph has no cycle through e-nodes that are not filtered (clean e-graph).
bool is_acyclic(const EGraph& eg, bool ignore_filtered = true);

}  // namespace tensat
