// Exporter unit tests: models imported from inline ONNX text, exported, and inspected.
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "lang/sexpr.h"
#include "exporter/exporter.h"
#include "importer/importer.h"
#include "refexec/executor.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

// The last node of this op type, or null.
const onnx::NodeProto* last_node(const onnx::ModelProto& m, const std::string& op_type) {
  const onnx::NodeProto* found = nullptr;
  for (const auto& n : m.graph().node())
    if (n.op_type() == op_type) found = &n;
  return found;
}

std::vector<std::string> op_types(const onnx::ModelProto& m) {
  std::vector<std::string> v;
  for (const auto& n : m.graph().node()) v.push_back(n.op_type());
  return v;
}

const char* kTwoOutputs = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] b, float[2,3] a) => (y, z) {
  s = Add (a, b)
  y = Relu (s)
  z = Identity (s)
})";

TEST(Export, KeepsInterfaceAndFillsMissingOutputTypes) {
  auto r = imp(kTwoOutputs);
  ExportStats st;
  auto m = export_model(r.graph, r.weights, r.ctx, {}, &st);
  ASSERT_EQ(m.graph().input_size(), 2);
  EXPECT_EQ(m.graph().input(0).name(), "b");
  EXPECT_EQ(m.graph().input(1).name(), "a");
  ASSERT_EQ(m.graph().output_size(), 2);
  EXPECT_EQ(m.graph().output(0).name(), "y");
  EXPECT_EQ(m.graph().output(1).name(), "z");
  const auto& tt = m.graph().output(1).type().tensor_type();
  EXPECT_EQ(tt.elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(tt.shape().dim_size(), 2);
  EXPECT_EQ(tt.shape().dim(1).dim_value(), 3);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  EXPECT_TRUE(st.checker_ran);
}

TEST(Export, OpaqueNodesVerbatimWithDomainAndAttributes) {
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[2,6] x) => (y) <float[2,6] g2> {
  r = Relu (x)
  l = Elu <alpha = 0.25> (r)
  g2 = com.microsoft.Gelu (l)
  y = Tanh (g2)
})");
  auto m = export_model(r.graph, r.weights, r.ctx);
  bool elu = false, gelu = false;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Elu") {
      elu = true;
      ASSERT_EQ(n.attribute_size(), 1);
      EXPECT_FLOAT_EQ(n.attribute(0).f(), 0.25f);
      EXPECT_EQ(n.output(0), "l");
    }
    if (n.op_type() == "Gelu") {
      gelu = true;
      EXPECT_EQ(n.domain(), "com.microsoft");
      EXPECT_EQ(n.input(0), "l");
    }
  }
  EXPECT_TRUE(elu && gelu);
}

TEST(Export, WeightComputationMustBeFoldedFirst) {
  // Gemm with transA=1 over a weight imports as matmul(transpose(w), b): the transpose of a
  // weight is computation the exporter does not do (pipeline/weight_folding.h folds it), so it
  // refuses. (Only a transposed weight that a Gemm reads as B it writes, with transB = 1:
  // lang/graph.h, transposed_weights_read_as_b.)
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,2] b) => (y) <float[4,3] w = {1,2,3,4,5,6,7,8,9,10,11,12}> {
  y = Gemm <transA = 1> (w, b)
})");
  try {
    export_model(r.graph, r.weights, r.ctx);
    FAIL() << "expected ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("fold_weights"), std::string::npos) << e.what();
  }
}

TEST(Export, NestedConcatsBecomeOneNaryConcat) {
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] a, float[2,1] b) => (y) {
  y = Concat <axis = 1> (a, b, a, b)
})");
  auto m = export_model(r.graph, r.weights, r.ctx);
  ASSERT_EQ(op_types(m), (std::vector<std::string>{"Concat"}));
  EXPECT_EQ(m.graph().node(0).input_size(), 4);
}

TEST(Export, SplitChainBecomesOneSplit) {
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,6] x) => (a, b, c) {
  a, b, c = Split <axis = 1> (x)
})");
  auto m = export_model(r.graph, r.weights, r.ctx);
  ASSERT_EQ(op_types(m), (std::vector<std::string>{"Split"}));
  EXPECT_EQ(m.graph().node(0).output_size(), 3);
  EXPECT_EQ(m.graph().node(0).output(1), "b");
}

TEST(Export, OverridableInitializerStaysAnInput) {
  auto r = imp(R"(
<ir_version: 4, opset_import: ["" : 9]>
g (float[2,3] x, float[2,3] w = {1,2,3,4,5,6}) => (y) {
  y = Add (x, w)
})");
  auto m = export_model(r.graph, r.weights, r.ctx);
  ASSERT_EQ(m.graph().input_size(), 2);
  EXPECT_EQ(m.graph().input(1).name(), "w");
  ASSERT_EQ(m.graph().initializer_size(), 1);
  EXPECT_EQ(m.graph().initializer(0).name(), "w");
  EXPECT_EQ(m.graph().node(0).input(1), "w");
}

// IR 3: the initializers are constants (the importer takes them as weights), and every one the
// exporter writes, its own included (the Reshape's target), is declared an input, after the real
// ones: the checker requires it of IR 3, and the IR version stays.
TEST(Export, Ir3DeclaresEveryInitializerAnInput) {
  auto r = imp(R"(
<ir_version: 3, opset_import: ["" : 9]>
g (float[2,3] x, float[2,3] w, int64[1] s) => (y) <float[2,3] w = {1,2,3,4,5,6}, int64[1] s = {6}> {
  a = Add (x, w)
  y = Reshape (a, s)
})");
  ExportStats st;
  auto m = export_model(r.graph, r.weights, r.ctx, {}, &st);
  EXPECT_TRUE(st.checker_ran) << st.checker_skipped_reason;
  EXPECT_EQ(m.ir_version(), 3);
  ASSERT_GE(m.graph().initializer_size(), 2);
  std::vector<std::string> inputs;
  for (const auto& i : m.graph().input()) inputs.push_back(i.name());
  ASSERT_FALSE(inputs.empty());
  EXPECT_EQ(inputs[0], "x");
  EXPECT_EQ(inputs.size(), static_cast<size_t>(m.graph().initializer_size()) + 1);
  for (const auto& t : m.graph().initializer()) {
    auto it = std::find(inputs.begin(), inputs.end(), t.name());
    ASSERT_NE(it, inputs.end()) << t.name();
    const auto& vi = m.graph().input(static_cast<int>(it - inputs.begin()));
    EXPECT_EQ(vi.type().tensor_type().elem_type(), t.data_type()) << t.name();
    EXPECT_EQ(vi.type().tensor_type().shape().dim_size(), t.dims_size()) << t.name();
  }
}

// The enlarge of a kernel computed at run time (not a weight, so not padded as one) is a Pad:
// below opset 11 (Pad-2) with its pads as an attribute, from 11 on as an input.
TEST(Export, EnlargeOfAComputedKernelIsAPadOfItsOpset) {
  for (int opset : {9, 13}) {
    auto r = imp(R"(
<ir_version: 8, opset_import: ["" : )" + std::to_string(opset) + R"(]>
g (float[3,6,1,1] a, float[3,6,3,3] b) => (y) {
  k = Elu (a)
  y = Identity (k)
})");
    ir::Graph& g = r.graph;
    const ir::NodeId kernel = g.outputs().at(0);
    const ir::NodeId ref = g.input("b", TensorType{DType::F32, {3, 6, 3, 3}});
    g.set_root(g.op(Op::Noop, {g.op(Op::Enlarge, {kernel, ref})}));
    ExportStats st;
    auto m = export_model(g, r.weights, r.ctx, {}, &st);
    EXPECT_TRUE(st.checker_ran) << st.checker_skipped_reason;
    const onnx::NodeProto* pad = last_node(m, "Pad");
    ASSERT_NE(pad, nullptr) << "opset " << opset;
    const std::vector<int64_t> want = {0, 0, 1, 1, 0, 0, 1, 1};
    if (opset < 11) {
      ASSERT_EQ(pad->input_size(), 1);
      ASSERT_EQ(pad->attribute_size(), 1);
      EXPECT_EQ(pad->attribute(0).name(), "pads");
      EXPECT_EQ(std::vector<int64_t>(pad->attribute(0).ints().begin(), pad->attribute(0).ints().end()), want);
    } else {
      ASSERT_EQ(pad->input_size(), 2);
      EXPECT_EQ(pad->attribute_size(), 0);
    }
  }
}

// Before opset 7, Add broadcasts only with broadcast=1, from `axis` on: b [4] with axis=1 on
// [1,4,2,2] is per channel (numpy would add it along the last axis). Imported as such, and
// written back in that form, the model computes the per-channel sum both times.
TEST(Export, LegacyBroadcastBeforeOpset7IsPerAxisBothWays) {
  auto r = imp(R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[1,4,2,2] x, float[4] b) => (y) {
  y = Add <broadcast = 1, axis = 1> (x, b)
})");
  const auto x = refexec::random_tensor({1, 4, 2, 2}, 1), b = refexec::random_tensor({4}, 2);
  auto per_channel = [&](const refexec::Tensor& y) {
    for (size_t k = 0; k < x.data.size(); ++k)
      if (y.data[k] != x.data[k] + b.data[k / 4]) return false;
    return true;
  };
  EXPECT_TRUE(per_channel(refexec::run(r.graph, r.weights, {{"x", x}, {"b", b}}).outputs.at(0)));
  ExportStats st;
  auto m = export_model(r.graph, r.weights, r.ctx, {}, &st);
  EXPECT_TRUE(st.checker_ran) << st.checker_skipped_reason;
  const onnx::NodeProto* add = last_node(m, "Add");
  ASSERT_NE(add, nullptr);
  std::map<std::string, int64_t> attrs;
  for (const auto& a : add->attribute()) attrs[a.name()] = a.i();
  EXPECT_EQ(attrs, (std::map<std::string, int64_t>{{"axis", 1}, {"broadcast", 1}}));
  auto back = import_onnx_model(m, "exported.onnx", {});
  EXPECT_TRUE(per_channel(refexec::run(back.graph, back.weights, {{"x", x}, {"b", b}}).outputs.at(0)));
}

// Before opset 5 a Reshape takes its shape as an attribute: the legacy broadcast of a tensor
// that is not a weight (b, an input here) is reshaped that way.
TEST(Export, LegacyBroadcastBeforeOpset5ReshapesByAttribute) {
  auto r = imp(R"(
<ir_version: 3, opset_import: ["" : 3]>
g (float[1,4,2,2] x, float[4] b) => (y) {
  y = Mul <broadcast = 1, axis = 1> (x, b)
})");
  ExportStats st;
  auto m = export_model(r.graph, r.weights, r.ctx, {}, &st);
  EXPECT_TRUE(st.checker_ran) << st.checker_skipped_reason;
  int reshapes = 0;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Reshape") {
      ++reshapes;
      EXPECT_EQ(n.input_size(), 1);
      ASSERT_EQ(n.attribute_size(), 1);
      EXPECT_EQ(n.attribute(0).name(), "shape");
    }
  EXPECT_GE(reshapes, 1);
}

// The language's adds commute (ewadd-comm): b [4] + x [1,4] is written with x first, the
// operand of the result's shape, as the legacy form needs.
TEST(Export, LegacyBroadcastPutsTheOperandOfTheResultsShapeFirst) {
  auto r = imp(R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[1,4] x, float[4] b) => (y) {
  y = Relu (x)
})");
  ir::Graph& g = r.graph;
  const ir::NodeId x = g.input("x", TensorType{DType::F32, {1, 4}});
  const ir::NodeId b = g.input("b", TensorType{DType::F32, {4}});
  g.set_root(g.op(Op::Noop, {g.op(Op::Ewadd, {b, x})}));
  ExportStats st;
  auto m = export_model(g, r.weights, r.ctx, {}, &st);
  EXPECT_TRUE(st.checker_ran) << st.checker_skipped_reason;
  const onnx::NodeProto* add = last_node(m, "Add");
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->input_size(), 2);
  EXPECT_EQ(add->input(0), "x");
  EXPECT_EQ(add->input(1), "b");
}

// Before opset 7 an add of equal shapes is written as Sum: ONNX Runtime implements Sum-6, and
// Add only from opset 7 (an old export's residual Sum must stay runnable).
TEST(Export, AddOfEqualShapesBeforeOpset7IsASum) {
  auto r = imp(R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[1,4] a, float[1,4] b, float[1,4] c) => (y) {
  y = Sum (a, b, c)
})");
  auto m = export_model(r.graph, r.weights, r.ctx);
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Sum", "Sum"}));
}

TEST(Export, CheckerSkippedForNewerIrVersion) {
  auto r = imp(std::string(kTwoOutputs).replace(std::string(kTwoOutputs).find("ir_version: 8"), 13, "ir_version: 10"));
  ExportStats st;
  auto m = export_model(r.graph, r.weights, r.ctx, {}, &st);
  EXPECT_FALSE(st.checker_ran);
  EXPECT_NE(st.checker_skipped_reason.find("IR version 10"), std::string::npos);
  EXPECT_EQ(m.ir_version(), 10);
}

TEST(Export, AtomicWriteLeavesNoTemporaryFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / ("tensat_export_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = imp(kTwoOutputs);
  export_onnx_file(r.graph, r.weights, r.ctx, (dir / "out.onnx").string());
  EXPECT_TRUE(fs::exists(dir / "out.onnx"));
  EXPECT_THROW(export_onnx_file(r.graph, r.weights, r.ctx, (dir / "missing" / "out.onnx").string()), ExportError);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(Export, WeightsMovedBackAfterWriting) {
  namespace fs = std::filesystem;
  auto r = imp(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (y) <float[2,3] w = {1,2,3,4,5,6}> {
  y = Add (x, w)
})");
  std::string path = (fs::path(::testing::TempDir()) / ("tensat_w_" + std::to_string(::getpid()) + ".onnx")).string();
  export_onnx_file(r.graph, r.weights, r.ctx, path);
  EXPECT_EQ(r.weights.get("w").bytes.size(), 24u);
  fs::remove(path);
}

}  // namespace
}  // namespace tensat
