// Greedy (tree cost) and greedy DAG (cost sets) extraction.
#include "extract/greedy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

namespace tensat::extract {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Parent lists: for each class, the usable nodes that have it as a child (each node once).
std::vector<std::vector<NodeIdx>> usable_parents(const ExtractGraph& g) {
  std::vector<std::vector<NodeIdx>> parents(g.classes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (!g.usable(n)) continue;
    for (ClassIdx c : g.child_classes(n)) parents[c].push_back(n);
  }
  return parents;
}

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
  const auto parents = usable_parents(g);
  std::vector<double> best(g.classes.size(), kInf);
  Choice choice(g.classes.size(), -1);
  UniqueQueue work(g.nodes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (g.usable(n) && g.nodes[n].children.empty()) work.push(n);
  uint32_t n = 0;
  while (work.pop(n)) {
    const ENode& e = g.nodes[n];
    double s = node_costs[n];
    for (ClassIdx k : e.children) s += best[k];
    if (!(s < best[e.eclass])) continue;  // strict improvement only (keeps the choice acyclic)
    best[e.eclass] = s;
    choice[e.eclass] = n;
    for (NodeIdx p : parents[e.eclass]) work.push(p);
  }
  require_roots(g, choice);
  return prune_to_roots(g, choice);
}

ExtractResult extract_greedy(const ExtractGraph& g) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  ExtractResult r;
  r.method = "greedy";
  r.status = "heuristic";
  r.choice = greedy_tree_choice(g, costs);
  r.gap = r.best_bound = std::nan("");
  finish_result(g, r);
  r.time_s = seconds_since(t0);
  return r;
}

namespace {

// A closed set of (class, node) pairs sorted by class, and the sum of its node costs.
struct CostSet {
  std::vector<std::pair<ClassIdx, NodeIdx>> items;
  double total = kInf;
};
using CostSetPtr = std::shared_ptr<const CostSet>;

// Union of sorted sets; on a class present in several, the first set's node wins.
std::vector<std::pair<ClassIdx, NodeIdx>> merge_sets(const std::vector<const CostSet*>& sets) {
  std::vector<std::pair<ClassIdx, NodeIdx>> acc = sets.front()->items, tmp;
  for (size_t s = 1; s < sets.size(); ++s) {
    const auto& b = sets[s]->items;
    tmp.clear();
    tmp.reserve(acc.size() + b.size());
    size_t i = 0, j = 0;
    while (i < acc.size() || j < b.size()) {
      if (j == b.size() || (i < acc.size() && acc[i].first < b[j].first)) {
        tmp.push_back(acc[i++]);
      } else if (i == acc.size() || b[j].first < acc[i].first) {
        tmp.push_back(b[j++]);
      } else {
        tmp.push_back(acc[i++]);
        ++j;
      }
    }
    acc.swap(tmp);
  }
  return acc;
}

// The cost set of choosing node n given the children's current sets; total = inf when the
// node's own class appears below it.
CostSet node_cost_set(const ExtractGraph& g, NodeIdx n, const std::vector<CostSetPtr>& best,
                      double prev_total) {
  const ENode& e = g.nodes[n];
  CostSet out;
  const auto kids = g.child_classes(n);
  if (kids.empty()) {
    out.items = {{e.eclass, n}};
    out.total = e.cost;
    return out;
  }
  // Shortcut (exact for one child class): no cheaper than the child's set plus this node.
  if (kids.size() == 1 && e.cost + best[kids[0]]->total >= prev_total) return out;
  std::vector<const CostSet*> sets;
  for (ClassIdx k : kids) sets.push_back(best[k].get());
  // Start from the largest set: the others are merged into it.
  std::sort(sets.begin(), sets.end(),
            [](const CostSet* a, const CostSet* b) { return a->items.size() > b->items.size(); });
  out.items = merge_sets(sets);
  auto pos = std::lower_bound(out.items.begin(), out.items.end(), std::make_pair(e.eclass, NodeIdx{0}));
  if (pos != out.items.end() && pos->first == e.eclass) return CostSet{};  // would close a cycle
  out.items.insert(pos, {e.eclass, n});
  double s = 0.0;
  for (const auto& [c, m] : out.items) s += g.nodes[m].cost;
  out.total = s;
  return out;
}

}  // namespace

ExtractResult extract_greedy_dag(const ExtractGraph& g) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto parents = usable_parents(g);
  std::vector<CostSetPtr> best(g.classes.size());
  UniqueQueue work(g.nodes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (g.usable(n) && g.nodes[n].children.empty()) work.push(n);
  uint32_t n = 0;
  while (work.pop(n)) {
    const ENode& e = g.nodes[n];
    bool ready = true;
    for (ClassIdx k : e.children) ready = ready && best[k] != nullptr;
    if (!ready) continue;
    const double prev = best[e.eclass] ? best[e.eclass]->total : kInf;
    CostSet cs = node_cost_set(g, n, best, prev);
    if (!(cs.total < prev)) continue;
    best[e.eclass] = std::make_shared<const CostSet>(std::move(cs));
    for (NodeIdx p : parents[e.eclass]) work.push(p);
  }

  ExtractResult r;
  r.method = "dag";
  r.status = "heuristic";
  r.gap = r.best_bound = std::nan("");
  Choice all(g.classes.size(), -1);
  for (ClassIdx root : g.roots)
    if (!best[root])
      throw InputError("root class " + class_name(g, root) + " has no finite acyclic extraction");
  // The roots' sets merged (first root wins on conflicts).
  std::vector<const CostSet*> root_sets;
  for (ClassIdx root : g.roots) root_sets.push_back(best[root].get());
  for (const auto& [c, m] : merge_sets(root_sets)) all[c] = m;
  r.choice = prune_to_roots(g, all);
  if (!extraction_problem(g, r.choice).empty()) {
    // Fall back to each class's own best node.
    Choice per_class(g.classes.size(), -1);
    for (size_t c = 0; c < g.classes.size(); ++c)
      if (best[c]) {
        for (const auto& [k, m] : best[c]->items)
          if (k == c) per_class[c] = m;
      }
    r.choice = prune_to_roots(g, per_class);
    if (!extraction_problem(g, r.choice).empty()) {
      std::vector<double> costs(g.nodes.size());
      for (size_t i = 0; i < g.nodes.size(); ++i) costs[i] = g.nodes[i].cost;
      r.choice = greedy_tree_choice(g, costs);
      r.status = "fallback-greedy";
    }
  }
  finish_result(g, r);
  r.time_s = seconds_since(t0);
  return r;
}

}  // namespace tensat::extract
