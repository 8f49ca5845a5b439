// Rule and cost-table sources.
#include "pipeline/rule_sources.h"

#include <filesystem>
#include <stdexcept>

#include "rules/loader.h"
#ifdef TENSAT_HAVE_TASO_RULES
#include "rules/taso/taso_rules.h"
#endif

namespace tensat {

std::vector<RuleSpec> load_rule_sources(const std::vector<std::string>& files) {
  if (files.empty()) return rules::default_rules();
  std::vector<RuleSpec> out;
  for (const auto& f : files) {
    if (!std::filesystem::exists(f)) throw std::runtime_error(f + ": no such rules file");
    std::vector<RuleSpec> part;
    if (std::filesystem::path(f).extension() == ".pb") {
#ifdef TENSAT_HAVE_TASO_RULES
      part = taso::load_taso_rules(f);
#else
      throw std::runtime_error(f + ": TASO rule collections are not supported by this build");
#endif
    } else {
      part = rules::load_rules_file(f);
    }
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::string default_cost_table() {
#ifdef TENSAT_COST_TABLE
  if (std::filesystem::exists(TENSAT_COST_TABLE)) return TENSAT_COST_TABLE;
#endif
  return "";
}

}  // namespace tensat
