// Runner: the exploration loop (see runner.h).
#include "egraph/runner.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "egraph/change_tracker.h"
#include "egraph/ematch.h"
#include "egraph/multi_pattern.h"

namespace tensat {

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Saturated: return "saturated";
    case StopReason::NodeLimit: return "node limit";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::TimeLimit: return "time limit";
  }
  return "?";
}

void RuleStats::add(const RuleStats& o) {
  matches += o.matches;
  searched += o.searched;
  applied += o.applied;
  unchanged += o.unchanged;
  rejected_condition += o.rejected_condition;
  rejected_type += o.rejected_type;
  rejected_split += o.rejected_split;
  rejected_cycle += o.rejected_cycle;
  banned = banned || o.banned;
  truncated = truncated || o.truncated;
  memo_hits += o.memo_hits;
  search_s += o.search_s;
  apply_s += o.apply_s;
}

std::vector<RuleStats> RunReport::totals() const {
  std::vector<RuleStats> t(rule_names.size());
  for (const auto& it : iterations)
    for (size_t r = 0; r < it.rules.size(); ++r) t[r].add(it.rules[r]);
  return t;
}

std::string RunReport::summary() const {
  std::string s = fmt::format("stop: {}, {} iterations, {} e-nodes, {} e-classes, {} filtered, {:.3f} s\n",
                              stop_reason_name(stop_reason), iterations.size(), nodes, classes,
                              filtered, total_s);
  for (const auto& it : iterations)
    s += fmt::format("  iter {:2}{}: nodes {:7} classes {:7} filtered +{:<4} search {:.3f}s apply {:.3f}s rebuild {:.3f}s filter {:.3f}s\n",
                     it.iteration, it.multi ? "*" : " ", it.nodes, it.classes, it.filtered_new,
                     it.search_s, it.apply_s, it.rebuild_s, it.filter_s);
  auto t = totals();
  for (size_t r = 0; r < t.size(); ++r) {
    if (t[r].matches == 0) continue;
    s += fmt::format("  {:<32} matches {:7} searched {:7} applied {:7} unchanged {:7} rejected {:7} (cond {} type {} split {} cycle {}){}\n",
                     rule_names[r], t[r].matches, t[r].searched, t[r].applied, t[r].unchanged, t[r].rejected(),
                     t[r].rejected_condition, t[r].rejected_type, t[r].rejected_split,
                     t[r].rejected_cycle, t[r].banned ? " banned" : t[r].truncated ? " truncated" : "");
  }
  return s;
}

Runner::Runner(EGraph& eg) : eg_(eg), sched_(std::make_unique<BackoffScheduler>()) {}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void count(RuleStats& st, ApplyOutcome o) {
  switch (o) {
    case ApplyOutcome::Applied: ++st.applied; break;
    case ApplyOutcome::Unchanged: ++st.unchanged; break;
    case ApplyOutcome::FailedCondition: ++st.rejected_condition; break;
    case ApplyOutcome::IllTyped: ++st.rejected_type; break;
    case ApplyOutcome::NoSplitBoundary: ++st.rejected_split; break;
    case ApplyOutcome::WouldCycle: ++st.rejected_cycle; break;
  }
}

// A set of matches: (rule, roots, substitution) over canonical class ids, as 64-bit
// fingerprints. The runner keeps two:
//   - matches whose application is known to be a no-op: one applied or found unchanged before
//     gives the same e-nodes again (hash-consing), so it is Unchanged; an ill-typed one stays
//     ill-typed (class types never change). Outcomes that can change (conditions on
//     weight_only, split trees, the cycle filter) are not remembered there;
//   - matches the cycle guard refused: they type-checked, so the applier may ask the guard
//     again before computing analysis data (Applier::apply's typed_before).
// A fingerprint collision can only skip an application or call an ill-typed match refused:
// both are no-ops, so it is always sound.
class MatchMemo {
 public:
  static uint64_t key(const EGraph& eg, size_t rule, const EClassId* roots, size_t nroots,
                      const EClassId* subst, size_t nvars) {
    // Each (position, class) pair is mixed on its own, so that the mixes run in parallel
    // rather than as one long dependency chain; the position keeps the key order-sensitive.
    uint64_t h = 0;
    uint64_t pos = 0;
    for (size_t i = 0; i < nroots; ++i, ++pos) h ^= mix((pos << 32) ^ eg.find(roots[i]).v);
    for (size_t i = 0; i < nvars; ++i, ++pos) h ^= mix((pos << 32) ^ (uint64_t{1} << 63) ^ eg.find(subst[i]).v);
    return mix(h ^ mix(0x9e3779b97f4a7c15ULL ^ rule));
  }
  bool known(uint64_t k) const {
    if (slots_.empty()) return false;
    k |= 1;  // 0 marks an empty slot
    for (size_t i = k & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return true;
      if (slots_[i] == 0) return false;
    }
  }
  void remember(uint64_t k) {
    // Grows by 4: a rule's table goes from empty to thousands of keys in one iteration, and
    // rehashing at every doubling cost more than the look-ups.
    if ((size_ + 1) * 2 > slots_.size()) grow(slots_.size() * 4);
    if (insert(k | 1)) ++size_;
  }

 private:
  static uint64_t mix(uint64_t x) {  // splitmix64 finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // Open addressing, linear probing, at most half full: no allocation per entry.
  bool insert(uint64_t k) {
    for (size_t i = k & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return false;
      if (slots_[i] == 0) {
        slots_[i] = k;
        return true;
      }
    }
  }
  void grow(size_t at_least) {  // to a power of two, at least 256 slots
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(std::bit_ceil(std::max<size_t>(256, at_least)), 0);
    for (uint64_t k : old)
      if (k) insert(k);
  }
  std::vector<uint64_t> slots_;
  size_t size_ = 0;
};

}  // namespace

RunReport Runner::run(const std::vector<Rewrite>& rules) {
  const auto start = Clock::now();
  RunReport rep;
  for (const auto& r : rules) rep.rule_names.push_back(r.name);

  std::vector<size_t> singles, multis;
  std::vector<const Rewrite*> multi_ptrs;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].is_multi()) {
      multis.push_back(i);
      multi_ptrs.push_back(&rules[i]);
    } else {
      singles.push_back(i);
    }
  }
  MultiPatternSearcher mps(multi_ptrs);
  std::vector<Matches> matches(rules.size());
  CycleFilter filter(cfg_.cycle_filter);
  CycleGuard* guard = cfg_.cycle_filter == CycleFilterMode::None ? nullptr : &filter;
  Applier applier;
  // Per rule: matches whose application is a known no-op, and matches the cycle guard refused
  // (they type-checked). One table per rule keeps the table being probed small while a rule's
  // matches are applied (they are random accesses; a table of all rules' keys misses cache).
  std::vector<MatchMemo> memo(rules.size()), refused(rules.size());
  // Applies one match unless the memo knows it is a no-op; counts the outcome.
  auto apply_one = [&](RuleStats& st, size_t r, const EClassId* roots, const EClassId* subst) {
    const Rewrite& rw = rules[r];
    uint64_t k = MatchMemo::key(eg_, r, roots, rw.lhs.size(), subst, rw.nvars());
    if (memo[r].known(k)) {
      ++st.unchanged;
      ++st.memo_hits;
      return ApplyOutcome::Unchanged;
    }
    ApplyOutcome o = applier.apply(eg_, rw, roots, subst, guard, refused[r].known(k));
    if (o == ApplyOutcome::Applied || o == ApplyOutcome::Unchanged || o == ApplyOutcome::IllTyped) memo[r].remember(k);
    else if (o == ApplyOutcome::WouldCycle) refused[r].remember(k);
    count(st, o);
    return o;
  };
  // Incremental search (change_tracker.h): a rule whose previous search was complete and whose
  // matches were all processed searches only near changed classes, plus the roots of matches
  // the cycle filter refused (reachability can change anywhere).
  ChangeTracker tracker;
  unsigned max_height = 0;
  for (size_t r : singles) max_height = std::max(max_height, static_cast<unsigned>(rules[r].lhs[0].height()));
  // The scheduler is shown the number of matches a full search would find (egg's semantics):
  // per rule, the match count of every root class from its last search.
  struct RootCounts {
    std::vector<std::pair<uint32_t, uint32_t>> entries;  ///< (root class, matches there)
    size_t total = 0;
  };
  std::vector<uint32_t> researched;  // epoch per class: re-searched in this incremental search
  uint32_t research_epoch = 0;
  std::vector<uint8_t> complete(rules.size(), 0);
  std::vector<std::vector<EClassId>> revisit(rules.size());
  std::vector<RootCounts> root_counts(rules.size());
  static const std::vector<EClassId> kNoRoots;
  // Rules whose left-hand side is identical (same nodes, same variable numbering) to an earlier
  // single rule's: when that rule's search this iteration ran over the same roots with a
  // compatible limit, its matches are copied instead of searching again (same result).
  auto same_pattern = [](const Pattern& a, const Pattern& b) {
    if (a.nodes.size() != b.nodes.size()) return false;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const PatNode &x = a.nodes[i], &y = b.nodes[i];
      if (x.kind != y.kind || x.op != y.op || x.var != y.var || x.num != y.num || x.sym != y.sym ||
          x.split_auto != y.split_auto || x.children != y.children)
        return false;
    }
    return true;
  };
  std::vector<size_t> twin(rules.size(), SIZE_MAX);  // earlier single rule with the same lhs
  std::vector<uint8_t> has_twin(rules.size(), 0);
  for (size_t a = 0; a < singles.size(); ++a)
    for (size_t b = 0; b < a; ++b) {
      size_t r = singles[a], t = singles[b];
      if (twin[t] == SIZE_MAX && rules[r].nvars() == rules[t].nvars() &&
          same_pattern(rules[r].lhs[0], rules[t].lhs[0])) {
        twin[r] = t;
        has_twin[t] = 1;
        break;
      }
    }
  struct SearchKey {
    uint32_t iter = UINT32_MAX;  ///< iteration of the search; UINT32_MAX: none usable
    bool incremental = false;
    size_t limit = 0, count = 0;
    std::vector<EClassId> roots;
  };
  std::vector<SearchKey> last_search(rules.size());
  std::vector<size_t> op_height(rules.size(), 0), height(rules.size(), 0);
  std::vector<std::optional<CompiledPattern>> compiled(rules.size());  // single rules' left-hand sides
  for (size_t r : singles) {
    op_height[r] = static_cast<size_t>(rules[r].lhs[0].op_height());
    height[r] = static_cast<size_t>(rules[r].lhs[0].height());
    compiled[r].emplace(rules[r].lhs[0], rules[r].nvars());
  }
  // Appends the counts of a search's matches (those of one root are contiguous).
  auto recount = [&](RootCounts& rc, const Matches& ms) {
    for (size_t m = 0; m < ms.size(); ++m) {
      uint32_t root = ms.root(m).v;
      if (m > 0 && ms.root(m - 1).v == root) ++rc.entries.back().second;
      else rc.entries.push_back({root, 1});
    }
    rc.total += ms.size();
  };

  // The e-graph grows to the node limit at most. Capped: a huge limit should not reserve
  // (virtual) memory it will likely never use.
  eg_.reserve(std::min<size_t>(cfg_.node_limit + 64, size_t{1} << 17));
  eg_.rebuild();
  if (guard) filter.remove_cycles(eg_);

  auto time_up = [&] { return seconds_since(start) >= cfg_.time_limit_s; };
  StopReason stop = StopReason::Saturated;
  for (size_t iter = 0;; ++iter) {
    if (iter >= cfg_.iter_limit) { stop = StopReason::IterationLimit; break; }
    if (eg_.num_nodes() >= cfg_.node_limit) { stop = StopReason::NodeLimit; break; }
    if (time_up()) { stop = StopReason::TimeLimit; break; }

    IterationReport it;
    it.iteration = iter;
    it.rules.resize(rules.size());
    it.multi = iter < cfg_.k_multi && !multis.empty();
    const uint64_t unions_before = eg_.union_count();
    const size_t nodes_before = eg_.num_nodes();
    bool limit_hit = false;

    // ---- search ----
    auto t0 = Clock::now();
    SearchOptions opt;
    opt.skip_filtered = cfg_.skip_filtered_in_search;
    tracker.update(eg_, max_height);
    for (size_t r : singles) {
      matches[r].reset(rules[r].nvars());
      size_t limit = sched_->search_limit(r, iter);
      if (limit == 0) {
        it.rules[r].banned = true;
        complete[r] = 0;
        continue;
      }
      opt.limit = limit == SIZE_MAX ? SIZE_MAX : limit + 1;
      auto ts = Clock::now();
      const Pattern& lhs = rules[r].lhs[0];
      RootCounts& rc = root_counts[r];
      const bool incremental = cfg_.incremental_search && complete[r];
      const std::vector<EClassId>& roots =
          incremental ? tracker.roots(eg_, lhs.root().op, static_cast<int>(op_height[r]),
                                      static_cast<int>(height[r]), revisit[r])
                      : kNoRoots;
      // Reuse an identical left-hand side's matches from this iteration when they are exactly
      // what this search would find: same roots (or both full), and the twin's search either
      // found everything (count below its limit) or stopped at a limit no lower than ours.
      bool reused = false;
      if (size_t t = twin[r]; t != SIZE_MAX) {
        const SearchKey& k = last_search[t];
        if (k.iter == iter && k.incremental == incremental && (!incremental || k.roots == roots) &&
            (k.count < k.limit || opt.limit <= k.limit)) {
          matches[r] = matches[t];
          matches[r].truncate(std::min(opt.limit, k.count));
          reused = true;
        }
      }
      if (incremental) {
        if (!reused) search_compiled_in(eg_, *compiled[r], roots, matches[r], opt);
        // Forget the counts of re-searched roots and of classes merged away.
        if (researched.size() < eg_.class_capacity()) researched.resize(eg_.class_capacity(), 0);
        ++research_epoch;
        for (EClassId c : roots) researched[c.v] = research_epoch;
        std::erase_if(rc.entries, [&](const auto& e) {
          if (researched[e.first] != research_epoch && eg_.find(EClassId(e.first)).v == e.first) return false;
          rc.total -= e.second;
          return true;
        });
      } else {
        if (!reused) search_compiled(eg_, *compiled[r], matches[r], opt);
        rc.entries.clear();
        rc.total = 0;
      }
      if (has_twin[r]) {
        SearchKey& k = last_search[r];
        k.iter = static_cast<uint32_t>(iter);
        k.incremental = incremental;
        k.limit = opt.limit;
        k.count = matches[r].size();
        if (incremental) k.roots = roots;
      }
      recount(rc, matches[r]);
      revisit[r].clear();
      it.rules[r].search_s = seconds_since(ts);
      it.rules[r].matches = rc.total;
      it.rules[r].searched = matches[r].size();
      complete[r] = sched_->accept(r, iter, rc.total);
      if (!complete[r]) {
        it.rules[r].banned = true;
        matches[r].truncate(0);
        last_search[r].iter = UINT32_MAX;  // its matches are gone: a twin searches itself
      }
    }
    opt.limit = SIZE_MAX;
    if (it.multi) mps.search(eg_, opt);
    it.search_s = seconds_since(t0);

    // ---- apply ----
    t0 = Clock::now();
    filter.begin_iteration(eg_);
    size_t applications = 0;
    StopReason limit_reason = StopReason::NodeLimit;
    auto check_limits = [&] {
      if ((++applications & 63) == 0 && time_up()) {
        limit_hit = true;
        limit_reason = StopReason::TimeLimit;
      }
      if (eg_.num_nodes() >= cfg_.node_limit) {
        limit_hit = true;
        limit_reason = StopReason::NodeLimit;
      }
      return limit_hit;
    };
    for (size_t r : singles) {
      const Matches& ms = matches[r];
      auto ta = Clock::now();
      for (size_t m = 0; m < ms.size(); ++m) {
        if (limit_hit) {
          complete[r] = 0;  // matches left unapplied: search everything next time
          break;
        }
        EClassId root = ms.root(m);
        if (apply_one(it.rules[r], r, &root, ms.subst(m)) == ApplyOutcome::WouldCycle)
          revisit[r].push_back(root);
        check_limits();
      }
      it.rules[r].apply_s = seconds_since(ta);
    }
    if (it.multi) {
      for (size_t k = 0; k < multis.size() && !limit_hit; ++k) {
        size_t r = multis[k];
        // Collect first: applying while enumerating would be fine, but a snapshot keeps the
        // combination count independent of the applications.
        auto tc = Clock::now();
        std::vector<EClassId> combos;
        const size_t nl = rules[r].lhs.size(), nv = rules[r].nvars();
        size_t n = mps.for_each_combination(
            k,
            [&](const EClassId* roots, const EClassId* subst) {
              combos.insert(combos.end(), roots, roots + nl);
              combos.insert(combos.end(), subst, subst + nv);
            },
            cfg_.multi_combination_limit);
        it.rules[r].matches = n;
        it.rules[r].searched = n;
        it.rules[r].truncated = n >= cfg_.multi_combination_limit;
        it.rules[r].search_s = seconds_since(tc);
        auto ta = Clock::now();
        for (size_t c = 0; c < n && !limit_hit; ++c) {
          const EClassId* base = combos.data() + c * (nl + nv);
          apply_one(it.rules[r], r, base, base + nl);
          check_limits();
        }
        it.rules[r].apply_s = seconds_since(ta);
      }
    }
    it.apply_s = seconds_since(t0);

    // ---- rebuild ----
    t0 = Clock::now();
    eg_.rebuild();
    it.rebuild_s = seconds_since(t0);

    // ---- cycle post-pass ----
    t0 = Clock::now();
    // The graph had no cycle after the last post-pass; a new one runs through a class whose
    // e-nodes changed since (the e-graph's touched list, taken by the tracker next iteration).
    if (guard) it.filtered_new = filter.remove_new_cycles_after_iteration(eg_, eg_.touched_nodes());
    it.filter_s = seconds_since(t0);

    it.nodes = eg_.num_nodes();
    it.classes = eg_.num_classes();
    it.filtered_total = eg_.num_filtered();
    spdlog::debug("iteration {}: {} e-nodes, {} e-classes, {} filtered", iter, it.nodes, it.classes,
                  it.filtered_total);
    if (cfg_.on_iteration) cfg_.on_iteration(it);
    rep.iterations.push_back(std::move(it));

    if (limit_hit) {
      stop = limit_reason;  // the rebuild may have brought the node count back under the limit
      break;
    }
    bool changed = eg_.union_count() != unions_before || eg_.num_nodes() != nodes_before ||
                   rep.iterations.back().filtered_new != 0;
    if (!changed && sched_->can_stop(iter)) {
      stop = StopReason::Saturated;
      break;
    }
  }
  rep.stop_reason = stop;
  rep.nodes = eg_.num_nodes();
  rep.classes = eg_.num_classes();
  rep.filtered = eg_.num_filtered();
  rep.total_s = seconds_since(start);
  return rep;
}

}  // namespace tensat
