// Tests of the split of the extraction ILP at its mandatory classes (extract/blocks.h).
#include <gtest/gtest.h>

#include <set>

#include "extract/blocks.h"
#include "extract/reduce.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

Blocks blocks_of(const ExtractGraph& g, Reduction& red, Requirements& req) {
  red = reduce(g);
  req = requirements(g, red);
  return find_blocks(g, red, req);
}

ClassIdx class_named(const ExtractGraph& g, const std::string& id) {
  for (ClassIdx c = 0; c < g.classes.size(); ++c)
    if (g.classes[c].json_id == id) return c;
  ADD_FAILURE() << "no class " << id;
  return 0;
}

// Every alive, non-free class is in exactly one block, and the lists agree with of_class.
void expect_partition(const ExtractGraph& g, const Reduction& red, const Blocks& b) {
  std::set<ClassIdx> seen;
  for (size_t i = 0; i < b.count(); ++i) {
    EXPECT_FALSE(b.classes[i].empty());
    for (ClassIdx c : b.classes[i]) {
      EXPECT_TRUE(seen.insert(c).second) << c;
      EXPECT_EQ(b.of_class[c], static_cast<int>(i));
    }
  }
  for (ClassIdx c = 0; c < g.classes.size(); ++c)
    EXPECT_EQ(b.of_class[c] >= 0, red.class_alive[c] && !red.class_free[c]) << c;
}

// The merged triangle: A, B and C are tied by the merged classes their split nodes read; the
// root's node reads only mandatory classes, so it is a block of its own.
TEST(Blocks, MergedClassesTieTheirGatesTheRootStandsAlone) {
  const ExtractGraph g = testing::merged_triangle();
  Reduction red;
  Requirements req;
  const Blocks b = blocks_of(g, red, req);
  ASSERT_EQ(b.count(), 2u);
  expect_partition(g, red, b);
  const ClassIdx a = class_named(g, "A"), bb = class_named(g, "B"), c = class_named(g, "C");
  EXPECT_EQ(b.of_class[a], b.of_class[bb]);
  EXPECT_EQ(b.of_class[a], b.of_class[c]);
  EXPECT_NE(b.of_class[a], b.of_class[g.roots[0]]);
  EXPECT_EQ(b.classes[static_cast<size_t>(b.of_class[g.roots[0]])].size(), 1u);
}

// A chain of modules: no block holds classes of two modules (each module's output, which the
// next one reads, is mandatory), and every merged class shares its block with its gates.
TEST(Blocks, ModulesOfAChainNeverShareABlock) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    const ExtractGraph g = testing::module_chain(seed, 3, 4);
    Reduction red;
    Requirements req;
    const Blocks b = blocks_of(g, red, req);
    ASSERT_GT(b.count(), 3u) << seed;
    expect_partition(g, red, b);
    auto module_of = [&](ClassIdx c) {
      const std::string& id = g.classes[c].json_id;
      return id.size() > 1 && id[0] == 'm' ? id.substr(0, id.find('.')) : std::string();
    };
    for (const auto& classes : b.classes) {
      std::set<std::string> modules;
      for (ClassIdx c : classes)
        if (!module_of(c).empty()) modules.insert(module_of(c));
      EXPECT_LE(modules.size(), 1u) << seed;
    }
    for (ClassIdx c = 0; c < g.classes.size(); ++c) {
      const std::string& id = g.classes[c].json_id;
      if (b.of_class[c] < 0 || id.find(".M") == std::string::npos) continue;
      for (NodeIdx n = 0; n < g.nodes.size(); ++n)
        for (ClassIdx k : g.nodes[n].children) {
          if (k == c && red.node_alive[n]) {
            EXPECT_EQ(b.of_class[g.nodes[n].eclass], b.of_class[c]) << id;
          }
        }
    }
  }
}

// A cycle in the class graph couples the blocks through acyclicity: no split.
TEST(Blocks, CyclicClassGraphDoesNotSplit) {
  for (const ExtractGraph& g : {testing::two_cycle(), testing::three_cycle()}) {
    Reduction red;
    Requirements req;
    EXPECT_EQ(blocks_of(g, red, req).count(), 0u);
  }
}

// Requirements that were not computed give no split either.
TEST(Blocks, NoRequirementsNoSplit) {
  const ExtractGraph g = testing::merged_triangle();
  const Reduction red = reduce(g);
  Requirements req;  // computed = false
  EXPECT_EQ(find_blocks(g, red, req).count(), 0u);
}

}  // namespace
}  // namespace tensat::extract
