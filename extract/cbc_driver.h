// One run of COIN-OR CBC on a prepared model: the event handler (stall rule, dive cap, a
// bound target that ends the search at once), the MIP start, the command-line options, and the
// child process that keeps an abort inside CBC/CLP away from the caller (isolated_call.h).
// What the model means is formulation.h's business; this file only drives the solver.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

class OsiClpSolverInterface;

namespace tensat::extract {

struct CbcRunOptions {
  double seconds = 10.0;  ///< CBC's own time limit (wall clock; a safety net, not deterministic)
  /// Deterministic work limits (extract/README.md, "Budget"). CBC's work is counted at its
  /// events: iteration_work per simplex iteration of the searching model and its sub-models
  /// since the last event, plus event_work per event (the root heuristics' and cut
  /// generators' own work, which CBC does not count as iterations). CBC stops at the first
  /// event where the work is over work_limit (< 0: no limit), or where work_stall has passed
  /// since the incumbent last improved (or since the first event; 0: off).
  int64_t work_limit = -1;
  int64_t work_stall = 0;
  double iteration_work = 1.0;
  double event_work = 0.0;
  /// Stop as soon as the incumbent's objective is at most this (e.g. a proven lower bound:
  /// then the incumbent is optimal). -inf: never.
  double stop_at_objective = -std::numeric_limits<double>::infinity();
  int threads = 1;
  int log_level = 0;
  /// Passes per dive of CBC's diving heuristics, set at the first event (0: CBC's 100).
  int dive_passes = 50;
  std::vector<std::string> args;  ///< extra CBC options, before -solve
  bool isolate = true;            ///< run in a forked child (isolated_call.h)
  /// Column values of a feasible solution (CBC's MIP start); empty: none.
  std::vector<double> mip_start;
  /// Isolated runs: polled while the child runs; once set, it is killed (a failure).
  const std::atomic<bool>* stop = nullptr;
};

struct CbcOutcome {
  bool has_solution = false;
  bool proven_optimal = false;
  bool infeasible = false;
  bool stalled = false;         ///< the stall rule ended the search
  bool out_of_work = false;     ///< work_limit ended the search
  bool reached_target = false;  ///< stop_at_objective ended the search
  double objective = 0.0;
  double bound = -std::numeric_limits<double>::infinity();
  std::vector<double> x;        ///< the best solution's column values (when has_solution)
  std::string failure;          ///< non-empty: the solver process crashed, hung or garbled its result
  double seconds = 0.0;         ///< CBC's own clock at the end
  int64_t work = 0;             ///< the work counted (CbcRunOptions::work_limit)
};

/// Solves `model` (columns marked integer as needed) with CBC. The model is copied; the caller's
/// object is not changed.
CbcOutcome run_cbc(const OsiClpSolverInterface& model, const CbcRunOptions& opts);

/// The outcome as bytes and back (the child process's message). decode_outcome() returns false
/// on an incomplete or malformed message.
std::string encode_outcome(const CbcOutcome& o);
bool decode_outcome(const std::string& bytes, CbcOutcome& o);

}  // namespace tensat::extract
