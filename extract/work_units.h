// The ILP's work units (IlpOptions::work, extract/README.md "Budget"): a deterministic
// measure of solver effort, so that a budget ends the search at the same point however loaded
// the machine is. A simplex iteration costs in proportion to the LP's rows (measured: about
// 0.6 ms per iteration at 28k rows, 0.03 ms at 1.6k rows); a CBC event (a cut pass, a root
// heuristic, a node) runs cut generators and heuristics whose work CBC does not count as
// iterations (about 2.5 ms at 1.6k rows, 60 ms per root cut pass at 4.7k rows).
#pragma once

#include <algorithm>

namespace tensat::extract {

/// Units per simplex iteration on an LP with `rows` rows.
inline double iteration_work(int rows) { return std::max(1.0, rows / 1000.0); }
/// Units per CBC event on a model with `rows` rows.
inline double event_work(int rows) { return std::max(10.0, rows / 10.0); }

}  // namespace tensat::extract
