// Runner: the exploration loop (see runner.h).
#include "egraph/runner.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "egraph/match_memo.h"
#include "egraph/multi_pattern.h"
#include "egraph/rule_search.h"

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

// One run of the runner: the state that lives from the first iteration to the stop (egg's
// Runner::run with run_one = search, apply, rebuild, plus the cycle post-pass).
class Exploration {
 public:
  Exploration(EGraph& eg, const RunnerConfig& cfg, Scheduler& sched, const std::vector<Rewrite>& rules)
      : eg_(eg), cfg_(cfg), sched_(sched), rules_(rules), multi_(multi_rules(rules)),
        singles_(rules, single_indices(rules), cfg.incremental_search), filter_(cfg.cycle_filter),
        guard_(cfg.cycle_filter == CycleFilterMode::None ? nullptr : &filter_), memo_(rules.size()),
        refused_(rules.size()) {
    for (size_t i = 0; i < rules.size(); ++i)
      if (rules[i].is_multi()) multis_.push_back(i);
  }

  RunReport run() {
    RunReport rep;
    for (const auto& r : rules_) rep.rule_names.push_back(r.name);
    // The e-graph grows to the node limit at most. Capped: a huge limit should not reserve
    // (virtual) memory it will likely never use.
    eg_.reserve(std::min<size_t>(cfg_.node_limit + 64, size_t{1} << 17));
    eg_.rebuild();
    if (guard_) filter_.remove_cycles(eg_);
    StopReason stop = StopReason::Saturated;
    for (size_t iter = 0;; ++iter) {
      if (auto why = check_limits(iter)) {
        stop = *why;
        break;
      }
      uint64_t unions_before = eg_.union_count();
      size_t nodes_before = eg_.num_nodes();
      IterationReport it = run_one(iter);
      bool changed = eg_.union_count() != unions_before || eg_.num_nodes() != nodes_before ||
                     it.filtered_new != 0;
      bool saturated = !limit_hit_ && !changed && sched_.can_stop(iter);
      if (saturated && rounds_ < cfg_.k_multi && !multis_.empty()) {
        // The exploration with the rules applied so far is complete: the next multi-pattern
        // round, in this iteration (see RunnerConfig::k_multi).
        unions_before = eg_.union_count();
        nodes_before = eg_.num_nodes();
        const size_t filtered_before = it.filtered_new;
        multi_round(it);
        saturated = !limit_hit_ && eg_.union_count() == unions_before && eg_.num_nodes() == nodes_before &&
                    it.filtered_new == filtered_before;
      }
      rep.iterations.push_back(std::move(it));
      if (cfg_.on_iteration) cfg_.on_iteration(rep.iterations.back());
      if (limit_hit_) {
        stop = limit_reason_;  // the rebuild may have brought the node count back under the limit
        break;
      }
      if (saturated) {
        stop = StopReason::Saturated;
        break;
      }
    }
    rep.stop_reason = stop;
    rep.nodes = eg_.num_nodes();
    rep.peak_nodes = peak_nodes_;
    rep.classes = eg_.num_classes();
    rep.filtered = eg_.num_filtered();
    rep.total_s = seconds_since(start_);
    return rep;
  }

 private:
  static std::vector<size_t> single_indices(const std::vector<Rewrite>& rules) {
    std::vector<size_t> out;
    for (size_t i = 0; i < rules.size(); ++i)
      if (!rules[i].is_multi()) out.push_back(i);
    return out;
  }
  static std::vector<const Rewrite*> multi_rules(const std::vector<Rewrite>& rules) {
    std::vector<const Rewrite*> out;
    for (const auto& r : rules)
      if (r.is_multi()) out.push_back(&r);
    return out;
  }
  bool time_up() const { return seconds_since(start_) >= cfg_.time_limit_s; }

  // Whether the live e-nodes reach the node limit (the lower of RunnerConfig's two); notes the
  // peak (RunReport::peak_nodes).
  bool at_node_limit() {
    const size_t n = eg_.num_nodes();
    peak_nodes_ = std::max(peak_nodes_, n);
    const size_t cap = cfg_.node_cap ? cfg_.node_cap->load(std::memory_order_relaxed) : SIZE_MAX;
    return n >= std::min(cfg_.node_limit, cap);
  }

  // The limits checked before an iteration starts.
  std::optional<StopReason> check_limits(size_t iter) {
    if (iter >= cfg_.iter_limit) return StopReason::IterationLimit;
    if (at_node_limit()) return StopReason::NodeLimit;
    if (time_up()) return StopReason::TimeLimit;
    return std::nullopt;
  }

  // One iteration: search, apply, rebuild, cycle post-pass. The first one is the first
  // multi-pattern round (with the single-pattern rules).
  IterationReport run_one(size_t iter) {
    IterationReport it;
    it.iteration = iter;
    it.rules.resize(rules_.size());
    it.multi = iter == 0 && cfg_.k_multi > 0 && !multis_.empty();
    if (it.multi) ++rounds_;
    search(iter, it);
    apply(it);
    rebuild(it);
    return it;
  }

  // A later multi-pattern round, at the end of iteration it (whose rules changed nothing):
  // search and apply the multi-pattern rules alone, rebuild, cycle post-pass. Its
  // applications stop once they have used RunnerConfig::later_multi_share of the node
  // budget left, so that the single-pattern rules have room to build on the merges.
  void multi_round(IterationReport& it) {
    ++rounds_;
    it.multi = true;
    auto t0 = Clock::now();
    SearchOptions opt;
    opt.skip_filtered = cfg_.skip_filtered_in_search;
    multi_.search(eg_, opt);
    it.search_s += seconds_since(t0);
    t0 = Clock::now();
    filter_.begin_iteration(eg_);
    const size_t n = eg_.num_nodes();
    const double room = cfg_.node_limit > n ? static_cast<double>(cfg_.node_limit - n) : 0.0;
    multi_node_cap_ = n + static_cast<size_t>(cfg_.later_multi_share * room);
    for (size_t k = 0; k < multis_.size() && !limit_hit_ && eg_.num_nodes() < multi_node_cap_; ++k)
      apply_multi(k, it.rules[multis_[k]]);
    multi_node_cap_ = SIZE_MAX;
    it.apply_s += seconds_since(t0);
    rebuild(it);
  }

  void rebuild(IterationReport& it) {
    auto t0 = Clock::now();
    eg_.rebuild();
    it.rebuild_s += seconds_since(t0);
    t0 = Clock::now();
    // The graph had no cycle after the last post-pass; a new one runs through a class whose
    // e-nodes changed since (the e-graph's touched list, taken by the tracker next iteration).
    if (guard_) it.filtered_new += filter_.remove_new_cycles_after_iteration(eg_, eg_.touched_nodes());
    it.filter_s += seconds_since(t0);
    it.nodes = eg_.num_nodes();
    it.classes = eg_.num_classes();
    it.filtered_total = eg_.num_filtered();
    spdlog::debug("iteration {}: {} e-nodes, {} e-classes, {} filtered", it.iteration, it.nodes, it.classes,
                  it.filtered_total);
  }

  void search(size_t iter, IterationReport& it) {
    const auto t0 = Clock::now();
    SearchOptions opt;
    opt.skip_filtered = cfg_.skip_filtered_in_search;
    singles_.search(eg_, sched_, iter, opt, it.rules);
    opt.limit = SIZE_MAX;
    if (it.multi) multi_.search(eg_, opt);
    it.search_s = seconds_since(t0);
  }

  void apply(IterationReport& it) {
    const auto t0 = Clock::now();
    filter_.begin_iteration(eg_);
    applications_ = 0;
    limit_reason_ = StopReason::NodeLimit;
    for (size_t r : singles_.rules()) {
      const Matches& ms = singles_.matches(r);
      auto ta = Clock::now();
      for (size_t m = 0; m < ms.size(); ++m) {
        if (limit_hit_) {
          singles_.mark_incomplete(r);  // matches left unapplied: search everything next time
          break;
        }
        EClassId root = ms.root(m);
        if (apply_one(it.rules[r], r, &root, ms.subst(m)) == ApplyOutcome::WouldCycle) singles_.revisit(r, root);
        note_application();
      }
      it.rules[r].apply_s = seconds_since(ta);
    }
    if (it.multi)
      for (size_t k = 0; k < multis_.size() && !limit_hit_; ++k) apply_multi(k, it.rules[multis_[k]]);
    it.apply_s = seconds_since(t0);
  }

  // Applies a multi-pattern rule's combinations (TENSAT Algorithm 1), the first
  // multi_combination_limit of them.
  void apply_multi(size_t k, RuleStats& st) {
    const size_t r = multis_[k];
    // Collect first: applying while enumerating would be fine, but a snapshot keeps the
    // combination count independent of the applications.
    auto tc = Clock::now();
    std::vector<EClassId> combos;
    const size_t nl = rules_[r].lhs.size(), nv = rules_[r].nvars();
    size_t n = multi_.for_each_combination(
        k,
        [&](const EClassId* roots, const EClassId* subst) {
          combos.insert(combos.end(), roots, roots + nl);
          combos.insert(combos.end(), subst, subst + nv);
        },
        cfg_.multi_combination_limit);
    st.matches = n;
    st.searched = n;
    st.truncated = n >= cfg_.multi_combination_limit;
    st.search_s = seconds_since(tc);
    auto ta = Clock::now();
    for (size_t c = 0; c < n && !limit_hit_ && eg_.num_nodes() < multi_node_cap_; ++c) {
      const EClassId* base = combos.data() + c * (nl + nv);
      apply_one(st, r, base, base + nl);
      note_application();
    }
    st.apply_s = seconds_since(ta);
  }

  // Applies one match unless the memo knows it is a no-op; counts the outcome.
  ApplyOutcome apply_one(RuleStats& st, size_t r, const EClassId* roots, const EClassId* subst) {
    const Rewrite& rw = rules_[r];
    uint64_t k = MatchMemo::key(eg_, r, roots, rw.lhs.size(), subst, rw.nvars());
    if (memo_[r].known(k)) {
      ++st.unchanged;
      ++st.memo_hits;
      return ApplyOutcome::Unchanged;
    }
    ApplyOutcome o = applier_.apply(eg_, rw, roots, subst, guard_, refused_[r].known(k));
    if (o == ApplyOutcome::Applied || o == ApplyOutcome::Unchanged || o == ApplyOutcome::IllTyped) memo_[r].remember(k);
    else if (o == ApplyOutcome::WouldCycle) refused_[r].remember(k);
    count(st, o);
    return o;
  }

  // The limits checked during the apply phase (the clock every 64 applications).
  void note_application() {
    if ((++applications_ & 63) == 0 && time_up()) {
      limit_hit_ = true;
      limit_reason_ = StopReason::TimeLimit;
    }
    if (at_node_limit()) {
      limit_hit_ = true;
      limit_reason_ = StopReason::NodeLimit;
    }
  }

  EGraph& eg_;
  const RunnerConfig& cfg_;
  Scheduler& sched_;
  const std::vector<Rewrite>& rules_;
  const Clock::time_point start_ = Clock::now();
  std::vector<size_t> multis_;
  MultiPatternSearcher multi_;
  SingleRuleSearch singles_;
  CycleFilter filter_;
  CycleGuard* guard_;
  Applier applier_;
  // Per rule: matches whose application is a known no-op, and matches the cycle guard refused
  // (they type-checked). One table per rule keeps the table being probed small while a rule's
  // matches are applied (they are random accesses; a table of all rules' keys misses cache).
  std::vector<MatchMemo> memo_, refused_;
  size_t applications_ = 0;
  size_t peak_nodes_ = 0;
  size_t rounds_ = 0;                  // multi-pattern rounds started
  size_t multi_node_cap_ = SIZE_MAX;   // a later round's applications stop at this size
  bool limit_hit_ = false;
  StopReason limit_reason_ = StopReason::NodeLimit;
};

}  // namespace

RunReport Runner::run(const std::vector<Rewrite>& rules) {
  return Exploration(eg_, cfg_, *sched_, rules).run();
}

}  // namespace tensat
