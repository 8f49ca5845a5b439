// Tests of GraphIndex (graph_index.h) against ExtractGraph's own queries.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "extract/graph_index.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

void expect_matches(const ExtractGraph& g) {
  const GraphIndex index(g);
  std::vector<std::vector<NodeIdx>> parents(g.classes.size());
  for (NodeIdx n = 0; n < g.nodes.size(); ++n) {
    const auto kids = index.kids(n);
    EXPECT_EQ(std::vector<ClassIdx>(kids.begin(), kids.end()), g.child_classes(n)) << n;
    EXPECT_EQ(index.usable(n), g.usable(n)) << n;
    EXPECT_EQ(index.eclass(n), g.nodes[n].eclass) << n;
    if (g.usable(n))
      for (ClassIdx c : g.child_classes(n)) parents[c].push_back(n);
  }
  for (ClassIdx c = 0; c < g.classes.size(); ++c) {
    const auto p = index.parents(c);
    EXPECT_EQ(std::vector<NodeIdx>(p.begin(), p.end()), parents[c]) << c;
  }
}

TEST(GraphIndex, RepeatedChildrenSelfLoopsAndFilteredNodes) {
  ExtractGraph g;
  const ClassIdx a = g.add_class(), b = g.add_class(), c = g.add_class();
  g.add_node(a, "leaf", {}, 1.0);
  g.add_node(b, "twice", {a, a}, 1.0);       // kids {a} once; b's parent list has it once
  g.add_node(b, "self", {b, a}, 1.0);        // unusable: a child of its own class
  g.add_node(c, "f", {b, a, b}, 1.0);        // kids {a, b}
  const NodeIdx filtered = g.add_node(c, "g", {a}, 1.0);
  g.nodes[filtered].filtered = true;         // unusable: in no parent list
  g.add_node(c, "inf", {a}, std::numeric_limits<double>::infinity());
  g.roots = {c};
  expect_matches(g);
  const GraphIndex index(g);
  const auto pa = index.parents(a);
  EXPECT_EQ(std::vector<NodeIdx>(pa.begin(), pa.end()), (std::vector<NodeIdx>{1, 3}));
  EXPECT_FALSE(index.usable(2));
  EXPECT_FALSE(index.usable(filtered));
  EXPECT_TRUE(index.parents(c).empty());
}

TEST(GraphIndex, MatchesOnRandomGraphs) {
  for (uint32_t seed = 0; seed < 50; ++seed)
    for (bool acyclic : {true, false}) expect_matches(testing::random_egraph(seed, 30, acyclic));
}

}  // namespace
}  // namespace tensat::extract
