// One part of the ILP (a block of the problem, blocks.h, or the whole of it): its LP with the
// cutting-plane rounds (phase 5: run_lp, take_lp), CBC from the incumbent with lazy cycle
// cuts (phase 6: solve_cbc), and what extract_ilp (ilp.cpp) shares with them.
#pragma once

#include <coin/CoinFinite.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "extract/extract_graph.h"
#include "extract/formulation.h"
#include "extract/ilp.h"
#include "extract/ilp_progress.h"
#include "extract/reduce.h"
#include "support/stopwatch.h"

namespace tensat::extract {

using Clock = Stopwatch::Clock;

// An acyclic extraction that keeps as much of a (cyclic) ILP choice as the tree greedy can:
// the ILP's nodes cost nothing, the others their cost.
Choice repair(const ExtractGraph& g, const Choice& cyclic);

// Throws Stopped once the caller has set IlpOptions::stop.
void check_stop(const IlpOptions& opts);

// What ended the search of a part that stayed open; the larger says more (the status names
// the largest over the parts).
enum class Open { Stalled, Budget, Timeout, Failed };
const char* to_string(Open o);

// The cost of a choice's classes in a part of the problem (all of it for the whole model).
double part_cost(const ExtractGraph& g, const IlpModel& model, const Choice& choice);

// One ILP of the problem: the whole of it, or a block (blocks.h). Its bound is of the part
// (the restricted problem's, see Progress::cap); `floor` is a bound known before (LM-cut's,
// for the whole problem).
struct Part {
  IlpModel* model = nullptr;
  bool whole = false;  // the whole problem, not a block
  double floor = -std::numeric_limits<double>::infinity();
  double bound = -std::numeric_limits<double>::infinity();
  bool used_cbc = false;
  int rounds = 0;
  double best_bound() const { return std::max(floor, bound); }
  bool closed(const IlpOptions& opts, const ExtractGraph& g, const Choice& incumbent) const {
    return bound_closes(best_bound(), part_cost(g, *model, incumbent), opts.optimality_tolerance);
  }
};

// Phase 5a for one part: its LP with the cutting-plane rounds (IlpModel::separate), within
// `limit` work units. It needs nothing but the model, so the parts' LPs run in parallel; what
// they mean for the incumbent and the bound is taken in order afterwards (take_lp).
struct LpRun {
  double lp = -COIN_DBL_MAX;
  int64_t work = 0;    // work units used
  int64_t margin = 0;  // the work of one iteration at the model's final size, and 1
  bool ran = false;
  bool exact = false;  // run within the work the parts before it left (all of them finished)
};
LpRun run_lp(IlpModel& model, int64_t limit, const IlpOptions& opts, Clock::time_point hard_end);

// Phase 5b for one part, in order: the LP's bound, and its own solution, where it decodes to
// a valid extraction cheaper than the incumbent, becomes the incumbent (on NasRNN, table v2,
// the LP is integral at the optimum and CBC only found it again, 0.07 s).
void take_lp(const ExtractGraph& g, const IlpOptions& opts, Part& part, Progress& p, const LpRun& run,
             Clock::time_point t0);

// Phase 6 for one part: CBC from the incumbent, with lazy cycle cuts, within the work left.
Open solve_cbc(const ExtractGraph& g, const Reduction& red, const IlpOptions& opts, Part& part, Progress& p,
               int64_t& work_left, int64_t stall_work, Clock::time_point hard_end, Clock::time_point t0);

// Part by part the cheaper of two valid extractions (the parts are independent, blocks.h);
// outside every part (free classes, whose nodes read only free classes) a's choice, else b's.
Choice cheaper_per_part(const ExtractGraph& g, const std::vector<Part>& parts, const Choice& a, const Choice& b);

}  // namespace tensat::extract
