// Small graphs with opaque ONNX nodes and their hand-computed results, shared by the CPU
// reference executor's tests (test_opaque.cpp: CPU against the hand values) and the GPU
// executor's tests (tests/gpu_cost/gpu_opaque_test.cpp: GPU against CPU).
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "exec/opaque_op.h"
#include "exec/tensor.h"
#include "lang/graph.h"
#include "lang/weights.h"

namespace tensat::testing {

/// A graph under construction with opaque nodes and their descriptions.
struct OpaqueGraph {
  ir::Graph g;
  WeightStore w;
  exec::OpaqueOps ops;
  std::unordered_map<std::string, exec::Tensor> in;
  ir::NodeId out = 0;

  ir::NodeId input(const std::string& name, Shape s, std::vector<float> v) {
    in[name] = exec::Tensor(s, std::move(v));
    return g.input(name, TensorType{DType::F32, std::move(s)});
  }
  ir::NodeId weight(const std::string& name, Shape s, std::vector<float> v) {
    w.put_f32(name, s, v);
    return g.weight(name, TensorType{DType::F32, std::move(s)});
  }
  ir::NodeId ints(const std::string& name, Shape s, const std::vector<int64_t>& v) {
    WeightData d;
    d.type = TensorType{DType::I64, std::move(s)};
    d.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
    TensorType t = d.type;
    w.put(name, std::move(d));
    return g.weight(name, t);
  }
  /// An opaque node of `op_type` (default domain, opset `opset`) over `kids` (ONNX input slots
  /// 0..n-1 unless `slots` says otherwise), one output of type `out_type`.
  ir::NodeId node(const std::string& op_type, std::vector<ir::NodeId> kids, TensorType out_type,
                  std::map<std::string, exec::OpaqueAttr> attrs = {}, int64_t opset = 17, std::vector<int> slots = {}) {
    exec::OpaqueOp op;
    op.op_type = op_type;
    op.name = op_type + std::to_string(ops.size());
    op.opset = opset;
    op.attrs = std::move(attrs);
    if (slots.empty())
      for (size_t k = 0; k < kids.size(); ++k) slots.push_back(static_cast<int>(k));
    op.slots = std::move(slots);
    const auto index = static_cast<int64_t>(ops.size());
    ops.push_back(std::move(op));
    kids.insert(kids.begin(), g.sym(make_opaque_id(index, {out_type})));
    return g.add(ir::Node{Op::Opaque, std::move(kids), 0, {}});
  }
  void output(ir::NodeId id) {
    out = id;
    g.set_root(id);
  }
};

inline TensorType f32t(Shape s) { return TensorType{DType::F32, std::move(s)}; }
inline TensorType i64t(Shape s) { return TensorType{DType::I64, std::move(s)}; }

inline exec::OpaqueAttr attr_i(int64_t v) {
  exec::OpaqueAttr a;
  a.kind = exec::OpaqueAttr::Kind::Int;
  a.i = v;
  return a;
}
inline exec::OpaqueAttr attr_f(float v) {
  exec::OpaqueAttr a;
  a.kind = exec::OpaqueAttr::Kind::Float;
  a.f = v;
  return a;
}
inline exec::OpaqueAttr attr_s(std::string v) {
  exec::OpaqueAttr a;
  a.kind = exec::OpaqueAttr::Kind::String;
  a.s = std::move(v);
  return a;
}
inline exec::OpaqueAttr attr_ints(std::vector<int64_t> v) {
  exec::OpaqueAttr a;
  a.kind = exec::OpaqueAttr::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

struct OpaqueCase {
  std::string name;
  std::function<void(OpaqueGraph&)> build;
  Shape shape;               ///< the output's shape
  std::vector<float> want;   ///< its values, computed by hand
};

inline std::vector<float> iota(int n, float from = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<float>(i);
  return v;
}

inline std::vector<OpaqueCase> opaque_cases() {
  using G = OpaqueGraph;
  const float e1 = std::exp(1.0f), e2 = std::exp(2.0f), e3 = std::exp(3.0f), s = e1 + e2 + e3;
  const float ln3 = std::log(3.0f);
  std::vector<OpaqueCase> c;
  c.push_back({"softmax_last_axis", [](G& b) {
                 b.output(b.node("Softmax", {b.input("x", {2, 3}, {1, 2, 3, 0, 0, 0})}, f32t({2, 3})));
               },
               {2, 3}, {e1 / s, e2 / s, e3 / s, 1.f / 3, 1.f / 3, 1.f / 3}});
  c.push_back({"softmax_axis1_opset13", [ln3](G& b) {
                 b.output(b.node("Softmax", {b.input("x", {1, 2, 2}, {0, 0, 0, ln3})}, f32t({1, 2, 2}), {{"axis", attr_i(1)}}));
               },
               {1, 2, 2}, {0.5f, 0.25f, 0.5f, 0.75f}});
  c.push_back({"softmax_axis1_opset11_flattens", [ln3](G& b) {
                 b.output(b.node("Softmax", {b.input("x", {1, 2, 2}, {0, 0, 0, ln3})}, f32t({1, 2, 2}), {{"axis", attr_i(1)}}, 11));
               },
               {1, 2, 2}, {1.f / 6, 1.f / 6, 1.f / 6, 0.5f}});
  c.push_back({"logsoftmax", [](G& b) {
                 b.output(b.node("LogSoftmax", {b.input("x", {1, 3}, {1, 2, 3})}, f32t({1, 3})));
               },
               {1, 3}, {std::log(e1 / s), std::log(e2 / s), std::log(e3 / s)}});
  c.push_back({"clip_min_input_only", [](G& b) {
                 b.output(b.node("Clip", {b.input("x", {3}, {-2, 0.5f, 3}), b.weight("lo", {}, {0})}, f32t({3})));
               },
               {3}, {0, 0.5f, 3}});
  c.push_back({"clip_max_input_only", [](G& b) {
                 b.output(b.node("Clip", {b.input("x", {3}, {-2, 0.5f, 3}), b.weight("hi", {}, {1})}, f32t({3}), {}, 13, {0, 2}));
               },
               {3}, {-2, 0.5f, 1}});
  c.push_back({"clip_relu6", [](G& b) {
                 b.output(b.node("Clip", {b.input("x", {4}, {-2, 0.5f, 3, 7}), b.weight("lo", {}, {0}), b.weight("hi", {}, {6})},
                                 f32t({4})));
               },
               {4}, {0, 0.5f, 3, 6}});
  c.push_back({"clip_opset6_attributes", [](G& b) {
                 b.output(b.node("Clip", {b.input("x", {3}, {-2, 0.5f, 3})}, f32t({3}),
                                 {{"min", attr_f(-1)}, {"max", attr_f(1)}}, 6));
               },
               {3}, {-1, 0.5f, 1}});
  c.push_back({"pad_constant", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {1, 2}, {1, 2}), b.ints("p", {4}, {0, 1, 0, 2}), b.weight("v", {}, {9})},
                                 f32t({1, 5})));
               },
               {1, 5}, {9, 1, 2, 9, 9}});
  c.push_back({"pad_reflect", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {3}, {1, 2, 3}), b.ints("p", {2}, {2, 2})}, f32t({7}),
                                 {{"mode", attr_s("reflect")}}));
               },
               {7}, {3, 2, 1, 2, 3, 2, 1}});
  c.push_back({"pad_edge", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {3}, {1, 2, 3}), b.ints("p", {2}, {2, 2})}, f32t({7}),
                                 {{"mode", attr_s("edge")}}));
               },
               {7}, {1, 1, 1, 2, 3, 3, 3}});
  c.push_back({"pad_negative_crops", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {3}, {1, 2, 3}), b.ints("p", {2}, {-1, 1})}, f32t({3})));
               },
               {3}, {2, 3, 0}});
  c.push_back({"pad_axes_opset18", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {2, 2}, {1, 2, 3, 4}), b.ints("p", {2}, {1, 0}), b.ints("a", {1}, {-1})},
                                 f32t({2, 3}), {}, 18, {0, 1, 3}));
               },
               {2, 3}, {0, 1, 2, 0, 3, 4}});
  c.push_back({"pad_opset2_attributes", [](G& b) {
                 b.output(b.node("Pad", {b.input("x", {2}, {1, 2})}, f32t({3}), {{"pads", attr_ints({1, 0})}, {"value", attr_f(5)}}, 2));
               },
               {3}, {5, 1, 2}});
  c.push_back({"reduce_mean_keepdims", [](G& b) {
                 b.output(b.node("ReduceMean", {b.input("x", {2, 3}, iota(6, 1))}, f32t({2, 1}), {{"axes", attr_ints({1})}}, 13));
               },
               {2, 1}, {2, 5}});
  c.push_back({"reduce_mean_axes_input_opset18", [](G& b) {
                 b.output(b.node("ReduceMean", {b.input("x", {2, 3}, iota(6, 1)), b.ints("a", {1}, {0})}, f32t({3}),
                                 {{"keepdims", attr_i(0)}}, 18));
               },
               {3}, {2.5f, 3.5f, 4.5f}});
  c.push_back({"reduce_sum_all", [](G& b) {
                 b.output(b.node("ReduceSum", {b.input("x", {2, 3}, iota(6, 1))}, f32t({1, 1}), {}, 13));
               },
               {1, 1}, {21}});
  c.push_back({"reduce_max_middle_axis", [](G& b) {
                 b.output(b.node("ReduceMax", {b.input("x", {2, 2, 2}, {1, 8, 3, 4, 5, 2, 7, 0})}, f32t({2, 2}),
                                 {{"axes", attr_ints({1})}, {"keepdims", attr_i(0)}}, 13));
               },
               {2, 2}, {3, 8, 7, 2}});
  c.push_back({"global_max_pool_3d", [](G& b) {
                 b.output(b.node("GlobalMaxPool", {b.input("x", {1, 2, 3}, {1, 5, 2, -1, -3, -2})}, f32t({1, 2, 1})));
               },
               {1, 2, 1}, {5, -1}});
  c.push_back({"batchnorm", [](G& b) {
                 b.output(b.node("BatchNormalization",
                                 {b.input("x", {1, 2, 1, 2}, {3, 5, 1, -1}), b.weight("s", {2}, {1, 2}), b.weight("b", {2}, {0, 1}),
                                  b.weight("m", {2}, {1, 0}), b.weight("v", {2}, {4, 1})},
                                 f32t({1, 2, 1, 2}), {{"epsilon", attr_f(0)}}));
               },
               {1, 2, 1, 2}, {1, 2, 3, -1}});
  c.push_back({"gather_negative_indices", [](G& b) {
                 b.output(b.node("Gather", {b.input("x", {2, 3}, iota(6, 1)), b.ints("i", {2}, {-1, 0})}, f32t({2, 2}),
                                 {{"axis", attr_i(1)}}));
               },
               {2, 2}, {3, 1, 6, 4}});
  c.push_back({"gather_scalar_index", [](G& b) {
                 b.output(b.node("Gather", {b.input("x", {2, 3}, iota(6, 1)), b.ints("i", {}, {1})}, f32t({2}), {{"axis", attr_i(1)}}));
               },
               {2}, {2, 5}});
  c.push_back({"slice_reverse", [](G& b) {
                 const int64_t lo = std::numeric_limits<int64_t>::min();
                 b.output(b.node("Slice", {b.input("x", {2, 3}, iota(6, 1)), b.ints("s", {1}, {-1}), b.ints("e", {1}, {lo}),
                                           b.ints("a", {1}, {1}), b.ints("t", {1}, {-1})},
                                 f32t({2, 3})));
               },
               {2, 3}, {3, 2, 1, 6, 5, 4}});
  c.push_back({"slice_step2_clamped_end", [](G& b) {
                 b.output(b.node("Slice", {b.input("x", {5}, iota(5)), b.ints("s", {1}, {1}), b.ints("e", {1}, {1000}),
                                           b.ints("a", {1}, {0}), b.ints("t", {1}, {2})},
                                 f32t({2})));
               },
               {2}, {1, 3}});
  c.push_back({"slice_opset9_attributes", [](G& b) {
                 b.output(b.node("Slice", {b.input("x", {2, 3}, iota(6, 1))}, f32t({1, 2}),
                                 {{"starts", attr_ints({1, 1})}, {"ends", attr_ints({2, 3})}}, 9));
               },
               {1, 2}, {5, 6}});
  c.push_back({"concat_three", [](G& b) {
                 b.output(b.node("Concat", {b.input("a", {2, 1}, {1, 2}), b.input("b", {2, 2}, {3, 4, 5, 6}), b.input("c", {2, 1}, {7, 8})},
                                 f32t({2, 4}), {{"axis", attr_i(-1)}}));
               },
               {2, 4}, {1, 3, 4, 7, 2, 5, 6, 8}});
  c.push_back({"expand", [](G& b) {
                 b.output(b.node("Expand", {b.input("x", {3, 1}, {1, 2, 3}), b.ints("s", {2}, {1, 2})}, f32t({3, 2})));
               },
               {3, 2}, {1, 1, 2, 2, 3, 3}});
  c.push_back({"transpose_default_reverses", [](G& b) {
                 b.output(b.node("Transpose", {b.input("x", {2, 3}, iota(6, 1))}, f32t({3, 2})));
               },
               {3, 2}, {1, 4, 2, 5, 3, 6}});
  c.push_back({"maxpool_ceil_mode", [](G& b) {
                 b.output(b.node("MaxPool", {b.input("x", {1, 1, 4, 4}, iota(16))}, f32t({1, 1, 2, 2}),
                                 {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_i(1)}}));
               },
               {1, 1, 2, 2}, {10, 11, 14, 15}});
  c.push_back({"avgpool_ceil_mode", [](G& b) {
                 b.output(b.node("AveragePool", {b.input("x", {1, 1, 4, 4}, iota(16))}, f32t({1, 1, 2, 2}),
                                 {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_i(1)}}));
               },
               {1, 1, 2, 2}, {5, 6.5f, 11, 12.5f}});
  c.push_back({"avgpool_pads_count_include_pad", [](G& b) {
                 // 2x2 input of ones, 2x2 window, stride 1, pads 1 on each side: out 3x3; the
                 // divisor is always 4 (every window lies inside the padded 4x4 extent).
                 b.output(b.node("AveragePool", {b.input("x", {1, 1, 2, 2}, {1, 1, 1, 1})}, f32t({1, 1, 3, 3}),
                                 {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})},
                                  {"count_include_pad", attr_i(1)}}));
               },
               {1, 1, 3, 3}, {0.25f, 0.5f, 0.25f, 0.5f, 1, 0.5f, 0.25f, 0.5f, 0.25f}});
  c.push_back({"unary_math", [](G& b) {
                 auto x = b.input("x", {3}, {0.25f, 1, 4});
                 auto sq = b.node("Sqrt", {x}, f32t({3}));
                 auto er = b.node("Erf", {sq}, f32t({3}));
                 b.output(b.node("Reciprocal", {er}, f32t({3})));
               },
               {3}, {1 / std::erf(0.5f), 1 / std::erf(1.0f), 1 / std::erf(2.0f)}});
  c.push_back({"activations", [](G& b) {
                 auto x = b.input("x", {2}, {-2, 3});
                 auto l = b.node("LeakyRelu", {x}, f32t({2}), {{"alpha", attr_f(0.5f)}});
                 auto h = b.node("HardSigmoid", {l}, f32t({2}));
                 b.output(b.node("HardSwish", {h}, f32t({2})));
               },
               // LeakyRelu: -1, 3; HardSigmoid(0.2x+0.5): 0.3, 1.1->1; HardSwish(v) = v*clip(v/6+0.5)
               {2}, {0.3f * (0.3f / 6 + 0.5f), 1.0f * (1.0f / 6 + 0.5f)}});
  c.push_back({"binary_broadcast", [](G& b) {
                 auto x = b.input("x", {2, 2}, {1, 2, 3, 4});
                 auto y = b.input("y", {2}, {2, 4});
                 auto d = b.node("Div", {x, y}, f32t({2, 2}));
                 auto p = b.node("Pow", {d, b.weight("two", {}, {2})}, f32t({2, 2}));
                 b.output(b.node("Sub", {p, b.weight("one", {1}, {1})}, f32t({2, 2})));
               },
               {2, 2}, {-0.75f, -0.75f, 1.25f, 0.0f}});
  c.push_back({"layer_norm_as_exported", [](G& b) {
                 // PyTorch's LayerNorm export: (x - mean) / sqrt(var + eps) * g + b.
                 auto x = b.input("x", {2, 2}, {1, 3, -1, 1});
                 auto m = b.node("ReduceMean", {x}, f32t({2, 1}), {{"axes", attr_ints({-1})}}, 13);
                 auto d = b.node("Sub", {x, m}, f32t({2, 2}));
                 auto p = b.node("Pow", {d, b.weight("two", {}, {2})}, f32t({2, 2}));
                 auto v = b.node("ReduceMean", {p}, f32t({2, 1}), {{"axes", attr_ints({-1})}}, 13);
                 auto a = b.node("Add", {v, b.weight("eps", {}, {0})}, f32t({2, 1}));
                 auto s = b.node("Sqrt", {a}, f32t({2, 1}));
                 auto n = b.node("Div", {d, s}, f32t({2, 2}));
                 auto gm = b.node("Mul", {n, b.weight("g", {2}, {2, 1})}, f32t({2, 2}));
                 b.output(b.node("Add", {gm, b.weight("bias", {2}, {0, 1})}, f32t({2, 2})));
               },
               {2, 2}, {-2, 2, -2, 2}});
  c.push_back({"gelu_as_exported", [](G& b) {
                 auto x = b.input("x", {2}, {1, -2});
                 auto d = b.node("Div", {x, b.weight("r2", {}, {std::sqrt(2.0f)})}, f32t({2}));
                 auto e = b.node("Erf", {d}, f32t({2}));
                 auto a = b.node("Add", {e, b.weight("one", {}, {1})}, f32t({2}));
                 auto m = b.node("Mul", {x, a}, f32t({2}));
                 b.output(b.node("Mul", {m, b.weight("half", {}, {0.5f})}, f32t({2})));
               },
               {2}, {0.5f * (1 + std::erf(1 / std::sqrt(2.0f))), -1.0f * (1 + std::erf(-2 / std::sqrt(2.0f)))}});
  c.push_back({"shape_computation_then_reshape", [](G& b) {
                 // x.reshape(x.shape[0], -1) as PyTorch exports it, with Shape already a
                 // constant (the importer): Gather -> Unsqueeze -> Concat -> Reshape.
                 auto x = b.input("x", {2, 3}, iota(6));
                 auto shape = b.ints("shape", {2}, {2, 3});
                 auto n = b.node("Gather", {shape, b.ints("zero", {}, {0})}, i64t({}), {{"axis", attr_i(0)}});
                 auto u = b.node("Unsqueeze", {n, b.ints("ax", {1}, {0})}, i64t({1}));
                 auto cat = b.node("Concat", {u, b.ints("minus1", {1}, {-1})}, i64t({2}), {{"axis", attr_i(0)}});
                 auto r = b.node("Reshape", {x, cat}, f32t({2, 3}));
                 b.output(b.node("Relu", {r}, f32t({2, 3})));
               },
               {2, 3}, iota(6)});
  c.push_back({"constant_folded_once", [](G& b) {
                 // Sqrt of a weight: a host constant; Softmax of it: computed from constants.
                 auto w = b.weight("w", {1, 2}, {4, 9});
                 auto s = b.node("Sqrt", {w}, f32t({1, 2}));
                 auto x = b.input("x", {1, 2}, {1, 1});
                 b.output(b.node("Mul", {x, s}, f32t({1, 2})));
               },
               {1, 2}, {2, 3}});
  c.push_back({"flatten_and_squeeze_views", [](G& b) {
                 auto x = b.input("x", {1, 2, 1, 2}, {1, -2, 3, -4});
                 auto f = b.node("Flatten", {x}, f32t({1, 4}));
                 auto s = b.node("Squeeze", {f, b.ints("ax", {1}, {0})}, f32t({4}));
                 b.output(b.node("Abs", {s}, f32t({4})));
               },
               {4}, {1, 2, 3, 4}});
  return c;
}

}  // namespace tensat::testing
