// Rule sets from a list of files, chosen by extension, for paper-faithful runs:
//
//   auto ours  = tensat::taso::load_rule_files({});                      // our text rules
//   auto taso  = tensat::taso::load_rule_files({"rules/taso/data/graph_subst.pb"}); // TASO's only
//   auto both  = tensat::taso::load_rule_files({"rules/", "graph_subst.pb"}); // both
//
// Each entry is a `.rules` file (rules::load_rules_file), a `.pb` TASO collection
// (load_taso_rules; unexpressible rules go into the report, never silently dropped), or a
// folder (rules::load_rules_dir: every *.rules in it). An empty list means default_rules().
// Rule names must be unique across the files (TASO's are "taso-N"); a duplicate is an error.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "lang/rule_spec.h"
#include "rules/taso/taso_rules.h"

namespace tensat::taso {

/// A file of an unknown kind, or a duplicate rule name across files.
class RuleFilesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Loads and concatenates the rule files in order (see above). `taso_reports`, if given,
/// receives one ImportReport per `.pb` file. Throws RuleFilesError, rules::RuleError (a
/// malformed .rules file) or TasoError (an unreadable .pb file).
std::vector<RuleSpec> load_rule_files(const std::vector<std::string>& paths,
                                      std::vector<ImportReport>* taso_reports = nullptr);

}  // namespace tensat::taso
