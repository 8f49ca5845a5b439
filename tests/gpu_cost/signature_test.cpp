// Signature strings and structural costs: the cache key must never change silently.
#include <gtest/gtest.h>

#include "gpu_cost/cost_model.h"
#include "gpu_cost/op_params.h"
#include "gpu_cost/roofline.h"
#include "test_support.h"

namespace tensat::cost {
namespace {

using tensat::testing::Types;

TEST(Signature, ConvIsStable) {
  Types t;
  t.num(1).num(1).sym("same").sym("relu").f32({1, 64, 56, 56}).f32({64, 64, 3, 3}).f32({64});
  EXPECT_EQ(signature(Op::Conv, t.list()), "conv(1,1,same,relu,f32[1,64,56,56],f32[64,64,3,3],f32[64])");
}

TEST(Signature, MatmulWithoutBias) {
  Types t;
  t.sym("none").f32({64, 1024}).f32({1024, 1024}).sym("none");
  EXPECT_EQ(signature(Op::Matmul, t.list()), "matmul(none,f32[64,1024],f32[1024,1024],none)");
}

TEST(Signature, OtherDtypesTuplesAndPools) {
  Types a;
  a.sym("1_0_2").tensor(DType::I64, {4, 2, 3});
  EXPECT_EQ(signature(Op::Transpose, a.list()), "transpose(1_0_2,i64[4,2,3])");
  Types p;
  p.num(3).num(3).num(1).num(1).sym("same").num(0).f32({1, 8, 5, 5});
  EXPECT_EQ(signature(Op::Poolavg, p.list()), "poolavg(3,3,1,1,same,0,f32[1,8,5,5])");
  ValueType tuple;
  tuple.kind = Kind::Tuple;
  tuple.tuple = {TensorType{DType::F32, {2, 3}}, TensorType{DType::F32, {2, 5}}};
  Types s;
  s.add(tuple);
  EXPECT_EQ(signature(Op::Split1, s.list()), "split_1((f32[2,3],f32[2,5]))");
}

TEST(Signature, EqualTypesGiveEqualKeys) {
  Types a, b;
  a.f32({2, 3}).f32({2, 3});
  b.f32({2, 3}).f32({2, 3});
  EXPECT_EQ(signature(Op::Ewadd, a.list()), signature(Op::Ewadd, b.list()));
  Types c;
  c.f32({3, 2}).f32({3, 2});
  EXPECT_NE(signature(Op::Ewadd, a.list()), signature(Op::Ewadd, c.list()));
}

TEST(Signature, ParsesBackToTheSameTypes) {
  Types conv, split, pool, tr;
  conv.num(2).num(1).sym("p0_1_0_1").sym("relu").f32({8, 64, 56, 56}).f32({64, 64, 3, 3}).sym("none");
  split.num(1).num(128).f32({1, 256, 14, 14});
  pool.num(3).num(3).num(2).num(2).sym("valid").num(0).f32({1, 64, 35, 35});
  tr.sym("0_2_1_3").tensor(DType::I64, {2, 3, 4, 5});
  for (auto [op, t] : {std::pair{Op::Conv, &conv}, std::pair{Op::Split, &split}, std::pair{Op::Poolavg, &pool},
                       std::pair{Op::Transpose, &tr}}) {
    const std::string sig = signature(op, t->list());
    std::string err;
    auto p = parse_signature(sig, &err);
    ASSERT_TRUE(p) << sig << ": " << err;
    EXPECT_EQ(p->op, op);
    ASSERT_EQ(p->children.size(), t->list().size()) << sig;
    for (size_t i = 0; i < p->children.size(); ++i) EXPECT_EQ(p->children[i], *t->list()[i]) << sig << " child " << i;
    EXPECT_EQ(signature(p->op, p->pointers()), sig);
  }
  // A tuple child, and a scalar tensor.
  auto tuple = parse_signature("noop((f32[1,2],f32[3]),f32[])");
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->children[0].kind, Kind::Tuple);
  EXPECT_EQ(tuple->children[0].tuple.size(), 2u);
  EXPECT_EQ(tuple->children[1].kind, Kind::Tensor);
  EXPECT_TRUE(tuple->children[1].shape().empty());
}

TEST(Signature, MalformedSignaturesAreRefused) {
  for (const char* bad : {"", "conv", "conv(", "nosuchop(f32[1])", "relu(f32[1,-2])", "relu(,f32[1])",
                          "relu((f32[1],x))"}) {
    std::string err;
    EXPECT_FALSE(parse_signature(bad, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(StructuralCost, FreeNodes) {
  Types x;
  x.f32({2, 3});
  Types id;
  id.sym("x@2_3");
  Types rs;
  rs.sym("3_2").f32({2, 3});
  EXPECT_EQ(structural_cost(Op::Input, id.list()), 0.0);
  EXPECT_EQ(structural_cost(Op::Weight, id.list()), 0.0);
  EXPECT_EQ(structural_cost(Op::Reshape, rs.list()), 0.0);
  EXPECT_EQ(structural_cost(Op::Noop, x.list()), 0.0);
  ValueType tuple;
  tuple.kind = Kind::Tuple;
  tuple.tuple = {TensorType{DType::F32, {2, 3}}, TensorType{DType::F32, {2, 5}}};
  Types s;
  s.add(tuple);
  EXPECT_EQ(structural_cost(Op::Split0, s.list()), 0.0);
  EXPECT_EQ(structural_cost(Op::Split1, s.list()), 0.0);
  EXPECT_FALSE(structural_cost(Op::Relu, x.list()).has_value());
}

TEST(StructuralCost, TransposeCostsOnlyWhenItMovesData) {
  Types moves;
  moves.sym("1_0_2").f32({64, 16, 64});
  EXPECT_FALSE(structural_cost(Op::Transpose, moves.list()).has_value());
  Types unit;  // only a size-1 dimension moves: a reshape in disguise
  unit.sym("1_0_2").f32({1, 16, 64});
  EXPECT_EQ(structural_cost(Op::Transpose, unit.list()), 0.0);
  Types ident;
  ident.sym("0_1").f32({4, 5});
  EXPECT_EQ(structural_cost(Op::Transpose, ident.list()), 0.0);
  EXPECT_TRUE(transpose_moves_data({1, 0}, {4, 5}));
  EXPECT_FALSE(transpose_moves_data({0, 2, 1, 3}, {1, 8, 1, 4}));
}

TEST(StructuralCost, OpaqueFromOutputBytes) {
  Types t;
  t.sym(make_opaque_id(7, {TensorType{DType::F32, {1, 1000}}})).f32({1, 1000});
  double expect = 0.01 + 2.0 * 4000 / 300e6;
  ASSERT_TRUE(structural_cost(Op::Opaque, t.list()).has_value());
  EXPECT_NEAR(*structural_cost(Op::Opaque, t.list()), expect, 1e-12);
  EXPECT_NEAR(opaque_cost_ms(4000), expect, 1e-12);
}

TEST(CostModel, WeightOnlyNodesAreFree) {
  RooflineModel m(*find_profile("t4"));
  Types t;
  t.f32({64, 32, 1, 1}).f32({64, 32, 3, 3});
  EXPECT_GT(m.node_cost(Op::Enlarge, t.list(), false), 0.0);
  EXPECT_EQ(m.node_cost(Op::Enlarge, t.list(), true), 0.0);
}

}  // namespace
}  // namespace tensat::cost
