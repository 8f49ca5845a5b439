// The default ILP run's state (ilp.cpp and restricted_search.cpp): the incumbent, its cost, and
// what is known about the optimum below it.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "extract/extract_graph.h"
#include "extract/ilp.h"

namespace tensat::extract {

// The incumbent and what is known about the optimum below it.
/// Whether a lower bound proves an extraction of cost `cost` optimal: within the relative
/// tolerance, or equal but for rounding.
inline bool bound_closes(double bound, double cost, double tolerance) {
  return bound >= cost * (1.0 - tolerance) || bound >= cost - 1e-12 * std::abs(cost);
}

struct Progress {
  Progress(const IlpOptions& o, Choice start) : opts(o), incumbent(std::move(start)) {}

  const IlpOptions& opts;
  Choice incumbent;
  double cost = std::numeric_limits<double>::infinity();
  double bound = -std::numeric_limits<double>::infinity();    // a lower bound on the optimum
  std::string bound_by;    // what proved `bound`
  // Once nodes were eliminated, bounds of the restricted problem hold only below this cap
  // (every extraction that uses an eliminated node costs at least the cap).
  double cap = std::numeric_limits<double>::infinity();
  bool improved = false;

  bool closed() const {
    return bound_closes(bound, cost, opts.optimality_tolerance);
  }
  void raise(double b, const char* who) {
    if (!(b > bound)) return;
    bound = b;
    bound_by = who;
  }
  // A bound of the restricted problem (after elimination).
  void raise_restricted(double b, const char* who) { raise(std::min(cap, b), who); }
};

/// Makes `choice` the incumbent where it is a valid extraction cheaper than it.
bool offer(const ExtractGraph& g, Progress& p, const Choice& choice);

}  // namespace tensat::extract
