// Costing: what a term graph and the e-nodes of an e-graph cost under a cost model (TASO's
// model: the sum of the operators' costs), and what of it rests on fallback prices.
//
// Only real work is charged. Work every runtime removes before running is free, in the
// "before" and the "after" cost alike, so the predicted speedup compares like with like:
//   - weight-only nodes (is_weight_only: computed once at export, TASO/TENSAT charge nothing);
//   - constant computations: a node all of whose tensor operands are constant, where
//     "constant" also covers an opaque node that ONNX Runtime's constant folding computes
//     ahead of time (OpaqueFolding: a deterministic default-domain node without subgraphs
//     whose inputs are all constant; Size and Shape always, shapes being static), and
//     everything computed from such values.
// And work is charged as runtimes run it: a conv that only a relu reads is one fused call
// (lang/runtime_fusion.h), in an imported model as in the extracted one. The e-graph's
// prices (price(EGraph)) are per e-node and charge (relu (conv .. none ..)) as two calls, but
// the e-graph holds the fused (conv .. relu ..) beside it (rule conv-act), which the
// extraction takes, so the extracted graph's price is what the extraction minimized.
//
// Fallback prices: a table model prices a signature it lacks with an estimate (Price::fallback).
// GraphPrice keeps the estimated part apart; analyze_fallback_decisions() finds the
// extraction decisions that rest on estimates (see there), comparison_robust() whether the
// before/after comparison does.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "extract/extract_graph.h"
#include "gpu_cost/cost_model.h"
#include "lang/graph.h"

namespace tensat {

struct ModelContext;

/// How ONNX Runtime treats an opaque node before running (its constant-folding pass).
enum class OpaqueFolding : uint8_t {
  Never,               ///< non-deterministic (Random*, Multinomial, Bernoulli), subgraphs, other domains
  WhenInputsConstant,  ///< folded when every input is constant
  Always,              ///< Shape, Size: shapes are static
};
/// Per opaque node of the model (indexed as the opaque IDs' index).
std::vector<OpaqueFolding> opaque_folding(const ModelContext& ctx);

/// A cost and the part of it priced by a fallback (estimates, not measurements).
struct GraphPrice {
  double total = 0;
  double fallback = 0;
};

/// Per e-node (indexed by ENodeId; dead nodes 0): its cost and the fallback-priced part.
struct ENodePrices {
  std::vector<double> cost;
  std::vector<double> fallback;
};

class Costing {
 public:
  /// opaque: from opaque_folding() (empty: no opaque node is ever folded).
  explicit Costing(cost::CostModel& model, std::vector<OpaqueFolding> opaque = {});

  /// Sum of node costs over the nodes reachable from the root.
  GraphPrice price(const ir::Graph& g) const;
  /// Cost of every live e-node.
  ENodePrices price(const EGraph& eg) const;

 private:
  // Whether a node computes a constant, given whether all its tensor children are constant
  // (and whether it has any). children[0] of an opaque node is its ID symbol.
  bool constant(Op op, const std::string* opaque_id, bool all_children_constant, bool has_tensor_child) const;
  cost::CostModel& model_;
  std::vector<OpaqueFolding> opaque_;
  // One price() at a time: the k_multi 0 seed prices its e-graph on another thread
  // (pipeline/seed.h), and the cost models keep state (caches, fallback prices).
  mutable std::mutex mu_;
};

/// Shorthands without opaque-folding knowledge.
double graph_cost(const ir::Graph& g, cost::CostModel& model);

/// Whether "after costs no more than before" still holds when every fallback price is scaled
/// by any factor in [1/kFallbackSpread, kFallbackSpread] (the comparison is linear in the factor,
/// so the two ends decide).
inline constexpr double kFallbackSpread = 2.0;
bool comparison_robust(const GraphPrice& before, const GraphPrice& after);

/// One extraction decision that rests on fallback prices.
struct FallbackDecision {
  std::string eclass;                  ///< the class's name in the extraction graph
  std::string chosen, alternative;     ///< describe() of the chosen node and its closest alternative
  double chosen_ms = 0, chosen_fallback_ms = 0;
  double alternative_ms = 0, alternative_fallback_ms = 0;
  bool both_sides = false;             ///< both sides carry fallback prices
  bool sensitive = false;              ///< scaling fallback prices within the spread reverses the order
};

struct FallbackDecisions {
  size_t decisions = 0;   ///< chosen classes with an alternative where either side rests on fallback prices
  size_t both_sides = 0;  ///< of those: fallback prices on both sides
  size_t sensitive = 0;   ///< of those: the order reverses for fallback prices scaled within the spread
  std::vector<FallbackDecision> examples;  ///< up to kMaxExamples: sensitive, then both-sided first
  static constexpr size_t kMaxExamples = 20;
};

/// For every class the extraction chose a node in and that has another usable node: the
/// chosen node's cost (its children are computed by the solution anyway) against each
/// alternative's marginal cost given the solution (its own cost plus the cheapest way to
/// compute the child classes the solution does not compute), each split into measured and
/// fallback parts (fallback_cost per extraction node). Counts the decisions where the chosen
/// node or the closest alternative carries fallback prices, those where both do, and those
/// whose order reverses when fallback prices are scaled by 1/kFallbackSpread or kFallbackSpread.
/// Cheap (a few linear passes). An approximation of the ILP's decision: shared subterms
/// outside the solution are charged once per alternative.
FallbackDecisions analyze_fallback_decisions(const extract::ExtractGraph& g, const std::vector<double>& fallback_cost,
                                             const extract::Choice& choice,
                                             const std::function<std::string(extract::NodeIdx)>& describe);

}  // namespace tensat
