// Backoff scheduler (egg's BackoffScheduler).
#include "egraph/scheduler.h"

#include <spdlog/spdlog.h>

namespace tensat {

BackoffScheduler::RuleState& BackoffScheduler::get(size_t rule) {
  if (rules_.size() <= rule) rules_.resize(rule + 1);
  return rules_[rule];
}

size_t BackoffScheduler::threshold(const RuleState& s) const {
  size_t shift = std::min<size_t>(s.times_banned, 40);
  return match_limit_ << shift;
}

size_t BackoffScheduler::search_limit(size_t rule, size_t iteration) {
  RuleState& s = get(rule);
  if (iteration < s.banned_until) return 0;
  return threshold(s);
}

bool BackoffScheduler::accept(size_t rule, size_t iteration, size_t n_matches) {
  RuleState& s = get(rule);
  size_t t = threshold(s);
  if (n_matches > t) {
    size_t ban = ban_length_ << std::min<size_t>(s.times_banned, 40);
    s.times_banned += 1;
    s.banned_until = iteration + ban;
    spdlog::debug("rule {} banned for {} iterations ({} matches > {})", rule, ban, n_matches, t);
    return false;
  }
  s.times_applied += 1;
  return true;
}

bool BackoffScheduler::can_stop(size_t iteration) {
  bool any_banned = false;
  for (auto& s : rules_) {
    if (s.banned_until > iteration) {
      any_banned = true;
      s.banned_until = iteration;  // lift the ban: search again next iteration
    }
  }
  return !any_banned;
}

}  // namespace tensat
