// The extraction's warm start from a lower k_multi (issue #17): the same input explored with
// fewer iterations of multi-pattern rules gives a smaller e-graph whose ILP is quick, and its
// result, added to the larger e-graph, is an extraction the ILP there can only improve on.
//   * k_multi 2 and above: the k_multi - 1 result, always (the larger e-graph's ILP stopped
//     further from its optimum without it: BERT 1.1252 at k_multi 2 against the proven 1.1021 at
//     k_multi 1, table v1). The result is then never worse than k_multi - 1's.
//   * k_multi 1 (and the k_multi 1 seed of k_multi 2): the k_multi 0 result, where that e-graph
//     has at most a quarter of the larger one's e-nodes (explored with that node limit, so a
//     large one costs at most a quarter of an exploration). On NasRNN (734 e-nodes against
//     13 016) it is the optimum of the larger e-graph too, and with it as the incumbent LM-cut's
//     elimination and the LPs prove it: 2 735 work units -> 53, extract 0.11 -> 0.03 s.
//     Where the two e-graphs are close in size (NasNet-A, DenseNet, Inception-v3) the smaller
//     one's ILP costs about as much as the larger one's and is not run.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "extract/extract.h"
#include "lang/graph.h"
#include "pipeline/costing.h"
#include "pipeline/egraph_extract.h"

namespace tensat {

struct Seed {
  ir::Graph graph;      ///< the extracted term
  double cost = 0.0;    ///< its cost (the extraction's DAG cost)
  size_t k_multi = 0;   ///< the k_multi it was explored at
};

/// What seeding needs of the run: the input, the rules, the exploration's configuration (its
/// k_multi is overridden), the cost model and the extraction's options (ILP).
struct SeedContext {
  const ir::Graph& input;
  const std::vector<Rewrite>& rules;
  const RunnerConfig& explore;
  const Costing& costing;
  const extract::ExtractOptions& extract;
  bool from_k0 = true;  ///< seed k_multi 1 from k_multi 0 where that e-graph is small
};

/// The seed for an e-graph explored at `k_multi` with `nodes` e-nodes: nullopt for k_multi 0,
/// for k_multi 1 where from_k0 is off or the k_multi 0 e-graph is larger than nodes / 4.
std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi, size_t nodes);

/// Adds the seed's term to `eg`, its root merged into `root`'s class (usually the class holds
/// it already); returns the seed's node classes for seed_choice(), empty where the merge was
/// refused (the seed is then not used). Rebuilds `eg` and canonicalises `root`.
std::vector<EClassId> add_seed(EGraph& eg, EClassId& root, const Seed& seed);

/// The seed as a choice of `view` (built after add_seed()), or empty (with a warning) where it
/// is not one.
extract::Choice seed_choice(const EGraph& eg, const ExtractView& view, const Seed& seed,
                            const std::vector<EClassId>& seed_classes);

}  // namespace tensat
