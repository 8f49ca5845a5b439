// The ILP's warm start and guided start (see ilp_starts.h).
#include "extract/ilp_starts.h"

#include <algorithm>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "extract/graph_index.h"
#include "extract/greedy.h"
#include "extract/local_search.h"
#include "support/stopwatch.h"

namespace tensat::extract {

namespace {
using Clock = Stopwatch::Clock;
// The guided start's tie-break on residual costs (guided_start): a millionth of the real cost.
constexpr double kResidualTie = 1e-6;

}  // namespace

const ExtractResult& SharedGreedy::get() {
  std::call_once(once_, [&] { result_ = extract_greedy(g_, index_); });
  return result_;
}

Choice improved_hint(const ExtractGraph& g, const GraphIndex& index, const IlpOptions& opts, const Choice& hint) {
  if (const std::string why = extraction_problem(g, hint); !why.empty()) {
    spdlog::debug("ilp: hint skipped: {}", why);
    return {};
  }
  LocalSearchOptions lo;
  lo.revisit = false;  // (as the warm start's)
  return opts.local_search ? improve_local(g, index, hint, lo).choice : hint;
}

WarmStart warm_start(const ExtractGraph& g, const GraphIndex& index, const IlpOptions& opts, SharedGreedy& greedy,
                     const std::atomic<bool>* stop) {
  WarmStart w;  // (one index for every heuristic here)
  // The local search does not re-evaluate classes that did not pay (local_search.h): this is
  // a start for the ILP, on the critical path.
  LocalSearchOptions lo;
  lo.revisit = false;
  lo.stop = stop;
  const auto stopped = [stop] { return stop && stop->load(std::memory_order_relaxed); };
  size_t items = 0;
  w.dag = extract_greedy_dag(g, index, &items, stop);
  if (stopped()) return w;
  w.local = opts.local_search ? improve_local(g, index, w.dag.choice, lo) : w.dag;
  if (stopped()) return w;
  {
    const auto t0 = Clock::now();
    const std::vector<double> costs = node_costs(g);
    const size_t cap = std::max<size_t>(1'000'000, 4 * items);
    Choice c;
    try {
      c = greedy_dag_choice(g, index, costs, nullptr, cap, stop, DagOrder::Worklist);
    } catch (const InputError&) {
      // (Not expected: both orders give a set to exactly the classes with an acyclic
      // extraction, and the settled one found the roots'.)
    }
    if (c == w.dag.choice) {
      w.worklist = w.dag.dag_cost;  // the same extraction (most e-graphs): no second local search
      w.worklist_local = w.local.dag_cost;
    } else if (!c.empty()) {
      w.worklist = dag_cost(g, c);
      ExtractResult local = opts.local_search ? improve_local(g, index, c, lo) : ExtractResult{};
      if (!opts.local_search) {
        local.choice = c;
        local.dag_cost = w.worklist;
      }
      w.worklist_local = local.dag_cost;
      if (local.dag_cost < w.local.dag_cost) w.local = std::move(local);
    }
    w.worklist_s = seconds_since(t0);
  }
  if (stopped()) return w;
  w.greedy = greedy.get();  // (last: where the caller is free before this, it computes it)
  w.choice = w.local.dag_cost <= w.greedy.dag_cost ? w.local.choice : w.greedy.choice;
  double start_cost = std::min(w.local.dag_cost, w.greedy.dag_cost);
  for (const Choice& hint : opts.hints) {
    Choice c = improved_hint(g, index, opts, hint);
    if (c.empty()) continue;
    const double cost = dag_cost(g, c);
    spdlog::debug("ilp: hint {} (after the local search {})", dag_cost(g, hint), cost);
    if (cost < start_cost) {
      w.choice = std::move(c);
      start_cost = cost;
    }
  }
  return w;
}

Choice guided_start(const ExtractGraph& g, const Reduction& red, const RelaxedTask& task, const LmCut& lm,
                    const std::atomic<bool>& stop) {
  // The nodes still usable, in a compact graph (the same classes, the same node order): on
  // NasRNN 3k of 13k nodes, so greedy DAG and the local search walk a quarter of the nodes.
  ExtractGraph restricted;
  restricted.classes.resize(g.classes.size());
  restricted.roots = g.roots;
  std::vector<double> residual_cost;
  std::vector<NodeIdx> original;  // per compact node
  // (`stop` is polled from the start: where the LPs close the problem while this copy is
  // being made, the caller waits for it to return; NasRNN 0.5-1 ms.)
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if ((n & 255) == 0 && stop.load(std::memory_order_relaxed)) return {};
    const uint32_t a = task.action_of(n);
    double c = g.nodes[n].cost, r = c;
    if (a != RelaxedTask::kNone) {
      if (!lm.enabled(a)) continue;
      // Plus a millionth of the real cost: most residual costs are 0, and among the many
      // extractions that tie on them this takes the cheaper nodes (the greedy DAG's settled
      // order otherwise breaks those ties by class index: Inception-v3 at k_multi 2, pipeline,
      // 2.470128 against 2.467196 before that order, 2.465661 with this).
      r = std::max(0.0, lm.residual()[a]) + kResidualTie * c;
    } else if (!red.class_free[g.nodes[n].eclass]) {
      continue;  // dropped by the reduction (a kept node replaces it)
    }  // else a free class's node: what map_to_reduced fills in anyway
    if (!std::isfinite(c)) continue;
    ENode node = g.nodes[n];
    node.cost = c;
    restricted.classes[node.eclass].nodes.push_back(static_cast<NodeIdx>(restricted.nodes.size()));
    restricted.nodes.push_back(std::move(node));
    residual_cost.push_back(r);
    original.push_back(n);
  }
  auto to_original = [&](Choice c) {
    for (int64_t& x : c)
      if (x >= 0) x = static_cast<int64_t>(original[static_cast<size_t>(x)]);
    return c;
  };
  Choice best;
  try {
    // Capped (deterministically), a safety net: each node is united once (greedy.h), but its
    // set may hold most classes. Before that order, the residual costs' ties made it rebuild
    // the sets along deep chains for minutes; on NasNet-A it now accepts 210 items per node.
    const size_t cap = std::max<size_t>(10'000'000, 5000 * g.nodes.size());
    if (stop.load(std::memory_order_relaxed)) return {};
    const GraphIndex index(restricted);
    const Choice start = greedy_dag_choice(restricted, index, residual_cost, nullptr, cap, &stop);
    LocalSearchOptions lo;
    lo.stop = &stop;
    if (!start.empty()) best = to_original(improve_local(restricted, index, start, lo).choice);
    if (stop) best.clear();
  } catch (const InputError&) {
    // no extraction without the eliminated nodes: the incumbent (which keeps its nodes) stays
  }
  return best;
}

}  // namespace tensat::extract
