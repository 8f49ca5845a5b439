// LM-cut lower bound and node elimination (see lm_cut.h).
#include "extract/lm_cut.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

namespace tensat::extract {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Calls f(x) for every element of the CSR list [b, e).
template <class F>
void each(const uint32_t* b, const uint32_t* e, F&& f) {
  for (; b != e; ++b) f(*b);
}

// Builds CSR lists (rows 0..rows-1) from (row, value) pairs appended in value order.
void to_csr(size_t rows, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
            std::vector<uint32_t>& start, std::vector<uint32_t>& out) {
  start.assign(rows + 1, 0);
  for (const auto& [r, v] : pairs) ++start[r + 1];
  for (size_t r = 0; r < rows; ++r) start[r + 1] += start[r];
  out.resize(pairs.size());
  std::vector<uint32_t> at(start.begin(), start.end() - 1);
  for (const auto& [r, v] : pairs) out[at[r]++] = v;
}

}  // namespace

RelaxedTask::RelaxedTask(const ExtractGraph& g, const Reduction& red) {
  const size_t C = g.classes.size(), N = g.nodes.size();
  fact_of_class_.assign(C, kNone);
  for (ClassIdx c = 0; c < C; ++c)
    if (red.class_alive[c] && !red.class_free[c]) {
      fact_of_class_[c] = static_cast<uint32_t>(class_of_fact_.size());
      class_of_fact_.push_back(c);
    }
  const auto goal_fact = static_cast<uint32_t>(class_of_fact_.size());
  action_of_node_.assign(N, kNone);
  std::vector<uint32_t> pre;
  pre_start_.push_back(0);
  for (NodeIdx n = 0; n < N; ++n) {
    const ClassIdx c = g.nodes[n].eclass;
    if (!red.node_alive[n] || fact_of_class_[c] == kNone) continue;
    action_of_node_[n] = static_cast<uint32_t>(node_of_action_.size());
    node_of_action_.push_back(n);
    cost_.push_back(g.nodes[n].cost);
    eff_.push_back(fact_of_class_[c]);
    pre.clear();
    for (ClassIdx k : g.nodes[n].children)
      if (fact_of_class_[k] != kNone) pre.push_back(fact_of_class_[k]);
    std::sort(pre.begin(), pre.end());
    pre.erase(std::unique(pre.begin(), pre.end()), pre.end());
    pre_.insert(pre_.end(), pre.begin(), pre.end());
    pre_start_.push_back(static_cast<uint32_t>(pre_.size()));
  }
  // The goal action: all (non-free) roots.
  pre.clear();
  for (ClassIdx r : g.roots)
    if (fact_of_class_[r] != kNone) pre.push_back(fact_of_class_[r]);
  std::sort(pre.begin(), pre.end());
  pre.erase(std::unique(pre.begin(), pre.end()), pre.end());
  pre_.insert(pre_.end(), pre.begin(), pre.end());
  pre_start_.push_back(static_cast<uint32_t>(pre_.size()));
  node_of_action_.push_back(static_cast<NodeIdx>(-1));
  cost_.push_back(0.0);
  eff_.push_back(goal_fact);

  build_lists();

  // Kahn's algorithm: a fact is ready once every precondition of every achiever is done.
  const uint32_t F = facts(), A = actions();
  std::vector<uint32_t> waiting(F, 0), order;
  for (uint32_t a = 0; a < A; ++a) waiting[eff_[a]] += pre_start_[a + 1] - pre_start_[a];
  for (uint32_t f = 0; f < F; ++f)
    if (waiting[f] == 0) order.push_back(f);
  for (size_t i = 0; i < order.size(); ++i)
    each(users_begin(order[i]), users_end(order[i]), [&](uint32_t a) {
      if (--waiting[eff_[a]] == 0) order.push_back(eff_[a]);
    });
  acyclic_ = order.size() == F;
  if (!acyclic_) return;
  // Acyclic: the facts are renumbered in that order (the goal, which nothing uses, last), so
  // h_max is a sweep over the fact numbers and a precondition tie goes to the larger number.
  std::vector<uint32_t> renumber(F);
  uint32_t next = 0;
  for (uint32_t f : order)
    if (f != goal_fact) renumber[f] = next++;
  renumber[goal_fact] = next;
  std::vector<ClassIdx> classes(F - 1);
  for (uint32_t f = 0; f + 1 < F; ++f) classes[renumber[f]] = class_of_fact_[f];
  class_of_fact_ = std::move(classes);
  for (uint32_t& f : fact_of_class_)
    if (f != kNone) f = renumber[f];
  for (uint32_t& f : eff_) f = renumber[f];
  for (uint32_t a = 0; a < A; ++a) {
    for (uint32_t i = pre_start_[a]; i < pre_start_[a + 1]; ++i) pre_[i] = renumber[pre_[i]];
    std::sort(pre_.begin() + pre_start_[a], pre_.begin() + pre_start_[a + 1]);
  }
  build_lists();
}

void RelaxedTask::build_lists() {
  const uint32_t F = facts(), A = actions();
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t a = 0; a < A; ++a) each(pre_begin(a), pre_end(a), [&](uint32_t p) { pairs.push_back({p, a}); });
  to_csr(F, pairs, user_start_, users_);
  pairs.clear();
  for (uint32_t a = 0; a < A; ++a) pairs.push_back({eff_[a], a});
  to_csr(F, pairs, ach_start_, ach_);
}

LmCut::LmCut(const RelaxedTask& t) : t_(&t) {
  const uint32_t F = t.facts(), A = t.actions();
  enabled_.assign(A, 1);
  res_.resize(A);
  double max_cost = 0.0;
  for (uint32_t a = 0; a < A; ++a) {
    res_[a] = t.cost(a);
    max_cost = std::max(max_cost, res_[a]);
  }
  eps_ = 1e-12 * max_cost;
  init_ = F;
  h_.assign(F, kInf);
  pcf_.assign(A, RelaxedTask::kNone);
  hm_.assign(A, kInf);
  zone_.assign(F, 0);
  seen_.assign(F, 0);
  v0_.assign(F, 0);
  for (uint32_t a = 0; a < A; ++a)
    if (t.pre_begin(a) == t.pre_end(a)) leaves_.push_back(a);
  if (t.acyclic()) {
    dirty_.assign((F + 63) / 64, 0);
    first_dirty_ = static_cast<uint32_t>(dirty_.size());
  }
}

void LmCut::disable(uint32_t a) {
  if (!enabled_[a]) return;
  enabled_[a] = 0;
  pcf_[a] = RelaxedTask::kNone;
  hm_[a] = kInf;
  if (started_) {
    touch(t_->eff(a));
    need_full_ = !t_->acyclic();  // h may rise: a cyclic task is recomputed whole
    stale_ = true;
  }
}

bool LmCut::tie_later(uint32_t p, uint32_t q) const {
  // Among preconditions of equal h, the one later in the topological order (the higher
  // class): on the benchmark e-graphs this gave much larger bounds than the first one
  // (nasneta 7.30 -> 9.37, inceptionv3 3.07 -> 3.27, optimum 11.56 and 3.39).
  // Acyclic tasks are numbered in topological order: that is the larger number.
  return p > q;
}

// Whether fact f (outside the zone) is in V0: reachable from the justification graph's source
// without passing the zone, i.e. some enabled achiever's precondition choice is the source or
// in V0. Acyclic tasks only (a depth-first search down, memoized per cut in seen_/v0_).
bool LmCut::in_v0(uint32_t f) {
  if (seen_[f] == seen_epoch_) return v0_[f] != 0;
  const RelaxedTask& t = *t_;
  // Frames: a fact and the position of the next achiever to try.
  stack_.clear();
  stack_.push_back({f, t.ach_begin(f)});
  seen_[f] = seen_epoch_;
  v0_[f] = 0;
  while (!stack_.empty()) {
    auto& [g, next] = stack_.back();
    bool found = false, descended = false;
    for (; next != t.ach_end(g); ++next) {
      const uint32_t p = pcf_[*next];
      if (p == RelaxedTask::kNone) continue;
      if (p == init_) {
        found = true;
        break;
      }
      if (zone_[p] == zone_epoch_) continue;
      if (seen_[p] == seen_epoch_) {
        if (v0_[p]) {
          found = true;
          break;
        }
        continue;  // known not in V0 (acyclic: never on the stack)
      }
      seen_[p] = seen_epoch_;
      v0_[p] = 0;
      ++next;
      stack_.push_back({p, t.ach_begin(p)});
      descended = true;
      break;
    }
    if (descended) continue;
    const uint32_t done = g;
    stack_.pop_back();
    if (found) {
      v0_[done] = 1;
      // Every fact below on the stack reaches the source through `done`.
      for (auto& fr : stack_) v0_[fr.first] = 1;
      stack_.clear();
      break;
    }
  }
  return v0_[f] != 0;
}

double LmCut::run(size_t max_iterations, std::vector<std::vector<uint32_t>>* landmarks,
                  std::chrono::steady_clock::time_point deadline) {
  const RelaxedTask& t = *t_;
  if (!started_) {
    full_hmax();
    started_ = true;
  } else if (stale_) {
    update_hmax();
  }
  stale_ = false;
  complete_ = false;
  for (size_t it = 0;; ++it) {
    if (!std::isfinite(h_[t.goal()])) {
      bound_ = kInf;
      complete_ = true;
      break;
    }
    if (h_[t.goal()] <= 0.0) {
      complete_ = true;
      break;
    }
    if (it >= max_iterations) break;
    if (it % 32 == 31 && std::chrono::steady_clock::now() >= deadline) break;
    // The goal zone: facts with a zero-cost justification chain to the goal.
    ++zone_epoch_;
    zone_list_.assign(1, t.goal());
    zone_[t.goal()] = zone_epoch_;
    bool reaches_init = false;
    for (size_t i = 0; i < zone_list_.size(); ++i) {
      const uint32_t f = zone_list_[i];
      each(t.ach_begin(f), t.ach_end(f), [&](uint32_t a) {
        const uint32_t p = pcf_[a];
        if (p == RelaxedTask::kNone || res_[a] > eps_) return;
        if (p == init_) {
          reaches_init = true;
        } else if (zone_[p] != zone_epoch_) {
          zone_[p] = zone_epoch_;
          zone_list_.push_back(p);
        }
      });
    }
    if (reaches_init) {  // h_max of the goal is 0 up to rounding
      complete_ = true;
      break;
    }
    // The cut: the actions from the part of the justification graph reachable from the
    // leaves without passing the zone into the zone (Helmert and Domshlak's V0 -> V*).
    cut_.clear();
    double m = kInf;
    ++seen_epoch_;
    if (t.acyclic() && !forward_cuts_) {
      // From the zone down: an achiever of a zone fact whose precondition choice is outside
      // the zone is in the cut when that fact is in V0 (in_v0: a search down the
      // justification graph, memoized for this cut). A forward sweep from the leaves visits
      // all of V0, most of the task, for every landmark.
      for (const uint32_t z : zone_list_)
        each(t.ach_begin(z), t.ach_end(z), [&](uint32_t a) {
          const uint32_t p = pcf_[a];
          if (p == RelaxedTask::kNone || (p != init_ && (zone_[p] == zone_epoch_ || !in_v0(p)))) return;
          cut_.push_back(a);
          m = std::min(m, res_[a]);
        });
      std::sort(cut_.begin(), cut_.end());
    } else {
      front_.clear();
      auto reach = [&](uint32_t a) {
        const uint32_t e = t.eff(a);
        if (zone_[e] == zone_epoch_) {
          cut_.push_back(a);
          m = std::min(m, res_[a]);
        } else if (seen_[e] != seen_epoch_) {
          seen_[e] = seen_epoch_;
          front_.push_back(e);
        }
      };
      for (uint32_t a : leaves_)
        if (pcf_[a] == init_) reach(a);
      for (size_t i = 0; i < front_.size(); ++i) {
        const uint32_t f = front_[i];
        each(t.users_begin(f), t.users_end(f), [&](uint32_t a) {
          if (pcf_[a] == f) reach(a);
        });
      }
      std::sort(cut_.begin(), cut_.end());
    }
    // The zone is closed under zero-cost edges, so every cut action costs more than eps.
    assert(!cut_.empty() && m > 0.0);
    if (cut_.empty() || !(m > 0.0)) break;
    bound_ += m;
    ++iterations_;
    for (uint32_t a : cut_) {
      res_[a] -= m;
      if (res_[a] <= eps_) res_[a] = 0.0;  // lowering a residual keeps the bound valid
      touch(t.eff(a));
      lower(t.eff(a), res_[a] + hm_[a]);
    }
    if (landmarks) {
      landmarks->push_back(cut_);
      landmark_costs_.push_back(m);
    }
    update_hmax();
  }
  return bound_;
}

// The largest h of action a's preconditions (0 without any; +inf when one is unreachable)
// and the precondition that has it.
void LmCut::evaluate_action(uint32_t a) {
  if (!enabled_[a]) {
    hm_[a] = kInf;
    pcf_[a] = RelaxedTask::kNone;
    return;
  }
  double hm = 0.0;
  uint32_t arg = init_;
  // The preconditions are in increasing order: the last of equal h wins (tie_later).
  for (const uint32_t* p = t_->pre_begin(a); p != t_->pre_end(a); ++p) {
    const double hp = h_[*p];
    if (arg == init_ || hp >= hm) {
      hm = hp;
      arg = *p;
    }
  }
  hm_[a] = hm;
  pcf_[a] = std::isfinite(hm) ? arg : RelaxedTask::kNone;
}

// h_max of fact f from its achievers' cached precondition maxima.
double LmCut::evaluate(uint32_t f) const {
  double best = kInf;
  each(t_->ach_begin(f), t_->ach_end(f), [&](uint32_t a) { best = std::min(best, res_[a] + hm_[a]); });
  return best;
}

void LmCut::full_hmax() {
  if (!t_->acyclic()) {
    dijkstra();
    return;
  }
  for (uint32_t f = 0; f < t_->facts(); ++f) {
    each(t_->ach_begin(f), t_->ach_end(f), [&](uint32_t a) { evaluate_action(a); });
    h_[f] = evaluate(f);
  }
}

// Cyclic tasks: h of f may drop to v (an achiever got cheaper); queued for update_hmax().
void LmCut::lower(uint32_t f, double v) {
  if (t_->acyclic() || !(v < h_[f])) return;
  h_[f] = v;
  lowered_.push_back({v, f});
  std::push_heap(lowered_.begin(), lowered_.end(), std::greater<>());
}

void LmCut::touch(uint32_t f) {
  if (!t_->acyclic()) return;
  dirty_[f / 64] |= uint64_t{1} << (f % 64);
  first_dirty_ = std::min(first_dirty_, f / 64);
}

// Re-evaluates the touched facts in topological order. When h of a fact changes, only its
// users whose precondition maximum can change are updated: those that chose it (their
// maximum may drop: recomputed) and those it now exceeds; the effects of actions whose
// maximum changed are touched in turn (a cyclic task is recomputed whole).
void LmCut::update_hmax() {
  if (!t_->acyclic()) {
    if (need_full_) {
      lowered_.clear();
      dijkstra();
      need_full_ = false;
      return;
    }
    // Costs only dropped since h was exact: propagate the decreases in increasing order of
    // value (Knuth's generalisation of Dijkstra, started from the lowered facts).
    while (!lowered_.empty()) {
      std::pop_heap(lowered_.begin(), lowered_.end(), std::greater<>());
      const auto [v, f] = lowered_.back();
      lowered_.pop_back();
      if (v > h_[f]) continue;  // stale entry
      each(t_->users_begin(f), t_->users_end(f), [&](uint32_t a) {
        if (!enabled_[a]) return;
        evaluate_action(a);
        lower(t_->eff(a), res_[a] + hm_[a]);
      });
    }
    return;
  }
  // A forward sweep over the dirty bits: a touched fact's parents come later in the order.
  for (uint32_t w = first_dirty_; w < dirty_.size(); ++w) {
    while (dirty_[w]) {
      const uint32_t f = w * 64 + static_cast<uint32_t>(__builtin_ctzll(dirty_[w]));
      dirty_[w] &= dirty_[w] - 1;
      const double v = evaluate(f);
      if (v == h_[f]) continue;
      h_[f] = v;
      each(t_->users_begin(f), t_->users_end(f), [&](uint32_t a) {
        if (!enabled_[a]) return;
        const double before = hm_[a];
        if (pcf_[a] == f && t_->pre_end(a) - t_->pre_begin(a) == 1 && std::isfinite(v)) {
          hm_[a] = v;  // f is its only precondition
        } else if (pcf_[a] == f || pcf_[a] == RelaxedTask::kNone) {
          evaluate_action(a);
        } else if (v > hm_[a] || (v == hm_[a] && tie_later(f, pcf_[a]))) {
          hm_[a] = v;
          pcf_[a] = f;
        }
        if (hm_[a] != before) {  // touch(): an effect comes later in the order than f
          const uint32_t e = t_->eff(a);
          dirty_[e / 64] |= uint64_t{1} << (e % 64);
        }
      });
    }
  }
  first_dirty_ = static_cast<uint32_t>(dirty_.size());
}

// Generalised Dijkstra (Knuth) for cyclic tasks: an action fires once all its preconditions
// are settled; its precondition choice is the last one settled (one with the largest h).
void LmCut::dijkstra() {
  const uint32_t F = t_->facts(), A = t_->actions();
  std::fill(h_.begin(), h_.end(), kInf);
  cnt_.assign(A, 0);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pq;
  for (uint32_t a = 0; a < A; ++a) {
    pcf_[a] = RelaxedTask::kNone;
    hm_[a] = kInf;
    if (!enabled_[a]) continue;
    cnt_[a] = static_cast<uint32_t>(t_->pre_end(a) - t_->pre_begin(a));
    if (cnt_[a] == 0) {
      pcf_[a] = init_;
      hm_[a] = 0.0;
      const uint32_t e = t_->eff(a);
      if (res_[a] < h_[e]) {
        h_[e] = res_[a];
        pq.push({res_[a], e});
      }
    }
  }
  std::vector<char> done(F, 0);
  while (!pq.empty()) {
    const auto [d, f] = pq.top();
    pq.pop();
    if (done[f] || d > h_[f]) continue;
    done[f] = 1;
    each(t_->users_begin(f), t_->users_end(f), [&](uint32_t a) {
      if (!enabled_[a] || --cnt_[a] != 0) return;
      pcf_[a] = f;
      hm_[a] = d;
      const double v = res_[a] + d;
      const uint32_t e = t_->eff(a);
      if (v < h_[e]) {
        h_[e] = v;
        pq.push({v, e});
      }
    });
  }
}

std::vector<double> cheapest_chain_from_goal(const RelaxedTask& t, const std::vector<double>& cost,
                                             const std::vector<char>& enabled) {
  const uint32_t F = t.facts();
  std::vector<double> up(F, kInf);
  up[t.goal()] = 0.0;
  auto on = [&](uint32_t a) { return enabled.empty() || enabled[a]; };
  if (t.acyclic()) {
    for (uint32_t f = F; f-- > 0;) {
      if (!std::isfinite(up[f])) continue;
      each(t.ach_begin(f), t.ach_end(f), [&](uint32_t a) {
        if (!on(a)) return;
        const double v = up[f] + cost[a];
        each(t.pre_begin(a), t.pre_end(a), [&](uint32_t p) { up[p] = std::min(up[p], v); });
      });
    }
    return up;
  }
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pq;
  pq.push({0.0, t.goal()});
  while (!pq.empty()) {
    const auto [d, f] = pq.top();
    pq.pop();
    if (d > up[f]) continue;
    each(t.ach_begin(f), t.ach_end(f), [&](uint32_t a) {
      if (!on(a)) return;
      const double v = d + cost[a];
      each(t.pre_begin(a), t.pre_end(a), [&](uint32_t p) {
        if (v < up[p]) {
          up[p] = v;
          pq.push({v, p});
        }
      });
    });
  }
  return up;
}

size_t eliminate(LmCut& lm, double threshold, const std::vector<char>& keep) {
  const RelaxedTask& t = lm.task();
  if (!std::isfinite(lm.bound())) return 0;  // infeasible already
  const std::vector<double> up = cheapest_chain_from_goal(t, lm.residual(), lm.enabled_actions());
  const std::vector<double>& h = lm.h();
  size_t removed = 0;
  for (uint32_t a = 0; a < t.goal_action(); ++a) {
    if (!lm.enabled(a) || (!keep.empty() && keep[a])) continue;
    double below = 0.0;
    each(t.pre_begin(a), t.pre_end(a), [&](uint32_t p) { below = std::max(below, h[p]); });
    const double lb = lm.bound() + up[t.eff(a)] + lm.residual()[a] + below;
    if (!(lb < threshold)) {  // also +inf: unreachable from the roots or from the leaves
      lm.disable(a);
      ++removed;
    }
  }
  return removed;
}

}  // namespace tensat::extract
