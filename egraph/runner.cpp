// Runner: the exploration loop (see runner.h).
#include "egraph/runner.h"

#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
  applied += o.applied;
  unchanged += o.unchanged;
  rejected_condition += o.rejected_condition;
  rejected_type += o.rejected_type;
  rejected_split += o.rejected_split;
  rejected_cycle += o.rejected_cycle;
  banned = banned || o.banned;
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
    s += fmt::format("  {:<32} matches {:7} applied {:7} unchanged {:7} rejected {:7} (cond {} type {} split {} cycle {}){}\n",
                     rule_names[r], t[r].matches, t[r].applied, t[r].unchanged, t[r].rejected(),
                     t[r].rejected_condition, t[r].rejected_type, t[r].rejected_split,
                     t[r].rejected_cycle, t[r].banned ? " banned" : "");
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
    for (size_t r : singles) {
      matches[r].reset(rules[r].nvars());
      size_t limit = sched_->search_limit(r, iter);
      if (limit == 0) {
        it.rules[r].banned = true;
        continue;
      }
      opt.limit = limit == SIZE_MAX ? SIZE_MAX : limit + 1;
      size_t n = search_pattern(eg_, rules[r].lhs[0], rules[r].nvars(), matches[r], opt);
      it.rules[r].matches = n;
      if (!sched_->accept(r, iter, n)) {
        it.rules[r].banned = true;
        matches[r].truncate(0);
      }
    }
    opt.limit = SIZE_MAX;
    if (it.multi) mps.search(eg_, opt);
    it.search_s = seconds_since(t0);

    // ---- apply ----
    t0 = Clock::now();
    filter.begin_iteration(eg_);
    size_t applications = 0;
    auto check_limits = [&] {
      if ((++applications & 63) == 0 && time_up()) limit_hit = true;
      if (eg_.num_nodes() >= cfg_.node_limit) limit_hit = true;
      return limit_hit;
    };
    for (size_t r : singles) {
      const Matches& ms = matches[r];
      for (size_t m = 0; m < ms.size() && !limit_hit; ++m) {
        EClassId root = ms.root(m);
        count(it.rules[r], applier.apply(eg_, rules[r], &root, ms.subst(m), guard));
        check_limits();
      }
    }
    if (it.multi) {
      for (size_t k = 0; k < multis.size() && !limit_hit; ++k) {
        size_t r = multis[k];
        // Collect first: applying while enumerating would be fine, but a snapshot keeps the
        // combination count independent of the applications.
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
        for (size_t c = 0; c < n && !limit_hit; ++c) {
          const EClassId* base = combos.data() + c * (nl + nv);
          count(it.rules[r], applier.apply(eg_, rules[r], base, base + nl, guard));
          check_limits();
        }
      }
    }
    it.apply_s = seconds_since(t0);

    // ---- rebuild ----
    t0 = Clock::now();
    eg_.rebuild();
    it.rebuild_s = seconds_since(t0);

    // ---- cycle post-pass ----
    t0 = Clock::now();
    if (guard) it.filtered_new = filter.remove_cycles(eg_);
    it.filter_s = seconds_since(t0);

    it.nodes = eg_.num_nodes();
    it.classes = eg_.num_classes();
    it.filtered_total = eg_.num_filtered();
    spdlog::debug("iteration {}: {} e-nodes, {} e-classes, {} filtered", iter, it.nodes, it.classes,
                  it.filtered_total);
    rep.iterations.push_back(std::move(it));

    if (limit_hit) {
      stop = eg_.num_nodes() >= cfg_.node_limit ? StopReason::NodeLimit : StopReason::TimeLimit;
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
