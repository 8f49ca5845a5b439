// The default ILP run's state (see ilp_progress.h).
#include "extract/ilp_progress.h"

namespace tensat::extract {

bool offer(const ExtractGraph& g, Progress& p, const Choice& choice) {
  if (!extraction_problem(g, choice).empty()) return false;
  const double cost = dag_cost(g, choice);
  if (!(cost < p.cost)) return false;
  p.improved = true;
  p.incumbent = choice;
  p.cost = cost;
  return true;
}

}  // namespace tensat::extract
