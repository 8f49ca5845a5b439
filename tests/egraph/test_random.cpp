// Randomized e-graph test: thousands of random adds and unions, invariants after each rebuild.
#include <gtest/gtest.h>

#include <random>

#include "egraph/egraph.h"

namespace tensat {
namespace {

TEST(RandomEGraph, InvariantsHoldAfterEveryRebuild) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 4; ++round) {
    EGraph eg;
    std::vector<EClassId> tensors;  // all f32[4]
    for (int i = 0; i < 6; ++i)
      tensors.push_back(eg.add(ENode::make(Op::Input, {eg.add_sym("in" + std::to_string(i) + "@4")})));
    eg.rebuild();
    const Op unary[] = {Op::Relu, Op::Tanh, Op::Sigmoid};
    size_t unions = 0;
    for (int step = 0; step < 1500; ++step) {
      auto pick = [&] { return tensors[std::uniform_int_distribution<size_t>(0, tensors.size() - 1)(rng)]; };
      int what = std::uniform_int_distribution<int>(0, 9)(rng);
      if (what < 4) {
        tensors.push_back(eg.add(ENode::make(unary[what % 3], {pick()})));
      } else if (what < 7) {
        tensors.push_back(eg.add(ENode::make(what == 4 ? Op::Ewmul : Op::Ewadd, {pick(), pick()})));
      } else if (what < 9) {
        unions += eg.merge(pick(), pick()) ? 1 : 0;
      }
      if (what == 9 || step % 50 == 49) {
        eg.rebuild();
        std::string err = eg.check_invariants();
        ASSERT_EQ(err, "") << "round " << round << " step " << step;
      }
    }
    eg.rebuild();
    ASSERT_EQ(eg.check_invariants(), "");
    EXPECT_GT(unions, 10u);
    // Congruence, checked directly: equal canonical nodes are in one class.
    for (EClassId a : tensors) {
      for (ENodeId n : eg.eclass(a).nodes) {
        auto found = eg.lookup(eg.node(n));
        ASSERT_TRUE(found.has_value());
        EXPECT_EQ(*found, eg.find(a));
      }
    }
  }
}

}  // namespace
}  // namespace tensat
