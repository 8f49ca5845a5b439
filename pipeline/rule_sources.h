// Where rules come from: the built-in rule set, or rule files named on the command line
// (.rules text, or TASO's .pb collection). (The built-in cost tables: gpu_cost/embedded_tables.h.)
#pragma once

#include <string>
#include <vector>

#include "lang/rule_spec.h"

namespace tensat {

/// Built-in rules when `files` is empty; else the rules of every file (by extension: .pb is
/// a TASO rule collection, anything else our text format). Throws std::runtime_error with
/// the file (and line) on a bad file.
std::vector<RuleSpec> load_rule_sources(const std::vector<std::string>& files);

}  // namespace tensat
