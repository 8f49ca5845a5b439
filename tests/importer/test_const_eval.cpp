// Unit tests of the constant evaluator (importer/const_eval.h), one or more per operator, with
// expected values written out by hand (numpy semantics where ONNX follows numpy, C++ integer
// semantics where ONNX Runtime does).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "importer/const_eval.h"

namespace tensat::const_eval {
namespace {

WeightData i64(const std::vector<int64_t>& v, Shape s) {
  WeightData w;
  w.type = TensorType{DType::I64, std::move(s)};
  w.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * 8);
  return w;
}
WeightData scalar(int64_t x) { return i64({x}, {}); }
WeightData vec(const std::vector<int64_t>& v) { return i64(v, {static_cast<int64_t>(v.size())}); }
WeightData f32(const std::vector<float>& v, Shape s) {
  WeightData w;
  w.type = TensorType{DType::F32, std::move(s)};
  w.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return w;
}
WeightData boolean(const std::vector<uint8_t>& v, Shape s) {
  WeightData w;
  w.type = TensorType{DType::Bool, std::move(s)};
  w.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size());
  return w;
}
std::vector<int64_t> ints_of(const WeightData& w) {
  std::vector<int64_t> v(w.count());
  if (w.type.dtype == DType::I64) {
    std::memcpy(v.data(), w.bytes.data(), v.size() * 8);
  } else if (w.type.dtype == DType::I32) {
    for (size_t i = 0; i < v.size(); ++i) {
      int32_t x;
      std::memcpy(&x, w.bytes.data() + i * 4, 4);
      v[i] = x;
    }
  } else {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(w.bytes[i]);
  }
  return v;
}
std::vector<float> floats_of(const WeightData& w) {
  std::vector<float> v(w.count());
  std::memcpy(v.data(), w.bytes.data(), v.size() * 4);
  return v;
}

struct Call {
  onnx::NodeProto node;
  std::vector<WeightData> values;  // kept alive
  std::vector<std::optional<Operand>> ops;
  int64_t opset = 13;
};

Call node(const std::string& op, int inputs) {
  Call c;
  c.node.set_op_type(op);
  c.node.set_name("n");
  for (int i = 0; i < inputs; ++i) c.node.add_input("i" + std::to_string(i));
  c.node.add_output("y");
  c.values.reserve(8);
  return c;
}
void attr_i(Call& c, const std::string& name, int64_t v) {
  auto* a = c.node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void attr_ints(Call& c, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = c.node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void value(Call& c, WeightData w) {
  c.values.push_back(std::move(w));
  c.ops.push_back(Operand{c.values.back().type, &c.values.back()});
}
void type_only(Call& c, TensorType t) { c.ops.push_back(Operand{std::move(t), nullptr}); }
void absent(Call& c) { c.ops.push_back(std::nullopt); }

WeightData run(const Call& c) {
  std::string why;
  auto r = evaluate(c.node, c.opset, c.ops, &why);
  EXPECT_TRUE(r.has_value()) << c.node.op_type() << ": " << why;
  if (!r) return {};
  EXPECT_EQ(r->size(), 1u);
  return (*r)[0];
}
std::string refused(const Call& c) {
  std::string why;
  auto r = evaluate(c.node, c.opset, c.ops, &why);
  EXPECT_FALSE(r.has_value()) << c.node.op_type() << " evaluated";
  return why;
}

TEST(ConstEval, ShapeNeedsOnlyTheType) {
  auto c = node("Shape", 1);
  type_only(c, TensorType{DType::F32, {2, 3, 4}});
  WeightData y = run(c);
  EXPECT_EQ(y.type, (TensorType{DType::I64, {3}}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{2, 3, 4}));
  auto d = node("Shape", 1);  // opset 15 slice
  d.opset = 15;
  attr_i(d, "start", 1);
  attr_i(d, "end", -1);
  type_only(d, TensorType{DType::Other, {2, 3, 4, 5}});
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{3, 4}));
}

TEST(ConstEval, SizeIsAScalar) {
  auto c = node("Size", 1);
  type_only(c, TensorType{DType::F32, {2, 3, 4}});
  WeightData y = run(c);
  EXPECT_EQ(y.type.shape, Shape{});
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{24}));
}

TEST(ConstEval, GatherScalarVectorAndAxis) {
  auto c = node("Gather", 2);
  value(c, vec({10, 11, 12, 13, 14}));
  value(c, scalar(1));
  WeightData y = run(c);
  EXPECT_EQ(y.type.shape, Shape{});  // scalar index: rank drops
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{11}));
  auto d = node("Gather", 2);
  value(d, vec({10, 11, 12, 13, 14}));
  value(d, vec({-1, 0}));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{14, 10}));
  auto e = node("Gather", 2);  // [2,3] along axis 1 with indices [2]
  attr_i(e, "axis", 1);
  value(e, i64({1, 2, 3, 4, 5, 6}, {2, 3}));
  value(e, vec({2, 0}));
  WeightData ye = run(e);
  EXPECT_EQ(ye.type.shape, (Shape{2, 2}));
  EXPECT_EQ(ints_of(ye), (std::vector<int64_t>{3, 1, 6, 4}));
  auto f = node("Gather", 2);
  value(f, vec({1, 2}));
  value(f, scalar(2));
  EXPECT_NE(refused(f).find("out of range"), std::string::npos);
}

TEST(ConstEval, UnsqueezeSqueeze) {
  auto c = node("Unsqueeze", 2);
  value(c, scalar(7));
  value(c, vec({0}));
  WeightData y = run(c);
  EXPECT_EQ(y.type.shape, (Shape{1}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{7}));
  auto d = node("Unsqueeze", 1);  // opset 11: axes attribute, negative axis
  d.opset = 11;
  attr_ints(d, "axes", {-1});
  value(d, vec({1, 2, 3}));
  EXPECT_EQ(run(d).type.shape, (Shape{3, 1}));
  auto e = node("Squeeze", 2);
  value(e, i64({1, 2, 3}, {1, 3, 1}));
  value(e, vec({2}));
  EXPECT_EQ(run(e).type.shape, (Shape{1, 3}));
  auto f = node("Squeeze", 1);  // no axes: every 1
  value(f, i64({1, 2, 3}, {1, 3, 1}));
  EXPECT_EQ(run(f).type.shape, (Shape{3}));
  auto g = node("Squeeze", 2);
  value(g, i64({1, 2, 3}, {1, 3, 1}));
  value(g, vec({1}));
  EXPECT_NE(refused(g).find("not 1"), std::string::npos);
}

TEST(ConstEval, ConcatAxes) {
  auto c = node("Concat", 3);
  attr_i(c, "axis", 0);
  value(c, vec({1}));
  value(c, vec({-1}));
  value(c, vec({4, 4}));
  EXPECT_EQ(ints_of(run(c)), (std::vector<int64_t>{1, -1, 4, 4}));
  auto d = node("Concat", 2);
  attr_i(d, "axis", -1);
  value(d, i64({1, 2, 3, 4}, {2, 2}));
  value(d, i64({5, 6}, {2, 1}));
  WeightData y = run(d);
  EXPECT_EQ(y.type.shape, (Shape{2, 3}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{1, 2, 5, 3, 4, 6}));
}

TEST(ConstEval, SliceClampsNegativeAndReverse) {
  auto c = node("Slice", 4);
  value(c, vec({0, 1, 2, 3, 4, 5}));
  value(c, vec({-4}));
  value(c, vec({std::numeric_limits<int64_t>::max()}));
  value(c, vec({0}));
  EXPECT_EQ(ints_of(run(c)), (std::vector<int64_t>{2, 3, 4, 5}));
  auto d = node("Slice", 5);  // reverse with step -2
  value(d, vec({0, 1, 2, 3, 4, 5}));
  value(d, vec({-1}));
  value(d, vec({std::numeric_limits<int64_t>::min()}));
  value(d, vec({0}));
  value(d, vec({-2}));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{5, 3, 1}));
  auto e = node("Slice", 5);  // 2-D, axis 1, absent axes means 0..n-1: here given
  value(e, i64({1, 2, 3, 4, 5, 6}, {2, 3}));
  value(e, vec({1}));
  value(e, vec({3}));
  value(e, vec({1}));
  absent(e);
  WeightData y = run(e);
  EXPECT_EQ(y.type.shape, (Shape{2, 2}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{2, 3, 5, 6}));
  auto f = node("Slice", 1);  // opset 9: attributes
  f.opset = 9;
  attr_ints(f, "starts", {1});
  attr_ints(f, "ends", {2});
  value(f, vec({7, 8, 9}));
  EXPECT_EQ(ints_of(run(f)), (std::vector<int64_t>{8}));
}

// PyTorch's Swin export reverses its pad list with Reshape -> Slice(step -1) -> Transpose(perm
// 1,0) -> Reshape, in int64: an unfolded Transpose left Pad without a static shape.
TEST(ConstEval, TransposePermutesAnyElementType) {
  auto c = node("Transpose", 1);
  attr_ints(c, "perm", {1, 0});
  value(c, i64({1, 2, 3, 4, 5, 6}, {3, 2}));
  WeightData y = run(c);
  EXPECT_EQ(y.type.shape, (Shape{2, 3}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{1, 3, 5, 2, 4, 6}));
  auto d = node("Transpose", 1);  // no perm: the axes reversed
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  value(d, f32(x, {2, 3, 4}));
  WeightData z = run(d);
  ASSERT_EQ(z.type.shape, (Shape{4, 3, 2}));
  std::vector<float> got(24);
  std::memcpy(got.data(), z.bytes.data(), 96);
  // z[i][j][k] = x[k][j][i] = 12k + 4j + i
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(got[static_cast<size_t>(i * 6 + j * 2 + k)], 12 * k + 4 * j + i);
  auto e = node("Transpose", 1);  // a repeated axis
  attr_ints(e, "perm", {1, 1});
  value(e, i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_NE(refused(e).find("not a permutation"), std::string::npos);
  auto g = node("Transpose", 1);  // an explicit empty perm is not the default
  attr_ints(g, "perm", {});
  value(g, i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_NE(refused(g).find("every axis"), std::string::npos);
  auto f = node("Transpose", 1);
  attr_ints(f, "perm", {0});
  value(f, i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_NE(refused(f).find("every axis"), std::string::npos);
}

// MobileViT's patch counts: Mul(Ceil(size / patch), patch) in float, then Cast.
TEST(ConstEval, RoundingSqrtAndAbs) {
  auto floats = [](const WeightData& w) {
    std::vector<float> v(w.count());
    std::memcpy(v.data(), w.bytes.data(), v.size() * 4);
    return v;
  };
  const std::vector<float> x{-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.7f};
  auto c = node("Ceil", 1);
  value(c, f32(x, {6}));
  EXPECT_EQ(floats(run(c)), (std::vector<float>{-2, -0.0f, 1, 2, 3, 3}));
  auto f = node("Floor", 1);
  value(f, f32(x, {6}));
  EXPECT_EQ(floats(run(f)), (std::vector<float>{-3, -1, 0, 1, 2, 2}));
  auto r = node("Round", 1);  // half to even
  value(r, f32(x, {6}));
  EXPECT_EQ(floats(run(r)), (std::vector<float>{-2, -0.0f, 0, 2, 2, 3}));
  auto q = node("Sqrt", 1);
  value(q, f32({4, 2, 0}, {3}));
  EXPECT_EQ(floats(run(q)), (std::vector<float>{2, std::sqrt(2.0f), 0}));
  auto a = node("Abs", 1);
  value(a, vec({-3, 0, 7}));
  EXPECT_EQ(ints_of(run(a)), (std::vector<int64_t>{3, 0, 7}));
  auto m = node("Abs", 1);
  value(m, vec({std::numeric_limits<int64_t>::min()}));
  EXPECT_NE(refused(m).find("overflows"), std::string::npos);
  auto ci = node("Ceil", 1);
  value(ci, vec({1}));
  EXPECT_NE(refused(ci).find("of integers"), std::string::npos);
  auto sz = node("Round", 1);  // the sign of a zero result is the input's
  value(sz, f32({-0.4f, -0.5f, 0.4f}, {3}));
  const std::vector<float> zs = floats(run(sz));
  EXPECT_TRUE(std::signbit(zs[0]) && std::signbit(zs[1]) && !std::signbit(zs[2]));
  auto big = node("Round", 1);  // halves of larger numbers, negative ones
  value(big, f32({3.5f, 4.5f, -3.5f, -4.5f, 1e7f + 0.5f}, {5}));
  EXPECT_EQ(floats(run(big)), (std::vector<float>{4, 4, -4, -4, 1e7f}));
  auto r10 = node("Round", 1);  // Round came with opset 11
  r10.opset = 10;
  value(r10, f32({0.5f}, {1}));
  EXPECT_NE(refused(r10).find("before opset 11"), std::string::npos);
}

// torchvision's detection transform: the largest image size by ReduceMax over a constant.
TEST(ConstEval, ReductionsThatAreExact) {
  auto m = node("ReduceMax", 1);  // opset 13: axes attribute
  attr_ints(m, "axes", {1});
  attr_i(m, "keepdims", 0);
  value(m, i64({3, 9, 4, 1, 5, 2}, {2, 3}));
  WeightData y = run(m);
  EXPECT_EQ(y.type.shape, (Shape{2}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{9, 5}));
  auto k = node("ReduceMin", 1);  // no axes: all, keepdims
  value(k, i64({3, 9, 4, 1, 5, 2}, {2, 3}));
  WeightData z = run(k);
  EXPECT_EQ(z.type.shape, (Shape{1, 1}));
  EXPECT_EQ(ints_of(z), (std::vector<int64_t>{1}));
  auto a = node("ReduceMax", 2);  // opset 18: axes input, negative
  a.opset = 18;
  value(a, i64({3, 9, 4, 1, 5, 2}, {2, 3}));
  value(a, vec({-2}));
  WeightData c = run(a);
  EXPECT_EQ(c.type.shape, (Shape{1, 3}));
  EXPECT_EQ(ints_of(c), (std::vector<int64_t>{3, 9, 4}));
  auto s = node("ReduceSum", 2);  // opset 13: axes input
  value(s, i64({3, 9, 4, 1, 5, 2}, {2, 3}));
  value(s, vec({1}));
  EXPECT_EQ(ints_of(run(s)), (std::vector<int64_t>{16, 8}));
  auto e = node("ReduceSum", 2);  // empty axes with noop_with_empty_axes: the input
  value(e, i64({3, 9}, {2}));
  value(e, vec({}));
  attr_i(e, "noop_with_empty_axes", 1);
  EXPECT_EQ(ints_of(run(e)), (std::vector<int64_t>{3, 9}));
  auto na = node("ReduceSum", 1);  // axes input absent with noop_with_empty_axes: the input too
  value(na, i64({3, 9}, {2}));
  attr_i(na, "noop_with_empty_axes", 1);
  EXPECT_EQ(ints_of(run(na)), (std::vector<int64_t>{3, 9}));
  auto na18 = node("ReduceMax", 1);
  na18.opset = 18;
  value(na18, i64({3, 9}, {2}));
  attr_i(na18, "noop_with_empty_axes", 1);
  EXPECT_EQ(ints_of(run(na18)), (std::vector<int64_t>{3, 9}));
  auto na13 = node("ReduceMax", 1);  // opset 13: axes is an attribute, the flag does not exist
  value(na13, i64({3, 9}, {2}));
  attr_i(na13, "noop_with_empty_axes", 1);
  EXPECT_EQ(ints_of(run(na13)), (std::vector<int64_t>{9}));
  auto p = node("ReduceProd", 1);
  value(p, vec({2, 3, 4}));
  EXPECT_EQ(ints_of(run(p)), (std::vector<int64_t>{24}));
  auto fm = node("ReduceMax", 1);
  value(fm, f32({-1.5f, 2.5f, 0.0f}, {3}));
  WeightData fy = run(fm);
  float got = 0;
  std::memcpy(&got, fy.bytes.data(), 4);
  EXPECT_EQ(got, 2.5f);
  // Refused: a float sum (order-dependent), zeros of both signs, a repeated axis.
  auto fs = node("ReduceSum", 1);
  value(fs, f32({0.1f, 0.2f}, {2}));
  EXPECT_NE(refused(fs).find("order of operations"), std::string::npos);
  auto z2 = node("ReduceMax", 1);
  value(z2, f32({0.0f, -0.0f}, {2}));
  EXPECT_NE(refused(z2).find("zeros of both signs"), std::string::npos);
  auto rep = node("ReduceMin", 1);
  attr_ints(rep, "axes", {0, -2});
  value(rep, i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_NE(refused(rep).find("repeated axis"), std::string::npos);
}

TEST(ConstEval, CastTruncatesAndRefusesWhatDoesNotFit) {
  auto c = node("Cast", 1);
  attr_i(c, "to", onnx::TensorProto::INT64);
  value(c, f32({2.7f, -2.7f, 0.0f}, {3}));
  EXPECT_EQ(ints_of(run(c)), (std::vector<int64_t>{2, -2, 0}));
  auto d = node("Cast", 1);
  attr_i(d, "to", onnx::TensorProto::INT32);
  value(d, f32({std::nanf("")}, {1}));
  EXPECT_NE(refused(d).find("does not fit"), std::string::npos);
  auto e = node("Cast", 1);
  attr_i(e, "to", onnx::TensorProto::FLOAT);
  value(e, vec({3, -5}));
  EXPECT_EQ(floats_of(run(e)), (std::vector<float>{3.0f, -5.0f}));
  auto f = node("Cast", 1);
  attr_i(f, "to", onnx::TensorProto::BOOL);
  value(f, vec({0, 4}));
  WeightData yf = run(f);
  EXPECT_EQ(yf.type.dtype, DType::Bool);
  EXPECT_EQ(ints_of(yf), (std::vector<int64_t>{0, 1}));
  auto g = node("Cast", 1);
  attr_i(g, "to", onnx::TensorProto::FLOAT16);
  value(g, vec({1}));
  EXPECT_NE(refused(g).find("cast to"), std::string::npos);
}

TEST(ConstEval, RangeIntegersOnly) {
  auto c = node("Range", 3);
  value(c, scalar(0));
  value(c, scalar(10));
  value(c, scalar(3));
  EXPECT_EQ(ints_of(run(c)), (std::vector<int64_t>{0, 3, 6, 9}));
  auto d = node("Range", 3);
  value(d, scalar(10));
  value(d, scalar(0));
  value(d, scalar(-3));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{10, 7, 4, 1}));
  auto e = node("Range", 3);  // empty
  value(e, scalar(5));
  value(e, scalar(5));
  value(e, scalar(1));
  EXPECT_EQ(run(e).type.shape, (Shape{0}));
  auto f = node("Range", 3);
  value(f, f32({0.0f}, {}));
  value(f, f32({1.0f}, {}));
  value(f, f32({0.25f}, {}));
  EXPECT_NE(refused(f).find("integer"), std::string::npos);
}

TEST(ConstEval, ConstantOfShapeAndItsLimit) {
  auto c = node("ConstantOfShape", 1);
  value(c, vec({2, 3}));
  WeightData y = run(c);
  EXPECT_EQ(y.type, (TensorType{DType::F32, {2, 3}}));
  EXPECT_EQ(floats_of(y), std::vector<float>(6, 0.0f));
  auto d = node("ConstantOfShape", 1);
  auto* a = d.node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(7);
  value(d, vec({3}));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{7, 7, 7}));
  auto e = node("ConstantOfShape", 1);
  value(e, vec({1000, 1000}));
  EXPECT_NE(refused(e).find("too large"), std::string::npos);
}

TEST(ConstEval, ExpandBroadcastsBothWays) {
  auto c = node("Expand", 2);
  value(c, i64({1, 2, 3}, {1, 3}));
  value(c, vec({2, 1}));
  WeightData y = run(c);
  EXPECT_EQ(y.type.shape, (Shape{2, 3}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  auto d = node("Expand", 2);
  value(d, i64({1, 2}, {2, 1}));
  value(d, vec({3}));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{1, 1, 1, 2, 2, 2}));
}

TEST(ConstEval, ComparisonsLogicAndWhere) {
  auto eq = node("Equal", 2);
  value(eq, vec({1, -1, 4}));
  value(eq, scalar(-1));
  WeightData m = run(eq);
  EXPECT_EQ(m.type.dtype, DType::Bool);
  EXPECT_EQ(ints_of(m), (std::vector<int64_t>{0, 1, 0}));
  auto lt = node("Less", 2);
  value(lt, vec({1, 5}));
  value(lt, vec({2, 2}));
  EXPECT_EQ(ints_of(run(lt)), (std::vector<int64_t>{1, 0}));
  auto no = node("Not", 1);
  value(no, m);
  EXPECT_EQ(ints_of(run(no)), (std::vector<int64_t>{1, 0, 1}));
  // Where(shape == -1, 1, shape): PyTorch's Expand/Reshape shape fix-up.
  auto w = node("Where", 3);
  value(w, m);
  value(w, scalar(1));
  value(w, vec({1, -1, 4}));
  EXPECT_EQ(ints_of(run(w)), (std::vector<int64_t>{1, 1, 4}));
  auto an = node("And", 2);
  value(an, boolean({1, 1, 0}, {3}));
  value(an, boolean({1}, {1}));
  EXPECT_EQ(ints_of(run(an)), (std::vector<int64_t>{1, 1, 0}));
}

TEST(ConstEval, ArithmeticIntegerAndFloat) {
  auto add = node("Add", 2);
  value(add, vec({1, 2, 3}));
  value(add, scalar(10));
  EXPECT_EQ(ints_of(run(add)), (std::vector<int64_t>{11, 12, 13}));
  auto div = node("Div", 2);  // truncation towards zero, as C++ and ONNX Runtime
  value(div, vec({7, -7}));
  value(div, vec({2, 2}));
  EXPECT_EQ(ints_of(run(div)), (std::vector<int64_t>{3, -3}));
  auto z = node("Div", 2);
  value(z, vec({7}));
  value(z, vec({0}));
  EXPECT_NE(refused(z).find("division by zero"), std::string::npos);
  auto mul = node("Mul", 2);
  value(mul, f32({1.5f, -2.0f}, {2}));
  value(mul, f32({0.1f}, {}));
  EXPECT_EQ(floats_of(run(mul)), (std::vector<float>{1.5f * 0.1f, -2.0f * 0.1f}));
  auto sub = node("Sub", 2);
  value(sub, vec({5}));
  value(sub, f32({1.0f}, {1}));
  EXPECT_NE(refused(sub).find("types differ"), std::string::npos);
  auto neg = node("Neg", 1);
  value(neg, vec({3, -4}));
  EXPECT_EQ(ints_of(run(neg)), (std::vector<int64_t>{-3, 4}));
}

// Mod: fmod=0 takes the divisor's sign (integers only), fmod=1 the dividend's, as C's fmod;
// Max / Min of two operands (a head count check in ONNX's expanded Attention: Mod, Equal,
// Where, then an Expand of K and V).
TEST(ConstEval, ModMaxMin) {
  auto mod = node("Mod", 2);
  value(mod, vec({7, -7, 7, -7, 6}));
  value(mod, vec({3, 3, -3, -3, 3}));
  EXPECT_EQ(ints_of(run(mod)), (std::vector<int64_t>{1, 2, -2, -1, 0}));
  auto cmod = node("Mod", 2);
  attr_i(cmod, "fmod", 1);
  value(cmod, vec({7, -7, 7, -7}));
  value(cmod, vec({3, 3, -3, -3}));
  EXPECT_EQ(ints_of(run(cmod)), (std::vector<int64_t>{1, -1, 1, -1}));
  auto fmod = node("Mod", 2);
  attr_i(fmod, "fmod", 1);
  value(fmod, f32({5.5f, -5.5f}, {2}));
  value(fmod, f32({2.0f}, {}));
  EXPECT_EQ(floats_of(run(fmod)), (std::vector<float>{1.5f, -1.5f}));
  auto ffloat = node("Mod", 2);
  value(ffloat, f32({5.5f}, {1}));
  value(ffloat, f32({2.0f}, {1}));
  EXPECT_NE(refused(ffloat).find("fmod=1"), std::string::npos);
  auto zero = node("Mod", 2);
  value(zero, vec({7}));
  value(zero, vec({0}));
  EXPECT_NE(refused(zero).find("by zero"), std::string::npos);
  auto mx = node("Max", 2);
  value(mx, vec({1, 5, -2}));
  value(mx, scalar(2));
  EXPECT_EQ(ints_of(run(mx)), (std::vector<int64_t>{2, 5, 2}));
  auto mn = node("Min", 2);
  value(mn, vec({1, 5, -2}));
  value(mn, scalar(2));
  EXPECT_EQ(ints_of(run(mn)), (std::vector<int64_t>{1, 2, -2}));
  auto zeros = node("Max", 2);  // which zero ONNX Runtime returns depends on its broadcast path
  value(zeros, f32({-0.0f}, {1}));
  value(zeros, f32({0.0f}, {1}));
  EXPECT_NE(refused(zeros).find("zeros of both signs"), std::string::npos);
  auto old = node("Max", 2);
  old.opset = 7;
  value(old, f32({1.0f, 2.0f}, {2}));
  value(old, f32({1.5f}, {1}));
  EXPECT_NE(refused(old).find("opset < 8"), std::string::npos);
  auto early = node("Mod", 2);
  early.opset = 9;
  value(early, vec({7}));
  value(early, vec({3}));
  EXPECT_NE(refused(early).find("before opset 10"), std::string::npos);
  auto three = node("Max", 3);
  value(three, vec({1}));
  value(three, vec({2}));
  value(three, vec({3}));
  EXPECT_NE(refused(three).find("not two operands"), std::string::npos);
}

// What causal masks are computed with (ONNX's expanded Attention: Trilu of ones, CastLike,
// LessOrEqual / GreaterOrEqual for windows).
TEST(ConstEval, TriluCastLikeAndOrEqualComparisons) {
  auto up = node("Trilu", 1);
  up.opset = 18;
  value(up, i64({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}));
  EXPECT_EQ(ints_of(run(up)), (std::vector<int64_t>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  auto low = node("Trilu", 2);
  low.opset = 18;
  attr_i(low, "upper", 0);
  value(low, i64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3}));
  value(low, scalar(1));
  EXPECT_EQ(ints_of(run(low)), (std::vector<int64_t>{1, 2, 0, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  auto like = node("CastLike", 2);
  like.opset = 18;
  value(like, vec({1, 0, 3}));
  type_only(like, TensorType{DType::F32, {}});
  EXPECT_EQ(floats_of(run(like)), (std::vector<float>{1.0f, 0.0f, 3.0f}));
  auto le = node("LessOrEqual", 2);
  le.opset = 18;
  value(le, vec({1, 2, 3}));
  value(le, scalar(2));
  EXPECT_EQ(ints_of(run(le)), (std::vector<int64_t>{1, 1, 0}));
  auto ge = node("GreaterOrEqual", 2);
  ge.opset = 18;
  value(ge, vec({1, 2, 3}));
  value(ge, scalar(2));
  EXPECT_EQ(ints_of(run(ge)), (std::vector<int64_t>{0, 1, 1}));
}

// Before opset 7 broadcasting is from `axis` on (broadcast=1): operands of different shapes are
// left to the node; of equal shapes they are evaluated as always.
TEST(ConstEval, LegacyBroadcastBeforeOpset7IsNotEvaluated) {
  auto add = node("Add", 2);
  add.opset = 6;
  attr_i(add, "broadcast", 1);
  attr_i(add, "axis", 0);
  value(add, i64({1, 2, 3, 4}, {2, 2}));
  value(add, vec({10, 20}));
  EXPECT_NE(refused(add).find("legacy broadcasting"), std::string::npos);
  auto same = node("Add", 2);
  same.opset = 6;
  attr_i(same, "broadcast", 1);
  value(same, vec({1, 2}));
  value(same, vec({10, 20}));
  EXPECT_EQ(ints_of(run(same)), (std::vector<int64_t>{11, 22}));
}

TEST(ConstEval, ReshapeZeroAndMinusOne) {
  auto c = node("Reshape", 2);
  value(c, i64({1, 2, 3, 4, 5, 6}, {2, 3}));
  value(c, vec({0, -1}));
  EXPECT_EQ(run(c).type.shape, (Shape{2, 3}));
  auto d = node("Reshape", 2);
  value(d, i64({1, 2, 3, 4, 5, 6}, {2, 3}));
  value(d, vec({-1}));
  EXPECT_EQ(run(d).type.shape, (Shape{6}));
}

TEST(ConstEval, IdentityConstantAndUnknowns) {
  auto c = node("Constant", 0);
  auto* a = c.node.add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(4);
  a->add_ints(5);
  EXPECT_EQ(ints_of(run(c)), (std::vector<int64_t>{4, 5}));
  auto d = node("Identity", 1);
  value(d, vec({9}));
  EXPECT_EQ(ints_of(run(d)), (std::vector<int64_t>{9}));
  auto e = node("Add", 2);  // an input whose value is unknown
  type_only(e, TensorType{DType::I64, {1}});
  value(e, vec({1}));
  EXPECT_NE(refused(e).find("not a constant"), std::string::npos);
  auto f = node("Softmax", 1);
  value(f, f32({1.0f}, {1}));
  EXPECT_NE(refused(f).find("not evaluated"), std::string::npos);
  EXPECT_TRUE(covers("Shape"));
  EXPECT_FALSE(covers("Softmax"));
}

}  // namespace
}  // namespace tensat::const_eval
