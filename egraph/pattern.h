// Patterns and conditions of rewrite rules, compiled once from S-expressions.
//
// A pattern is a tree of pattern nodes in post-order (children before parents, root last):
//   ?x          a variable (an index into the rule's variable table; sides share it)
//   3 / none    a literal parameter: the class of the Num / Sym leaf with that value
//   (op c ...)  an operator node; arity is checked against op_info.
// `(split AXIS x)` with two arguments is the split sugar of rules/FORMAT.md: on a left-hand
// side it matches a split at any position; on a right-hand side POS is read from the split
// tree of x's class (no boundary: the rewrite does not apply).
//
// Conditions (rules/FORMAT.md "Conditions") are compiled to a small struct and checked
// against a substitution before a rewrite applies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "lang/rule_error.h"
#include "lang/sexpr.h"

namespace tensat {

/// The variables of one rule, shared by all its patterns and conditions.
struct VarTable {
  std::vector<std::string> names;  ///< without the leading '?'
  int find(std::string_view name) const;
  int intern(std::string_view name);
  size_t size() const { return names.size(); }
};

struct PatNode {
  enum class Kind : uint8_t { Var, Num, Sym, Op };
  Kind kind = Kind::Op;
  Op op = Op::Num;        ///< Kind::Op
  int var = -1;           ///< Kind::Var
  int64_t num = 0;        ///< Kind::Num
  std::string sym;        ///< Kind::Sym
  bool split_auto = false;  ///< (split AXIS x): children are {axis, x}, POS implicit
  std::vector<int> children;  ///< indices into Pattern::nodes
};

struct Pattern {
  std::vector<PatNode> nodes;  ///< post-order; root is nodes.back()
  const PatNode& root() const { return nodes.back(); }
  int root_index() const { return static_cast<int>(nodes.size()) - 1; }
  std::string str(const VarTable& vars) const;
  /// Variables in order of first occurrence (pre-order).
  std::vector<int> vars_in_order() const;
  /// Depth of the deepest node (a lone variable or literal: 0; (relu ?x): 1).
  int height() const;
  /// Depth of the deepest operator node ((relu ?x): 0; (relu (tanh ?x)): 1; a variable: -1).
  int op_height() const;
};

/// Parses and checks a pattern. On a right-hand side (`rhs`), every variable must already be
/// in `vars`. Throws RuleError (without file/line; the caller adds them).
Pattern compile_pattern(const SExpr& e, VarTable& vars, bool rhs);

struct Condition {
  enum class Kind : uint8_t { WeightOnly, NotWeightOnly, SameShape, Rank, Kernel, KernelLe, Groups, Distinct, Ordered };
  Kind kind = Kind::WeightOnly;
  int a = -1, b = -1;      ///< variable indices
  int64_t n1 = 0, n2 = 0;  ///< literal integers (rank N, kernel KH KW, groups G)
  int g_var = -1;          ///< groups: G as a variable bound to a Num class
  std::string str(const VarTable& vars) const;
};

/// Parses a condition; all its variables must be in `vars`. Throws RuleError.
Condition compile_condition(const SExpr& e, const VarTable& vars);

/// True if the condition holds for the substitution (indexed by variable).
bool check_condition(const EGraph& eg, const Condition& c, const EClassId* subst);

}  // namespace tensat
