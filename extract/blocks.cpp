// Splitting the extraction ILP at its mandatory classes (see blocks.h).
#include "extract/blocks.h"

#include <algorithm>
#include <numeric>

#include "extract/cycle_cuts.h"

namespace tensat::extract {

Blocks find_blocks(const ExtractGraph& g, const Reduction& red, const Requirements& req) {
  if (!req.computed) return {};
  return find_blocks(g, GraphIndex(g), red, req);
}

Blocks find_blocks(const ExtractGraph& g, const GraphIndex& index, const Reduction& red, const Requirements& req) {
  Blocks b;
  if (!req.computed) return b;
  const size_t C = g.classes.size();
  auto candidate = [&](ClassIdx c) { return red.class_alive[c] && !red.class_free[c]; };
  // The class graph of the candidate nodes, once: for the acyclicity check and the links.
  std::vector<std::vector<ClassIdx>> succ(C);
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    const ClassIdx c = g.nodes[n].eclass;
    if (!red.node_alive[n] || !candidate(c)) continue;
    for (ClassIdx k : index.kids(n))
      if (candidate(k)) succ[c].push_back(k);
  }
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  // Acyclic: every strongly connected component is one class without a self-loop.
  const std::vector<uint32_t> scc = strongly_connected_components(succ);
  std::vector<uint32_t> members(C, 0);
  for (ClassIdx c = 0; c < C; ++c)
    if (++members[scc[c]] > 1 || std::binary_search(succ[c].begin(), succ[c].end(), c)) return b;
  // Link a class with its non-mandatory children (req.mandatory includes the roots).
  std::vector<ClassIdx> parent(C);
  std::iota(parent.begin(), parent.end(), ClassIdx{0});
  auto find = [&](ClassIdx a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  for (ClassIdx c = 0; c < C; ++c)
    for (ClassIdx k : succ[c])
      if (!req.mandatory[k]) parent[find(c)] = find(k);
  b.of_class.assign(C, -1);
  std::vector<int> block_of_root(C, -1);
  for (ClassIdx c = 0; c < C; ++c) {
    if (!candidate(c)) continue;
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

std::vector<double> landmark_floors(const ExtractGraph& g, const std::vector<int>& part_of, size_t parts,
                                    const std::vector<std::vector<NodeIdx>>& landmarks,
                                    const std::vector<double>& costs) {
  std::vector<double> floor(parts, 0.0);
  for (size_t l = 0; l < landmarks.size() && l < costs.size(); ++l) {
    if (landmarks[l].empty()) continue;
    const int part = part_of[g.nodes[landmarks[l][0]].eclass];
    bool inside = part >= 0;
    for (NodeIdx n : landmarks[l]) inside = inside && part_of[g.nodes[n].eclass] == part;
    if (inside) floor[static_cast<size_t>(part)] += costs[l];
  }
  return floor;
}

}  // namespace tensat::extract
