// Hand-built and random e-graphs for the extraction tests, and a brute-force optimum.
#pragma once

#include <cstdint>
#include <limits>
#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "extract/extract_graph.h"

namespace tensat::extract::testing {

// The paper's shared matmul merge: out = Noop(C1, C2), C1 = matmul(A, B1) or split0(M),
// C2 = matmul(A, B2) or split1(M), M = matmul(A, concat(B1, B2)). Separate matmuls cost
// 1.0 each; the merged one 1.5 plus a 0.1 concat. Greedy (tree and DAG) keeps both
// separate (2.0); sharing the merged matmul costs 1.6.
constexpr ClassIdx kNoClass = ~ClassIdx{0};

inline ExtractGraph matmul_merge() {
  ExtractGraph g;
  const ClassIdx a = g.add_class("A"), b1 = g.add_class("B1"), b2 = g.add_class("B2");
  const ClassIdx cat = g.add_class("cat"), m = g.add_class("M");
  const ClassIdx c1 = g.add_class("C1"), c2 = g.add_class("C2"), out = g.add_class("out");
  g.add_node(a, "Input", {}, 0.0);
  g.add_node(b1, "Weight", {}, 0.0);
  g.add_node(b2, "Weight", {}, 0.0);
  g.add_node(cat, "Concat", {b1, b2}, 0.1);
  g.add_node(m, "Matmul", {a, cat}, 1.5);
  g.add_node(c1, "Matmul", {a, b1}, 1.0);
  g.add_node(c1, "Split0", {m}, 0.0);
  g.add_node(c2, "Matmul", {a, b2}, 1.0);
  g.add_node(c2, "Split1", {m}, 0.0);
  g.add_node(out, "Noop", {c1, c2}, 0.0);
  g.roots = {out};
  return g;
}

// A cyclic e-graph: A = f(B) [1] or leaf [5], B = g(A) [1] or leaf [4], root = h(A, B) [0].
// The cheapest choice f, g (2) is a cycle; the best acyclic one is f(B) with B's leaf (5).
inline ExtractGraph two_cycle() {
  ExtractGraph g;
  const ClassIdx a = g.add_class("A"), b = g.add_class("B"), r = g.add_class("R");
  g.add_node(a, "f", {b}, 1.0);
  g.add_node(a, "leafA", {}, 5.0);
  g.add_node(b, "g", {a}, 1.0);
  g.add_node(b, "leafB", {}, 4.0);
  g.add_node(r, "h", {a, b}, 0.0);
  g.roots = {r};
  return g;
}

// A cyclic e-graph whose cheap cycle is three classes long (no 2-cycle cut applies).
// R = h(A); A = f(B) [1] | leaf [10]; B = g(C) [1] | leaf [10]; C = k(A) [1] | leaf [3].
// Best acyclic: f, g, leaf C = 5.
inline ExtractGraph three_cycle() {
  ExtractGraph g;
  const ClassIdx a = g.add_class("A"), b = g.add_class("B"), c = g.add_class("C");
  const ClassIdx r = g.add_class("R");
  g.add_node(a, "f", {b}, 1.0);
  g.add_node(a, "leafA", {}, 10.0);
  g.add_node(b, "g", {c}, 1.0);
  g.add_node(b, "leafB", {}, 10.0);
  g.add_node(c, "k", {a}, 1.0);
  g.add_node(c, "leafC", {}, 3.0);
  g.add_node(r, "h", {a}, 0.0);
  g.roots = {r};
  return g;
}

// A random e-graph: class 0 is the root; acyclic ones only point to higher classes.
// zero_percent: share of nodes that cost 0 (weights, inputs, Split/Concat in TENSAT graphs),
// beyond the 1% the cost draw gives.
inline ExtractGraph random_egraph(uint32_t seed, int classes, bool acyclic, int zero_percent = 0) {
  std::mt19937 rng(seed);
  ExtractGraph g;
  for (int c = 0; c < classes; ++c) g.add_class();
  for (int c = 0; c < classes; ++c) {
    const int nodes = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < nodes; ++k) {
      int kids = static_cast<int>(rng() % 3);
      if (c == classes - 1 || (k == 0 && c >= classes - 2)) kids = 0;
      std::vector<ClassIdx> children;
      for (int i = 0; i < kids; ++i) {
        const int lo = acyclic ? c + 1 : 0;
        int child = lo + static_cast<int>(rng() % static_cast<uint32_t>(classes - lo));
        if (child == c) child = (c + 1) % classes;
        children.push_back(static_cast<ClassIdx>(child));
      }
      double cost = static_cast<double>(rng() % 100) / 10.0;
      if (static_cast<int>(rng() % 100) < zero_percent) cost = 0.0;
      g.add_node(static_cast<ClassIdx>(c), "op", children, cost);
    }
  }
  g.roots = {0};
  return g;
}

// Weighted set cover as an extraction problem (hard for the ILP: a fractional LP, no
// requirement rows): the root uses every element class, element i picks one of the `per`
// sets that contain it (a zero-cost node pointing to the set's class), a set class is a leaf
// that costs its weight. The DAG cost is the weight of the sets used.
inline ExtractGraph set_cover(uint32_t seed, int elements, int sets, int per) {
  std::mt19937 rng(seed);
  ExtractGraph g;
  const ClassIdx root = g.add_class("root");
  std::vector<ClassIdx> elem, set;
  for (int i = 0; i < elements; ++i) elem.push_back(g.add_class("e" + std::to_string(i)));
  for (int j = 0; j < sets; ++j) {
    set.push_back(g.add_class("s" + std::to_string(j)));
    g.add_node(set.back(), "set", {}, 1.0 + static_cast<double>(rng() % 90) / 10.0);
  }
  for (int i = 0; i < elements; ++i) {
    std::vector<int> picked;
    while (static_cast<int>(picked.size()) < per) {
      const int j = static_cast<int>(rng() % static_cast<uint32_t>(sets));
      if (std::find(picked.begin(), picked.end(), j) == picked.end()) picked.push_back(j);
    }
    for (int j : picked) g.add_node(elem[static_cast<size_t>(i)], "in", {set[static_cast<size_t>(j)]}, 0.0);
  }
  g.add_node(root, "cover", elem, 0.0);
  g.roots = {root};
  return g;
}

// Calls f(extraction) for every valid extraction, once per choice of all classes (so the same
// pruned extraction repeats; tiny graphs only).
template <class F>
void for_each_extraction(const ExtractGraph& g, F&& f) {
  Choice choice(g.classes.size(), 0);
  std::vector<size_t> pos(g.classes.size(), 0);
  while (true) {
    for (size_t c = 0; c < g.classes.size(); ++c) choice[c] = g.classes[c].nodes[pos[c]];
    const Choice pruned = prune_to_roots(g, choice);
    if (extraction_problem(g, pruned).empty()) f(pruned);
    size_t c = 0;
    while (c < pos.size() && ++pos[c] == g.classes[c].nodes.size()) pos[c++] = 0;
    if (c == pos.size()) break;
  }
}

// The optimal DAG cost by enumerating every choice (tiny graphs only); +inf if none.
inline double brute_force_optimum(const ExtractGraph& g) {
  double best = std::numeric_limits<double>::infinity();
  for_each_extraction(g, [&](const Choice& c) { best = std::min(best, dag_cost(g, c)); });
  return best;
}

// A random module with the sharing that TENSAT's merge rules create, on class `in`: `gates`
// classes that each compute their value alone (matmul(X, W_i)) or as split_0 / split_1 of a
// merged class shared with another gate (matmul(X, concat(W_i, W_j)), cheaper than the two
// alone), gates combined pairwise by classes with two orders (ewadd(a, b) | ewadd(b, a)) up
// to one output class (returned), plus the module's input class X = relu(in) | tanh(in).
inline ClassIdx merge_module(ExtractGraph& g, std::mt19937& rng, ClassIdx in, int gates, const std::string& tag = "") {
  auto draw = [&](int lo, int hi) { return static_cast<double>(lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1))) / 10.0; };
  const ClassIdx x = g.add_class(tag + "X");
  g.add_node(x, "relu", {in}, draw(1, 20));
  g.add_node(x, "tanh", {in}, draw(1, 20));
  std::vector<ClassIdx> gate;
  for (int i = 0; i < gates; ++i) {
    gate.push_back(g.add_class(tag + "G" + std::to_string(i)));
    g.add_node(gate.back(), "matmul", {x}, draw(10, 30));
  }
  for (int i = 0; i < gates; ++i)
    for (int j = i + 1; j < gates; ++j) {
      if (rng() % 3 == 0) continue;
      const ClassIdx m = g.add_class(tag + "M" + std::to_string(i) + std::to_string(j));
      const double alone = g.nodes[g.classes[gate[static_cast<size_t>(i)]].nodes[0]].cost +
                           g.nodes[g.classes[gate[static_cast<size_t>(j)]].nodes[0]].cost;
      g.add_node(m, "matmul", {x}, alone * draw(6, 11));
      g.add_node(gate[static_cast<size_t>(i)], "split_0", {m}, 0.0);
      g.add_node(gate[static_cast<size_t>(j)], "split_1", {m}, 0.0);
    }
  std::vector<ClassIdx> level = gate;
  while (level.size() > 1) {
    std::vector<ClassIdx> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      const ClassIdx c = g.add_class();
      g.add_node(c, "ewadd", {level[i], level[i + 1]}, draw(1, 5));
      g.add_node(c, "ewadd", {level[i + 1], level[i]}, draw(1, 5));
      next.push_back(c);
    }
    if (level.size() % 2) next.push_back(level.back());
    level = next;
  }
  return level[0];
}

// One merge_module on an input class. Brute force stays cheap for gates <= 4.
inline ExtractGraph merge_egraph(uint32_t seed, int gates) {
  std::mt19937 rng(seed);
  ExtractGraph g;
  const ClassIdx in = g.add_class("in");
  g.add_node(in, "Input", {}, 0.0);
  g.roots = {merge_module(g, rng, in, gates)};
  return g;
}

// `modules` merge_modules in a chain, each on the output of the one before: every output is
// in every extraction (mandatory), so the problem splits into one block per module
// (extract/blocks.h).
inline ExtractGraph module_chain(uint32_t seed, int modules, int gates) {
  std::mt19937 rng(seed);
  ExtractGraph g;
  ClassIdx out = g.add_class("in");
  g.add_node(out, "Input", {}, 0.0);
  for (int m = 0; m < modules; ++m) out = merge_module(g, rng, out, gates, "m" + std::to_string(m) + ".");
  g.roots = {out};
  return g;
}

// Three mandatory classes A, B, C (out = Noop(A, B, C)), each computed alone (cost 1.0) or as
// one half of a pairwise-merged class (AB, AC, BC: cost 1.2 each, split_0 / split_1 free).
// The optimum is one merge and one alone, 2.2; the LP relaxation takes every merge at 1/2,
// 1.8, unless cut by "two of the six providers" (the odd-cover cut, formulation.h). With
// `input`, every conv reads a mandatory input class (relu | tanh of a leaf, costs 0.1 / 0.2),
// as in a real network, where it must not count as a provider (it is always there).
inline ExtractGraph merged_triangle(bool input = false) {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out");
  const ClassIdx a = g.add_class("A"), b = g.add_class("B"), c = g.add_class("C");
  g.add_node(out, "Noop", {a, b, c}, 0.0);
  std::vector<ClassIdx> in;
  if (input) {
    const ClassIdx leaf = g.add_class("x"), i = g.add_class("I");
    g.add_node(leaf, "Input", {}, 0.0);
    g.add_node(i, "relu", {leaf}, 0.1);
    g.add_node(i, "tanh", {leaf}, 0.2);
    in = {i};
  }
  for (ClassIdx k : {a, b, c}) g.add_node(k, "conv", in, 1.0);
  const std::pair<ClassIdx, ClassIdx> pairs[] = {{a, b}, {a, c}, {b, c}};
  for (const auto& [p, q] : pairs) {
    const ClassIdx m = g.add_class();
    g.add_node(m, "conv_merged", in, 1.2);
    g.add_node(p, "split_0", {m}, 0.0);
    g.add_node(q, "split_1", {m}, 0.0);
  }
  g.roots = {out};
  return g;
}

namespace detail {
// A reaches T along P = u(T) | a leaf (100) and Q = v(T) | a leaf (100); T is a conv (10). A is
// add(P, Q) (1) | a leaf (50) with `fork`, else relu(P) | tanh(Q) (1 each) | a leaf (20).
inline ExtractGraph paths_to_one_conv(bool fork) {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out"), a = g.add_class("A"), p = g.add_class("P"), q = g.add_class("Q"),
                 t = g.add_class("T");
  g.add_node(out, fork ? "relu" : "Noop", {a}, 0.0);
  if (fork) {
    g.add_node(a, "add", {p, q}, 1.0);
    g.add_node(a, "leaf_a", {}, 50.0);
  } else {
    g.add_node(a, "relu", {p}, 1.0);
    g.add_node(a, "tanh", {q}, 1.0);
    g.add_node(a, "leaf_a", {}, 20.0);
  }
  g.add_node(p, "u", {t}, 1.0);
  g.add_node(p, "leaf_p", {}, 100.0);
  g.add_node(q, "v", {t}, 1.0);
  g.add_node(q, "leaf_q", {}, 100.0);
  g.add_node(t, "conv", {}, 10.0);
  g.roots = {out};
  return g;
}
}  // namespace detail

// Two paths to one conv: the mandatory class A is either relu(P) or tanh(Q) (cost 1 each) or
// a leaf (20); P is u(T) (1) or a leaf (100), Q is v(T) (1) or a leaf (100); T is the conv
// (10). The optimum is 12 (A, P, T by the first path); the LP relaxation takes both paths at
// 1/2 and pays T at 1/2, 7, since T is required by neither P nor Q. The path cut
// x(A) <= x(T) + exits (the leaves of A, P, Q) closes it (formulation.h).
inline ExtractGraph two_paths_to_one_conv() { return detail::paths_to_one_conv(false); }

// The merged triangle two levels down: three mandatory classes A, B, C, each a conv alone
// (cost 3) or relu(V) (0.1), where V (not mandatory) is one half of a pairwise-merged conv
// (AB, AC, BC: 4 each), split (0.1). The optimum is one merge and one alone, 7.3; the LP
// takes every merge at 1/2 (6.45). The odd cover over direct child classes sees no shared
// provider (each relu reads its own V); the deep odd cover over the merged convs, the region's
// leaves, does (formulation.h).
inline ExtractGraph deep_merged_triangle() {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out");
  const ClassIdx items[3] = {g.add_class("A"), g.add_class("B"), g.add_class("C")};
  g.add_node(out, "Noop", {items[0], items[1], items[2]}, 0.0);
  ClassIdx v[3];
  for (int i = 0; i < 3; ++i) {
    v[i] = g.add_class("V" + std::to_string(i));
    g.add_node(items[i], "conv", {}, 3.0);
    g.add_node(items[i], "relu", {v[i]}, 0.1);
  }
  const std::pair<int, int> pairs[] = {{0, 1}, {0, 2}, {1, 2}};
  for (const auto& [i, j] : pairs) {
    const ClassIdx m = g.add_class(), s = g.add_class();
    g.add_node(m, "conv_merged", {}, 4.0);
    g.add_node(s, "split", {m}, 0.1);
    g.add_node(v[i], "split_0", {s}, 0.0);
    g.add_node(v[j], "split_1", {s}, 0.0);
  }
  g.roots = {out};
  return g;
}

// The deep merged triangle (above) where A has a third form, act(P) (2.9), with P = noop(L)
// and L a small conv (0.5): no optimum uses it (3.4 against the conv alone, 3). L is a leaf of
// A's region, so the deep odd cover over the three items counts it, and the LP meets that row
// by buying L at 1/2 (6.7) without anything that reads it; the read-class rows (L used only
// where P is, P only where act is) make that cost act as well, and the LP is the optimum, 7.3.
inline ExtractGraph deep_merged_triangle_with_unread_leaf() {
  ExtractGraph g = deep_merged_triangle();
  const ClassIdx a = 1;  // (deep_merged_triangle: out, A, B, C, ...)
  const ClassIdx p = g.add_class("P"), l = g.add_class("L");
  g.add_node(a, "act", {p}, 2.9);
  g.add_node(p, "noop", {l}, 0.0);
  g.add_node(l, "conv_small", {}, 0.5);
  return g;
}

// The deep merged triangle where the third output is read plain or relu'd: A and B are
// mandatory relu'd convs; the third conv's output C (plain) and RC (relu'd) are each read by
// one form of the mandatory Y = relu(concat(C, D)) | concat(RC, relu(D)), so neither is
// mandatory, but every extraction uses one of them. Each output is a conv alone (3) or a half
// of a pairwise-merged conv M (4: AB, AC, BC), split plain (split(M), 0.1) or relu'd
// (split(relu(M)), 0.1 + 0.1); C can also be relu'd on its own (0.1). The LP takes the three
// merges at 1/2; the mandatory items' rows (A, B, Y) do not cut it (Y's region holds D, always
// used), the pair {C, RC} as the third item does (odd_covers.cpp).
inline ExtractGraph deep_merged_triangle_with_twin() {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out"), a = g.add_class("A"), b = g.add_class("B"), c = g.add_class("C"),
                 rc = g.add_class("RC"), d = g.add_class("D"), rd = g.add_class("RD"), y = g.add_class("Y"),
                 z = g.add_class("Z");
  g.add_node(out, "Noop", {a, b, y}, 0.0);
  g.add_node(y, "relu", {z}, 0.1);
  g.add_node(z, "concat", {c, d}, 0.1);
  g.add_node(y, "concat", {rc, rd}, 0.1);
  g.add_node(d, "conv_d", {}, 1.0);
  g.add_node(rd, "relu", {d}, 0.1);
  g.add_node(a, "conv_relu", {}, 3.0);
  g.add_node(b, "conv_relu", {}, 3.0);
  g.add_node(c, "conv", {}, 3.0);
  g.add_node(rc, "relu", {c}, 0.1);
  // Per merge: the classes its halves provide, plain and relu'd.
  const struct {
    ClassIdx plain[2], relu[2];
  } merges[] = {{{kNoClass, kNoClass}, {a, b}}, {{kNoClass, c}, {a, rc}}, {{kNoClass, c}, {b, rc}}};
  for (const auto& m : merges) {
    const ClassIdx conv = g.add_class(), split = g.add_class(), relu = g.add_class(), rsplit = g.add_class();
    g.add_node(conv, "conv_merged", {}, 4.0);
    g.add_node(split, "split", {conv}, 0.1);
    g.add_node(relu, "relu", {conv}, 0.1);
    g.add_node(rsplit, "split", {relu}, 0.1);
    for (int h = 0; h < 2; ++h) {
      const std::string half = "split_" + std::to_string(h);
      if (m.plain[h] != kNoClass) g.add_node(m.plain[h], half, {split}, 0.0);
      g.add_node(m.relu[h], half, {rsplit}, 0.0);
    }
  }
  g.roots = {out};
  return g;
}

// Two readers of K on one chain: P = g(K, Q) (0) | a leaf (5), Q = q(K) (0) | a leaf (5), K a
// leaf (1). The optimum, 1, uses g, q and K: K's readers g and q are used together, through
// g's child Q (no fork: one node reaches both). A row g + q <= x(K) would cut it off (LP 5).
inline ExtractGraph reader_chain() {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out"), p = g.add_class("P"), q = g.add_class("Q"), k = g.add_class("K");
  g.add_node(out, "relu", {p}, 0.0);
  g.add_node(p, "g", {k, q}, 0.0);
  g.add_node(p, "leaf_p", {}, 5.0);
  g.add_node(q, "q", {k}, 0.0);
  g.add_node(q, "leaf_q", {}, 5.0);
  g.add_node(k, "conv", {}, 1.0);
  g.roots = {out};
  return g;
}

// Two readers of K under two entries: out = add(E1, E2); E1 = u(K) (1) | a leaf (100), E2 =
// v(K) (1) | a leaf (100), K a conv (10). E1 and E2 are mandatory, so with blocks {E1, E2, K}
// is a block read by `add` from outside: u and v are used together (the optimum, 12).
inline ExtractGraph readers_under_two_entries() {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out"), e1 = g.add_class("E1"), e2 = g.add_class("E2"), k = g.add_class("K");
  g.add_node(out, "add", {e1, e2}, 0.0);
  g.add_node(e1, "u", {k}, 1.0);
  g.add_node(e1, "leaf_1", {}, 100.0);
  g.add_node(e2, "v", {k}, 1.0);
  g.add_node(e2, "leaf_2", {}, 100.0);
  g.add_node(k, "conv", {}, 10.0);
  g.roots = {out};
  return g;
}

// Two readers of T under a fork: out = relu(A); A = add(P, Q) (1) | a leaf (50); P = u(T) (1) |
// a leaf (100); Q = v(T) (1) | a leaf (100); T a conv (10). The optimum, 13, uses u and v
// together, below the fork add(P, Q).
inline ExtractGraph readers_under_a_fork() { return detail::paths_to_one_conv(true); }

// Concat trees of different shapes: Y = [a b c d] (a leaf each, cost 1) as any binary tree of
// concats (cost 1 each): Y = concat(abc, d) | concat(ab, cd) | concat(a, bcd), abc = concat(ab, c)
// | concat(a, bc), bcd = concat(bc, d) | concat(b, cd). Every tree needs three concats, 7 in
// all; the LP takes concat(abc, d) and concat(a, bcd) at 1/2, both through bc, which pays 1/2
// once for the two (6.5): abc and bcd are never used together (no node reads both, or reads
// one through a child and the other through another), so their nodes reading bc exclude each
// other (the exclusive-reader row, reader_rows.cpp).
inline ExtractGraph concat_tree_shapes() {
  ExtractGraph g;
  const ClassIdx out = g.add_class("out"), y = g.add_class("Y"), a = g.add_class("a"), b = g.add_class("b"),
                 c = g.add_class("c"), d = g.add_class("d"), ab = g.add_class("ab"), bc = g.add_class("bc"),
                 cd = g.add_class("cd"), abc = g.add_class("abc"), bcd = g.add_class("bcd");
  g.add_node(out, "relu", {y}, 0.0);
  for (ClassIdx leaf : {a, b, c, d}) g.add_node(leaf, "conv", {}, 1.0);
  g.add_node(ab, "concat", {a, b}, 1.0);
  g.add_node(bc, "concat", {b, c}, 1.0);
  g.add_node(cd, "concat", {c, d}, 1.0);
  g.add_node(abc, "concat", {ab, c}, 1.0);
  g.add_node(abc, "concat", {a, bc}, 1.0);
  g.add_node(bcd, "concat", {bc, d}, 1.0);
  g.add_node(bcd, "concat", {b, cd}, 1.0);
  g.add_node(y, "concat", {abc, d}, 1.0);
  g.add_node(y, "concat", {ab, cd}, 1.0);
  g.add_node(y, "concat", {a, bcd}, 1.0);
  g.roots = {out};
  return g;
}

}  // namespace tensat::extract::testing
