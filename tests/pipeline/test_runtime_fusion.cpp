// Runtime fusion (lang/runtime_fusion.h) and the costing that follows it: a conv that only a
// relu reads is one call, as runtimes run it, in an imported graph as in an extracted one; any
// other reader, an output conv or an activation already fused keeps the pair apart.
#include <gtest/gtest.h>

#include "gpu_cost/roofline.h"
#include "lang/graph.h"
#include "lang/runtime_fusion.h"
#include "pipeline/costing.h"

namespace tensat {
namespace {

struct Net {
  ir::Graph g;
  ir::NodeId x, w, b;
  Net() {
    x = g.input("x", {DType::F32, {1, 8, 14, 14}});
    w = g.weight("w", {DType::F32, {16, 8, 3, 3}});
    b = g.weight("b", {DType::F32, {16}});
  }
  ir::NodeId conv(const char* act, ir::NodeId in) {
    return g.op(Op::Conv, {g.num(1), g.num(1), g.sym("same"), g.sym(act), in, w, b});
  }
  void outputs(std::vector<ir::NodeId> outs) { g.set_root(outs.size() == 1 ? outs[0] : g.op(Op::Noop, outs)); }
};

cost::RooflineModel t4() { return cost::RooflineModel(*cost::find_profile("t4")); }

double price(cost::CostModel& m, const ir::Graph& g, ir::NodeId id) {
  std::vector<const ValueType*> kids;
  for (ir::NodeId c : g.node(id).children) kids.push_back(&g.type(c));
  return m.op_cost(g.node(id).op, kids);
}

TEST(RuntimeFusion, SwitchedOffNothingIsFused) {
  // The ablation switch (read once per process): with it, every pair is priced apart. Run
  // with TENSAT_RUNTIME_FUSION=0 to check; otherwise this checks the default is on.
  Net n;
  const ir::NodeId c = n.conv("none", n.x), r = n.g.op(Op::Relu, {c});
  n.outputs({r});
  EXPECT_EQ(ir::relu_conv_fusions(n.g)[r] >= 0, ir::runtime_fusion_enabled());
}

TEST(RuntimeFusion, AReluAbsorbsTheConvOnlyItReads) {
  if (!ir::runtime_fusion_enabled()) GTEST_SKIP() << "TENSAT_RUNTIME_FUSION=0";
  Net n;
  const ir::NodeId c = n.conv("none", n.x), r = n.g.op(Op::Relu, {c});
  n.outputs({r});
  const auto abs = ir::relu_conv_fusions(n.g);
  EXPECT_EQ(abs[r], static_cast<int64_t>(c));
  EXPECT_EQ(std::count_if(abs.begin(), abs.end(), [](int64_t a) { return a >= 0; }), 1);
  // Priced as the conv with the relu fused, the same as the graph that writes it so.
  auto m = t4();
  Net f;
  const ir::NodeId fused = f.conv("relu", f.x);
  f.outputs({fused});
  EXPECT_DOUBLE_EQ(graph_cost(n.g, m), graph_cost(f.g, m));
  EXPECT_DOUBLE_EQ(graph_cost(n.g, m), price(m, f.g, fused));
  EXPECT_LT(graph_cost(n.g, m), price(m, n.g, c) + price(m, n.g, r));
  const auto kids = ir::fused_conv_children(n.g, c);
  EXPECT_EQ(kids[3]->sym, "relu");
  EXPECT_EQ(*kids[4], n.g.type(n.x));
}

TEST(RuntimeFusion, AnyOtherReaderKeepsThePairApart) {
  if (!ir::runtime_fusion_enabled()) GTEST_SKIP() << "TENSAT_RUNTIME_FUSION=0";
  auto m = t4();
  {  // the conv also feeds an addition (a residual)
    Net n;
    const ir::NodeId c = n.conv("none", n.x), r = n.g.op(Op::Relu, {c}), a = n.g.op(Op::Ewadd, {c, r});
    n.outputs({a});
    const auto abs = ir::relu_conv_fusions(n.g);
    EXPECT_EQ(abs[r], -1);
    EXPECT_DOUBLE_EQ(graph_cost(n.g, m), price(m, n.g, c) + price(m, n.g, r) + price(m, n.g, a));
    // Unless that reader is not live (an executor that does not compute it).
    std::vector<bool> live(n.g.size(), true);
    live[a] = false;
    EXPECT_EQ(ir::relu_conv_fusions(n.g, &live)[r], static_cast<int64_t>(c));
  }
  {  // the conv is a graph output itself
    Net n;
    const ir::NodeId c = n.conv("none", n.x), r = n.g.op(Op::Relu, {c});
    n.outputs({c, r});
    EXPECT_EQ(ir::relu_conv_fusions(n.g)[r], -1);
  }
  {  // two relus of one conv (hash-consing makes them one node: one reader)
    Net n;
    const ir::NodeId c = n.conv("none", n.x), r1 = n.g.op(Op::Relu, {c}), r2 = n.g.op(Op::Relu, {c});
    EXPECT_EQ(r1, r2);
    n.outputs({n.g.op(Op::Ewmul, {r1, r2})});
    EXPECT_EQ(ir::relu_conv_fusions(n.g)[r1], static_cast<int64_t>(c));
  }
  {  // not fused: another activation already fused, another operator, tanh after a conv
    Net n;
    const ir::NodeId c6 = n.conv("relu6", n.x), r6 = n.g.op(Op::Relu, {c6});
    const ir::NodeId t = n.g.op(Op::Tanh, {n.conv("none", r6)});
    const ir::NodeId p = n.g.op(Op::Relu, {n.g.op(Op::Ewadd, {t, t})});
    n.outputs({p});
    const auto abs = ir::relu_conv_fusions(n.g);
    EXPECT_TRUE(std::all_of(abs.begin(), abs.end(), [](int64_t a) { return a < 0; }));
  }
}

}  // namespace
}  // namespace tensat
