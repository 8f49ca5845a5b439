// Symbolic input dimensions through the exporter (exporter/dim_labels.h): the rules that keep
// them (reshape targets that copy or infer them, broadcasts, concats, opaque operators) and the
// ones that stop, naming the node. Models are imported at a fixed shape, as --input-shape does.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "exporter/exporter.h"
#include "refexec/executor.h"
#include "tests/importer/import_text.h"

namespace tensat {
namespace {

ImportResult imp_at(const std::string& text, const std::string& input, Shape shape) {
  ImportOptions o;
  o.input_shapes[input] = std::move(shape);
  return imp(text, o);
}

onnx::ModelProto export_symbolic(const ImportResult& r, ExportStats* st = nullptr) {
  ExportOptions eo;
  eo.keep_symbolic_dims = true;
  return export_model(r.graph, r.weights, r.ctx, eo, st);
}

// "N" for a symbolic dimension, else the number.
std::vector<std::string> dims(const onnx::ValueInfoProto& v) {
  std::vector<std::string> d;
  for (const auto& x : v.type().tensor_type().shape().dim())
    d.push_back(x.has_dim_param() ? x.dim_param() : std::to_string(x.dim_value()));
  return d;
}

std::vector<int64_t> initializer_ints(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) {
      std::vector<int64_t> v(t.int64_data().begin(), t.int64_data().end());
      if (v.empty() && !t.raw_data().empty()) {
        v.resize(t.raw_data().size() / sizeof(int64_t));
        std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      }
      return v;
    }
  return {};
}

std::string death_message(const ImportResult& r) {
  try {
    export_symbolic(r);
  } catch (const DimLabelError& e) {
    return e.what();
  }
  return "(no DimLabelError)";
}

// A flatten (lowered to a reshape to [2, 48] at batch 2) copies the batch: target [0, 48]; the
// interface says N again; the model imported at batch 5 computes what the original does there.
TEST(DimLabels, FlattenCopiesTheBatchAndTheModelRunsAtOtherBatches) {
  const std::string text = M("(float[N,3,4,4] x) => (float[N,10] y)", {T("w", {48, 10})},
                             "r = Relu (x)\n f = Flatten (r)\n y = MatMul (f, w)");
  ImportResult r = imp_at(text, "x", {2, 3, 4, 4});
  ExportStats st;
  onnx::ModelProto m = export_symbolic(r, &st);
  EXPECT_EQ(st.symbolic_dims, std::vector<std::string>{"x: N"});
  EXPECT_EQ(dims(m.graph().input(0)), (std::vector<std::string>{"N", "3", "4", "4"}));
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"N", "10"}));
  const onnx::NodeProto* reshape = nullptr;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Reshape") reshape = &n;
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(initializer_ints(m, reshape->input(1)), (std::vector<int64_t>{0, 48}));

  ImportOptions at5;
  at5.input_shapes["x"] = {5, 3, 4, 4};
  ImportResult original = imp(text, at5);
  ImportResult written = import_onnx_model(m, "written.onnx", at5);
  exec::Inputs in{{"x", exec::random_tensor({5, 3, 4, 4}, 3)}};
  auto a = refexec::run(original.graph, original.weights, in);
  auto b = refexec::run(written.graph, written.weights, in);
  ASSERT_EQ(a.outputs.size(), 1u);
  ASSERT_EQ(b.outputs[0].shape, (Shape{5, 10}));
  for (size_t i = 0; i < a.outputs[0].data.size(); ++i) EXPECT_NEAR(a.outputs[0].data[i], b.outputs[0].data[i], 1e-5);
}

// A reshape that moves the batch to another axis writes it as the one -1.
TEST(DimLabels, BatchMovedToAnotherAxisIsInferred) {
  ImportResult r = imp_at(M("(float[N,6] x) => (y)", {I("to", {1, 2, 6})}, "r = Relu (x)\n y = Reshape (r, to)"),
                          "x", {2, 6});
  onnx::ModelProto m = export_symbolic(r);
  const onnx::NodeProto* reshape = nullptr;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Reshape") reshape = &n;
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(initializer_ints(m, reshape->input(1)), (std::vector<int64_t>{1, -1, 6}));
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"1", "N", "6"}));
}

// A reshape folding the batch into a product with a fixed dimension: the product's label
// ("4*N"), written as the one -1; the model imported at batch 5 computes what the original does.
TEST(DimLabels, ReshapeFoldingTheBatchIntoAProductIsThatProduct) {
  const std::string text =
      M("(float[N,4,8] x) => (y)", {I("to", {-1, 8}), T("w", {8, 3})},
        "r = Relu (x)\n f = Reshape (r, to)\n y = MatMul (f, w)");
  ImportResult r = imp_at(text, "x", {2, 4, 8});
  onnx::ModelProto m = export_symbolic(r);
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"4*N", "3"}));
  const onnx::NodeProto* reshape = nullptr;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Reshape") reshape = &n;
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(initializer_ints(m, reshape->input(1)), (std::vector<int64_t>{-1, 8}));
  ImportOptions at5;
  at5.input_shapes["x"] = {5, 4, 8};
  ImportResult original = imp(text, at5);
  ImportResult written = import_onnx_model(m, "written.onnx", at5);
  exec::Inputs in{{"x", exec::random_tensor({5, 4, 8}, 4)}};
  auto a = refexec::run(original.graph, original.weights, in);
  auto b = refexec::run(written.graph, written.weights, in);
  ASSERT_EQ(b.outputs[0].shape, (Shape{20, 3}));
  for (size_t i = 0; i < a.outputs[0].data.size(); ++i) EXPECT_NEAR(a.outputs[0].data[i], b.outputs[0].data[i], 1e-5);
}

// Tokens flattened to [N*S, 8] and viewed back as [N, S, 8] at batch 1: the one assignment of
// N and S to the axes [1, 6] that fits labels them; the target is computed from x's shape
// (Concat of Slice(Shape(x)) pieces), not a 0 or a -1.
TEST(DimLabels, AProductSplitAgainIsWrittenFromTheInputDimensions) {
  ImportResult r = imp_at(M("(float[N,S,8] x) => (y)", {I("flat", {-1, 8}), I("back", {1, 6, 8}), T("w", {8, 8})},
                            "r = Relu (x)\n f = Reshape (r, flat)\n m = MatMul (f, w)\n y = Reshape (m, back)"),
                          "x", {1, 6, 8});
  onnx::ModelProto m = export_symbolic(r);
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"N", "S", "8"}));
  const onnx::NodeProto* last = nullptr;
  int shapes = 0;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Reshape") last = &n;
    if (n.op_type() == "Shape") ++shapes;
  }
  ASSERT_NE(last, nullptr);
  EXPECT_TRUE(initializer_ints(m, last->input(1)).empty()) << "the target is computed, not an initializer";
  EXPECT_EQ(shapes, 1);
}

// At N = S = 1 a product [N*S] split into [1, 1] could put either symbol on either axis.
TEST(DimLabels, AnAmbiguousSplitOfAProductStops) {
  ImportResult r = imp_at(M("(float[N,S,4] x) => (y)", {I("flat", {-1, 4}), I("back", {1, 1, 4}), T("w", {4, 4})},
                            "r = Relu (x)\n f = Reshape (r, flat)\n m = MatMul (f, w)\n y = Reshape (m, back)"),
                          "x", {1, 1, 4});
  EXPECT_NE(death_message(r).find("where its symbolic dimensions go is ambiguous at the fixed shapes"),
            std::string::npos)
      << death_message(r);
}

TEST(DimLabels, AFixedDimensionMeetingTheBatchStops) {
  ImportResult r = imp_at(M("(float[N,3] x) => (y)", {T("c", {2, 3})}, "y = Add (x, c)"), "x", {2, 3});
  EXPECT_NE(death_message(r).find("symbolic dimension N meets a fixed one of the same size"), std::string::npos)
      << death_message(r);
}

TEST(DimLabels, ABroadcastOneStaysFixedAndTheBatchPasses) {
  ImportResult r = imp_at(M("(float[N,3] x) => (y)", {T("c", {1, 3})}, "y = Add (x, c)"), "x", {1, 3});
  onnx::ModelProto m = export_symbolic(r);
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"N", "3"}));
}

TEST(DimLabels, ConcatAlongTheBatchIsANewSymbolicDimension) {
  ImportOptions o;  // both inputs fixed (one symbol, given for each)
  o.input_shapes = {{"x", {2, 3}}, {"z", {2, 3}}};
  ImportResult r = imp(M("(float[N,3] x, float[N,3] z) => (y)", {}, "c = Concat <axis = 0> (x, z)\n y = Relu (c)"), o);
  ExportStats st;
  onnx::ModelProto m = export_symbolic(r, &st);
  EXPECT_EQ(st.symbolic_dims, (std::vector<std::string>{"x: N", "z: N"}));
  const auto out = dims(m.graph().output(0));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0], "N");
  EXPECT_NE(out[0], "4");
  EXPECT_EQ(out[1], "3");
}

TEST(DimLabels, OpaqueOperatorsWithRulesKeepTheirAxes) {
  ImportResult r = imp_at(M("(float[N,S,8] x) => (y)", {},
                            "p = Softmax <axis = -1> (x)\n y = ReduceMean <axes = [2], keepdims = 0> (p)"),
                          "x", {2, 5, 8});
  ExportStats st;
  onnx::ModelProto m = export_symbolic(r, &st);
  EXPECT_EQ(st.symbolic_dims, (std::vector<std::string>{"x: N", "x: S"}));
  EXPECT_EQ(dims(m.graph().output(0)), (std::vector<std::string>{"N", "S"}));
}

TEST(DimLabels, AnOpaqueOperatorWithoutARuleStopsNamingTheNode) {
  ImportResult r = imp_at(M("(float[N,4,2,2] x) => (y)", {}, "t = SpaceToDepth <blocksize = 2> (x)\n y = Relu (t)"),
                          "x", {2, 4, 2, 2});
  EXPECT_NE(death_message(r).find(
                "node 'SpaceToDepth' (SpaceToDepth): no rule says how its output follows symbolic input dimensions"),
            std::string::npos)
      << death_message(r);
  r = imp_at(M("(float[N,5] x) => (v)", {I("k", {2})}, "v, i = TopK <axis = -1> (x, k)"), "x", {2, 5});
  EXPECT_NE(death_message(r).find("node 'TopK' (TopK): a multi-output operator without a rule"), std::string::npos)
      << death_message(r);
}

// Opaque Pad, Tile and Slice with constant amounts: a padded fixed axis stays fixed and the batch
// passes; a padded symbolic axis is a new dimension, a tiled one the product ("2*N"); a Slice
// taking a symbolic axis whole at every size keeps it, one cutting it stops.
TEST(DimLabels, PadTileAndSliceWithConstantAmounts) {
  ImportResult r = imp_at(M("(float[N,3,4,4] x) => (y)", {I("pads", {0, 0, 1, 1, 0, 0, 1, 1})},
                            "p = Pad (x, pads)\n y = Relu (p)"),
                          "x", {2, 3, 4, 4});
  EXPECT_EQ(dims(export_symbolic(r).graph().output(0)), (std::vector<std::string>{"N", "3", "6", "6"}));
  r = imp_at(M("(float[N,3] x) => (y)", {I("pads", {1, 0, 0, 0})}, "p = Pad (x, pads)\n y = Relu (p)"), "x", {2, 3});
  EXPECT_EQ(dims(export_symbolic(r).graph().output(0)), (std::vector<std::string>{"N+1", "3"}));
  r = imp_at(M("(float[N,3] x) => (y)", {I("reps", {2, 1})}, "t = Tile (x, reps)\n y = Relu (t)"), "x", {2, 3});
  EXPECT_EQ(dims(export_symbolic(r).graph().output(0)), (std::vector<std::string>{"2*N", "3"}));
  r = imp_at(M("(float[N,3] x) => (y)", {I("reps", {0, 1})}, "t = Tile (x, reps)\n y = Relu (t)"), "x", {2, 3});
  EXPECT_NE(death_message(r).find("a repeat below 1"), std::string::npos) << death_message(r);
  r = imp_at(M("(float[N,S] x) => (y)", {I("st", {0, 1}), I("en", {2147483647, 3}), I("ax", {0, 1}), I("sp", {1, 2})},
               "s = Slice (x, st, en, ax, sp)\n y = Relu (s)"),
             "x", {2, 6});
  EXPECT_NE(death_message(r).find("it slices symbolic dimension S"), std::string::npos) << death_message(r);
  r = imp_at(M("(float[N,5] x) => (y)", {I("st", {0, 1}), I("en", {2147483647, 5}), I("ax", {0, 1}), I("sp", {1, 2})},
               "s = Slice (x, st, en, ax, sp)\n y = Relu (s)"),
             "x", {2, 5});
  EXPECT_EQ(dims(export_symbolic(r).graph().output(0)), (std::vector<std::string>{"N", "2"}));
}

// Before opset 7 a broadcast is a Reshape of the smaller operand to a fixed core: stopped before
// anything is written, so the weights an export moves into the file are all still there for
// the export at the fixed shapes that follows.
TEST(DimLabels, LegacyBroadcastStopsBeforeTheWeightsMove) {
  ImportOptions o;
  o.input_shapes = {{"x", {2, 4, 8}}, {"z", {2, 4}}};
  ImportResult r = imp(M("(float[N,4,8] x, float[N,4] z) => (y)", {T("w", {8, 8})},
            "a = MatMul (x, w)\n y = Add <broadcast = 1, axis = 0> (a, z)", 6, "", 3),
          o);
  const std::string path = ::testing::TempDir() + "/legacy_symbolic.onnx";
  ExportOptions eo;
  eo.keep_symbolic_dims = true;
  try {
    export_onnx_file(r.graph, r.weights, r.ctx, path, eo);
    ADD_FAILURE() << "no DimLabelError";
  } catch (const DimLabelError& e) {
    EXPECT_NE(std::string(e.what()).find("a broadcast before opset 7 of an operand with a symbolic dimension"),
              std::string::npos)
        << e.what();
  }
  for (const auto& name : r.weights.names()) EXPECT_FALSE(r.weights.get(name).bytes.empty()) << name;
  eo.keep_symbolic_dims = false;
  export_onnx_file(r.graph, r.weights, r.ctx, path, eo);
  std::filesystem::remove(path);
}

TEST(DimLabels, AFixedBiasMeetingASymbolicDimensionStops) {
  ImportOptions o;
  o.input_shapes = {{"x", {2, 8}}, {"z", {8, 5}}};
  ImportResult r = imp(M("(float[2,8] x, float[8,S] z) => (y)", {T("b", {5})},
                         "a = MatMul (x, z)\n s = Add (a, b)\n y = Relu (s)"),
                       o);
  EXPECT_NE(death_message(r).find("symbolic dimension S meets a fixed one of the same size"), std::string::npos)
      << death_message(r);
}

TEST(DimLabels, AnInputShapeChangingAFixedDimensionStops) {
  ImportResult r = imp_at(M("(float[N,3,16,16] x) => (y)", {}, "y = Relu (x)"), "x", {1, 3, 8, 8});
  EXPECT_NE(death_message(r).find("input 'x': --input-shape [1,3,8,8] changes its fixed dimension 2 (declared 16)"),
            std::string::npos)
      << death_message(r);
}

TEST(DimLabels, WithoutSymbolicInputsNothingChanges) {
  ImportResult r = imp(M("(float[2,3] x) => (y)", {}, "y = Relu (x)"));
  ExportStats st;
  onnx::ModelProto m = export_symbolic(r, &st);
  EXPECT_TRUE(st.symbolic_dims.empty());
  EXPECT_EQ(dims(m.graph().input(0)), (std::vector<std::string>{"2", "3"}));
}

}  // namespace
}  // namespace tensat
