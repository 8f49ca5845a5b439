// Opaque ONNX operators on the CPU reference executor: every case of opaque_cases.h against
// its hand-computed values, the planning of opaque nodes (host constants, kernels,
// boundaries), the decoding rules that must refuse, and the host evaluation's pieces.
#include <gtest/gtest.h>

#include "exec/opaque_decode.h"
#include "exec/opaque_host.h"
#include "exec/opaque_plan.h"
#include "opaque_cases.h"
#include "test_util.h"

namespace tensat::refexec::testing {
namespace {

using tensat::testing::attr_i;
using tensat::testing::attr_ints;
using tensat::testing::attr_s;
using tensat::testing::f32t;
using tensat::testing::i64t;
using tensat::testing::OpaqueCase;
using tensat::testing::OpaqueGraph;

class OpaqueOnCpu : public ::testing::TestWithParam<OpaqueCase> {};

TEST_P(OpaqueOnCpu, MatchesHandComputedValues) {
  OpaqueGraph b;
  GetParam().build(b);
  RunOptions opts;
  opts.opaque = &b.ops;
  RunResult r = run(b.g, b.w, b.in, opts);
  ASSERT_EQ(r.outputs.size(), 1u);
  expect_tensor(r.outputs[0], GetParam().shape, GetParam().want, 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(Cases, OpaqueOnCpu, ::testing::ValuesIn(tensat::testing::opaque_cases()),
                         [](const ::testing::TestParamInfo<OpaqueCase>& i) { return i.param.name; });

TEST(OpaquePlan, ShapeComputationsAreHostConstantsAndViewsAlias) {
  OpaqueGraph b;
  for (const auto& c : tensat::testing::opaque_cases())
    if (c.name == "shape_computation_then_reshape") c.build(b);
  exec::OpaquePlan plan(b.g, b.w, &b.ops, {});
  int host = 0, kernel = 0;
  for (ir::NodeId n = 0; n < b.g.size(); ++n) {
    if (b.g.node(n).op != Op::Opaque) continue;
    const std::string t = plan.op_type(n);
    if (t == "Gather" || t == "Unsqueeze" || t == "Concat") {
      EXPECT_EQ(plan.how(n), exec::OpaqueHow::Host) << t;
      ++host;
    } else {
      EXPECT_EQ(plan.how(n), exec::OpaqueHow::Kernel) << t;
      ++kernel;
    }
  }
  EXPECT_EQ(host, 3);
  EXPECT_EQ(kernel, 2);  // Reshape (a view of x) and Relu
  // The concatenated shape is [2, -1].
  for (ir::NodeId n = 0; n < b.g.size(); ++n)
    if (b.g.node(n).op == Op::Opaque && plan.op_type(n) == "Concat") {
      auto v = exec::opaque::int_values(*plan.constant(n));
      ASSERT_TRUE(v);
      EXPECT_EQ(*v, (std::vector<int64_t>{2, -1}));
    }
}

TEST(OpaquePlan, WithoutDescriptionsEveryOpaqueNodeIsABoundary) {
  OpaqueGraph b;
  auto x = b.input("x", {3}, {1, 2, 3});
  b.output(b.node("Sqrt", {x}, f32t({3})));
  exec::OpaquePlan plan(b.g, b.w, nullptr, {});
  EXPECT_EQ(plan.how(b.out), exec::OpaqueHow::Boundary);
  EXPECT_THROW(run(b.g, b.w, b.in), ExecError);
}

TEST(OpaquePlan, AnOpWithoutKernelNeedsAProvidedValue) {
  OpaqueGraph b;
  auto x = b.input("x", {4}, {1, 2, 3, 4});
  auto t = b.node("Hardmax", {x}, f32t({4}));
  b.output(b.node("Neg", {t}, f32t({4})));
  RunOptions opts;
  opts.opaque = &b.ops;
  try {
    run(b.g, b.w, b.in, opts);
    FAIL() << "expected ExecError";
  } catch (const ExecError& e) {
    EXPECT_NE(std::string(e.what()).find("Hardmax: no kernel"), std::string::npos) << e.what();
  }
  opts.provided[t] = Tensor({4}, {1, -1, 2, -2});
  RunResult r = run(b.g, b.w, b.in, opts);
  expect_tensor(r.outputs[0], {4}, {-1, 1, -2, 2});
}

TEST(OpaquePlan, ParametersMustBeConstants) {
  // Pad whose pads come from an input: not decodable, a boundary with the reason.
  OpaqueGraph b;
  auto x = b.input("x", {2}, {1, 2});
  auto pads = b.input("p", {2}, {1, 1});
  b.output(b.node("Pad", {x, pads}, f32t({4})));
  exec::OpaquePlan plan(b.g, b.w, &b.ops, {});
  EXPECT_EQ(plan.how(b.out), exec::OpaqueHow::Boundary);
  EXPECT_NE(plan.why(b.out).find("pads is not a constant"), std::string::npos) << plan.why(b.out);
}

// decode() of one node with the given children types and constants.
exec::opaque::DecodeResult decode_one(const std::string& type, std::map<std::string, exec::OpaqueAttr> attrs,
                                      std::vector<TensorType> kids, TensorType out,
                                      std::vector<const WeightData*> consts = {}, int64_t opset = 17) {
  exec::OpaqueOp op;
  op.op_type = type;
  op.opset = opset;
  op.attrs = std::move(attrs);
  std::vector<ValueType> vt;
  for (auto& k : kids) vt.push_back(ValueType::of_tensor(k));
  std::vector<const ValueType*> kp;
  for (auto& v : vt) kp.push_back(&v);
  for (size_t k = 0; k < kids.size(); ++k) op.slots.push_back(static_cast<int>(k));
  consts.resize(kids.size(), nullptr);
  return exec::opaque::decode(op, kp, {out}, consts);
}

TEST(OpaqueDecode, RefusesWhatNoKernelImplements) {
  EXPECT_FALSE(decode_one("Pad", {{"mode", attr_s("wrap")}}, {f32t({2}), i64t({2})}, f32t({4})).decoded);
  EXPECT_FALSE(decode_one("MaxPool", {{"kernel_shape", attr_ints({2, 2})}, {"dilations", attr_ints({2, 2})}},
                          {f32t({1, 1, 5, 5})}, f32t({1, 1, 3, 3}))
                   .decoded);
  EXPECT_FALSE(decode_one("BatchNormalization", {{"training_mode", attr_i(1)}},
                          {f32t({1, 2}), f32t({2}), f32t({2}), f32t({2}), f32t({2})}, f32t({1, 2}))
                   .decoded);
  // A Softmax whose output type disagrees with nothing is fine; an axis out of range is not.
  EXPECT_TRUE(decode_one("Softmax", {}, {f32t({2, 3})}, f32t({2, 3})).decoded);
  auto r = decode_one("Softmax", {{"axis", attr_i(2)}}, {f32t({2, 3})}, f32t({2, 3}));
  EXPECT_FALSE(r.decoded);
  EXPECT_NE(r.why.find("axis out of range"), std::string::npos) << r.why;
  // A slice whose computed shape differs from the declared output.
  WeightData s, e;
  s.type = e.type = i64t({1});
  int64_t zero = 0, two = 2;
  s.bytes.assign(reinterpret_cast<const char*>(&zero), 8);
  e.bytes.assign(reinterpret_cast<const char*>(&two), 8);
  EXPECT_FALSE(decode_one("Slice", {}, {f32t({5}), i64t({1}), i64t({1})}, f32t({3}), {nullptr, &s, &e}).decoded);
  EXPECT_TRUE(decode_one("Slice", {}, {f32t({5}), i64t({1}), i64t({1})}, f32t({2}), {nullptr, &s, &e}).decoded);
  // Other domains are never decoded.
  exec::OpaqueOp op;
  op.op_type = "Softmax";
  op.domain = "com.microsoft";
  ValueType v = ValueType::of_tensor(f32t({2}));
  EXPECT_FALSE(exec::opaque::decode(op, {&v}, {f32t({2})}, {nullptr}).decoded);
}

TEST(OpaqueHost, StridedMapsOfSliceTransposeExpand) {
  exec::opaque::Slice sl{{4, 3}, {2, 3}, {3, 0}, {-2, 1}};
  auto m = exec::opaque::strided_map(exec::opaque::Desc(sl));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->base, 9);
  EXPECT_EQ(m->in_strides, (std::vector<int64_t>{-6, 1}));
  std::vector<float> in = tensat::testing::iota(12), out(6);
  exec::opaque::move_elements(exec::opaque::Desc(sl), {in.data()}, 4, {2, 3}, out.data());
  EXPECT_EQ(out, (std::vector<float>{9, 10, 11, 3, 4, 5}));
  exec::opaque::Expand ex{{3}, {2, 3}};
  exec::opaque::move_elements(exec::opaque::Desc(ex), {in.data()}, 4, {2, 3}, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 1, 2, 0, 1, 2}));
}

TEST(OpaqueHost, IntegerArithmeticAndCasts) {
  std::vector<int64_t> a{6, -7}, b{4}, o(2);
  exec::opaque::binary_broadcast<int64_t>(exec::opaque::BinaryFn::Div, a.data(), {2}, b.data(), {1}, o.data(), {2});
  EXPECT_EQ(o, (std::vector<int64_t>{1, -1}));  // truncation toward zero, as ONNX Runtime
  exec::opaque::binary_broadcast<int64_t>(exec::opaque::BinaryFn::Mul, a.data(), {2}, b.data(), {1}, o.data(), {2});
  EXPECT_EQ(o, (std::vector<int64_t>{24, -28}));
}

}  // namespace
}  // namespace tensat::refexec::testing
