// Concrete instances of terms with variables, for the prover, and the completeness check of
// TASO's rules against a rule set.
//
// Variables become fresh leaves: with a shape given (`?x` -> [64,64]) an input leaf named after
// the variable; otherwise the shapes (and parameter values) are chosen by search with the rule
// checker (rules/check/rule_check.h, the generator of the numeric soundness test), keeping
// the shapes that were given. The split sugar `(split AXIS t)` is allowed in the terms: POS
// comes from t's split tree, as on a rule's right-hand side.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lang/graph.h"
#include "lang/rule_spec.h"
#include "lang/sexpr.h"
#include "rules/taso/prover.h"

namespace tensat::taso {

struct Goal {
  ir::Graph g;
  std::vector<std::pair<ir::NodeId, ir::NodeId>> pairs;  ///< lhs[i], rhs[i]
  std::map<std::string, std::string> binding;  ///< variable -> what it became ("input [4,4]", "relu")
  std::string str() const;  ///< the sides as terms, one pair per line
};

struct VarShape {
  Shape shape;
  bool weight = false;  ///< a weight leaf instead of an input
};

/// Instantiates lhs[i] / rhs[i] (same count, shared variables) under `conditions` (RuleSpec
/// conditions, may be empty). Variables in `shapes` get those shapes; if every tensor variable
/// has one and no parameter variable occurs, the instance is built directly, else by search
/// (`seed`). Returns nullopt with `why` if no well-typed instance was found.
std::optional<Goal> instantiate(const std::vector<SExpr>& lhs, const std::vector<SExpr>& rhs,
                                const std::vector<SExpr>& conditions,
                                const std::map<std::string, VarShape>& shapes, uint64_t seed,
                                std::string* why);

/// Up to `count` instances of a rule by search (different random shapes), all conditions true
/// and both sides well-typed with equal types.
std::vector<Goal> rule_instances(const RuleSpec& r, int count, uint64_t seed, std::string* why);

struct CompletenessEntry {
  int index = 0;            ///< TASO's rule number
  std::string name;         ///< "taso-N"
  bool imported = false;    ///< expressible in our language
  int instances = 0;        ///< concrete instances tried
  int proved_instances = 0;
  bool proved() const { return imported && instances > 0 && proved_instances == instances; }
  std::string reason;       ///< why not proved (or not imported), where clear
  ProveResult last;         ///< the last prover run (the first failing one if any)
  std::string goal;         ///< the first failing instance, as terms
};

struct CompletenessReport {
  std::string file;
  std::vector<CompletenessEntry> entries;
  size_t total() const { return entries.size(); }
  size_t proved() const;
  std::string str() const;   ///< count, then one line per unproved rule with its reason
  std::string json() const;  ///< one JSON object on one line
};

/// For every rule of the TASO collection at `pb_path` (or only those in `only`, if non-empty):
/// import it, draw `instances` concrete instances, and prove each instance's pairs with `rules`.
CompletenessReport check_taso_completeness(const std::string& pb_path, const std::vector<Rewrite>& rules,
                                           const ProveLimits& limits, int instances, uint64_t seed,
                                           const std::vector<int>& only = {});

}  // namespace tensat::taso
