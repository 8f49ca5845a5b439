#include "pipeline/seed.h"

#include <spdlog/spdlog.h>

#include "egraph/bridge.h"

namespace tensat {

namespace {

// Explores the input at k_multi `k` (with `node_limit`), and extracts it, started from its own
// seed; nullopt where the exploration stopped at the node limit and `need_complete`.
std::optional<Seed> explore_and_extract(const SeedContext& ctx, size_t k, size_t node_limit, bool need_complete) {
  EGraph eg;
  EClassId root = add_graph(eg, ctx.input);
  RunnerConfig rc = ctx.explore;
  rc.k_multi = k;
  rc.node_limit = node_limit;
  rc.on_iteration = nullptr;
  const RunReport run = Runner(eg).with_config(rc).run(ctx.rules);
  if (need_complete && run.stop_reason == StopReason::NodeLimit) return std::nullopt;
  const std::optional<Seed> own = lower_k_seed(ctx, k, run.nodes);
  std::vector<EClassId> own_classes;
  if (own) own_classes = add_seed(eg, root, *own);
  const ENodePrices prices = ctx.costing.price(eg);
  const ExtractView view = to_extract_graph(eg, root, prices.cost);
  extract::ExtractOptions eo = ctx.extract;
  if (own && !own_classes.empty())
    if (extract::Choice hint = seed_choice(eg, view, *own, own_classes); !hint.empty())
      eo.ilp.hints.push_back(std::move(hint));
  const extract::ExtractResult ex = extract::extract(view.graph, eo);
  spdlog::debug("seed: k_multi {} result {} ({}, {} e-nodes)", k, ex.dag_cost, ex.status, run.nodes);
  return Seed{choice_to_graph(eg, root, view, ex.choice), ex.dag_cost, k};
}

}  // namespace

std::optional<Seed> lower_k_seed(const SeedContext& ctx, size_t k_multi, size_t nodes) {
  if (ctx.extract.method != extract::Method::Ilp || k_multi == 0) return std::nullopt;
  if (k_multi >= 2) return explore_and_extract(ctx, k_multi - 1, ctx.explore.node_limit, false);
  if (!ctx.from_k0 || nodes / 4 == 0) return std::nullopt;
  return explore_and_extract(ctx, 0, nodes / 4, true);
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
