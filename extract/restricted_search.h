// The ILP run's step 7 (extract/README.md, "Swaps and restriction"): where the search ended open, the
// problem restricted to base nodes and lowered by their slack (restriction.h), solved again.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "extract/extract_graph.h"
#include "extract/ilp.h"
#include "extract/ilp_progress.h"
#include "extract/reduce.h"

namespace tensat::extract {

/// Where the search ended open: the problem restricted to base nodes (restriction.h), solved
/// with a budget of its own; its extraction where cheaper, its bound (of the whole problem:
/// restricted classes are lowered by their slack). Where its optimum pays a lowered cost, those
/// classes are left open and it is solved again (at most 4 rounds, while the
/// restriction still splits the problem). Returns the work budget it had and the work it used.
/// Adds to res.restriction_* and res.restricted_*; offers to and raises `p`. `index` is g's
/// (the ILP run's).
std::pair<int64_t, int64_t> restricted_search(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                              const IlpOptions& opts, Progress& p, ExtractResult& res,
                                              std::chrono::steady_clock::time_point hard_end,
                                              std::chrono::steady_clock::time_point t0);

}  // namespace tensat::extract
