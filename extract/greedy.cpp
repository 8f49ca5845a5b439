// Greedy (tree cost) and greedy DAG (cost sets) extraction.
#include "extract/greedy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "extract/cost_set.h"
#include "extract/graph_index.h"
#include "support/stopwatch.h"

namespace tensat::extract {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A FIFO of distinct items.
class UniqueQueue {
 public:
  explicit UniqueQueue(size_t n) : in_(n, 0) {}
  void push(uint32_t x) {
    if (!in_[x]) {
      in_[x] = 1;
      q_.push_back(x);
    }
  }
  bool pop(uint32_t& x) {
    if (q_.empty()) return false;
    x = q_.front();
    q_.pop_front();
    in_[x] = 0;
    return true;
  }

 private:
  std::vector<char> in_;
  std::deque<uint32_t> q_;
};

void require_roots(const ExtractGraph& g, const Choice& choice) {
  for (ClassIdx r : g.roots)
    if (choice[r] < 0)
      throw InputError("root class " + class_name(g, r) + " has no finite acyclic extraction");
}

}  // namespace

Choice greedy_tree_choice(const ExtractGraph& g, const std::vector<double>& node_costs) {
  return greedy_tree_choice(g, GraphIndex(g), node_costs);
}

Choice greedy_tree_choice(const ExtractGraph& g, const GraphIndex& index, const std::vector<double>& node_costs) {
  std::vector<double> best(g.classes.size(), kInf);
  Choice choice(g.classes.size(), -1);
  UniqueQueue work(g.nodes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (index.usable(n) && g.nodes[n].children.empty()) work.push(n);
  uint32_t n = 0;
  while (work.pop(n)) {
    const ENode& e = g.nodes[n];
    double s = node_costs[n];
    for (ClassIdx k : e.children) s += best[k];
    // Tree costs grow with the sharing they expand (5^depth on a chain of modules whose input
    // feeds five gates) and can overflow: an overflowed sum of finite costs counts as the
    // largest finite value, so the class still gets a node (the first such; a chosen child's
    // value is never infinite). Only an infinite node cost or an unextracted child stays out.
    if (s == kInf && std::isfinite(node_costs[n]) &&
        std::all_of(e.children.begin(), e.children.end(), [&](ClassIdx k) { return choice[k] >= 0; }))
      s = std::numeric_limits<double>::max();
    if (!(s < best[e.eclass])) continue;  // strict improvement only (keeps the choice acyclic)
    best[e.eclass] = s;
    choice[e.eclass] = n;
    for (NodeIdx p : index.parents(e.eclass)) work.push(p);
  }
  require_roots(g, choice);
  return prune_to_roots(g, choice);
}

ExtractResult extract_greedy(const ExtractGraph& g) { return extract_greedy(g, GraphIndex(g)); }

ExtractResult extract_greedy(const ExtractGraph& g, const GraphIndex& index) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> costs = node_costs(g);
  ExtractResult r;
  r.method = "greedy";
  r.status = "heuristic";
  r.choice = greedy_tree_choice(g, index, costs);
  r.gap = r.best_bound = std::nan("");
  finish_result(g, r);
  r.time_s = seconds_since(t0);
  return r;
}

ExtractResult extract_greedy_dag(const ExtractGraph& g, size_t* items) {
  return extract_greedy_dag(g, GraphIndex(g), items);
}

ExtractResult extract_greedy_dag(const ExtractGraph& g, const GraphIndex& index, size_t* items,
                                 const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> costs = node_costs(g);
  ExtractResult r;
  r.method = "dag";
  r.status = "heuristic";
  r.gap = r.best_bound = std::nan("");
  bool fell_back = false;
  r.choice = greedy_dag_choice(g, index, costs, &fell_back, 0, stop, DagOrder::Settled, items);
  if (r.choice.empty() && stop && stop->load(std::memory_order_relaxed)) {
    r.status = "stopped";
    return r;
  }
  if (fell_back) r.status = "fallback-greedy";
  finish_result(g, r);
  r.time_s = seconds_since(t0);
  return r;
}

Choice greedy_dag_choice(const ExtractGraph& g, const std::vector<double>& costs, bool* fell_back,
                         size_t max_items, const std::atomic<bool>* stop, DagOrder order, size_t* items_out) {
  return greedy_dag_choice(g, GraphIndex(g), costs, fell_back, max_items, stop, order, items_out);
}

Choice greedy_dag_choice(const ExtractGraph& g, const GraphIndex& index, const std::vector<double>& costs,
                         bool* fell_back, size_t max_items, const std::atomic<bool>* stop, DagOrder order,
                         size_t* items_out) {
  CostSetUnion unite(g.classes.size(), costs);

  // best[c]: the class's current cost set (has[c] once it has one). A candidate replaces it
  // only when strictly cheaper.
  std::vector<CostSet> best(g.classes.size());
  std::vector<char> has(g.classes.size(), 0), settled(g.classes.size(), 0);
  CostSet cand;
  std::vector<const CostSet*> sets;
  size_t items = 0;
  bool capped = false;
  // Evaluates node n (usable, every child class with a set) as a set for its class; true when
  // it replaced the class's set.
  auto offer = [&](NodeIdx n) {
    const ClassIdx ec = index.eclass(n);
    if (capped || settled[ec] || !std::isfinite(costs[n])) return false;  // settled: see below
    const auto kids = index.kids(n);
    const double cost = costs[n], prev = has[ec] ? best[ec].total : kInf;
    if (kids.empty()) {
      if (!(cost < prev)) return false;
      cand.items.assign(1, CostItem{ec, n});
      cand.total = cost;
    } else {
      // Shortcut (exact for one child class): no cheaper than the child's set plus this node.
      if (kids.size() == 1 && cost + best[kids[0]].total >= prev) return false;
      sets.clear();
      for (ClassIdx k : kids) sets.push_back(&best[k]);
      // The largest set first: it wins on classes several sets contain (the sort and this
      // rule define which node a shared class keeps, keep them as they are).
      std::sort(sets.begin(), sets.end(),
                [](const CostSet* a, const CostSet* b) { return a->size() > b->size(); });
      if (!unite.union_below(sets, ec, n, prev, cand)) return false;
    }
    // Copied rather than swapped: the class's buffers keep their capacity and the scratch
    // set keeps the largest one seen, so accepting allocates only when a set outgrows them.
    items += cand.items.size();
    if (max_items > 0 && items > max_items) {
      capped = true;
      return false;
    }
    best[ec] = cand;
    has[ec] = 1;
    return true;
  };
  if (order == DagOrder::Settled) {
    // Knuth's generalisation of Dijkstra: a node is evaluated once, when all its child classes
    // are settled, and the class with the cheapest pending set is settled next. Settled sets
    // are final, so all of them agree on every class they share (each holds that class's own
    // final node); a union of them is then a plain superset of each, and never costs less
    // than any (the terms are non-negative and rounding is monotone). So the totals settle in
    // non-decreasing order and a settled class can never be improved: every class ends with
    // the cheapest union of its children's final sets, no set is rebuilt when a descendant
    // improves later, and the roots' union is acyclic (each class's node reads classes
    // settled before it). (In the worklist order a union keeps the first set's node where
    // sets disagree, and may cost less than a later set.)
    std::vector<uint32_t> waiting(g.nodes.size(), 0);
    using Pending = std::pair<double, ClassIdx>;  // (total, class), cheapest first, then by class
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
    auto offer_settled = [&](NodeIdx n) {
      if (offer(n)) pending.emplace(best[index.eclass(n)].total, index.eclass(n));
    };
    for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
      if (!index.usable(n)) continue;
      waiting[n] = static_cast<uint32_t>(index.kids(n).size());
      if (waiting[n] == 0) offer_settled(n);
    }
    // (`stop` every 16 settled classes: settling one unites the sets of its parents' nodes.)
    for (uint32_t tick = 0; !pending.empty() && !capped;) {
      if (stop && (tick++ & 15) == 0 && stop->load(std::memory_order_relaxed)) return {};
      const auto [total, c] = pending.top();
      pending.pop();
      if (settled[c] || total != best[c].total) continue;  // settled, or since improved
      settled[c] = 1;
      for (NodeIdx p : index.parents(c))
        if (--waiting[p] == 0) offer_settled(p);
    }
  } else {
    // Extraction-gym's FIFO worklist: a node is evaluated whenever a child class's set
    // improved, so a class may keep a set built from a child's earlier one (which the settled
    // order never does) and sets are rebuilt along chains, many times per class.
    UniqueQueue work(g.nodes.size());
    for (NodeIdx n = 0; n < g.nodes.size(); ++n)
      if (index.usable(n) && index.kids(n).empty()) work.push(n);
    uint32_t n = 0;
    for (uint32_t tick = 0; !capped && work.pop(n);) {
      if (stop && (tick++ & 15) == 0 && stop->load(std::memory_order_relaxed)) return {};
      bool ready = true;
      for (ClassIdx k : index.kids(n)) ready = ready && has[k];
      if (ready && offer(n))
        for (NodeIdx p : index.parents(index.eclass(n))) work.push(p);
    }
  }
  if (items_out) *items_out = items;
  if (capped) {
    spdlog::debug("greedy-dag: gave up after {} items in accepted sets (cap {})", items, max_items);
    return {};
  }
  const auto& st = unite.stats();
  spdlog::debug("greedy-dag: {} unions: {} cut by the first set, {} cyclic, {} cut by the "
                "estimate, {} built; {} items in accepted sets",
                st.calls, st.cut_first, st.cycles, st.cut_approx, st.built, items);

  if (fell_back) *fell_back = false;
  Choice all(g.classes.size(), -1);
  for (ClassIdx root : g.roots)
    if (!has[root])
      throw InputError("root class " + class_name(g, root) + " has no finite acyclic extraction");
  // The roots' sets merged (first root wins on conflicts).
  sets.clear();
  for (ClassIdx root : g.roots) sets.push_back(&best[root]);
  const CostSet roots = unite.union_of(sets);
  for (const CostItem& it : roots.items) all[it.cls] = it.node;
  Choice choice = prune_to_roots(g, all);
  if (!extraction_problem(g, choice).empty()) {
    // Fall back to each class's own best node.
    Choice per_class(g.classes.size(), -1);
    for (ClassIdx c = 0; c < g.classes.size(); ++c)
      if (has[c]) per_class[c] = best[c].node_of(c);
    choice = prune_to_roots(g, per_class);
    if (!extraction_problem(g, choice).empty()) {
      choice = greedy_tree_choice(g, index, costs);
      if (fell_back) *fell_back = true;
    }
  }
  return choice;
}

}  // namespace tensat::extract
