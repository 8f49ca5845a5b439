// Union-find and hash-consing by hand-checked states.
#include <gtest/gtest.h>

#include "egraph/egraph.h"
#include "egraph/unionfind.h"

namespace tensat {
namespace {

TEST(UnionFind, HandChecked) {
  UnionFind uf;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(uf.make_set().v, static_cast<uint32_t>(i));
  uf.union_roots(EClassId(0), EClassId(1));
  uf.union_roots(EClassId(2), EClassId(3));
  uf.union_roots(EClassId(0), EClassId(2));
  EXPECT_EQ(uf.find(EClassId(3)).v, 0u);
  EXPECT_EQ(uf.find(EClassId(1)).v, 0u);
  EXPECT_EQ(uf.find(EClassId(4)).v, 4u);
  EXPECT_EQ(uf.find_mut(EClassId(3)).v, 0u);
  EXPECT_TRUE(uf.is_root(EClassId(0)));
  EXPECT_FALSE(uf.is_root(EClassId(3)));
  EXPECT_TRUE(uf.is_root(EClassId(5)));
}

TEST(HashCons, SharesEqualNodes) {
  EGraph eg;
  EClassId x = eg.add(ENode::make(Op::Input, {eg.add_sym("x@4_4")}));
  EClassId x2 = eg.add(ENode::make(Op::Input, {eg.add_sym("x@4_4")}));
  EXPECT_EQ(x, x2);
  EClassId r1 = eg.add(ENode::make(Op::Relu, {x}));
  EClassId r2 = eg.add(ENode::make(Op::Relu, {x}));
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(eg.num_nodes(), 3u);  // sym, input, relu
  EXPECT_EQ(eg.num_classes(), 3u);
  EXPECT_FALSE(eg.is_clean());
  eg.rebuild();
  EXPECT_EQ(eg.check_invariants(), "");
  EXPECT_EQ(eg.type(r1).str(), "f32[4,4]");
  EXPECT_FALSE(eg.data(x).weight_only);
  EXPECT_EQ(eg.lookup(ENode::make(Op::Relu, {x})), r1);
  EXPECT_FALSE(eg.lookup(ENode::make(Op::Tanh, {x})).has_value());
}

TEST(HashCons, RejectsIllTyped) {
  EGraph eg;
  EClassId a = eg.add(ENode::make(Op::Input, {eg.add_sym("a@4_4")}));
  EClassId b = eg.add(ENode::make(Op::Input, {eg.add_sym("b@3_5")}));
  EClassId none = eg.add_sym("none");
  size_t before = eg.num_nodes();
  EClassId out;
  std::string err;
  EXPECT_FALSE(eg.try_add(ENode::make(Op::Matmul, {none, a, b, none}), &out, &err));
  EXPECT_NE(err.find("matmul"), std::string::npos);
  EXPECT_EQ(eg.num_nodes(), before);
  EXPECT_THROW(eg.add(ENode::make(Op::Ewadd, {a, b})), std::invalid_argument);
}

TEST(HashCons, CongruenceAfterUnion) {
  // a, b inputs of equal type; f(a) and f(b) become congruent when a = b.
  EGraph eg;
  EClassId a = eg.add(ENode::make(Op::Input, {eg.add_sym("a@4")}));
  EClassId b = eg.add(ENode::make(Op::Input, {eg.add_sym("b@4")}));
  EClassId fa = eg.add(ENode::make(Op::Relu, {a}));
  EClassId fb = eg.add(ENode::make(Op::Relu, {b}));
  EClassId gfa = eg.add(ENode::make(Op::Tanh, {fa}));
  EClassId gfb = eg.add(ENode::make(Op::Tanh, {fb}));
  eg.rebuild();
  size_t classes = eg.num_classes();
  EXPECT_TRUE(eg.merge(a, b));
  EXPECT_FALSE(eg.is_clean());
  EXPECT_THROW(eg.require_clean("test"), std::logic_error);
  eg.rebuild();
  EXPECT_EQ(eg.check_invariants(), "");
  EXPECT_EQ(eg.find(fa), eg.find(fb));
  EXPECT_EQ(eg.find(gfa), eg.find(gfb));
  EXPECT_EQ(eg.num_classes(), classes - 3);
  EXPECT_EQ(eg.eclass(fa).nodes.size(), 1u);  // the duplicate relu is gone
  EXPECT_EQ(eg.eclass(a).nodes.size(), 2u);   // two inputs
  EXPECT_FALSE(eg.merge(fa, fb));
}

TEST(HashCons, MergeCheckedRefusesDifferentTypes) {
  EGraph eg;
  EClassId a = eg.add(ENode::make(Op::Input, {eg.add_sym("a@4")}));
  EClassId b = eg.add(ENode::make(Op::Input, {eg.add_sym("b@5")}));
  eg.rebuild();
  EXPECT_FALSE(eg.merge_checked(a, b, "test-rule"));
  EXPECT_NE(eg.find(a), eg.find(b));
  EXPECT_TRUE(eg.is_clean());
}

TEST(Analysis, WeightOnlyAndSplitTree) {
  EGraph eg;
  EClassId w1 = eg.add(ENode::make(Op::Weight, {eg.add_sym("w1@8_3")}));
  EClassId w2 = eg.add(ENode::make(Op::Weight, {eg.add_sym("w2@8_5")}));
  EClassId x = eg.add(ENode::make(Op::Input, {eg.add_sym("x@2_8")}));
  EClassId one = eg.add_num(1);
  EClassId cat = eg.add(ENode::make(Op::Concat, {one, w1, w2}));
  EClassId none = eg.add_sym("none");
  EClassId mm = eg.add(ENode::make(Op::Matmul, {none, x, cat, none}));
  EClassId r = eg.add(ENode::make(Op::Relu, {mm}));
  EClassId three = eg.add_num(3);
  EClassId sp = eg.add(ENode::make(Op::Split, {one, three, r}));
  EClassId s0 = eg.add(ENode::make(Op::Split0, {sp}));
  eg.rebuild();
  EXPECT_TRUE(eg.data(cat).weight_only);
  EXPECT_FALSE(eg.data(mm).weight_only);
  EXPECT_EQ(eg.data(cat).boundary(1), 3);
  EXPECT_EQ(eg.data(mm).boundary(1), 3);
  EXPECT_EQ(eg.data(r).boundary(1), 3);
  EXPECT_EQ(split_tree_str(eg.data(r).tree(1)), "(8 (3) (5))");
  EXPECT_EQ(eg.type(s0).str(), "f32[2,3]");
  EXPECT_FALSE(eg.data(s0).boundary(1).has_value());  // a leaf: no further boundary
}

}  // namespace
}  // namespace tensat
