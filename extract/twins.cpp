// Twin parts (see twins.h).
#include "extract/twins.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>

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

// The alive nodes of the classes in parts, in one flat array, with their distinct child
// classes from the graph's index (the labels and the exact check walk them several times;
// ExtractGraph::child_classes() allocates on every call: NasRNN's reduced e-graph, 5 parts,
// 6.2 -> 1.6 ms).
struct PartGraph {
  const GraphIndex& index;
  std::vector<uint32_t> node_start;  // per class (C + 1): its alive nodes' range in `nodes`
  std::vector<NodeIdx> nodes;

  // `in(c)`: whether class c's nodes are wanted (the others get none).
  template <class In>
  PartGraph(const ExtractGraph& g, const GraphIndex& idx, const Reduction& red, In in) : index(idx) {
    const size_t C = g.classes.size();
    node_start.assign(C + 1, 0);
    for (ClassIdx c = 0; c < C; ++c) {
      if (in(c))
        for (NodeIdx n : g.classes[c].nodes)
          if (red.node_alive[n]) nodes.push_back(n);
      node_start[c + 1] = static_cast<uint32_t>(nodes.size());
    }
  }
  // Positions in `nodes` of class c's alive nodes.
  uint32_t begin(ClassIdx c) const { return node_start[c]; }
  uint32_t end(ClassIdx c) const { return node_start[c + 1]; }
  std::span<const ClassIdx> kids_of(uint32_t i) const { return index.kids(nodes[i]); }
};

// Scratch for the exact check, sized to the graph once and left clean after every check.
struct CheckScratch {
  std::vector<int64_t> image;  // per class of the rep: its twin class, else -1
  std::vector<char> taken;     // per class: an image already
  // Per node of one class pair: its key (cost bits, count, mapped child classes sorted) at an
  // offset into `keys`.
  std::vector<int64_t> keys;
  std::vector<std::pair<uint32_t, NodeIdx>> ka, kb;  // (offset of the key, node)
  explicit CheckScratch(size_t classes) : image(classes, -1), taken(classes, 0) {}
};

// check_twin over the flat arrays (the part membership of both class lists already checked).
std::optional<TwinMap> check_in(const ExtractGraph& g, const PartGraph& pg, const Requirements& req,
                                const std::vector<int>& part_of, size_t r, const std::vector<ClassIdx>& rep_classes,
                                size_t t, const std::vector<ClassIdx>& classes, CheckScratch& s) {
  struct Clean {  // (also on every early return)
    CheckScratch& s;
    const std::vector<ClassIdx>& rep_classes;
    const std::vector<ClassIdx>& classes;
    ~Clean() {
      for (ClassIdx c : rep_classes) s.image[c] = -1;
      for (ClassIdx c : classes) s.taken[c] = 0;
    }
  } clean{s, rep_classes, classes};
  // A bijection between all the classes of the two parts.
  for (size_t i = 0; i < rep_classes.size(); ++i) {
    if (s.image[rep_classes[i]] >= 0 || s.taken[classes[i]]) return std::nullopt;
    s.image[rep_classes[i]] = static_cast<int64_t>(classes[i]);
    s.taken[classes[i]] = 1;
  }
  TwinMap map;
  map.rep = r;
  // A node's key: its cost's bits and its distinct child classes, each the class it stands for
  // (mapped onto the other part for the rep) or -1 outside the part, sorted.
  auto add_key = [&](uint32_t i, bool rep, auto& into) {
    const auto at = static_cast<uint32_t>(s.keys.size());
    const auto kids = pg.kids_of(i);
    s.keys.push_back(static_cast<int64_t>(bits_of(g.nodes[pg.nodes[i]].cost)));
    s.keys.push_back(static_cast<int64_t>(kids.size()));
    for (ClassIdx k : kids) {
      if (rep) s.keys.push_back(part_of[k] == static_cast<int>(r) ? s.image[k] : -1);
      else s.keys.push_back(part_of[k] == static_cast<int>(t) ? static_cast<int64_t>(k) : -1);
    }
    std::sort(s.keys.begin() + at + 2, s.keys.end());
    into.emplace_back(at, pg.nodes[i]);
  };
  auto key = [&](uint32_t at) {
    return std::span<const int64_t>(s.keys.data() + at, static_cast<size_t>(s.keys[at + 1]) + 2);
  };
  // By key, then by node (as the pairs (key, node) sorted: equal keys pair in node order).
  auto less = [&](const std::pair<uint32_t, NodeIdx>& a, const std::pair<uint32_t, NodeIdx>& b) {
    const auto x = key(a.first), y = key(b.first);
    if (x[0] != y[0]) return static_cast<uint64_t>(x[0]) < static_cast<uint64_t>(y[0]);  // (the bits, unsigned)
    const auto xk = x.subspan(2), yk = y.subspan(2);
    if (std::lexicographical_compare(xk.begin(), xk.end(), yk.begin(), yk.end())) return true;
    if (std::lexicographical_compare(yk.begin(), yk.end(), xk.begin(), xk.end())) return false;
    return a.second < b.second;
  };
  for (size_t i = 0; i < rep_classes.size(); ++i) {
    const ClassIdx ca = rep_classes[i], cb = classes[i];
    if (req.mandatory[ca] != req.mandatory[cb]) return std::nullopt;
    if (pg.end(ca) - pg.begin(ca) != pg.end(cb) - pg.begin(cb)) return std::nullopt;
    s.keys.clear();
    s.ka.clear();
    s.kb.clear();
    for (uint32_t j = pg.begin(ca); j < pg.end(ca); ++j) {
      for (ClassIdx k : pg.kids_of(j))
        if (part_of[k] == static_cast<int>(r) && s.image[k] < 0) return std::nullopt;  // (not paired)
      add_key(j, true, s.ka);
    }
    for (uint32_t j = pg.begin(cb); j < pg.end(cb); ++j) add_key(j, false, s.kb);
    std::sort(s.ka.begin(), s.ka.end(), less);
    std::sort(s.kb.begin(), s.kb.end(), less);
    for (size_t j = 0; j < s.ka.size(); ++j) {
      const auto x = key(s.ka[j].first), y = key(s.kb[j].first);
      if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return std::nullopt;
      map.nodes.emplace_back(s.ka[j].second, s.kb[j].second);
    }
    map.classes.emplace_back(ca, cb);
  }
  std::sort(map.nodes.begin(), map.nodes.end());
  return map;
}

}  // namespace

std::optional<TwinMap> check_twin(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                  const std::vector<int>& part_of, size_t r, const std::vector<ClassIdx>& rep_classes,
                                  size_t t, const std::vector<ClassIdx>& classes) {
  if (rep_classes.size() != classes.size()) return std::nullopt;
  // Every class of the two parts, each listed once (the check pairs them all).
  const auto in_r = static_cast<size_t>(std::count(part_of.begin(), part_of.end(), static_cast<int>(r)));
  const auto in_t = static_cast<size_t>(std::count(part_of.begin(), part_of.end(), static_cast<int>(t)));
  if (r == t || in_r != rep_classes.size() || in_t != classes.size()) return std::nullopt;
  for (size_t i = 0; i < rep_classes.size(); ++i)
    if (part_of[rep_classes[i]] != static_cast<int>(r) || part_of[classes[i]] != static_cast<int>(t))
      return std::nullopt;
  const GraphIndex index(g);
  const PartGraph pg(g, index, red, [&](ClassIdx c) {
    return part_of[c] == static_cast<int>(r) || part_of[c] == static_cast<int>(t);
  });
  CheckScratch s(g.classes.size());
  return check_in(g, pg, req, part_of, r, rep_classes, t, classes, s);
}

std::vector<std::optional<TwinMap>> find_twins(const ExtractGraph& g, const Reduction& red, const Requirements& req,
                                               const std::vector<std::vector<char>>& masks,
                                               const std::vector<size_t>& order) {
  return find_twins(g, GraphIndex(g), red, req, masks, order);
}

std::vector<std::optional<TwinMap>> find_twins(const ExtractGraph& g, const GraphIndex& index, const Reduction& red,
                                               const Requirements& req, const std::vector<std::vector<char>>& masks,
                                               const std::vector<size_t>& order) {
  const size_t C = g.classes.size(), P = masks.size();
  std::vector<std::optional<TwinMap>> twins(P);
  if (P < 2 || !req.computed) return twins;
  std::vector<int> part_of(C, -1);
  for (size_t i = 0; i < P; ++i)
    for (ClassIdx c = 0; c < C; ++c)
      if (masks[i][c] && red.class_alive[c] && !red.class_free[c]) part_of[c] = static_cast<int>(i);
  const PartGraph pg(g, index, red, [&](ClassIdx c) { return part_of[c] >= 0; });
  // Per class in a part: the distinct child classes of its nodes inside that part.
  auto inside = [&](ClassIdx k, ClassIdx c) { return part_of[k] >= 0 && part_of[k] == part_of[c]; };

  // Children before parents over the edges inside parts (Kahn); a cycle: no twins.
  std::vector<uint32_t> pending(C, 0), parent_start(C + 1, 0);
  std::vector<ClassIdx> kids, parents;
  std::vector<ClassIdx> kid_list;  // per class in a part, its inside child classes (flat)
  std::vector<uint32_t> kid_list_start(C + 1, 0);
  for (ClassIdx c = 0; c < C; ++c) {
    kids.clear();
    if (part_of[c] >= 0)
      for (uint32_t i = pg.begin(c); i < pg.end(c); ++i)
        for (ClassIdx k : pg.kids_of(i))
          if (inside(k, c)) kids.push_back(k);
    std::sort(kids.begin(), kids.end());
    kids.erase(std::unique(kids.begin(), kids.end()), kids.end());
    pending[c] = static_cast<uint32_t>(kids.size());
    for (ClassIdx k : kids) ++parent_start[k + 1];
    kid_list.insert(kid_list.end(), kids.begin(), kids.end());
    kid_list_start[c + 1] = static_cast<uint32_t>(kid_list.size());
  }
  for (size_t c = 0; c < C; ++c) parent_start[c + 1] += parent_start[c];
  parents.resize(parent_start[C]);
  {
    std::vector<uint32_t> fill(parent_start.begin(), parent_start.end() - 1);
    for (ClassIdx c = 0; c < C; ++c)
      for (uint32_t j = kid_list_start[c]; j < kid_list_start[c + 1]; ++j) parents[fill[kid_list[j]]++] = c;
  }
  std::vector<ClassIdx> topo;
  for (ClassIdx c = 0; c < C; ++c)
    if (part_of[c] >= 0 && pending[c] == 0) topo.push_back(c);
  for (size_t h = 0; h < topo.size(); ++h)
    for (uint32_t j = parent_start[topo[h]]; j < parent_start[topo[h] + 1]; ++j)
      if (--pending[parents[j]] == 0) topo.push_back(parents[j]);
  const size_t in_parts = static_cast<size_t>(std::count_if(part_of.begin(), part_of.end(), [](int p) { return p >= 0; }));
  if (topo.size() != in_parts) return twins;

  // Bottom-up labels (a node: its cost and its children's labels; a class: mandatory and its
  // nodes' labels), then once top-down (a class: its label and its readers' labels).
  std::vector<uint64_t> node_label(pg.nodes.size(), 0), up(C, 0), label(C, 0);
  std::vector<uint64_t> tmp, labels;
  for (ClassIdx c : topo) {
    labels.clear();
    for (uint32_t i = pg.begin(c); i < pg.end(c); ++i) {
      tmp.clear();
      for (ClassIdx k : pg.kids_of(i)) tmp.push_back(inside(k, c) ? up[k] : kOutside);
      node_label[i] = hash_sorted(bits_of(g.nodes[pg.nodes[i]].cost), tmp);
      labels.push_back(node_label[i]);
    }
    up[c] = hash_sorted(req.mandatory[c] ? 1 : 2, labels);
  }
  std::vector<uint32_t> reader_start(C + 1, 0);
  std::vector<uint64_t> readers;
  for (ClassIdx c : topo)
    for (uint32_t i = pg.begin(c); i < pg.end(c); ++i)
      for (ClassIdx k : pg.kids_of(i))
        if (inside(k, c)) ++reader_start[k + 1];
  for (size_t c = 0; c < C; ++c) reader_start[c + 1] += reader_start[c];
  readers.resize(reader_start[C]);
  {
    std::vector<uint32_t> fill(reader_start.begin(), reader_start.end() - 1);
    for (ClassIdx c : topo)
      for (uint32_t i = pg.begin(c); i < pg.end(c); ++i)
        for (ClassIdx k : pg.kids_of(i))
          if (inside(k, c)) readers[fill[k]++] = mix(node_label[i], up[c]);
  }
  for (ClassIdx c : topo) {
    tmp.assign(readers.begin() + reader_start[c], readers.begin() + reader_start[c + 1]);
    label[c] = hash_sorted(up[c], tmp);
  }

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
      v.columns += pg.end(c) - pg.begin(c);
    }
  for (View& v : views) {
    std::stable_sort(v.classes.begin(), v.classes.end(), [&](ClassIdx a, ClassIdx b) { return label[a] < label[b]; });
    uint64_t h = mix(v.classes.size(), v.columns);
    for (ClassIdx c : v.classes) h = mix(h, label[c]);
    v.signature = h;
  }

  CheckScratch scratch(C);
  std::map<uint64_t, std::vector<size_t>> reps;  // signature -> the representatives so far
  for (size_t i : order) {
    if (i >= P || views[i].classes.empty()) continue;
    std::vector<size_t>& group = reps[views[i].signature];
    for (size_t r : group) {
      if (r == i) continue;  // (a part listed twice in `order` is no twin of itself)
      if (views[r].classes.size() != views[i].classes.size() || views[r].columns != views[i].columns) continue;
      if (auto map = check_in(g, pg, req, part_of, r, views[r].classes, i, views[i].classes, scratch)) {
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
