// The built-in rule files, compiled into the binary by rules/CMakeLists.txt.
#pragma once

#include <string_view>
#include <vector>

namespace tensat::rules {

struct EmbeddedRuleFile {
  std::string_view name;  ///< e.g. "matmul.rules"
  std::string_view text;
};

/// Every rules/*.rules file at build time, sorted by name.
const std::vector<EmbeddedRuleFile>& embedded_rule_files();

}  // namespace tensat::rules
