// Tests of the choice checks and costs in extract_graph.h.
#include <gtest/gtest.h>

#include "extract/extract_graph.h"
#include "tests/extract/builders.h"

namespace tensat::extract {
namespace {

TEST(ExtractGraph, CostsOfASharedChoice) {
  const ExtractGraph g = testing::matmul_merge();
  // out=Noop(C1=split0(M), C2=split1(M)): M and concat counted once in the DAG cost.
  const Choice choice = {0, 1, 2, 3, 4, 6, 8, 9};
  EXPECT_EQ(extraction_problem(g, choice), "");
  EXPECT_NEAR(dag_cost(g, choice), 1.6, 1e-12);
  EXPECT_NEAR(tree_cost(g, choice), 3.2, 1e-12);
}

TEST(ExtractGraph, PruneDropsUnreachableClasses) {
  const ExtractGraph g = testing::matmul_merge();
  const Choice choice = {0, 1, 2, 3, 4, 5, 7, 9};  // separate matmuls: M and concat unused
  const Choice pruned = prune_to_roots(g, choice);
  EXPECT_EQ(pruned[3], -1);
  EXPECT_EQ(pruned[4], -1);
  EXPECT_NE(extraction_problem(g, choice), "");  // unreachable chosen classes are rejected
  EXPECT_EQ(extraction_problem(g, pruned), "");
  EXPECT_NEAR(dag_cost(g, pruned), 2.0, 1e-12);
}

TEST(ExtractGraph, DetectsCyclesMissingChildrenAndFilteredNodes) {
  ExtractGraph g = testing::two_cycle();
  const Choice cyclic = {0, 2, 4};
  ASSERT_TRUE(find_cycle(g, cyclic).has_value());
  EXPECT_EQ(find_cycle(g, cyclic)->size(), 2u);
  EXPECT_NE(extraction_problem(g, cyclic).find("cycle"), std::string::npos);
  EXPECT_THROW(check_extraction(g, cyclic, "test"), InternalError);

  const Choice missing = {0, -1, 4};
  EXPECT_NE(extraction_problem(g, missing).find("no chosen node"), std::string::npos);

  const Choice ok = {0, 3, 4};
  EXPECT_EQ(extraction_problem(g, ok), "");
  g.nodes[3].filtered = true;
  EXPECT_NE(extraction_problem(g, ok).find("filtered"), std::string::npos);
}

TEST(ExtractGraph, ValidateRejectsBrokenGraphs) {
  ExtractGraph g = testing::two_cycle();
  EXPECT_NO_THROW(g.validate());
  g.nodes[1].cost = -1.0;
  EXPECT_THROW(g.validate(), InputError);
  ExtractGraph h = testing::two_cycle();
  h.roots.clear();
  EXPECT_THROW(h.validate(), InputError);
  ExtractGraph k;
  EXPECT_THROW(k.add_node(0, "x", {}, 1.0), InputError);
}

}  // namespace
}  // namespace tensat::extract
