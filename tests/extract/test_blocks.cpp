// Tests of the split of the extraction ILP at its mandatory classes (extract/blocks.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <set>

#include "extract/blocks.h"
#include "extract/lm_cut.h"
#include "extract/serialize_json.h"
#include "extract/ilp.h"
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

// A block's landmark floor never exceeds that block's part of the optimum (blocks are
// independent, so an optimal extraction's part of each block is that block's optimum). NasRNN
// (pipeline, table v2; proven optimal by the ILP): landmarks there reach across blocks, and
// counting one for the block of its first node (a floor too high) fails here.
TEST(Blocks, LandmarkFloorsNeverExceedABlocksOptimum) {
  const ExtractGraph g = read_egraph_json((std::filesystem::path(TENSAT_TEST_DATA_DIR) / "eg_nasrnn_v2.json").string());
  const ExtractResult opt = extract_ilp(g, IlpOptions{});
  ASSERT_EQ(opt.status, "optimal");
  Reduction red;
  Requirements req;
  const Blocks b = blocks_of(g, red, req);
  ASSERT_GT(b.count(), 1u);
  const RelaxedTask task(g, red);
  LmCut lm(task);
  std::vector<std::vector<uint32_t>> cuts;
  lm.run(SIZE_MAX, &cuts);
  std::vector<std::vector<NodeIdx>> landmarks;
  for (const auto& cut : cuts) {
    std::vector<NodeIdx> l;
    for (uint32_t a : cut)
      if (a != task.goal_action() && lm.enabled(a)) l.push_back(task.node_of(a));
    landmarks.push_back(std::move(l));
  }
  const std::vector<double> floor = landmark_floors(g, b.of_class, b.count(), landmarks, lm.landmark_costs());
  std::vector<double> part(b.count(), 0.0);
  for (ClassIdx k = 0; k < opt.choice.size(); ++k)
    if (opt.choice[k] >= 0 && b.of_class[k] >= 0)
      part[static_cast<size_t>(b.of_class[k])] += g.nodes[static_cast<size_t>(opt.choice[k])].cost;
  double sum = 0.0;
  int below = 0;
  for (size_t i = 0; i < b.count(); ++i) {
    EXPECT_LE(floor[i], part[i] * (1.0 + 1e-9) + 1e-12) << "block " << i;
    sum += floor[i];
    if (floor[i] < part[i] * (1.0 - 1e-6)) ++below;
  }
  EXPECT_LE(sum, lm.bound() + 1e-9);
  EXPECT_GT(below, 0);  // (the landmarks that reach across blocks count for none)
}

}  // namespace
}  // namespace tensat::extract
