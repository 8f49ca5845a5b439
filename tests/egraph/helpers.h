// Test helpers: inline rules and terms for the e-graph tests.
#pragma once

#include <string>
#include <vector>

#include "egraph/bridge.h"
#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "lang/rule_spec.h"
#include "lang/sexpr.h"

namespace tensat::testing {

/// A rule from text: sides separated by ';'; conditions as S-expressions.
inline RuleSpec spec(const std::string& name, const std::vector<std::string>& lhs,
                     const std::vector<std::string>& rhs, const std::vector<std::string>& conds = {}) {
  RuleSpec s;
  s.name = name;
  s.file = "inline";
  s.line = 1;
  for (const auto& l : lhs) s.lhs.push_back(parse_sexpr(l));
  for (const auto& r : rhs) s.rhs.push_back(parse_sexpr(r));
  for (const auto& c : conds) s.conditions.push_back(parse_sexpr(c));
  return s;
}

inline Rewrite rule(const std::string& name, const std::string& lhs, const std::string& rhs,
                    const std::vector<std::string>& conds = {}) {
  return compile_rewrite(spec(name, {lhs}, {rhs}, conds));
}

/// The matmul merge rule of the brief (two matmuls sharing an input, 2-D weights).
inline Rewrite matmul_merge() {
  return compile_rewrite(spec(
      "matmul-merge", {"(matmul ?act ?x ?w1 none)", "(matmul ?act ?x ?w2 none)"},
      {"(split_0 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))",
       "(split_1 (split 1 (matmul ?act ?x (concat 1 ?w1 ?w2) none)))"}));
}

/// Builds `text` (several terms joined by a noop if more than one) into a fresh e-graph.
struct Built {
  EGraph eg;
  EClassId root;
  std::vector<EClassId> terms;  ///< class of each top-level term
};

inline void build(Built& b, const std::vector<std::string>& terms) {
  ir::Graph g;
  std::vector<ir::NodeId> ids;
  for (const auto& t : terms) ids.push_back(parse_term(g, t));
  ir::NodeId root = ids.size() == 1 ? ids[0] : g.op(Op::Noop, ids);
  g.set_root(root);
  std::vector<EClassId> cls;
  b.root = add_graph(b.eg, g, &cls);
  for (auto id : ids) b.terms.push_back(b.eg.find(cls[id]));
}

}  // namespace tensat::testing
