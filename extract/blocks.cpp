// Splitting the extraction ILP at its mandatory classes (see blocks.h).
#include "extract/blocks.h"

#include <algorithm>
#include <numeric>

namespace tensat::extract {

namespace {

bool is_candidate_class(const Reduction& red, ClassIdx c) { return red.class_alive[c] && !red.class_free[c]; }

// Kahn's algorithm over the class graph of the candidate nodes.
bool class_graph_acyclic(const ExtractGraph& g, const Reduction& red) {
  const size_t C = g.classes.size();
  std::vector<std::vector<ClassIdx>> succ(C);
  std::vector<uint32_t> indeg(C, 0);
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    const ClassIdx c = g.nodes[n].eclass;
    if (!red.node_alive[n] || !is_candidate_class(red, c)) continue;
    for (ClassIdx k : g.child_classes(n))
      if (is_candidate_class(red, k)) succ[c].push_back(k);
  }
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (ClassIdx k : s) ++indeg[k];
  }
  std::vector<ClassIdx> ready;
  for (ClassIdx c = 0; c < C; ++c)
    if (indeg[c] == 0) ready.push_back(c);
  size_t seen = 0;
  while (!ready.empty()) {
    const ClassIdx c = ready.back();
    ready.pop_back();
    ++seen;
    for (ClassIdx k : succ[c])
      if (--indeg[k] == 0) ready.push_back(k);
  }
  return seen == C;
}

}  // namespace

Blocks find_blocks(const ExtractGraph& g, const Reduction& red, const Requirements& req) {
  Blocks b;
  if (!req.computed || !class_graph_acyclic(g, red)) return b;
  const size_t C = g.classes.size();
  auto mandatory = [&](ClassIdx c) {
    return req.mandatory[c] || std::find(g.roots.begin(), g.roots.end(), c) != g.roots.end();
  };
  std::vector<ClassIdx> parent(C);
  std::iota(parent.begin(), parent.end(), ClassIdx{0});
  auto find = [&](ClassIdx a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    const ClassIdx c = g.nodes[n].eclass;
    if (!red.node_alive[n] || !is_candidate_class(red, c)) continue;
    for (ClassIdx k : g.child_classes(n))
      if (is_candidate_class(red, k) && !mandatory(k)) parent[find(c)] = find(k);
  }
  b.of_class.assign(C, -1);
  std::vector<int> block_of_root(C, -1);
  for (ClassIdx c = 0; c < C; ++c) {
    if (!is_candidate_class(red, c)) continue;
    int& id = block_of_root[find(c)];
    if (id < 0) {
      id = static_cast<int>(b.classes.size());
      b.classes.emplace_back();
    }
    b.of_class[c] = id;
    b.classes[static_cast<size_t>(id)].push_back(c);
  }
  return b;
}

}  // namespace tensat::extract
