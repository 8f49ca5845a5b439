// Rule schedulers (egg's RewriteScheduler): decide per iteration which rules search, and
// with what match limit, so that one explosive rule cannot starve the others.
//
// BackoffScheduler is egg's: a rule whose matches exceed its limit (match_limit << times
// banned) is banned for ban_length << times banned iterations and its matches dropped. When
// the runner would stop as saturated while rules are banned, the bans are lifted instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tensat {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// The largest number of matches worth searching for rule `rule` in `iteration`; 0 skips
  /// the rule (banned). The runner searches for one more than this, to detect the overflow.
  virtual size_t search_limit(size_t rule, size_t iteration) = 0;
  /// After the search: true applies the `n_matches` matches, false drops them.
  virtual bool accept(size_t rule, size_t iteration, size_t n_matches) = 0;
  /// Asked when nothing changed in `iteration`; false means "keep going" (bans were lifted).
  virtual bool can_stop(size_t iteration) = 0;
};

/// Every rule searches and applies every match.
class SimpleScheduler : public Scheduler {
 public:
  size_t search_limit(size_t, size_t) override { return SIZE_MAX - 1; }
  bool accept(size_t, size_t, size_t) override { return true; }
  bool can_stop(size_t) override { return true; }
};

class BackoffScheduler : public Scheduler {
 public:
  explicit BackoffScheduler(size_t match_limit = 1000, size_t ban_length = 5)
      : match_limit_(match_limit), ban_length_(ban_length) {}
  size_t search_limit(size_t rule, size_t iteration) override;
  bool accept(size_t rule, size_t iteration, size_t n_matches) override;
  bool can_stop(size_t iteration) override;

  struct RuleState {
    size_t times_applied = 0;
    size_t banned_until = 0;
    size_t times_banned = 0;
  };
  const RuleState& state(size_t rule) { return get(rule); }

 private:
  RuleState& get(size_t rule);
  size_t threshold(const RuleState& s) const;
  size_t match_limit_, ban_length_;
  std::vector<RuleState> rules_;
};

}  // namespace tensat
