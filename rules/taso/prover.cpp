// Equality saturation as a prover; see prover.h.
#include "rules/taso/prover.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "egraph/bridge.h"
#include "egraph/egraph.h"
#include "egraph/runner.h"
#include "egraph/scheduler.h"
#include "support/stopwatch.h"

namespace tensat::taso {

ProveResult prove(const ir::Graph& g0, const std::vector<std::pair<ir::NodeId, ir::NodeId>>& goals,
                  const std::vector<Rewrite>& rules, const ProveLimits& limits) {
  const Stopwatch sw;
  auto elapsed = [&] { return sw.seconds(); };
  ProveResult res;
  res.pair_proved.assign(goals.size(), false);

  for (const auto& [a, b] : goals) {
    if (!(g0.type(a) == g0.type(b))) {
      res.stop = "types-differ";
      res.detail = "the sides have different types: " + g0.type(a).str() + " vs " + g0.type(b).str();
      res.seconds = elapsed();
      return res;
    }
  }

  ir::Graph g = g0;
  std::vector<ir::NodeId> outs;
  for (const auto& [a, b] : goals) {
    outs.push_back(a);
    outs.push_back(b);
  }
  g.set_root(g.op(Op::Noop, outs));
  EGraph eg;
  std::vector<EClassId> cls;
  add_graph(eg, g, &cls);

  auto check = [&] {
    bool all = true;
    for (size_t i = 0; i < goals.size(); ++i) {
      res.pair_proved[i] = eg.find(cls[goals[i].first]) == eg.find(cls[goals[i].second]);
      all = all && res.pair_proved[i];
    }
    return all;
  };

  res.stop = "iteration-limit";
  if (check()) {
    res.proved = true;
    res.stop = "proved";
  }
  // One Runner iteration at a time, checking the goals in between (egg's test_fn hook).
  for (size_t iter = 0; !res.proved && iter < limits.iter_limit; ++iter) {
    if (eg.num_nodes() >= limits.node_limit) {
      res.stop = "node-limit";
      break;
    }
    double left = limits.time_limit_s - elapsed();
    if (left <= 0) {
      res.stop = "time-limit";
      break;
    }
    RunReport rep = Runner(eg)
                        .with_iter_limit(1)
                        .with_node_limit(limits.node_limit)
                        .with_time_limit(left)
                        .with_k_multi(iter < limits.k_multi ? 1 : 0)
                        .with_cycle_filter(limits.cycle_filter)
                        .with_scheduler(std::make_unique<SimpleScheduler>())
                        .run(rules);
    res.iterations += rep.iterations.size();
    if (check()) {
      res.proved = true;
      res.stop = "proved";
      break;
    }
    // Nothing changed in an iteration that ran every rule still in play (later iterations run
    // the same rules, or fewer once k_multi is used up): saturated, final.
    if (rep.stop_reason == StopReason::Saturated) {
      res.stop = "saturated";
      break;
    }
    if (rep.stop_reason == StopReason::NodeLimit) {
      res.stop = "node-limit";
      break;
    }
    if (rep.stop_reason == StopReason::TimeLimit) {
      res.stop = "time-limit";
      break;
    }
  }
  res.nodes = eg.num_nodes();
  res.classes = eg.num_classes();
  res.seconds = elapsed();
  return res;
}

std::string prove_result_json(const ProveResult& r) {
  nlohmann::json j;
  j["proved"] = r.proved;
  j["stop"] = r.stop;
  j["pairs"] = r.pair_proved;
  j["iterations"] = r.iterations;
  j["nodes"] = r.nodes;
  j["classes"] = r.classes;
  j["seconds"] = r.seconds;
  if (!r.detail.empty()) j["detail"] = r.detail;
  return j.dump();
}

}  // namespace tensat::taso
