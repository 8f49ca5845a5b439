// Rule sources.
#include "pipeline/rule_sources.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "rules/loader.h"
#include "rules/taso/rule_files.h"

namespace tensat {

std::vector<RuleSpec> load_rule_sources(const std::vector<std::string>& files) {
  for (const auto& f : files)
    if (!std::filesystem::exists(f)) throw std::runtime_error(f + ": no such rules file");
  std::vector<taso::ImportReport> reports;
  std::vector<RuleSpec> out = taso::load_rule_files(files, &reports);
  for (const auto& r : reports)
    for (const auto& s : r.skipped)
      spdlog::warn("TASO rule {} cannot be expressed in our language and is not used: {}", s.rule, s.reason);
  return out;
}

}  // namespace tensat
