// Loader of the rewrite-rule files (rules/FORMAT.md): text -> RuleSpec.
//
//   auto rules = tensat::rules::default_rules();          // the shipped rules/*.rules, compiled in
//   auto more  = tensat::rules::load_rules_text("r: (relu (relu ?x)) => (relu ?x)", "inline");
//
// The loader checks everything that can be checked without an e-graph: syntax, known
// operators and their arity, parameter vs tensor positions, variables bound on a left-hand
// side, known conditions, unique names, equal numbers of sides in multi-pattern rules, and
// where the split sugar may appear. Every error is a RuleError whose message starts with
// "file:line: ". `A <=> B` yields two RuleSpecs, NAME (A => B) and NAME-rev (B => A).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lang/rule_error.h"
#include "lang/rule_spec.h"

namespace tensat::rules {

/// A malformed rule file; what() is "file:line: what is wrong". The same type as the
/// engine's tensat::RuleError (lang/rule_error.h), so one catch handles both.
using RuleError = tensat::RuleError;

/// Parses rules from text; `filename` is used in messages and RuleSpec::file.
std::vector<RuleSpec> load_rules_text(std::string_view text, const std::string& filename);

/// Reads and parses one rules file.
std::vector<RuleSpec> load_rules_file(const std::string& path);

/// Every `*.rules` file of `dir`, in sorted file-name order; names unique across files.
std::vector<RuleSpec> load_rules_dir(const std::string& dir);

/// The shipped rule set: the rules/*.rules files as they were at build time (compiled in,
/// so the tool does not read the source tree); load_rules_dir("rules") reads the same files.
std::vector<RuleSpec> default_rules();

/// Names of the conditions the format knows (rules/FORMAT.md, "Conditions").
const std::vector<std::string>& known_conditions();

}  // namespace tensat::rules
