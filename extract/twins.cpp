// Twin parts (see twins.h).
#include "extract/twins.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

namespace tensat::extract {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  return h;
}

uint64_t bits_of(double d) {
  uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

constexpr uint64_t kOutside = 0x6a09e667f3bcc909ULL;  // a child class outside the part (given)

uint64_t hash_sorted(uint64_t seed, std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  uint64_t h = mix(seed, v.size());
  for (uint64_t x : v) h = mix(h, x);
  return h;
}

// A node's key for the exact check: its cost's bits and its distinct child classes, each the
// class it stands for (mapped onto the other part for the rep) or -1 outside the part.
using NodeKey = std::pair<uint64_t, std::vector<int64_t>>;

}  // namespace

std::optional<TwinMap> check_twin(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                  const std::vector<int>& part_of, size_t r, const std::vector<ClassIdx>& rep_classes,
                                  size_t t, const std::vector<ClassIdx>& classes) {
  if (rep_classes.size() != classes.size()) return std::nullopt;
  auto alive_nodes = [&](ClassIdx c) {
    std::vector<NodeIdx> ns;
    for (NodeIdx n : g.classes[c].nodes)
      if (red.node_alive[n]) ns.push_back(n);
    return ns;
  };
  // A bijection between all the classes of the two parts.
  const auto in_r = static_cast<size_t>(std::count(part_of.begin(), part_of.end(), static_cast<int>(r)));
  const auto in_t = static_cast<size_t>(std::count(part_of.begin(), part_of.end(), static_cast<int>(t)));
  if (r == t || in_r != rep_classes.size() || in_t != classes.size()) return std::nullopt;
  std::map<ClassIdx, int64_t> image;  // the rep's class -> the twin's
  std::set<ClassIdx> images;
  for (size_t i = 0; i < rep_classes.size(); ++i) {
    if (part_of[rep_classes[i]] != static_cast<int>(r) || part_of[classes[i]] != static_cast<int>(t))
      return std::nullopt;
    image[rep_classes[i]] = static_cast<int64_t>(classes[i]);
    images.insert(classes[i]);
  }
  if (image.size() != rep_classes.size() || images.size() != classes.size()) return std::nullopt;
  TwinMap map;
  map.rep = r;
  std::vector<std::pair<NodeKey, NodeIdx>> ka, kb;
  for (size_t i = 0; i < rep_classes.size(); ++i) {
    const ClassIdx ca = rep_classes[i], cb = classes[i];
    if (req.mandatory[ca] != req.mandatory[cb]) return std::nullopt;
    ka.clear();
    kb.clear();
    for (NodeIdx n : alive_nodes(ca)) {
      std::vector<int64_t> kids;
      for (ClassIdx k : g.child_classes(n)) {
        if (part_of[k] != static_cast<int>(r)) {
          kids.push_back(-1);
          continue;
        }
        const auto it = image.find(k);
        if (it == image.end()) return std::nullopt;  // a class of the part left out of the pairing
        kids.push_back(it->second);
      }
      std::sort(kids.begin(), kids.end());
      ka.push_back({{bits_of(g.nodes[n].cost), std::move(kids)}, n});
    }
    for (NodeIdx n : alive_nodes(cb)) {
      std::vector<int64_t> kids;
      for (ClassIdx k : g.child_classes(n))
        kids.push_back(part_of[k] == static_cast<int>(t) ? static_cast<int64_t>(k) : -1);
      std::sort(kids.begin(), kids.end());
      kb.push_back({{bits_of(g.nodes[n].cost), std::move(kids)}, n});
    }
    if (ka.size() != kb.size()) return std::nullopt;
    std::sort(ka.begin(), ka.end());
    std::sort(kb.begin(), kb.end());
    for (size_t j = 0; j < ka.size(); ++j) {
      if (ka[j].first != kb[j].first) return std::nullopt;
      map.nodes.emplace_back(ka[j].second, kb[j].second);
    }
    map.classes.emplace_back(ca, cb);
  }
  std::sort(map.nodes.begin(), map.nodes.end());
  return map;
}

std::vector<std::optional<TwinMap>> find_twins(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                               const std::vector<std::vector<char>>& masks,
                                               const std::vector<size_t>& order) {
  const size_t C = g.classes.size(), P = masks.size();
  std::vector<std::optional<TwinMap>> twins(P);
  if (P < 2 || !req.computed) return twins;
  std::vector<int> part_of(C, -1);
  for (size_t i = 0; i < P; ++i)
    for (ClassIdx c = 0; c < C; ++c)
      if (masks[i][c] && red.class_alive[c] && !red.class_free[c]) part_of[c] = static_cast<int>(i);
  auto alive_nodes = [&](ClassIdx c) {
    std::vector<NodeIdx> ns;
    for (NodeIdx n : g.classes[c].nodes)
      if (red.node_alive[n]) ns.push_back(n);
    return ns;
  };
  // Distinct child classes of a node inside its own part.
  auto inside_kids = [&](NodeIdx n) {
    std::vector<ClassIdx> ks;
    for (ClassIdx k : g.child_classes(n))
      if (part_of[k] >= 0 && part_of[k] == part_of[g.nodes[n].eclass]) ks.push_back(k);
    return ks;
  };

  // Children before parents over the edges inside parts (Kahn); a cycle: no twins.
  std::vector<size_t> pending(C, 0);
  std::vector<std::vector<ClassIdx>> parents(C);
  for (ClassIdx c = 0; c < C; ++c) {
    if (part_of[c] < 0) continue;
    std::vector<ClassIdx> kids;
    for (NodeIdx n : alive_nodes(c))
      for (ClassIdx k : inside_kids(n)) kids.push_back(k);
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    pending[c] = kids.size();
    for (ClassIdx k : kids) parents[k].push_back(c);
  }
  std::vector<ClassIdx> topo;
  for (ClassIdx c = 0; c < C; ++c)
    if (part_of[c] >= 0 && pending[c] == 0) topo.push_back(c);
  for (size_t h = 0; h < topo.size(); ++h)
    for (ClassIdx q : parents[topo[h]])
      if (--pending[q] == 0) topo.push_back(q);
  const size_t in_parts = static_cast<size_t>(std::count_if(part_of.begin(), part_of.end(), [](int p) { return p >= 0; }));
  if (topo.size() != in_parts) return twins;

  // Bottom-up labels (a node: its cost and its children's labels; a class: mandatory and its
  // nodes' labels), then once top-down (a class: its label and its readers' labels).
  std::vector<uint64_t> node_label(g.nodes.size(), 0), up(C, 0), label(C, 0);
  std::vector<uint64_t> tmp;
  for (ClassIdx c : topo) {
    std::vector<uint64_t> nodes;
    for (NodeIdx n : alive_nodes(c)) {
      tmp.clear();
      for (ClassIdx k : g.child_classes(n))
        tmp.push_back(part_of[k] >= 0 && part_of[k] == part_of[c] ? up[k] : kOutside);
      node_label[n] = hash_sorted(bits_of(g.nodes[n].cost), tmp);
      nodes.push_back(node_label[n]);
    }
    up[c] = hash_sorted(req.mandatory[c] ? 1 : 2, nodes);
  }
  std::vector<std::vector<uint64_t>> readers(C);
  for (ClassIdx c : topo)
    for (NodeIdx n : alive_nodes(c))
      for (ClassIdx k : inside_kids(n)) readers[k].push_back(mix(node_label[n], up[c]));
  for (ClassIdx c : topo) label[c] = hash_sorted(up[c], readers[c]);

  // Per part: its classes by (label, index), its signature, its column count.
  struct View {
    std::vector<ClassIdx> classes;
    uint64_t signature = 0;
    size_t columns = 0;
  };
  std::vector<View> views(P);
  for (ClassIdx c = 0; c < C; ++c)
    if (part_of[c] >= 0) {
      View& v = views[static_cast<size_t>(part_of[c])];
      v.classes.push_back(c);
      v.columns += alive_nodes(c).size();
    }
  for (View& v : views) {
    std::stable_sort(v.classes.begin(), v.classes.end(), [&](ClassIdx a, ClassIdx b) { return label[a] < label[b]; });
    uint64_t h = mix(v.classes.size(), v.columns);
    for (ClassIdx c : v.classes) h = mix(h, label[c]);
    v.signature = h;
  }

  std::map<uint64_t, std::vector<size_t>> reps;  // signature -> the representatives so far
  for (size_t i : order) {
    if (i >= P || views[i].classes.empty()) continue;
    std::vector<size_t>& group = reps[views[i].signature];
    for (size_t r : group) {
      if (views[r].classes.size() != views[i].classes.size() || views[r].columns != views[i].columns) continue;
      if (auto map = check_twin(g, red, req, part_of, r, views[r].classes, i, views[i].classes)) {
        twins[i] = std::move(map);
        break;
      }
    }
    if (!twins[i]) group.push_back(i);
  }
  return twins;
}

Choice copy_from_rep(const ExtractGraph& g, const Reduction& red, const TwinMap& t, const Choice& choice) {
  Choice c = choice;
  for (const auto& [a, b] : t.classes) c[b] = -1;
  for (const auto& [a, b] : t.classes) {
    const int64_t n = choice[a];
    if (n < 0) continue;
    const auto it = std::lower_bound(t.nodes.begin(), t.nodes.end(), std::make_pair(static_cast<NodeIdx>(n), NodeIdx{0}));
    if (it == t.nodes.end() || it->first != static_cast<NodeIdx>(n)) return {};  // not a candidate node of the rep
    c[b] = static_cast<int64_t>(it->second);
  }
  for (ClassIdx k = 0; k < c.size(); ++k)
    if (c[k] < 0 && red.class_free[k]) c[k] = red.free_node[k];
  return prune_to_roots(g, c);
}

}  // namespace tensat::extract
