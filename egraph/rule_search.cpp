// Single-pattern rule search for the runner (see rule_search.h).
#include "egraph/rule_search.h"

#include <algorithm>
#include <chrono>

namespace tensat {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Whether two left-hand sides are identical (same nodes, same variable numbering).
bool same_pattern(const Pattern& a, const Pattern& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const PatNode &x = a.nodes[i], &y = b.nodes[i];
    if (x.kind != y.kind || x.op != y.op || x.var != y.var || x.num != y.num || x.sym != y.sym ||
        x.split_auto != y.split_auto || x.children != y.children)
      return false;
  }
  return true;
}

const std::vector<EClassId> kNoRoots;

}  // namespace

SingleRuleSearch::SingleRuleSearch(const std::vector<Rewrite>& rules, std::vector<size_t> singles, bool incremental)
    : rules_(rules), singles_(std::move(singles)), incremental_(incremental) {
  const size_t R = rules.size();
  matches_.resize(R);
  complete_.assign(R, 0);
  revisit_.resize(R);
  root_counts_.resize(R);
  twin_.assign(R, SIZE_MAX);
  has_twin_.assign(R, 0);
  last_search_.resize(R);
  op_height_.assign(R, 0);
  height_.assign(R, 0);
  compiled_.resize(R);
  for (size_t r : singles_) max_height_ = std::max(max_height_, static_cast<unsigned>(rules[r].lhs[0].height()));
  // Rules whose left-hand side is identical to an earlier single rule's: when that rule's
  // search this iteration ran over the same roots with a compatible limit, its matches are
  // copied instead of searching again (same result).
  for (size_t a = 0; a < singles_.size(); ++a)
    for (size_t b = 0; b < a; ++b) {
      size_t r = singles_[a], t = singles_[b];
      if (twin_[t] == SIZE_MAX && rules[r].nvars() == rules[t].nvars() &&
          same_pattern(rules[r].lhs[0], rules[t].lhs[0])) {
        twin_[r] = t;
        has_twin_[t] = 1;
        break;
      }
    }
  for (size_t r : singles_) {
    op_height_[r] = static_cast<size_t>(rules[r].lhs[0].op_height());
    height_[r] = static_cast<size_t>(rules[r].lhs[0].height());
    compiled_[r].emplace(rules[r].lhs[0], rules[r].nvars());
  }
}

// Appends the counts of a search's matches (those of one root are contiguous).
void SingleRuleSearch::recount(RootCounts& rc, const Matches& ms) {
  for (size_t m = 0; m < ms.size(); ++m) {
    uint32_t root = ms.root(m).v;
    if (m > 0 && ms.root(m - 1).v == root) ++rc.entries.back().second;
    else rc.entries.push_back({root, 1});
  }
  rc.total += ms.size();
}

void SingleRuleSearch::search(EGraph& eg, Scheduler& sched, size_t iter, const SearchOptions& base,
                              std::vector<RuleStats>& stats) {
  SearchOptions opt = base;
  tracker_.update(eg, max_height_);
  for (size_t r : singles_) search_rule(eg, sched, r, iter, opt, stats[r]);
}

void SingleRuleSearch::search_rule(EGraph& eg, Scheduler& sched, size_t r, size_t iter, SearchOptions& opt,
                                   RuleStats& st) {
  matches_[r].reset(rules_[r].nvars());
  size_t limit = sched.search_limit(r, iter);
  if (limit == 0) {
    st.banned = true;
    complete_[r] = 0;
    return;
  }
  opt.limit = limit == SIZE_MAX ? SIZE_MAX : limit + 1;
  auto ts = Clock::now();
  const Pattern& lhs = rules_[r].lhs[0];
  RootCounts& rc = root_counts_[r];
  const bool incremental = incremental_ && complete_[r];
  const std::vector<EClassId>& roots =
      incremental ? tracker_.roots(eg, lhs.root().op, static_cast<int>(op_height_[r]),
                                   static_cast<int>(height_[r]), revisit_[r])
                  : kNoRoots;
  // Reuse an identical left-hand side's matches from this iteration when they are exactly
  // what this search would find: same roots (or both full), and the twin's search either
  // found everything (count below its limit) or stopped at a limit no lower than ours.
  bool reused = false;
  if (size_t t = twin_[r]; t != SIZE_MAX) {
    const SearchKey& k = last_search_[t];
    if (k.iter == iter && k.incremental == incremental && (!incremental || k.roots == roots) &&
        (k.count < k.limit || opt.limit <= k.limit)) {
      matches_[r] = matches_[t];
      matches_[r].truncate(std::min(opt.limit, k.count));
      reused = true;
    }
  }
  if (incremental) {
    if (!reused) search_compiled_in(eg, *compiled_[r], roots, matches_[r], opt);
    // Forget the counts of re-searched roots and of classes merged away.
    if (researched_.size() < eg.class_capacity()) researched_.resize(eg.class_capacity(), 0);
    ++research_epoch_;
    for (EClassId c : roots) researched_[c.v] = research_epoch_;
    std::erase_if(rc.entries, [&](const auto& e) {
      if (researched_[e.first] != research_epoch_ && eg.find(EClassId(e.first)).v == e.first) return false;
      rc.total -= e.second;
      return true;
    });
  } else {
    if (!reused) search_compiled(eg, *compiled_[r], matches_[r], opt);
    rc.entries.clear();
    rc.total = 0;
  }
  if (has_twin_[r]) {
    SearchKey& k = last_search_[r];
    k.iter = static_cast<uint32_t>(iter);
    k.incremental = incremental;
    k.limit = opt.limit;
    k.count = matches_[r].size();
    if (incremental) k.roots = roots;
  }
  recount(rc, matches_[r]);
  revisit_[r].clear();
  st.search_s = seconds_since(ts);
  st.matches = rc.total;
  st.searched = matches_[r].size();
  complete_[r] = sched.accept(r, iter, rc.total);
  if (!complete_[r]) {
    st.banned = true;
    matches_[r].truncate(0);
    last_search_[r].iter = UINT32_MAX;  // its matches are gone: a twin searches itself
  }
}

}  // namespace tensat
