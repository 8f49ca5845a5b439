// Searching the single-pattern rules in one iteration of the runner (runner.h): their
// left-hand sides compiled once, incremental search near the classes changed since a rule's
// last complete search (change_tracker.h), the per-root match counts that show the scheduler
// what a full search would find, and the reuse of an identical left-hand side's matches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "egraph/change_tracker.h"
#include "egraph/ematch.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "egraph/scheduler.h"

namespace tensat {

class SingleRuleSearch {
 public:
  /// `rules` must outlive this; `singles` are the indices of its single-pattern rules.
  SingleRuleSearch(const std::vector<Rewrite>& rules, std::vector<size_t> singles, bool incremental);

  /// Searches every single-pattern rule for iteration `iter` (the e-graph clean), asking the
  /// scheduler for each rule's limit and whether to keep its matches; fills the rules' search
  /// statistics in `stats` (matches, searched, search_s, banned).
  void search(EGraph& eg, Scheduler& sched, size_t iter, const SearchOptions& base,
              std::vector<RuleStats>& stats);

  const std::vector<size_t>& rules() const { return singles_; }
  const Matches& matches(size_t r) const { return matches_[r]; }
  /// Rule r's matches were not all processed (a limit ended the iteration): it searches
  /// everything next time.
  void mark_incomplete(size_t r) { complete_[r] = 0; }
  /// The cycle guard refused rule r's match at `root`: search there again next time
  /// (reachability can change anywhere).
  void revisit(size_t r, EClassId root) { revisit_[r].push_back(root); }

 private:
  // The match count of every root class from a rule's last searches (the scheduler is shown
  // the number of matches a full search would find, egg's semantics).
  struct RootCounts {
    std::vector<std::pair<uint32_t, uint32_t>> entries;  ///< (root class, matches there)
    size_t total = 0;
  };
  // What a rule's search in this iteration covered, for a twin's reuse.
  struct SearchKey {
    uint32_t iter = UINT32_MAX;  ///< iteration of the search; UINT32_MAX: none usable
    bool incremental = false;
    size_t limit = 0, count = 0;
    std::vector<EClassId> roots;
  };

  void search_rule(EGraph& eg, Scheduler& sched, size_t r, size_t iter, SearchOptions& opt, RuleStats& st);
  static void recount(RootCounts& rc, const Matches& ms);

  const std::vector<Rewrite>& rules_;
  std::vector<size_t> singles_;
  bool incremental_;
  std::vector<Matches> matches_;
  ChangeTracker tracker_;
  unsigned max_height_ = 0;
  std::vector<uint32_t> researched_;  ///< epoch per class: re-searched in this incremental search
  uint32_t research_epoch_ = 0;
  std::vector<uint8_t> complete_;
  std::vector<std::vector<EClassId>> revisit_;
  std::vector<RootCounts> root_counts_;
  std::vector<size_t> twin_;        ///< earlier single rule with the same lhs, or SIZE_MAX
  std::vector<uint8_t> has_twin_;
  std::vector<SearchKey> last_search_;
  std::vector<size_t> op_height_, height_;
  std::vector<std::optional<CompiledPattern>> compiled_;  ///< single rules' left-hand sides
};

}  // namespace tensat
