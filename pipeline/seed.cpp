#include "pipeline/seed.h"

#include <spdlog/spdlog.h>

#include "egraph/bridge.h"
#include "support/stopwatch.h"

namespace tensat {

namespace {

// Explores the input at k_multi `k` with `node_limit` and extracts it, seeded as the pipeline
// seeds an extraction at k (from k - 1 at k >= 2, never worse than it; at k 1 the k 0 late
// hint); nullopt where the exploration stopped at the node limit and `need_complete`.
std::optional<Seed> explore_and_extract(const SeedContext& ctx, size_t k, size_t node_limit, bool need_complete) {
  Stopwatch t;
  const std::optional<Seed> lower = lower_k_seed(ctx, k);  // (k >= 2 only; before this e-graph exists)
  EGraph eg;
  EClassId root = add_graph(eg, ctx.input);
  RunnerConfig rc = ctx.explore;
  rc.k_multi = k;
  rc.node_limit = node_limit;
  rc.on_iteration = nullptr;
  const RunReport run = Runner(eg).with_config(rc).run(ctx.rules);
  if (need_complete && run.stop_reason == StopReason::NodeLimit) return std::nullopt;
  std::vector<EClassId> lower_classes;
  if (lower) lower_classes = add_seed(eg, root, *lower);
  const ENodePrices prices = ctx.costing.price(eg);
  const ExtractView view = to_extract_graph(eg, root, prices.cost);
  extract::ExtractOptions eo = ctx.extract;
  eo.ilp.hints.clear();  // (ctx.extract is the larger extraction's: its hints are not this one's)
  eo.ilp.late_hints = nullptr;
  if (lower && !lower_classes.empty())
    if (extract::Choice hint = seed_choice(eg, view, *lower, lower_classes); !hint.empty())
      eo.ilp.hints.push_back(std::move(hint));
  LateSeed own;
  if (k == 1) eo.ilp.late_hints = k0_late_hint(ctx, eg, root, view, run.nodes, own);
  const extract::ExtractResult ex = extract::extract(view.graph, eo);
  spdlog::debug("seed: k_multi {} result {} ({}, {} e-nodes)", k, ex.dag_cost, ex.status, run.nodes);
  return Seed{choice_to_graph(eg, root, view, ex.choice), ex.dag_cost, k, t.seconds()};
}

}  // namespace

std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi) {
  if (ctx.extract.method != extract::Method::Ilp || k_multi < 2) return std::nullopt;
  return explore_and_extract(ctx, k_multi - 1, ctx.explore.node_limit, false);
}

std::function<std::vector<extract::Choice>()> k0_late_hint(const SeedContext& ctx, const EGraph& eg, EClassId root,
                                                           const ExtractView& view, size_t nodes, LateSeed& out) {
  if (!ctx.from_k0 || ctx.extract.method != extract::Method::Ilp || nodes / 4 == 0) return {};
  return [&ctx, &eg, root, &view, nodes, &out]() -> std::vector<extract::Choice> {
    Stopwatch t;
    out.asked = true;
    std::optional<Seed> seed = explore_and_extract(ctx, 0, nodes / 4, true);
    std::vector<extract::Choice> hints;
    std::vector<EClassId> classes;
    if (!seed) {
      spdlog::debug("seed: the k_multi 0 e-graph has more than {} e-nodes; no seed", nodes / 4);
    } else if (const std::optional<EClassId> found = find_graph(eg, seed->graph, &classes);
               !found || eg.find(*found) != eg.find(root)) {
      spdlog::debug("seed: the k_multi 0 result is not in the k_multi 1 e-graph; not used");
    } else if (extract::Choice hint = seed_choice(eg, view, *seed, classes); !hint.empty()) {
      hints.push_back(std::move(hint));
      out.seed = std::move(seed);
    }
    out.seconds = t.seconds();
    return hints;
  };
}

std::vector<EClassId> add_seed(EGraph& eg, EClassId& root, const Seed& seed) {
  std::vector<EClassId> classes;
  const EClassId seed_root = add_graph(eg, seed.graph, &classes);
  if (eg.find(root) != eg.find(seed_root) && !eg.merge_checked(root, seed_root, "lower k_multi seed")) classes.clear();
  eg.rebuild();
  root = eg.find(root);
  return classes;
}

extract::Choice seed_choice(const EGraph& eg, const ExtractView& view, const Seed& seed,
                            const std::vector<EClassId>& seed_classes) {
  extract::Choice hint = graph_to_choice(eg, view, seed.graph, seed_classes);
  if (hint.empty())
    spdlog::warn("the k_multi {} result is not an extraction of the k_multi {} e-graph; not used", seed.k_multi,
                 seed.k_multi + 1);
  return hint;
}

}  // namespace tensat
