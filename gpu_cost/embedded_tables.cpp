// Lookup of the built-in cost tables (see embedded_tables.h); the tables themselves are in
// the generated embedded_tables_data.cpp.
#include "gpu_cost/embedded_tables.h"

namespace tensat::cost {

const EmbeddedTable* embedded_table(std::string_view profile) {
  for (const auto& t : embedded_tables())
    if (t.profile == profile) return &t;
  return nullptr;
}

std::string embedded_profile_list() {
  std::string s;
  for (const auto& t : embedded_tables()) s += (s.empty() ? "" : ", ") + std::string(t.profile);
  return s.empty() ? "none" : s;
}

}  // namespace tensat::cost
