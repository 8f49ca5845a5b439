// Tests of CostSet / CostSetUnion (cost_set.h) against a plain merge-then-sum reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "extract/cost_set.h"

namespace tensat::extract {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What greedy-DAG computed before CostSetUnion: merge the sets one by one (the accumulated
// set wins on a shared class), insert the own item, sum in class order from 0.0.
struct Reference {
  bool cyclic = false;
  CostSet set;
};
Reference reference_union(const std::vector<const CostSet*>& sets, ClassIdx own_class,
                          NodeIdx own_node, const std::vector<double>& cost) {
  std::vector<CostItem> acc = sets.front()->items, tmp;
  for (size_t s = 1; s < sets.size(); ++s) {
    const auto& b = sets[s]->items;
    tmp.clear();
    size_t i = 0, j = 0;
    while (i < acc.size() || j < b.size()) {
      if (j == b.size() || (i < acc.size() && acc[i].cls < b[j].cls)) {
        tmp.push_back(acc[i++]);
      } else if (i == acc.size() || b[j].cls < acc[i].cls) {
        tmp.push_back(b[j++]);
      } else {
        tmp.push_back(acc[i++]);
        ++j;
      }
    }
    acc.swap(tmp);
  }
  Reference r;
  auto pos = std::lower_bound(acc.begin(), acc.end(), own_class,
                              [](const CostItem& it, ClassIdx c) { return it.cls < c; });
  if (pos != acc.end() && pos->cls == own_class) {
    r.cyclic = true;
    return r;
  }
  acc.insert(pos, CostItem{own_class, own_node});
  double s = 0.0;
  for (const CostItem& it : acc) s += cost[it.node];
  r.set.items = acc;
  r.set.total = s;
  return r;
}

CostSet make_set(std::vector<CostItem> items, const std::vector<double>& cost) {
  std::sort(items.begin(), items.end(),
            [](const CostItem& a, const CostItem& b) { return a.cls < b.cls; });
  CostSet s;
  s.items = std::move(items);
  for (const CostItem& it : s.items) s.total += cost[it.node];
  return s;
}

TEST(CostSet, NodeOf) {
  const std::vector<double> cost(10, 1.0);
  const CostSet s = make_set({{7, 3}, {2, 5}, {4, 0}}, cost);
  EXPECT_EQ(s.node_of(2), 5);
  EXPECT_EQ(s.node_of(4), 0);
  EXPECT_EQ(s.node_of(7), 3);
  EXPECT_EQ(s.node_of(3), -1);
  EXPECT_EQ(s.node_of(9), -1);
  EXPECT_EQ(CostSet{}.node_of(0), -1);
}

TEST(CostSetUnion, FirstSetWinsAndTheTotalIsSummedInClassOrder) {
  // Node i costs cost[i]. Classes 0..3. Both sets contain class 1, with different nodes.
  const std::vector<double> cost = {1.0, 2.0, 10.0, 0.5, 0.25};
  const CostSet a = make_set({{0, 0}, {1, 1}}, cost);  // 3
  const CostSet b = make_set({{1, 2}, {2, 3}}, cost);  // 10.5
  CostSetUnion u(4, cost);
  CostSet out;
  const std::vector<const CostSet*> sets = {&a, &b};
  ASSERT_TRUE(u.union_below(sets, 3, 4, kInf, out));
  const std::vector<CostItem> want = {{0, 0}, {1, 1}, {2, 3}, {3, 4}};
  EXPECT_EQ(out.items, want);
  EXPECT_EQ(out.total, 1.0 + 2.0 + 0.5 + 0.25);
  // The bound is strict: a candidate that only ties is rejected.
  EXPECT_FALSE(u.union_below(sets, 3, 4, 3.75, out));
  EXPECT_TRUE(u.union_below(sets, 3, 4, std::nextafter(3.75, kInf), out));
}

TEST(CostSetUnion, RejectsAUnionThatContainsItsOwnClass) {
  const std::vector<double> cost = {1.0, 1.0, 1.0};
  const CostSet a = make_set({{0, 0}}, cost), b = make_set({{1, 1}}, cost);
  CostSetUnion u(3, cost);
  CostSet out;
  const std::vector<const CostSet*> sets = {&a, &b};
  EXPECT_FALSE(u.union_below(sets, 0, 2, kInf, out));  // in the first set
  EXPECT_FALSE(u.union_below(sets, 1, 2, kInf, out));  // in another set
  EXPECT_EQ(u.stats().cycles, 2u);
  EXPECT_TRUE(u.union_below(sets, 2, 2, kInf, out));
}

TEST(CostSetUnion, BoundsRejectWithoutBuilding) {
  std::vector<double> cost(8, 1.0);
  const CostSet a = make_set({{0, 0}, {1, 1}, {2, 2}}, cost);  // 3
  const CostSet b = make_set({{3, 3}, {4, 4}}, cost);          // 2
  CostSetUnion u(8, cost);
  CostSet out;
  const std::vector<const CostSet*> sets = {&a, &b};
  EXPECT_FALSE(u.union_below(sets, 5, 5, 3.0, out));  // the first set alone reaches it
  EXPECT_EQ(u.stats().cut_first, 1u);
  EXPECT_FALSE(u.union_below(sets, 5, 5, 5.5, out));  // 3 + 2 + 1 = 6, clearly above
  EXPECT_EQ(u.stats().cut_approx, 1u);
  EXPECT_EQ(u.stats().built, 0u);
  EXPECT_FALSE(u.union_below(sets, 5, 5, 6.0, out));  // a tie: only the exact sum can tell
  EXPECT_EQ(u.stats().built, 1u);
  EXPECT_TRUE(u.union_below(sets, 5, 5, 6.5, out));
  EXPECT_EQ(out.total, 6.0);
}

TEST(CostSetUnion, TheExactTotalDecidesNearTiesLikeTheReference) {
  // Rounding makes the class-order sum differ from other orders: 1 + 2^-53 + 2^-53 + 2^-53
  // is 1 in class order (each step rounds back to 1), 1 + 2^-51 when the small terms come
  // first. The union must give the bits of the class-order sum.
  const double e = std::ldexp(1.0, -53);
  const std::vector<double> cost = {1.0, e, e, e};
  const CostSet big = make_set({{0, 0}, {2, 1}}, cost);  // classes 0, 2
  const CostSet small = make_set({{1, 2}}, cost);        // class 1, between them
  CostSetUnion u(4, cost);
  CostSet out;
  const std::vector<const CostSet*> sets = {&big, &small};
  const Reference ref = reference_union(sets, 3, 3, cost);
  ASSERT_TRUE(u.union_below(sets, 3, 3, kInf, out));
  EXPECT_EQ(out.items, ref.set.items);
  EXPECT_EQ(out.total, ref.set.total);
  EXPECT_EQ(out.total, 1.0);
  // Bound exactly at the class-order total: rejected; just above it: accepted.
  EXPECT_FALSE(u.union_below(sets, 3, 3, 1.0, out));
  EXPECT_TRUE(u.union_below(sets, 3, 3, std::nextafter(1.0, 2.0), out));
}

// Random sets, bounds around the reference total, several sets, galloping and stamping paths.
TEST(CostSetUnion, MatchesTheReferenceOnRandomSets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t C = 5 + rng() % 300;
    std::vector<double> cost;
    std::vector<std::vector<NodeIdx>> nodes_of(C);  // 1..3 nodes per class
    for (size_t c = 0; c < C; ++c) {
      const int k = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < k; ++i) {
        nodes_of[c].push_back(static_cast<NodeIdx>(cost.size()));
        const int kind = static_cast<int>(rng() % 4);
        cost.push_back(kind == 0 ? 0.0 : kind == 1 ? 0.1 * static_cast<double>(rng() % 7)
                                                   : static_cast<double>(rng() % 1000) / 997.0);
      }
    }
    const int nsets = 1 + static_cast<int>(rng() % 4);
    std::vector<CostSet> owned;
    for (int s = 0; s < nsets; ++s) {
      // Sizes vary from a few classes to most of them (both membership strategies).
      const size_t want = 1 + rng() % (rng() % 2 ? C : 1 + C / 20);
      std::vector<CostItem> items;
      std::vector<char> used(C, 0);
      for (size_t i = 0; i < want; ++i) {
        const ClassIdx c = static_cast<ClassIdx>(rng() % C);
        if (used[c]) continue;
        used[c] = 1;
        items.push_back({c, nodes_of[c][rng() % nodes_of[c].size()]});
      }
      owned.push_back(make_set(items, cost));
    }
    std::vector<const CostSet*> sets;
    for (const auto& s : owned) sets.push_back(&s);
    std::sort(sets.begin(), sets.end(),
              [](const CostSet* a, const CostSet* b) { return a->size() > b->size(); });
    const ClassIdx own = static_cast<ClassIdx>(rng() % C);
    const NodeIdx own_node = nodes_of[own][0];
    const Reference ref = reference_union(sets, own, own_node, cost);
    CostSetUnion u(C, cost);
    const double t = ref.cyclic ? 1.0 : ref.set.total;
    for (double bound : {kInf, t, std::nextafter(t, kInf), std::nextafter(t, 0.0), t * (1 + 1e-15),
                         t * (1 - 1e-15), t * 1.01, t * 0.99, 0.0}) {
      CostSet out;
      const bool got = u.union_below(sets, own, own_node, bound, out);
      const bool want = !ref.cyclic && ref.set.total < bound;
      ASSERT_EQ(got, want) << "trial " << trial << " bound " << bound;
      if (got) {
        ASSERT_EQ(out.items, ref.set.items) << "trial " << trial;
        ASSERT_EQ(out.total, ref.set.total) << "trial " << trial;  // bit-identical
      }
    }
    // The plain union (roots) agrees with the reference's merge.
    const CostSet all = u.union_of(sets);
    std::vector<CostItem> merged = ref.set.items;
    if (!ref.cyclic)
      std::erase_if(merged,
                    [&](const CostItem& it) { return it.cls == own && it.node == own_node; });
    if (!ref.cyclic) {
      EXPECT_EQ(all.items, merged) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace tensat::extract
