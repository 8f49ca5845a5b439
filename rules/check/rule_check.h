// The numeric rule checker: instantiate a RuleSpec on random shapes, match it on ir::Graph terms,
// apply it, and evaluate both sides with the CPU reference executor.
//
// The e-graph engine is written separately; this checker is a small, independent model of
// what a rule means, used to check the rule files themselves:
//  - `draw` builds every left-hand side on fresh leaves of random compatible shapes (guided by
//    the pattern: each operator passes a shape hint to its operands), checks the conditions,
//    builds the right-hand sides and requires their types to equal the left-hand sides'.
//  - `match_and_apply` matches the left-hand sides syntactically on given term roots (no
//    e-classes: shared subterms must be the same node), checks the conditions and builds the
//    right-hand sides.
// Split sugar `(split AXIS t)`: POS is the boundary of the split tree of t on AXIS, computed by
// `split_boundary` with the same propagation as egraph/analysis.cpp (concat on that axis: size
// of its first operand; concat on another axis: the operands' common boundary; relu, tanh,
// sigmoid: the operand's; transpose: the operand's on perm[axis]; conv on axis 1: the weight's
// on axis 0; matmul on its last axis: b's on its last axis), plus three propagations proposed
// for the engine (rules/FORMAT.md): conv on axis 0 from the input's axis 0, matmul on its
// second-to-last axis from a's (same rank), poolmax/poolavg on axes 0 and 1 from the input's.
// On a left-hand side the sugar thus splits where the graph's concat put the boundary; in the
// matcher it matches any POS.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/graph.h"
#include "lang/rule_spec.h"
#include "lang/weights.h"
#include "refexec/executor.h"

namespace tensat::rules::check {

using Binding = std::map<std::string, ir::NodeId>;  ///< variable name (without '?') -> node

/// A graph with leaves and their data.
struct World {
  ir::Graph g;
  WeightStore weights;
  std::unordered_map<std::string, refexec::Tensor> inputs;
  uint64_t seed = 1;
  int counter = 0;
  /// Adds an input (or weight) leaf with random data; returns its node.
  ir::NodeId leaf(bool weight, const Shape& shape);
};

enum class Outcome { Ok, LhsIllTyped, ConditionFalse, RhsIllTyped, TypeMismatch, NoBoundary };
const char* outcome_name(Outcome o);

struct Instance {
  World w;
  Binding bind;
  std::vector<ir::NodeId> lhs, rhs;
  std::string why;  ///< reason when not Ok
};

/// One random instantiation of `r`.
Outcome draw(const RuleSpec& r, std::mt19937_64& rng, Instance* out);

/// Evaluates lhs[i] and rhs[i] of `inst`; returns the largest violation ratio
/// max|a-b| / (1e-4 * (1 + max|a|)) over all sides (<= 1 passes), and a description.
double compare(const Instance& inst, std::string* detail);

/// Split-tree boundary of `n` on `axis` (see the header comment); nullopt if none.
std::optional<int64_t> split_boundary(const ir::Graph& g, ir::NodeId n, int64_t axis);

/// Builds a pattern with variables substituted; split sugar takes POS from split_boundary.
/// Returns nullopt (with a reason) if a node is ill-typed or has no boundary.
std::optional<ir::NodeId> substitute(ir::Graph& g, const SExpr& pat, const Binding& b, std::string* why);

/// Checks all conditions of `r` under `b` on graph `g`.
bool conditions_hold(const ir::Graph& g, const RuleSpec& r, const Binding& b, std::string* why);

/// Syntactic match of pattern `pat` at node `n`, extending `b`.
bool match(const ir::Graph& g, const SExpr& pat, ir::NodeId n, Binding& b);

/// Matches lhs[i] at roots[i] (same count), checks conditions, builds the right-hand sides and
/// checks that their types equal the matched nodes'. Returns the rhs roots, or nullopt with
/// the reason it did not fire.
std::optional<std::vector<ir::NodeId>> match_and_apply(ir::Graph& g, const RuleSpec& r,
                                                       const std::vector<ir::NodeId>& roots,
                                                       std::string* why);

}  // namespace tensat::rules::check
