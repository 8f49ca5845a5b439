// RuleSpec: a rewrite rule as parsed from a rules file, before the engine compiles it.
//
// The rules/ loader produces RuleSpecs from text (rules/FORMAT.md); the e-graph engine
// compiles them into searchers/appliers; the soundness tests instantiate their sides as
// ir::Graph terms. Keeping this plain struct here lets all three agree without depending on
// each other.
#pragma once

#include <string>
#include <vector>

#include "lang/sexpr.h"

namespace tensat {

struct RuleSpec {
  std::string name;
  /// One pattern per side for a single-pattern rule; n for a multi-pattern rule, where
  /// lhs[i] is rewritten to rhs[i] and all sides share one variable scope.
  std::vector<SExpr> lhs;
  std::vector<SExpr> rhs;
  /// Extra conditions (rules/FORMAT.md, "Conditions"), all of which must hold.
  std::vector<SExpr> conditions;
  std::string file;  ///< where it was defined, for messages
  int line = 0;

  bool is_multi() const { return lhs.size() > 1; }
};

}  // namespace tensat
