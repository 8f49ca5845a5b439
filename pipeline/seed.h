// The extraction's warm start from a lower k_multi (issue #17): the same input explored with
// fewer iterations of multi-pattern rules gives a smaller e-graph whose ILP is quick, and its
// result is an extraction of the larger e-graph the ILP there can only improve on.
//   * k_multi 2 and above: the k_multi - 1 result (itself seeded so), always, computed before
//     the larger exploration and added to its e-graph (the larger e-graph's ILP stopped further
//     from its optimum without it: BERT 1.1252 at k_multi 2 against the proven 1.1021 at
//     k_multi 1, table v1). The result is then never worse than k_multi - 1's, nor k_multi 1's.
//   * k_multi 1 (and the k_multi 1 run of a k_multi 2 seed): the k_multi 0 result, as a late
//     hint (extract::IlpOptions::late_hints): computed only where LM-cut's first bound leaves
//     the warm start open, and where the k_multi 0 e-graph has at most a quarter of the
//     e-nodes (explored with that node limit, so a large one costs at most a quarter of an
//     exploration), and used where all its terms are in the larger e-graph (which is not
//     changed). NasRNN (734 e-nodes against 13 016): the k_multi 0 result is the optimum of
//     the larger e-graph too, and with it as the incumbent LM-cut's elimination and the LPs
//     prove it: 2 735 work units -> 53, extract 0.11 -> 0.03 s. Where LM-cut proves the warm
//     start (SqueezeNet, BERT) or the two e-graphs are close in size (NasNet-A, DenseNet,
//     Inception-v3) nothing of it runs beyond, in the latter, the capped exploration.
#pragma once

#include <cstddef>
#include <functional>
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
  ir::Graph graph;       ///< the extracted term
  double cost = 0.0;     ///< its cost (the extraction's DAG cost)
  size_t k_multi = 0;    ///< the k_multi it was explored at
  double seconds = 0.0;  ///< the time it took (exploration and extraction)
};

/// What seeding needs of the run: the input, the rules, the exploration's configuration (its
/// k_multi is overridden), the cost model and the extraction's options (ILP).
struct SeedContext {
  const ir::Graph& input;
  const std::vector<Rewrite>& rules;
  const RunnerConfig& explore;
  const Costing& costing;
  const extract::ExtractOptions& extract;
  bool from_k0 = true;  ///< give k_multi 1 extractions the k_multi 0 late hint
};

/// The seed of an extraction at k_multi >= 2: the k_multi - 1 result (itself seeded so, and
/// with the k_multi 0 late hint where that is k_multi 1); nullopt below k_multi 2 or without
/// the ILP.
std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi);

/// What the late hint did: whether the extraction asked for it, the time it took, and the seed
/// where it was given to the extraction.
struct LateSeed {
  bool asked = false;
  double seconds = 0.0;
  std::optional<Seed> seed;
};

/// The late hint of a k_multi 1 extraction of `eg` (explored with `nodes` e-nodes, rooted at
/// `root`, seen as `view`): computes the k_multi 0 seed where that e-graph has at most
/// nodes / 4 e-nodes, and returns it as a choice of `view` where all its terms are in `eg`
/// (nothing is added); `out` says what happened. Empty function where ctx.from_k0 is off. The
/// references must outlive the extraction.
std::function<std::vector<extract::Choice>()> k0_late_hint(const SeedContext& ctx, const EGraph& eg, EClassId root,
                                                           const ExtractView& view, size_t nodes, LateSeed& out);

/// Adds the seed's term to `eg`, its root merged into `root`'s class (usually the class holds
/// it already); returns the seed's node classes for seed_choice(), empty where the merge was
/// refused (the seed is then not used). Rebuilds `eg` and canonicalises `root`.
std::vector<EClassId> add_seed(EGraph& eg, EClassId& root, const Seed& seed);

/// The seed as a choice of `view` (built after add_seed(), or with the classes find_graph()
/// gave), or empty (with a warning) where it is not one.
extract::Choice seed_choice(const EGraph& eg, const ExtractView& view, const Seed& seed,
                            const std::vector<EClassId>& seed_classes);

}  // namespace tensat
