// Twin parts (extract/twins.h): repeated modules are found and every map is checked here on its
// own (a bijection that keeps costs, mandatory classes and children); a changed cost or a
// changed child makes no twin; extract_ilp with twins finds the brute-force optimum and a bound
// that never exceeds it, with and without a budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "extract/blocks.h"
#include "extract/ilp.h"
#include "extract/reduce.h"
#include "extract/twins.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

enum class Change { None, Cost, Child };

// Every matmul of the nodes from `first` on also reads a weight of its own: a free class (one
// zero-cost leaf), as a network's weights and their concatenations are.
void add_weights(ExtractGraph& g, size_t first) {
  const size_t end = g.nodes.size();
  for (size_t n = first; n < end; ++n) {
    if (g.nodes[n].op != "matmul") continue;
    const ClassIdx w = g.add_class("W" + std::to_string(n));
    g.add_node(w, "Weight", {}, 0.0);
    g.nodes[n].children.push_back(w);
  }
}

// `modules` merge_modules in a chain, each drawn from the same seed (the same costs), so every
// module's block is the same problem; module 1 changed after it is built where `change` says:
// its first gate's matmul costs more, or its last ewadd reads a gate instead of its second
// child. Every matmul reads a weight of its own (add_weights).
ExtractGraph twin_chain(uint32_t seed, int modules, int gates, Change change = Change::None,
                        ClassIdx* changed = nullptr) {
  ExtractGraph g;
  ClassIdx out = g.add_class("in");
  g.add_node(out, "Input", {}, 0.0);
  for (int m = 0; m < modules; ++m) {
    std::mt19937 rng(seed);
    const size_t first = g.nodes.size();
    out = testing::merge_module(g, rng, out, gates, "m" + std::to_string(m) + ".");
    if (m == 1 && change != Change::None) {
      ENode& n = change == Change::Cost ? g.nodes[first + 2] : g.nodes.back();
      if (change == Change::Cost) n.cost += 0.05;
      if (change == Change::Child) {  // another gate of the module (below it: still acyclic)
        for (const char* gate : {"m1.G0", "m1.G1", "m1.G2"}) {
          ClassIdx k = 0;
          while (class_name(g, k) != gate) ++k;
          if (k != n.children[0] && k != n.children[1]) {
            n.children[1] = k;
            break;
          }
        }
      }
      if (changed) *changed = n.eclass;
    }
    add_weights(g, first);
  }
  g.roots = {out};
  return g;
}

struct Split {
  Reduction red;
  Requirements req;
  std::vector<std::vector<char>> masks;
  std::vector<size_t> order;
};

// The parts as extract_ilp makes them (one per block of more than one class), in index order.
Split split(const ExtractGraph& g) {
  Split s;
  s.red = reduce(g);
  s.req = requirements(g, s.red);
  const Blocks blocks = find_blocks(g, s.red, s.req);
  for (const auto& classes : blocks.classes) {
    if (classes.size() < 2) continue;
    std::vector<char> mask(g.classes.size(), 0);
    for (ClassIdx c : classes) mask[c] = 1;
    s.masks.push_back(std::move(mask));
  }
  s.order.resize(s.masks.size());
  std::iota(s.order.begin(), s.order.end(), size_t{0});
  return s;
}

// The map checked from scratch: class pairs a bijection between the two parts' classes, the
// same mandatory flags; node pairs a bijection between their alive nodes, each pair in a class
// pair, with the same cost (bit for bit) and children that correspond (inside the parts by
// the class pairs, outside: both outside).
void expect_valid_map(const ExtractGraph& g, const Split& s, size_t part, const TwinMap& t) {
  const auto& ma = s.masks[t.rep];
  const auto& mb = s.masks[part];
  auto classes_of = [&](const std::vector<char>& m) {
    std::set<ClassIdx> cs;
    for (ClassIdx c = 0; c < m.size(); ++c)
      if (m[c] && s.red.class_alive[c] && !s.red.class_free[c]) cs.insert(c);
    return cs;
  };
  const std::set<ClassIdx> ca = classes_of(ma), cb = classes_of(mb);
  std::map<ClassIdx, ClassIdx> phi;
  std::set<ClassIdx> images;
  for (const auto& [a, b] : t.classes) {
    EXPECT_TRUE(ca.count(a) && cb.count(b));
    EXPECT_EQ(s.req.mandatory[a], s.req.mandatory[b]);
    phi[a] = b;
    images.insert(b);
  }
  EXPECT_EQ(phi.size(), ca.size());
  EXPECT_EQ(images, cb);
  size_t alive_a = 0;
  for (ClassIdx c : ca)
    for (NodeIdx n : g.classes[c].nodes) alive_a += s.red.node_alive[n] ? 1 : 0;
  EXPECT_EQ(t.nodes.size(), alive_a);
  std::set<NodeIdx> seen_b;
  for (const auto& [na, nb] : t.nodes) {
    ASSERT_TRUE(s.red.node_alive[na] && s.red.node_alive[nb]);
    EXPECT_EQ(phi.at(g.nodes[na].eclass), g.nodes[nb].eclass);
    EXPECT_EQ(g.nodes[na].cost, g.nodes[nb].cost);
    std::vector<int64_t> kids_a, kids_b;
    for (ClassIdx k : g.child_classes(na)) kids_a.push_back(ma[k] && ca.count(k) ? static_cast<int64_t>(phi.at(k)) : -1);
    for (ClassIdx k : g.child_classes(nb)) kids_b.push_back(mb[k] && cb.count(k) ? static_cast<int64_t>(k) : -1);
    std::sort(kids_a.begin(), kids_a.end());
    std::sort(kids_b.begin(), kids_b.end());
    EXPECT_EQ(kids_a, kids_b);
    EXPECT_TRUE(seen_b.insert(nb).second);
  }
}

TEST(Twins, FindsRepeatedModulesAndEveryMapHolds) {
  int found = 0;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const ExtractGraph g = twin_chain(seed, 3, 3 + static_cast<int>(seed % 2));
    const Split s = split(g);
    const auto twins = find_twins(g, s.red, s.req, s.masks, s.order);
    ASSERT_EQ(twins.size(), s.masks.size());
    for (size_t i = 0; i < twins.size(); ++i) {
      if (!twins[i]) continue;
      EXPECT_LT(twins[i]->rep, i) << seed;
      EXPECT_FALSE(twins[twins[i]->rep]) << seed;  // a representative is no twin
      expect_valid_map(g, s, i, *twins[i]);
      ++found;
    }
  }
  // Three identical modules: two twins each (a module is one block, or a few).
  EXPECT_GE(found, 40);
}

TEST(Twins, AChangedCostOrChildMakesNoTwin) {
  int others = 0, in_part = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    // The middle module changed: the part with the changed node is nobody's twin (its other
    // parts may be); the other two modules' still are.
    ClassIdx changed = 0;
    const ExtractGraph g = twin_chain(seed, 3, 3, seed % 2 ? Change::Cost : Change::Child, &changed);
    const Split s = split(g);
    const auto twins = find_twins(g, s.red, s.req, s.masks, s.order);
    for (const auto& m : s.masks) in_part += m[changed] ? 1 : 0;
    for (size_t i = 0; i < twins.size(); ++i) {
      if (!twins[i]) continue;
      expect_valid_map(g, s, i, *twins[i]);
      for (const auto& [a, b] : twins[i]->classes) {
        EXPECT_NE(a, changed) << seed;
        EXPECT_NE(b, changed) << seed;
        others += class_name(g, b).rfind("m2.", 0) == 0 ? 1 : 0;
      }
    }
  }
  EXPECT_GE(others, 20);
  EXPECT_GE(in_part, 30);  // (the changed class is in a part of more than one class)
}

// The exact check alone, under the pairing a found twin had: it holds as found, and fails once
// a node of the twin costs more, reads another class of its part, or a class's mandatory flag
// differs (the hashes, which would reject these first, are not involved), and for a pairing
// that is no bijection between all the classes.
TEST(Twins, TheExactCheckRejectsAChangedCostChildOrFlagUnderTheSamePairing) {
  int checked = 0, rewired_cases = 0;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const ExtractGraph g = twin_chain(seed, 3, 3);
    const Split s = split(g);
    const auto twins = find_twins(g, s.red, s.req, s.masks, s.order);
    std::vector<int> part_of(g.classes.size(), -1);
    for (size_t i = 0; i < s.masks.size(); ++i)
      for (ClassIdx c = 0; c < g.classes.size(); ++c)
        if (s.masks[i][c] && s.red.class_alive[c] && !s.red.class_free[c]) part_of[c] = static_cast<int>(i);
    for (size_t i = 0; i < twins.size(); ++i) {
      if (!twins[i] || twins[i]->classes.size() < 2) continue;
      const size_t r = twins[i]->rep;
      std::vector<ClassIdx> a, b;
      for (const auto& [x, y] : twins[i]->classes) {
        a.push_back(x);
        b.push_back(y);
      }
      ASSERT_TRUE(check_twin(g, s.red, s.req, part_of, r, a, i, b)) << seed;
      // Not a bijection between all the classes: no map (and no exception).
      EXPECT_FALSE(check_twin(g, s.red, s.req, part_of, r, std::vector<ClassIdx>(a.begin() + 1, a.end()), i,
                              std::vector<ClassIdx>(b.begin() + 1, b.end())))
          << seed;
      std::vector<ClassIdx> twice = b;
      twice[1] = twice[0];
      EXPECT_FALSE(check_twin(g, s.red, s.req, part_of, r, a, i, twice)) << seed;
      // A node of the twin (one with a child in its part) costs more, or reads another class.
      NodeIdx node = 0;
      ClassIdx kid = 0;
      bool found = false;
      for (ClassIdx c : b)
        for (NodeIdx n : g.classes[c].nodes)
          for (ClassIdx k : g.child_classes(n))
            if (!found && s.red.node_alive[n] && part_of[k] == static_cast<int>(i)) {
              node = n;
              kid = k;
              found = true;
            }
      ASSERT_TRUE(found) << seed;
      ExtractGraph dearer = g;
      dearer.nodes[node].cost += 0.01;
      EXPECT_FALSE(check_twin(dearer, s.red, s.req, part_of, r, a, i, b)) << seed;
      const std::vector<ClassIdx> kids = g.child_classes(node);
      for (ClassIdx other : b) {
        if (other == g.nodes[node].eclass || std::find(kids.begin(), kids.end(), other) != kids.end()) continue;
        ExtractGraph rewired = g;
        std::replace(rewired.nodes[node].children.begin(), rewired.nodes[node].children.end(), kid, other);
        EXPECT_FALSE(check_twin(rewired, s.red, s.req, part_of, r, a, i, b)) << seed;
        ++rewired_cases;
        break;
      }
      Requirements flipped = s.req;
      flipped.mandatory[b[0]] = !flipped.mandatory[b[0]];
      EXPECT_FALSE(check_twin(g, s.red, flipped, part_of, r, a, i, b)) << seed;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(rewired_cases, 20);
}

// The ILP with twins: the brute-force optimum, proven, the same as without them; with a budget
// too small to prove, a bound that never exceeds the optimum and a valid extraction.
TEST(Twins, IlpWithTwinsFindsTheOptimumAndKeepsAValidBound) {
  int with_twins = 0, lp_open = 0, poor_start_twins = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const ExtractGraph g = twin_chain(seed, 2, 3);
    const double best = testing::brute_force_optimum(g);
    IlpOptions opts;
    opts.landmarks = false;  // (LM-cut alone proves these)
    const ExtractResult a = extract_ilp(g, opts);
    opts.twins = false;
    const ExtractResult b = extract_ilp(g, opts);
    EXPECT_EQ(a.status, "optimal") << seed;
    EXPECT_NEAR(a.dag_cost, best, 1e-9) << seed;
    EXPECT_NEAR(b.dag_cost, best, 1e-9) << seed;
    // From a poor start (greedy DAG without the local search) the twins must take their
    // representatives' better choices, weights included (their free classes, not in the start).
    opts.twins = true;
    opts.local_search = false;
    const ExtractResult e = extract_ilp(g, opts);
    EXPECT_EQ(extraction_problem(g, e.choice), "") << seed;
    EXPECT_EQ(e.status, "optimal") << seed;
    EXPECT_NEAR(e.dag_cost, best, 1e-9) << seed;
    poor_start_twins += e.twin_parts > 0 ? 1 : 0;
    EXPECT_EQ(b.twin_parts, 0u);
    with_twins += a.twin_parts > 0 ? 1 : 0;
    // The LPs only (no CBC round), from a poor start (no local search): the twins' bounds are
    // their representatives' LP bounds, which never exceed the optimum; where they close the
    // problem, the extraction is the optimum.
    IlpOptions lp_only;
    lp_only.landmarks = false;
    lp_only.local_search = false;
    lp_only.max_rounds = 0;
    lp_only.separation_rounds = 0;
    const ExtractResult d = extract_ilp(g, lp_only);
    EXPECT_EQ(extraction_problem(g, d.choice), "") << seed;
    EXPECT_LE(d.best_bound, best + 1e-9) << seed;
    if (d.status == "optimal") {
      EXPECT_NEAR(d.dag_cost, best, 1e-9) << seed;
    }
    lp_open += d.status != "optimal" ? 1 : 0;
    IlpOptions small;
    small.landmarks = false;
    small.work = 1;
    small.min_work = 1;
    small.restriction = false;
    const ExtractResult c = extract_ilp(g, small);
    EXPECT_EQ(extraction_problem(g, c.choice), "") << seed;
    EXPECT_GE(c.dag_cost, best - 1e-9) << seed;
    if (std::isfinite(c.best_bound)) {
      EXPECT_LE(c.best_bound, best + 1e-9) << seed;
    }
  }
  EXPECT_GE(with_twins, 25);
  EXPECT_GE(poor_start_twins, 25);
  EXPECT_GE(lp_open, 1);  // (cases where the twins' bounds are LP bounds below the cost)
}

}  // namespace
}  // namespace tensat::extract
