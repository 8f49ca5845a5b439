// One part of the ILP: its LP and CBC runs (see ilp_parts.h).
#include "extract/ilp_parts.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <spdlog/spdlog.h>

#include "extract/cbc_driver.h"
#include "extract/cycle_cuts.h"
#include "extract/greedy.h"
#include "extract/work_units.h"

namespace tensat::extract {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

Choice repair(const ExtractGraph& g, const Choice& cyclic) {
  std::vector<double> costs = node_costs(g);
  for (int64_t n : cyclic)
    if (n >= 0) costs[static_cast<size_t>(n)] = 0.0;
  return greedy_tree_choice(g, costs);
}


void check_stop(const IlpOptions& opts) {
  if (opts.stop && opts.stop->load(std::memory_order_relaxed)) throw Stopped("ilp: stopped by its caller");
}

const char* to_string(Open o) {
  switch (o) {
    case Open::Stalled: return "stalled";
    case Open::Budget: return "budget";
    case Open::Timeout: return "timeout";
    case Open::Failed: return "ilp-failed";
  }
  return "?";
}

double part_cost(const ExtractGraph& g, const IlpModel& model, const Choice& choice) {
  const Choice reach = prune_to_roots(g, choice);
  double sum = 0.0;
  for (ClassIdx c = 0; c < reach.size(); ++c)
    if (reach[c] >= 0 && model.in_part(c)) sum += g.nodes[static_cast<size_t>(reach[c])].cost;
  return sum;
}

LpRun run_lp(IlpModel& model, int64_t limit, const IlpOptions& opts, Clock::time_point hard_end) {
  LpRun r;
  r.ran = true;
  if (model.num_x() == 0) return r;
  int64_t left = limit;
  r.lp = model.separate(left, hard_end, opts.separation_rounds);
  r.work = limit - left;
  r.margin = static_cast<int64_t>(std::ceil(iteration_work(model.rows()))) + 1;
  return r;
}

void take_lp(const ExtractGraph& g, const IlpOptions& opts, Part& part, Progress& p, const LpRun& run,
             Clock::time_point t0) {
  IlpModel& model = *part.model;
  if (model.num_x() == 0) {
    // Every class left is free: the (mapped) warm start is the only extraction left.
    part.bound = part_cost(g, model, p.incumbent);
    return;
  }
  const double lp = run.lp;
  if (lp > -COIN_DBL_MAX) part.bound = lp;
  const auto level = part.whole ? spdlog::level::debug : spdlog::level::trace;  // a line per block: trace
  if (spdlog::should_log(level))
    spdlog::log(level,
                "ilp: [{:.4f} s] {} columns, {} rows ({} requirement rows, {} separated ({} odd-cover cuts, {} "
                "exclusive-reader rows), {} landmark rows), {} cycle cuts; LP bound {} for a part of cost {}",
                seconds_since(t0), model.num_x(), model.rows(), model.requirement_rows(), model.separated_rows(),
                model.odd_cover_rows(), model.exclusive_rows(), model.landmark_rows(), model.cycle_cuts(), lp,
                part_cost(g, model, p.incumbent));
  if (!model.lp_solved() || part.closed(opts, g, p.incumbent)) return;
  const Choice lp_choice = model.decode(model.lp().getColSolution(), &p.incumbent);
  if (offer(g, p, lp_choice))
    spdlog::debug("ilp: [{:.4f} s] the LP solution is an extraction of cost {}", seconds_since(t0), p.cost);
}

Open solve_cbc(const ExtractGraph& g, const Reduction& red, const IlpOptions& opts, Part& part, Progress& p,
               int64_t& work_left, int64_t stall_work, Clock::time_point hard_end, Clock::time_point t0) {
  IlpModel& model = *part.model;
  const auto left_s = [&] { return std::chrono::duration<double>(hard_end - Clock::now()).count(); };
  Open why = Open::Budget;
  if (const int dropped = model.drop_slack_cuts(work_left, hard_end); dropped > 0)
    spdlog::trace("ilp: {} slack separated rows dropped before CBC ({} rows left)", dropped, model.rows());
  for (int round = 0; round < opts.max_rounds && !part.closed(opts, g, p.incumbent); ++round) {
    // CBC overshoots its limit a little (it finishes the node it is in): keep a margin.
    const double left = 0.9 * left_s() - 0.01;
    if (left <= 0.0) return Open::Timeout;
    if (work_left <= 0 || !model.lp_solved()) return Open::Budget;  // CBC would re-solve the LP unbounded
    CbcRunOptions run;
    run.seconds = left;
    run.work_limit = work_left;
    run.work_stall = stall_work;
    run.iteration_work = iteration_work(model.rows());
    run.event_work = event_work(model.rows());
    // The part's incumbent is optimal once it is within the tolerance of its bound.
    run.stop_at_objective = part.best_bound() / (1.0 - opts.optimality_tolerance);
    run.threads = opts.threads;
    run.log_level = opts.cbc_log_level;
    run.dive_passes = opts.cbc_dive_passes;
    run.args = opts.cbc_args;
    run.isolate = opts.isolate_solver;
    run.stop = opts.stop;
    if (opts.warm_start) run.mip_start = model.start_values(p.incumbent);
    const CbcOutcome out = run_cbc(model.lp(), run);
    if (!out.failure.empty()) {
      check_stop(opts);  // (stopped: no failure, the caller no longer wants the result)
      spdlog::warn("ilp: {}; keeping the best extraction found before it", out.failure);
      return Open::Failed;
    }
    part.used_cbc = true;
    work_left -= out.work;
    why = out.stalled ? Open::Stalled : (out.out_of_work || out.reached_target) ? Open::Budget : Open::Timeout;
    part.rounds = round + 1;
    // Every round solves a relaxation of the (restricted) part: a valid bound.
    if (std::isfinite(out.bound)) part.bound = std::max(part.bound, out.bound);
    if (!out.has_solution) {
      if (out.infeasible) {
        if (std::isfinite(p.cap)) {
          part.bound = kInf;  // nothing without the eliminated nodes: the cap bounds the optimum
        } else {
          spdlog::error("ilp: CBC reports the model infeasible although the warm start is feasible");
          return Open::Failed;
        }
      }
      return why;
    }
    const Choice choice = model.decode(out.x.data(), &p.incumbent);
    const auto cycles = find_cycles(g, choice);
    const bool valid = extraction_problem(g, choice).empty();
    spdlog::debug("ilp: [{:.4f} s] round {} objective {} bound {} optimal {} cycles {}", seconds_since(t0), round,
                  out.objective, out.bound, out.proven_optimal, cycles.size());
    if (valid) {
      offer(g, p, choice);
      if (out.proven_optimal) part.bound = std::max(part.bound, out.objective);
      return why;  // acyclic: optimal, or the budget ended this round
    }
    // Cyclic (or, numerically, incomplete): cut the cycles, keep a repaired solution.
    int added = 0;
    for (const auto& cyc : cycles) added += model.add_cycle_cut(cyc) ? 1 : 0;
    const Choice fixed = repair(g, choice);
    if (dag_cost(g, fixed) < p.cost) offer(g, p, opts.reduce ? map_to_reduced(g, red, fixed) : fixed);
    if (added == 0) {
      spdlog::error("ilp: round {} gave an invalid solution and no new cycle cut", round);
      return Open::Failed;
    }
  }
  return why;
}

Choice cheaper_per_part(const ExtractGraph& g, const std::vector<Part>& parts, const Choice& a, const Choice& b) {
  Choice c = a;
  for (ClassIdx k = 0; k < c.size(); ++k)
    if (c[k] < 0) c[k] = b[k];
  for (const Part& part : parts)
    if (part_cost(g, *part.model, b) < part_cost(g, *part.model, a))
      for (ClassIdx k = 0; k < c.size(); ++k)
        if (part.model->in_part(k)) c[k] = b[k];
  return prune_to_roots(g, c);
}

}  // namespace tensat::extract
