// Lower bounds on the optimal DAG cost from landmarks: the LM-cut heuristic (Helmert and
// Domshlak, ICAPS 2009) on the reduced extraction problem, and the node elimination that its
// residual costs allow.
//
// Extraction is delete-free planning: a class is a fact, an e-node an action whose
// preconditions are its (non-free) child classes and whose one effect is its class, the goal
// is the root classes, and the cheapest extraction (each chosen node paid once, acyclic) is
// the cheapest relaxed plan, h+. A *landmark* is a set of nodes every extraction uses one of.
// LM-cut finds landmarks one at a time: h_max (the cost of the most expensive child chain),
// the "justification graph" of each node's most expensive child, the zone that reaches the
// goal at zero cost, and the nodes that enter that zone form a landmark; its cheapest
// residual cost m is added to the bound and subtracted from its nodes; repeat until h_max of
// the goal is 0. Every extraction S then costs at least bound + sum of S's residual costs
// (S hits every landmark), which gives
//   * the bound itself (admissible, also on cyclic e-graphs: plans are acyclic), and
//   * eliminate(): a node n is in no extraction cheaper than U when
//       bound + up(class(n)) + residual(n) + max over n's children of h_max_residual(child) >= U,
//     with up(c) the cheapest residual-cost chain of nodes from a root down to c (the chain,
//     n and n's subterm are disjoint in an acyclic extraction).
// The landmarks also strengthen the ILP (formulation.h): "sum of x over a landmark >= 1".
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "extract/extract_graph.h"
#include "extract/reduce.h"

namespace tensat::extract {

/// The reduced problem in flat arrays: facts are the alive, non-free classes plus one goal
/// fact; actions are their alive nodes plus one goal action (cost 0, precondition: the roots).
class RelaxedTask {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  RelaxedTask(const ExtractGraph& g, const Reduction& red);

  uint32_t facts() const { return static_cast<uint32_t>(class_of_fact_.size()) + 1; }
  uint32_t goal() const { return facts() - 1; }
  uint32_t actions() const { return static_cast<uint32_t>(eff_.size()); }
  uint32_t goal_action() const { return actions() - 1; }

  /// The class of fact f (not the goal) and the fact of class c (kNone when c has none).
  ClassIdx class_of(uint32_t f) const { return class_of_fact_[f]; }
  uint32_t fact_of(ClassIdx c) const { return fact_of_class_[c]; }
  /// The e-node of action a (not the goal action) and the action of node n (kNone if none).
  NodeIdx node_of(uint32_t a) const { return node_of_action_[a]; }
  uint32_t action_of(NodeIdx n) const { return action_of_node_[n]; }

  double cost(uint32_t a) const { return cost_[a]; }
  uint32_t eff(uint32_t a) const { return eff_[a]; }
  const uint32_t* pre_begin(uint32_t a) const { return pre_.data() + pre_start_[a]; }
  const uint32_t* pre_end(uint32_t a) const { return pre_.data() + pre_start_[a + 1]; }
  const uint32_t* users_begin(uint32_t f) const { return users_.data() + user_start_[f]; }
  const uint32_t* users_end(uint32_t f) const { return users_.data() + user_start_[f + 1]; }
  const uint32_t* ach_begin(uint32_t f) const { return ach_.data() + ach_start_[f]; }
  const uint32_t* ach_end(uint32_t f) const { return ach_.data() + ach_start_[f + 1]; }

  /// Whether the fact graph (fact -> its achievers' preconditions) has no cycle; then the
  /// facts are numbered in a topological order: every precondition of an achiever of f has a
  /// smaller number than f (the goal is last).
  bool acyclic() const { return acyclic_; }

 private:
  // The users and achievers lists from pre_ and eff_.
  void build_lists();

  std::vector<ClassIdx> class_of_fact_;
  std::vector<uint32_t> fact_of_class_;
  std::vector<NodeIdx> node_of_action_;
  std::vector<uint32_t> action_of_node_;
  std::vector<double> cost_;
  std::vector<uint32_t> eff_;
  std::vector<uint32_t> pre_start_, pre_;
  std::vector<uint32_t> user_start_, users_;
  std::vector<uint32_t> ach_start_, ach_;
  bool acyclic_ = false;
};

/// LM-cut as a state that can be continued: after disable(), the landmarks found so far
/// (minus the disabled actions) and their cost partition stay valid, so run() continues
/// from the current bound and the bound never decreases ("incremental LM-cut", Pommerening
/// and Helmert, ICAPS 2012). Copyable (a branch-and-bound node copies its parent's state).
class LmCut {
 public:
  explicit LmCut(const RelaxedTask& t);
  const RelaxedTask& task() const { return *t_; }

  /// Acyclic tasks find each cut from the zone down (in_v0); this switches to the forward
  /// sweep from the leaves that cyclic tasks use, the reference the tests compare against.
  void use_forward_cuts(bool on) { forward_cuts_ = on; }

  /// Removes action a from every extraction considered (h_max is updated by the next run()).
  void disable(uint32_t a);
  bool enabled(uint32_t a) const { return enabled_[a] != 0; }
  const std::vector<char>& enabled_actions() const { return enabled_; }

  /// Finds landmarks until h_max of the goal is 0 under the residual costs (or the goal is
  /// unreachable: bound +inf), at most max_iterations of them, until `deadline` (checked every
  /// 32 landmarks). Appends them (action ids) to `landmarks` when given. Returns bound(); a
  /// run stopped early leaves a valid bound and residual costs (complete() false).
  double run(size_t max_iterations = SIZE_MAX, std::vector<std::vector<uint32_t>>* landmarks = nullptr,
             std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

  /// A lower bound on the DAG cost of every extraction that uses enabled actions only
  /// (+inf: there is none).
  double bound() const { return bound_; }
  /// Whether the last run() ended with h_max(goal) = 0 (not stopped by max_iterations).
  bool complete() const { return complete_; }
  size_t iterations() const { return iterations_; }
  /// Per action: its cost minus its share of the landmarks' costs.
  const std::vector<double>& residual() const { return res_; }
  /// The cost m of each landmark appended to run()'s `landmarks`, in the same order (every
  /// action of a landmark pays m of its cost for it: the costs of the landmarks an action is
  /// in add up to at most its cost).
  const std::vector<double>& landmark_costs() const { return landmark_costs_; }
  /// Per fact: h_max under the residual costs (after run()).
  const std::vector<double>& h() const { return h_; }
  /// Per action: the precondition with the largest h (the justification graph's edge
  /// source), facts() for an action without preconditions, RelaxedTask::kNone when the
  /// action is disabled or a precondition is unreachable.
  uint32_t pcf(uint32_t a) const { return pcf_[a]; }

 private:
  void evaluate_action(uint32_t a);
  double evaluate(uint32_t f) const;
  void full_hmax();
  void touch(uint32_t f);
  void lower(uint32_t f, double v);
  void update_hmax();
  void dijkstra();
  bool tie_later(uint32_t p, uint32_t q) const;
  bool in_v0(uint32_t f);

  const RelaxedTask* t_;
  std::vector<char> enabled_;
  double eps_ = 0.0;
  double bound_ = 0.0;
  bool complete_ = false, started_ = false, stale_ = false, need_full_ = false, forward_cuts_ = false;
  size_t iterations_ = 0;
  uint32_t init_ = 0;  // the justification graph's source: facts()
  std::vector<double> res_, h_, hm_;
  std::vector<double> landmark_costs_;
  std::vector<uint32_t> pcf_, zone_, seen_, cnt_, leaves_, zone_list_, front_, cut_;
  std::vector<char> v0_;                                          // in_v0's answers (seen_ says which hold)
  std::vector<std::pair<uint32_t, const uint32_t*>> stack_;        // in_v0's search
  uint32_t zone_epoch_ = 0, seen_epoch_ = 0;
  std::vector<uint64_t> dirty_;  // bits by fact (acyclic tasks: numbered topologically)
  std::vector<std::pair<double, uint32_t>> lowered_;  // heap of dropped h (cyclic tasks)
  uint32_t first_dirty_ = 0;     // no dirty bit in an earlier word
};

/// Per fact: the cheapest sum of `cost` over a chain of enabled actions from the goal down
/// to the fact (each action on the chain has the next fact as a precondition); +inf when
/// none. The goal's is 0.
std::vector<double> cheapest_chain_from_goal(const RelaxedTask& t, const std::vector<double>& cost,
                                             const std::vector<char>& enabled);

/// Disables the actions that no extraction cheaper than `threshold` can use, by the test
/// above, except those with keep[a] set (keep empty: none kept), and returns how many. `lm`
/// must have run() since its last disable().
size_t eliminate(LmCut& lm, double threshold, const std::vector<char>& keep = {});

}  // namespace tensat::extract
