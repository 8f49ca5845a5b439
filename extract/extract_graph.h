// ExtractGraph: the plain e-graph that extraction works on, and ExtractResult, what an
// extractor returns.
//
// The structure is deliberately independent of the e-graph engine (egraph/): a bridge fills
// it from the engine, the JSON reader (serialize_json.h) fills it from egraph-serialize files.
// Classes and nodes are dense indices into two vectors. An e-node's children are e-class
// indices. A "choice" assigns each e-class one of its nodes (or -1 when the class is unused).
//
// The checks here are the contract of every extractor: check_extraction() throws
// InternalError if a choice is not a complete, acyclic, filter-respecting selection, so a
// bad graph is never returned silently.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensat::extract {

using ClassIdx = uint32_t;
using NodeIdx = uint32_t;
/// Per class: the chosen node index, or -1 when the class is not used.
using Choice = std::vector<int64_t>;

/// Bad user input (a malformed file, a graph with no acyclic extraction). The message names
/// the file or the class and says what is wrong.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A broken invariant inside extraction (e.g. an extractor produced a cyclic graph).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

struct ENode {
  std::string op;                  ///< operator text, only for printing and writing
  std::vector<ClassIdx> children;  ///< child e-classes, in argument order (may repeat)
  double cost = 0.0;               ///< >= 0; +inf means "never choose"
  ClassIdx eclass = 0;             ///< the class this node belongs to
  bool filtered = false;           ///< excluded from extraction (e.g. closes a cycle)
  std::string json_id;             ///< id in the source file, may be empty
};

struct EClass {
  std::vector<NodeIdx> nodes;
  std::string json_id;  ///< id in the source file, may be empty
};

struct ExtractGraph {
  std::vector<ENode> nodes;
  std::vector<EClass> classes;
  std::vector<ClassIdx> roots;  ///< classes that must be extracted

  ClassIdx add_class(std::string json_id = {});
  /// Adds a node to an existing class; children must be existing classes (checked).
  NodeIdx add_node(ClassIdx eclass, std::string op, std::vector<ClassIdx> children, double cost);

  /// Throws InputError when indices are out of range, a class is empty, a cost is negative
  /// or NaN, there is no root, or a node's eclass and its class's node list disagree.
  void validate() const;

  /// Distinct child classes of a node, sorted.
  std::vector<ClassIdx> child_classes(NodeIdx n) const;
  /// The same appended to `out` (GraphIndex's flat child lists).
  void append_child_classes(NodeIdx n, std::vector<ClassIdx>& out) const;
  /// Whether a node may ever be chosen on its own: not filtered, finite cost, no self-loop.
  bool usable(NodeIdx n) const;
};

/// What every extractor returns.
struct ExtractResult {
  Choice choice;                 ///< per class: node index or -1 (only classes reachable from the roots)
  double dag_cost = 0.0;         ///< each chosen node counted once
  double tree_cost = 0.0;        ///< the roots' terms expanded as trees (shared subterms repeated)
  std::string method;            ///< greedy | dag | ilp
  std::string status;            ///< optimal | heuristic | feasible | budget-best-found | budget-greedy | ...
  double gap = 0.0;              ///< relative optimality gap (ILP), NaN when unknown
  double best_bound = 0.0;       ///< proven lower bound on the DAG cost (ILP), NaN when unknown
  double time_s = 0.0;
  bool acyclic = false;          ///< always true for a returned result (checked)
  int ilp_rounds = 0;            ///< ILP solves (cycle-cut rounds)
  int cycle_cuts = 0;            ///< lazy cycle cuts added
  double warm_start_cost = 0.0;  ///< DAG cost of the ILP's warm start (NaN: not waited for, IlpOptions::late_hints)
  /// The cost of the late hint that became the incumbent (IlpOptions::late_hints), NaN if none.
  double late_hint_cost = std::numeric_limits<double>::quiet_NaN();
  std::string proof;             ///< what closed the bound: "lm-cut", "lp", "cbc"; empty if open
  int64_t work_budget = 0;       ///< the ILP's work budget for proving or improving (ilp.h)
  int64_t work_used = 0;         ///< the part of it used
  double lm_cut_bound = 0.0;     ///< LM-cut's lower bound (ILP), NaN when not computed
  size_t eliminated = 0;         ///< nodes the bound eliminated before the ILP
  size_t swapped = 0;            ///< nodes the swaps left out before the blocks (restriction.h)
  size_t landmarks = 0;          ///< landmarks found (LM-cut), before those the ILP used
  size_t blocks = 0;             ///< independent blocks the problem split into, one-class ones included (blocks.h); 0: not split
  // The search restricted to base nodes (restriction.h; ilp.cpp's restricted_search):
  int restriction_rounds = 0;      ///< restricted problems solved (0: none)
  size_t restricted_classes = 0;   ///< classes restricted in the last one
  double restriction_slack = 0.0;  ///< and their slack (what their base nodes were lowered by, in all)
  double restricted_cost = 0.0;    ///< the best extraction of the rounds, at its real cost
  double restricted_bound = 0.0;   ///< the best bound of the rounds (one of the whole problem)
  size_t restricted_twins = 0;     ///< blocks taken from a twin in the rounds, summed
  size_t twin_parts = 0;           ///< ILP blocks (of this search) taken from a twin (twins.h)
};

/// Keeps only the classes reachable from the roots through chosen nodes; others become -1.
/// A reachable class with no choice stays -1 (check_extraction then rejects it).
Choice prune_to_roots(const ExtractGraph& g, const Choice& choice);

/// Per node its cost (the cost vector greedy_tree_choice and greedy_dag_choice take).
std::vector<double> node_costs(const ExtractGraph& g);

/// DAG cost: the sum of the costs of the chosen nodes reachable from the roots.
double dag_cost(const ExtractGraph& g, const Choice& choice);
/// Tree cost: the roots' terms expanded as trees. Requires an acyclic choice.
double tree_cost(const ExtractGraph& g, const Choice& choice);

/// A cycle of classes reachable from the roots through chosen nodes, if any: c0 -> c1 ->
/// ... -> c0 (each class's chosen node has the next class as a child).
std::optional<std::vector<ClassIdx>> find_cycle(const ExtractGraph& g, const Choice& choice);
/// All cycles closed by a back edge of one depth-first search from the roots (at least one
/// per strongly connected component that contains a cycle).
std::vector<std::vector<ClassIdx>> find_cycles(const ExtractGraph& g, const Choice& choice);

/// Empty string when `choice` is a valid extraction: every root chosen, every chosen node in
/// its class and not filtered, every child class chosen, no unreachable class chosen, no
/// cycle. Otherwise a description of the first problem.
std::string extraction_problem(const ExtractGraph& g, const Choice& choice);
/// Throws InternalError (naming `who`) when extraction_problem() is not empty.
void check_extraction(const ExtractGraph& g, const Choice& choice, const std::string& who);

/// Fills choice-derived fields of a result (dag_cost, tree_cost, acyclic) after checking it.
void finish_result(const ExtractGraph& g, ExtractResult& r);

/// A class's printable name: its json id, or "#index".
std::string class_name(const ExtractGraph& g, ClassIdx c);

}  // namespace tensat::extract
