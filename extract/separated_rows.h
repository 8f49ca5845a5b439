// A batch of separated rows in OsiSolverInterface::addRows() form, shared by the separation
// routines (separation.cpp, odd_covers.cpp, reader_rows.cpp).
#pragma once

#include <map>
#include <vector>

namespace tensat::extract {

/// Appends `row` (column -> coefficient) with bounds [lb, ub] in addRows() form.
inline void append_row(const std::map<int, double>& row, double lb, double ub, std::vector<int>& rstart,
                       std::vector<int>& rind, std::vector<double>& rval, std::vector<double>& rlb,
                       std::vector<double>& rub) {
  for (const auto& [i, v] : row) {
    rind.push_back(i);
    rval.push_back(v);
  }
  rstart.push_back(static_cast<int>(rind.size()));
  rlb.push_back(lb);
  rub.push_back(ub);
}

}  // namespace tensat::extract
