// Problem reduction before the ILP: unusable, ungrounded, dominated, free, unreachable.
#include "extract/reduce.h"

#include <algorithm>
#include <numeric>

namespace tensat::extract {

namespace {

// Bottom-up fixpoint: a class becomes "marked" when one of its candidate nodes (accept(n))
// has all child classes marked. `witness` receives the first such node per class. The order
// of marking is well-founded, so the witnesses form an acyclic choice.
std::vector<char> mark_bottom_up(const ExtractGraph& g, const std::vector<char>& accept,
                                 std::vector<int64_t>& witness) {
  std::vector<char> marked(g.classes.size(), 0);
  witness.assign(g.classes.size(), -1);
  std::vector<uint32_t> missing(g.nodes.size(), 0);
  std::vector<std::vector<NodeIdx>> parents(g.classes.size());
  std::vector<NodeIdx> ready;
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (!accept[n]) continue;
    const auto kids = g.child_classes(n);
    missing[n] = static_cast<uint32_t>(kids.size());
    for (ClassIdx k : kids) parents[k].push_back(n);
    if (kids.empty()) ready.push_back(n);
  }
  while (!ready.empty()) {
    const NodeIdx n = ready.back();
    ready.pop_back();
    const ClassIdx c = g.nodes[n].eclass;
    if (marked[c]) continue;
    marked[c] = 1;
    witness[c] = n;
    for (NodeIdx p : parents[c])
      if (--missing[p] == 0) ready.push_back(p);
  }
  return marked;
}

}  // namespace

Reduction reduce(const ExtractGraph& g) {
  const size_t N = g.nodes.size(), C = g.classes.size();
  Reduction r;
  r.node_alive.assign(N, 0);
  r.replacement.assign(N, -1);
  for (NodeIdx n = 0; n < N; ++n) {
    r.node_alive[n] = g.usable(n);
    if (!r.node_alive[n]) ++r.stats.unusable;
  }

  // Grounded classes: those with a finite acyclic option. Nodes with an ungrounded child
  // can never be part of an acyclic extraction.
  std::vector<int64_t> witness;
  const auto grounded = mark_bottom_up(g, r.node_alive, witness);
  for (ClassIdx root : g.roots)
    if (!grounded[root])
      throw InputError("root class " + class_name(g, root) + " has no finite acyclic extraction");
  for (NodeIdx n = 0; n < N; ++n) {
    if (!r.node_alive[n]) continue;
    for (ClassIdx k : g.nodes[n].children)
      if (!grounded[k]) {
        r.node_alive[n] = 0;
        ++r.stats.ungrounded;
        break;
      }
  }

  // Free classes: a zero-cost node whose child classes are all free. Choosing it costs
  // nothing and only reaches free classes, so it replaces every other node of the class.
  std::vector<char> zero(N, 0);
  for (NodeIdx n = 0; n < N; ++n) zero[n] = r.node_alive[n] && g.nodes[n].cost == 0.0;
  r.class_free = mark_bottom_up(g, zero, r.free_node);
  for (ClassIdx c = 0; c < C; ++c) {
    if (!r.class_free[c]) continue;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n] && static_cast<int64_t>(n) != r.free_node[c]) {
        r.node_alive[n] = 0;
        r.replacement[n] = r.free_node[c];
        ++r.stats.free;
      }
  }

  // Dominance: m replaces n when cost(m) <= cost(n) and children(m) is a subset of
  // children(n). Candidates are visited by (cost, #children, index), so a dominator always
  // comes first, and comparing against kept nodes suffices (dominance is transitive).
  for (ClassIdx c = 0; c < C; ++c) {
    if (r.class_free[c]) continue;
    std::vector<NodeIdx> cand;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n]) cand.push_back(n);
    if (cand.size() < 2) continue;
    std::vector<std::vector<ClassIdx>> kids(cand.size());
    for (size_t i = 0; i < cand.size(); ++i) kids[i] = g.child_classes(cand[i]);
    std::vector<size_t> order(cand.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const double ca = g.nodes[cand[a]].cost, cb = g.nodes[cand[b]].cost;
      if (ca != cb) return ca < cb;
      if (kids[a].size() != kids[b].size()) return kids[a].size() < kids[b].size();
      return cand[a] < cand[b];
    });
    std::vector<size_t> kept;
    for (size_t i : order) {
      size_t by = SIZE_MAX;
      for (size_t j : kept)
        if (std::includes(kids[i].begin(), kids[i].end(), kids[j].begin(), kids[j].end())) {
          by = j;
          break;
        }
      if (by == SIZE_MAX) {
        kept.push_back(i);
      } else {
        r.node_alive[cand[i]] = 0;
        r.replacement[cand[i]] = cand[by];
        ++r.stats.dominated;
      }
    }
  }

  // Reachability from the roots through alive nodes.
  r.class_alive.assign(C, 0);
  std::vector<ClassIdx> stack(g.roots.begin(), g.roots.end());
  while (!stack.empty()) {
    const ClassIdx c = stack.back();
    stack.pop_back();
    if (r.class_alive[c]) continue;
    r.class_alive[c] = 1;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n])
        for (ClassIdx k : g.nodes[n].children)
          if (!r.class_alive[k]) stack.push_back(k);
  }
  for (ClassIdx c = 0; c < C; ++c) {
    if (r.class_alive[c]) {
      if (!r.class_free[c]) ++r.stats.classes_left;
      continue;
    }
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n]) {
        r.node_alive[n] = 0;
        ++r.stats.unreachable;
      }
  }
  for (NodeIdx n = 0; n < N; ++n)
    if (r.node_alive[n] && !r.class_free[g.nodes[n].eclass]) ++r.stats.nodes_left;
  return r;
}

Choice map_to_reduced(const ExtractGraph& g, const Reduction& r, const Choice& choice) {
  Choice out(g.classes.size(), -1);
  std::vector<char> seen(g.classes.size(), 0);
  std::vector<ClassIdx> stack(g.roots.begin(), g.roots.end());
  while (!stack.empty()) {
    const ClassIdx c = stack.back();
    stack.pop_back();
    if (seen[c]) continue;
    seen[c] = 1;
    int64_t n = choice[c];
    if (n < 0) throw InternalError("map_to_reduced: class " + class_name(g, c) + " unchosen");
    if (r.class_free[c]) {
      n = r.free_node[c];
    } else {
      // Replacements of replacements are possible only through free classes (handled above).
      while (n >= 0 && !r.node_alive[static_cast<size_t>(n)]) n = r.replacement[static_cast<size_t>(n)];
    }
    if (n < 0 || !r.node_alive[static_cast<size_t>(n)])
      throw InternalError("map_to_reduced: class " + class_name(g, c) + " uses a removed node");
    out[c] = n;
    for (ClassIdx k : g.nodes[static_cast<size_t>(n)].children)
      if (!seen[k]) stack.push_back(k);
  }
  return out;
}

std::string describe(const Reduction::Stats& s) {
  return "removed " + std::to_string(s.unusable) + " unusable, " + std::to_string(s.ungrounded) +
         " ungrounded, " + std::to_string(s.dominated) + " dominated, " + std::to_string(s.free) +
         " in free classes, " + std::to_string(s.unreachable) + " unreachable; left " +
         std::to_string(s.nodes_left) + " nodes in " + std::to_string(s.classes_left) + " classes";
}

}  // namespace tensat::extract
