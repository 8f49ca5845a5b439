// Problem reduction before the ILP: unusable, ungrounded, dominated, free, unreachable.
#include "extract/reduce.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace tensat::extract {

namespace {

// Bottom-up fixpoint: a class becomes "marked" when one of its candidate nodes (accept(n),
// only usable nodes) has all child classes marked. `witness` receives the first such node per
// class. The order of marking is well-founded, so the witnesses form an acyclic choice.
std::vector<char> mark_bottom_up(const ExtractGraph& g, const GraphIndex& index, const std::vector<char>& accept,
                                 std::vector<int64_t>& witness) {
  std::vector<char> marked(g.classes.size(), 0);
  witness.assign(g.classes.size(), -1);
  std::vector<uint32_t> missing(g.nodes.size(), 0);
  std::vector<NodeIdx> ready;
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    if (!accept[n]) continue;
    // (The index lists usable parents only: an accepted node that is not usable would never
    // be counted down, so never marked. Both callers accept only alive, so usable, nodes.)
    assert(index.usable(n));
    missing[n] = static_cast<uint32_t>(index.kids(n).size());
    if (missing[n] == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    const NodeIdx n = ready.back();
    ready.pop_back();
    const ClassIdx c = index.eclass(n);
    if (marked[c]) continue;
    marked[c] = 1;
    witness[c] = n;
    for (NodeIdx p : index.parents(c))  // increasing, as the accepted nodes that read c were
      if (accept[p] && --missing[p] == 0) ready.push_back(p);
  }
  return marked;
}

// Calls f(index) for every set bit of a bitset of `words` 64-bit words, in increasing order.
template <class F>
void for_each_bit(const uint64_t* bits, size_t words, F&& f) {
  for (size_t i = 0; i < words; ++i)
    for (uint64_t b = bits[i]; b; b &= b - 1)
      f(static_cast<uint32_t>(i * 64 + static_cast<size_t>(__builtin_ctzll(b))));
}

// Reachability from the roots through alive nodes: the other classes are dead, their nodes
// too (counted as unreachable); nodes_left and classes_left are recounted.
void drop_unreachable(const ExtractGraph& g, Reduction& r) {
  const size_t N = g.nodes.size(), C = g.classes.size();
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
    if (r.class_alive[c]) continue;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n]) {
        r.node_alive[n] = 0;
        ++r.stats.unreachable;
      }
  }
  r.stats.nodes_left = 0;
  r.stats.classes_left = 0;
  for (ClassIdx c = 0; c < C; ++c)
    if (r.class_alive[c] && !r.class_free[c]) ++r.stats.classes_left;
  for (NodeIdx n = 0; n < N; ++n)
    if (r.node_alive[n] && !r.class_free[g.nodes[n].eclass]) ++r.stats.nodes_left;
}

}  // namespace

Reduction reduce(const ExtractGraph& g) { return reduce(g, GraphIndex(g)); }

Reduction reduce(const ExtractGraph& g, const GraphIndex& index) {
  const size_t N = g.nodes.size(), C = g.classes.size();
  Reduction r;
  r.node_alive.assign(N, 0);
  r.replacement.assign(N, -1);
  for (NodeIdx n = 0; n < N; ++n) {
    r.node_alive[n] = index.usable(n);
    if (!r.node_alive[n]) ++r.stats.unusable;
  }

  // Grounded classes: those with a finite acyclic option. Nodes with an ungrounded child
  // can never be part of an acyclic extraction.
  std::vector<int64_t> witness;
  const auto grounded = mark_bottom_up(g, index, r.node_alive, witness);
  for (ClassIdx root : g.roots)
    if (!grounded[root])
      throw InputError("root class " + class_name(g, root) + " has no finite acyclic extraction");
  for (NodeIdx n = 0; n < N; ++n) {
    if (!r.node_alive[n]) continue;
    for (ClassIdx k : index.kids(n))
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
  r.class_free = mark_bottom_up(g, index, zero, r.free_node);
  for (ClassIdx c = 0; c < C; ++c) {
    if (!r.class_free[c]) continue;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n] && static_cast<int64_t>(n) != r.free_node[c]) {
        r.node_alive[n] = 0;
        r.replacement[n] = r.free_node[c];
        ++r.stats.free;
      }
  }

  // Dominance (dominators()): m replaces n when cost(m) <= cost(n) and children(m) is a
  // subset of children(n), free child classes left out (they cost nothing and reach only free
  // classes, so a swap that adds one adds no cost and closes no cycle).
  for (ClassIdx c = 0; c < C; ++c) {
    if (r.class_free[c]) continue;
    std::vector<NodeIdx> cand;
    for (NodeIdx n : g.classes[c].nodes)
      if (r.node_alive[n]) cand.push_back(n);
    if (cand.size() < 2) continue;
    const std::vector<int64_t> by = dominators(g, index, cand, [&](ClassIdx k) { return r.class_free[k] != 0; });
    for (size_t i = 0; i < cand.size(); ++i) {
      if (by[i] < 0) continue;
      r.node_alive[cand[i]] = 0;
      r.replacement[cand[i]] = cand[static_cast<size_t>(by[i])];
      ++r.stats.dominated;
    }
  }

  drop_unreachable(g, r);
  return r;
}

Reduction restrict_nodes(const ExtractGraph& g, const Reduction& r, const std::vector<char>& keep) {
  Reduction out = r;
  for (NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (out.node_alive[n] && !keep[n] && !out.class_free[g.nodes[n].eclass]) {
      out.node_alive[n] = 0;
      out.replacement[n] = -1;
    }
  drop_unreachable(g, out);
  return out;
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
    int64_t n;
    if (r.class_free[c]) {
      // A free class takes its free node whatever the input chose (or whether it chose at
      // all: a free node's children are free classes that the input need not have used).
      n = r.free_node[c];
    } else {
      n = choice[c];
      if (n < 0) throw InternalError("map_to_reduced: class " + class_name(g, c) + " unchosen");
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

Requirements requirements(const ExtractGraph& g, const Reduction& r, int max_passes) {
  return requirements(g, GraphIndex(g), r, max_passes);
}

Requirements requirements(const ExtractGraph& g, const GraphIndex& index, const Reduction& r, int max_passes) {
  const size_t C = g.classes.size();
  Requirements out;
  out.immediate.assign(C, {});
  out.mandatory.assign(C, 0);
  out.unusable.assign(C, 0);
  // Dense ids for the alive, non-free classes.
  std::vector<ClassIdx> cls;
  std::vector<int64_t> id(C, -1);
  for (ClassIdx c = 0; c < C; ++c)
    if (r.class_alive[c] && !r.class_free[c]) {
      id[c] = static_cast<int64_t>(cls.size());
      cls.push_back(c);
    }
  const size_t V = cls.size(), W = (V + 63) / 64;
  out.dense = id;
  out.class_of = cls;
  out.words = W;
  if (V == 0) {
    out.computed = true;
    return out;
  }
  // Per alive node of a relevant class: its relevant child ids, in flat lists (a class's
  // nodes are node_start[v] .. node_start[v + 1]; a node's children kid_start[i] .. [i + 1]).
  std::vector<uint32_t> node_start(V + 1, 0), kid_start(1, 0), kid;
  for (size_t v = 0; v < V; ++v) {
    for (NodeIdx n : g.classes[cls[v]].nodes) {
      if (!r.node_alive[n]) continue;
      for (ClassIdx c : index.kids(n))
        if (id[c] >= 0) kid.push_back(static_cast<uint32_t>(id[c]));
      kid_start.push_back(static_cast<uint32_t>(kid.size()));
    }
    node_start[v + 1] = static_cast<uint32_t>(kid_start.size() - 1);
  }
  // Children first (DFS post-order over the class graph), so one pass settles a DAG; a back
  // edge (to a class on the stack) means a cycle, and then passes repeat to the fixpoint.
  std::vector<uint32_t> order;
  bool acyclic = true;
  {
    std::vector<uint32_t> succ_start(V + 1, 0), succ;
    for (size_t v = 0; v < V; ++v) {
      const size_t from = succ.size();
      succ.insert(succ.end(), kid.begin() + kid_start[node_start[v]], kid.begin() + kid_start[node_start[v + 1]]);
      std::sort(succ.begin() + static_cast<std::ptrdiff_t>(from), succ.end());
      succ.erase(std::unique(succ.begin() + static_cast<std::ptrdiff_t>(from), succ.end()), succ.end());
      succ_start[v + 1] = static_cast<uint32_t>(succ.size());
    }
    std::vector<char> state(V, 0);  // 1: on the stack, 2: done
    std::vector<std::pair<uint32_t, uint32_t>> stack;
    for (uint32_t s = 0; s < V; ++s) {
      if (state[s]) continue;
      state[s] = 1;
      stack.push_back({s, succ_start[s]});
      while (!stack.empty()) {
        auto& [v, i] = stack.back();
        if (i < succ_start[v + 1]) {
          const uint32_t w = succ[i++];
          if (state[w] == 1) acyclic = false;
          if (!state[w]) {
            state[w] = 1;
            stack.push_back({w, succ_start[w]});
          }
        } else {
          state[v] = 2;
          order.push_back(v);
          stack.pop_back();
        }
      }
    }
  }
  // Greatest fixpoint of Req(C) = AND over nodes of OR over children K of ({K} | Req(K)),
  // starting from "everything" (any fixpoint is sound: induction on the extraction's depth).
  // On a DAG the first pass in that order is exact (every class after its children).
  // ("Every class" has no bit beyond V: a class that keeps it, one in a cycle of classes
  // that require each other, is read bit by bit below, and such a bit has no class.)
  std::vector<uint64_t> top(W, ~uint64_t{0});
  if (V % 64 != 0) top[W - 1] = (uint64_t{1} << (V % 64)) - 1;
  std::vector<uint64_t> req(V * W);
  for (size_t v = 0; v < V; ++v) std::copy(top.begin(), top.end(), req.begin() + static_cast<std::ptrdiff_t>(v * W));
  std::vector<uint64_t> acc(W), un(W);
  bool changed = true;
  int pass = 0;
  for (; changed && pass < max_passes; ++pass) {
    changed = false;
    for (uint32_t v : order) {
      std::copy(top.begin(), top.end(), acc.begin());
      for (uint32_t i = node_start[v]; i < node_start[v + 1]; ++i) {
        std::fill(un.begin(), un.end(), 0);
        for (uint32_t j = kid_start[i]; j < kid_start[i + 1]; ++j) {
          const uint32_t w = kid[j];
          const uint64_t* rw = &req[static_cast<size_t>(w) * W];
          for (size_t k = 0; k < W; ++k) un[k] |= rw[k];
          un[w / 64] |= uint64_t{1} << (w % 64);
        }
        for (size_t k = 0; k < W; ++k) acc[k] &= un[k];
      }
      uint64_t* rv = &req[static_cast<size_t>(v) * W];
      for (size_t k = 0; k < W; ++k)
        if (rv[k] != acc[k]) {
          rv[k] = acc[k];
          changed = true;
        }
    }
    if (acyclic) changed = false;
  }
  if (changed) return out;  // not settled: no requirements (computed = false)
  out.computed = true;
  auto has = [&](uint32_t v, uint32_t w) {
    return (req[static_cast<size_t>(v) * W + w / 64] >> (w % 64)) & 1;
  };
  std::vector<size_t> size(V, 0);
  for (uint32_t v = 0; v < V; ++v) {
    for (size_t i = 0; i < W; ++i) size[v] += static_cast<size_t>(__builtin_popcountll(req[v * W + i]));
    if (has(v, v)) out.unusable[cls[v]] = 1;
  }
  // A class that requires an unusable class is unusable too. (The loops below visit the set
  // bits of a row word by word: testing every pair was quadratic in the classes, a tenth of
  // a second on the 16k-class e-graphs.)
  std::vector<uint64_t> self(W, 0);
  for (uint32_t v = 0; v < V; ++v)
    if (has(v, v)) self[v / 64] |= uint64_t{1} << (v % 64);
  for (uint32_t v = 0; v < V; ++v) {
    const uint64_t* rv = &req[static_cast<size_t>(v) * W];
    for (size_t i = 0; i < W && !out.unusable[cls[v]]; ++i)
      if (rv[i] & self[i]) out.unusable[cls[v]] = 1;
  }
  for (ClassIdx root : g.roots) {
    if (id[root] < 0) continue;
    const auto v = static_cast<uint32_t>(id[root]);
    out.mandatory[root] = 1;
    for_each_bit(&req[static_cast<size_t>(v) * W], W,
                 [&](uint32_t w) { out.mandatory[cls[w]] = 1; });
  }
  // Transitive reduction: visit Req(C) by decreasing |Req| (a class required through another
  // one has a strictly smaller set), skip those already covered.
  // That order (|Req| decreasing, ties by id) is one order of all classes: each class's
  // members are visited in it by walking its set renumbered by rank (no sort per class: on
  // NasRNN the sorts were a third of this function).
  std::vector<uint32_t> by_rank(V), rank(V);
  std::iota(by_rank.begin(), by_rank.end(), 0u);
  std::sort(by_rank.begin(), by_rank.end(),
            [&](uint32_t a, uint32_t b) { return size[a] != size[b] ? size[a] > size[b] : a < b; });
  for (uint32_t i = 0; i < V; ++i) rank[by_rank[i]] = i;
  std::vector<uint64_t> ranked(W);
  for (uint32_t v = 0; v < V; ++v) {
    if (out.unusable[cls[v]]) continue;
    std::fill(ranked.begin(), ranked.end(), 0);
    for_each_bit(&req[static_cast<size_t>(v) * W], W, [&](uint32_t w) {
      if (!out.unusable[cls[w]]) ranked[rank[w] / 64] |= uint64_t{1} << (rank[w] % 64);
    });
    std::fill(acc.begin(), acc.end(), 0);
    for_each_bit(ranked.data(), W, [&](uint32_t at) {
      const uint32_t w = by_rank[at];
      if ((acc[w / 64] >> (w % 64)) & 1) return;
      out.immediate[cls[v]].push_back(cls[w]);
      const uint64_t* rw = &req[static_cast<size_t>(w) * W];
      for (size_t i = 0; i < W; ++i) acc[i] |= rw[i];
    });
    std::sort(out.immediate[cls[v]].begin(), out.immediate[cls[v]].end());
    out.pairs += out.immediate[cls[v]].size();
  }
  out.bits = std::move(req);
  return out;
}

std::string describe(const Reduction::Stats& s) {
  return "removed " + std::to_string(s.unusable) + " unusable, " + std::to_string(s.ungrounded) +
         " ungrounded, " + std::to_string(s.dominated) + " dominated, " + std::to_string(s.free) +
         " in free classes, " + std::to_string(s.unreachable) + " unreachable; left " +
         std::to_string(s.nodes_left) + " nodes in " + std::to_string(s.classes_left) + " classes";
}

}  // namespace tensat::extract
