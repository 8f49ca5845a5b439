// The greedy-DAG extractor written plainly (shared_ptr'd sorted vectors, every candidate merged
// and summed in full), kept as the oracle that the optimised version (CostSetUnion, GraphIndex,
// a heap with stale entries) must match choice for choice and bit for bit (test_greedy.cpp), in
// both orders of greedy.h's DagOrder:
//   * reference_greedy_dag: the settled order. A node is evaluated once, when its last child
//     class is settled (parents in increasing node order); the pending class with the smallest
//     (total, class) is settled next (here an ordered set of the pending classes);
//   * reference_greedy_dag_worklist: extraction-gym's FIFO worklist of nodes (a std::deque).
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "extract/extract_graph.h"
#include "extract/greedy.h"

namespace tensat::extract::testing {

struct ReferenceDag {
  Choice choice;          ///< the extraction, pruned to the roots
  bool fallback = false;  ///< the roots' set was cyclic and the tree greedy was used
};

namespace reference_detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Items = std::vector<std::pair<ClassIdx, NodeIdx>>;  // sorted by class
struct Set {
  Items items;
  double total = kInf;
};
using Best = std::vector<std::shared_ptr<const Set>>;  // per class, null: no set yet

// The union of the sets, the earlier set winning on a class several contain.
inline Items merge(const std::vector<const Set*>& sets) {
  Items acc = sets.front()->items, tmp;
  for (size_t s = 1; s < sets.size(); ++s) {
    const auto& b = sets[s]->items;
    tmp.clear();
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

// Per class, the usable nodes that have it as a child class, by increasing index.
inline std::vector<std::vector<NodeIdx>> parents(const ExtractGraph& g) {
  std::vector<std::vector<NodeIdx>> out(g.classes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (g.usable(n))
      for (ClassIdx c : g.child_classes(n)) out[c].push_back(n);
  return out;
}

// Node n's set (its children's sets, the largest first, and n), when it is cheaper than its
// class's set; nothing when it is not, or contains n's class below n (a cycle).
inline std::optional<Set> candidate(const ExtractGraph& g, const Best& best, NodeIdx n) {
  const ENode& e = g.nodes[n];
  const double prev = best[e.eclass] ? best[e.eclass]->total : kInf;
  Set cs;
  const auto kids = g.child_classes(n);
  if (kids.empty()) {
    cs.items = {{e.eclass, n}};
    cs.total = e.cost;
  } else if (kids.size() == 1 && e.cost + best[kids[0]]->total >= prev) {
    return std::nullopt;
  } else {
    std::vector<const Set*> sets;
    for (ClassIdx k : kids) sets.push_back(best[k].get());
    std::sort(sets.begin(), sets.end(),
              [](const Set* a, const Set* b) { return a->items.size() > b->items.size(); });
    cs.items = merge(sets);
    auto pos = std::lower_bound(cs.items.begin(), cs.items.end(), std::make_pair(e.eclass, NodeIdx{0}));
    if (pos != cs.items.end() && pos->first == e.eclass) return std::nullopt;
    cs.items.insert(pos, {e.eclass, n});
    double s = 0.0;
    for (const auto& [c, m] : cs.items) s += g.nodes[m].cost;
    cs.total = s;
  }
  if (!(cs.total < prev)) return std::nullopt;
  return cs;
}

// The roots' sets merged; where that is cyclic, each class's own node; then the tree greedy.
inline ReferenceDag finish(const ExtractGraph& g, const Best& best) {
  for (ClassIdx r : g.roots)
    if (!best[r]) throw InputError("no acyclic extraction");
  std::vector<const Set*> root_sets;
  for (ClassIdx r : g.roots) root_sets.push_back(best[r].get());
  Choice all(g.classes.size(), -1);
  for (const auto& [c, m] : merge(root_sets)) all[c] = m;
  ReferenceDag out;
  out.choice = prune_to_roots(g, all);
  if (!extraction_problem(g, out.choice).empty()) {
    Choice per_class(g.classes.size(), -1);
    for (size_t c = 0; c < g.classes.size(); ++c)
      if (best[c])
        for (const auto& [k, m] : best[c]->items)
          if (k == c) per_class[c] = m;
    out.choice = prune_to_roots(g, per_class);
    if (!extraction_problem(g, out.choice).empty()) {
      std::vector<double> costs(g.nodes.size());
      for (size_t i = 0; i < g.nodes.size(); ++i) costs[i] = g.nodes[i].cost;
      out.choice = greedy_tree_choice(g, costs);
      out.fallback = true;
    }
  }
  return out;
}

}  // namespace reference_detail

inline ReferenceDag reference_greedy_dag(const ExtractGraph& g) {
  using namespace reference_detail;
  const auto up = parents(g);
  Best best(g.classes.size());
  std::vector<char> settled(g.classes.size(), 0);
  std::set<std::pair<double, ClassIdx>> pending;
  auto evaluate = [&](NodeIdx n) {
    const ClassIdx c = g.nodes[n].eclass;
    if (settled[c]) return;  // (a settled class is never improved)
    std::optional<Set> cs = candidate(g, best, n);
    if (!cs) return;
    if (best[c]) pending.erase({best[c]->total, c});
    best[c] = std::make_shared<const Set>(std::move(*cs));
    pending.insert({best[c]->total, c});
  };
  std::vector<size_t> waiting(g.nodes.size(), 0);
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (!g.usable(n)) continue;
    waiting[n] = g.child_classes(n).size();
    if (waiting[n] == 0) evaluate(n);
  }
  while (!pending.empty()) {
    const ClassIdx c = pending.begin()->second;
    pending.erase(pending.begin());
    settled[c] = 1;
    for (NodeIdx p : up[c])
      if (--waiting[p] == 0) evaluate(p);
  }
  return finish(g, best);
}

inline ReferenceDag reference_greedy_dag_worklist(const ExtractGraph& g) {
  using namespace reference_detail;
  const auto up = parents(g);
  Best best(g.classes.size());
  std::deque<NodeIdx> q;
  std::vector<char> queued(g.nodes.size(), 0);
  auto push = [&](NodeIdx n) {
    if (!queued[n]) {
      queued[n] = 1;
      q.push_back(n);
    }
  };
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (g.usable(n) && g.nodes[n].children.empty()) push(n);
  while (!q.empty()) {
    const NodeIdx n = q.front();
    q.pop_front();
    queued[n] = 0;
    const ENode& e = g.nodes[n];
    bool ready = true;
    for (ClassIdx k : e.children) ready = ready && best[k] != nullptr;
    if (!ready) continue;
    std::optional<Set> cs = candidate(g, best, n);
    if (!cs) continue;
    best[e.eclass] = std::make_shared<const Set>(std::move(*cs));
    for (NodeIdx p : up[e.eclass]) push(p);
  }
  return finish(g, best);
}

}  // namespace tensat::extract::testing
