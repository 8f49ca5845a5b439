// onnx-tensat-exec: runs an ONNX model on the CPU reference executor (refexec/), and
// converts a model through the importer and exporter alone (no optimization).
//
//   onnx-tensat-exec MODEL.onnx IN_DIR OUT_DIR [--input-shape NAME:1x3x224x224]...
//       Reads IN_DIR/input_<i>.pb (TensorProto, the ONNX backend test-data format; i-th graph
//       input; a missing file for an input that has an initializer takes its default value),
//       imports the model, runs refexec::run and writes OUT_DIR/output_<i>.pb, one per graph
//       output, named as in the model. Float32 only; opaque nodes run where the executor has
//       a kernel for them (exec/opaque_decode.h), others are an error naming the node.
//   onnx-tensat-exec --convert IN.onnx OUT.onnx [--input-shape ...]
//       Import + export: the output model is the input model as the exporter writes it.
//       Used by the round-trip tests and for timing the importer and exporter.
//
// Exit status: 0 ok; 2 bad input or usage (one-line message, nothing written); 1 internal.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exporter/exporter.h"
#include "importer/importer.h"
#include "pipeline/opaque_ops.h"
#include "pipeline/weight_folding.h"
#include "refexec/executor.h"
#include "support/atomic_file.h"
#include "support/blas_threads.h"
#include "support/stopwatch.h"
#include "tools/tool_cli.h"

namespace {

namespace fs = std::filesystem;

struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

onnx::TensorProto read_tensor(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw BadInput(p.string() + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) throw BadInput(p.string() + ": not a TensorProto");
  return t;
}

// TensorProto -> float32 tensor (FLOAT only; raw_data or float_data).
tensat::refexec::Tensor to_tensor(const onnx::TensorProto& t, const std::string& where) {
  if (t.data_type() != onnx::TensorProto::FLOAT)
    throw BadInput(where + ": element type " + std::to_string(t.data_type()) +
                   " (the reference executor runs float32 only)");
  if (t.data_location() == onnx::TensorProto::EXTERNAL) throw BadInput(where + ": external data");
  tensat::Shape s(t.dims().begin(), t.dims().end());
  size_t n = static_cast<size_t>(tensat::num_elements(s));
  std::vector<float> v(n);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * 4) throw BadInput(where + ": data size does not match its shape");
    if (n) std::memcpy(v.data(), t.raw_data().data(), n * 4);
  } else {
    if (static_cast<size_t>(t.float_data_size()) != n) throw BadInput(where + ": data size does not match its shape");
    for (size_t i = 0; i < n; ++i) v[i] = t.float_data(static_cast<int>(i));
  }
  return tensat::refexec::Tensor(std::move(s), std::move(v));
}

int run_model(const std::string& model, const std::string& in_dir, const std::string& out_dir,
              const tensat::ImportOptions& iopts, bool quiet) {
  tensat::Stopwatch sw;
  tensat::ImportResult imp = tensat::import_onnx_file(model, iopts);
  const double t_import = sw.seconds();
  sw.restart();
  if (!fs::is_directory(in_dir)) throw BadInput(in_dir + ": not a directory");
  std::unordered_map<std::string, tensat::refexec::Tensor> inputs;
  const auto& names = imp.ctx.input_names;
  for (size_t i = 0; i < names.size(); ++i) {
    fs::path p = fs::path(in_dir) / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) {
      bool has_default = false;
      for (const auto& t : imp.ctx.overridable_initializers)
        if (t.name() == names[i]) {
          onnx::TensorProto copy = t;
          inputs.emplace(names[i], to_tensor(copy, "initializer '" + names[i] + "'"));
          has_default = true;
        }
      if (!has_default) throw BadInput(p.string() + ": missing (graph input '" + names[i] + "')");
      continue;
    }
    inputs.emplace(names[i], to_tensor(read_tensor(p), p.string()));
  }
  tensat::refexec::RunResult r;
  // Opaque nodes run where the executor has a kernel for them (exec/opaque_plan.h).
  const tensat::exec::OpaqueOps ops = tensat::describe_opaque_ops(imp.ctx);
  tensat::refexec::RunOptions opts;
  opts.opaque = &ops;
  try {
    r = tensat::refexec::run(imp.graph, imp.weights, inputs, opts);
  } catch (const tensat::refexec::ExecError& e) {
    throw BadInput(model + ": " + e.what());
  }
  const double t_run = sw.seconds();
  fs::create_directories(out_dir);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    onnx::TensorProto t;
    t.set_name(imp.ctx.output_names.at(i));
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : r.outputs[i].shape) t.add_dims(d);
    t.set_raw_data(std::string(reinterpret_cast<const char*>(r.outputs[i].data.data()), r.outputs[i].data.size() * 4));
    tensat::write_file_atomic((fs::path(out_dir) / ("output_" + std::to_string(i) + ".pb")).string(),
                              t.SerializeAsString());
  }
  if (!quiet)
    std::fprintf(stderr, "onnx-tensat-exec: %s: import %.3f s, run %.3f s, peak value memory %.1f MB\n",
                 model.c_str(), t_import, t_run, static_cast<double>(r.peak_bytes) / 1e6);
  return 0;
}

int convert(const std::string& in, const std::string& out, const tensat::ImportOptions& iopts, bool quiet) {
  std::error_code ec;
  if (fs::exists(out) && fs::equivalent(in, out, ec))
    throw BadInput("output path is the input file; the input is never overwritten");
  if (in == out) throw BadInput("output path is the input file; the input is never overwritten");
  tensat::Stopwatch sw;
  tensat::ImportResult imp = tensat::import_onnx_file(in, iopts);
  const double t_import = sw.seconds();
  sw.restart();
  // The importer lowers some nodes to computations on weights (Gemm's transposed A, ...):
  // they are folded as the pipeline folds them, then the exporter writes (a transposed B
  // stays: written as Gemm with transB = 1, lang/graph.h).
  const tensat::ir::Graph folded = tensat::fold_weights(imp.graph, imp.weights);
  tensat::ExportStats es;
  tensat::export_onnx_file(folded, imp.weights, imp.ctx, out, {}, &es);
  const double t_export = sw.seconds();
  if (!quiet) {
    std::fprintf(stderr, "onnx-tensat-exec: %s -> %s: import %.3f s, export %.3f s, %d opaque, %d folded BNs%s%s\n",
                 in.c_str(), out.c_str(), t_import, t_export, imp.stats.opaque_nodes,
                 imp.stats.folded_batchnorms, es.checker_ran ? ", checker passed" : ", checker skipped: ",
                 es.checker_ran ? "" : es.checker_skipped_reason.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  CLI::App app{"onnx-tensat-exec: run an ONNX model on the CPU reference executor, or convert it (import+export)"};
  std::vector<std::string> pos;
  std::vector<std::string> shapes;
  bool do_convert = false, quiet = false;
  app.add_option("args", pos, "MODEL.onnx IN_DIR OUT_DIR, or with --convert: IN.onnx OUT.onnx")->required();
  app.add_flag("--convert", do_convert, "import and export only (no optimization)");
  app.add_option("--input-shape", shapes, "fix an input's shape, NAME:1x3x224x224 (repeatable)");
  app.add_flag("-q,--quiet", quiet, "print nothing but errors");
  if (auto code = tensat::tools::parse_command_line(app, argc, argv)) return *code;
  spdlog::set_level(quiet ? spdlog::level::err : spdlog::level::warn);
  if (pos.size() != (do_convert ? 2u : 3u)) {
    std::fprintf(stderr, "onnx-tensat-exec: error: expected %s\n",
                 do_convert ? "IN.onnx OUT.onnx" : "MODEL.onnx IN_DIR OUT_DIR");
    return 2;
  }
  try {
    tensat::ImportOptions iopts;
    for (const auto& f : shapes) {
      auto [name, shape] = tensat::parse_input_shape_flag(f);
      iopts.input_shapes[name] = shape;
    }
    return do_convert ? convert(pos[0], pos[1], iopts, quiet) : run_model(pos[0], pos[1], pos[2], iopts, quiet);
  } catch (const tensat::ImportError& e) {
    std::fprintf(stderr, "onnx-tensat-exec: error: %s\n", e.what());
    return 2;
  } catch (const BadInput& e) {
    std::fprintf(stderr, "onnx-tensat-exec: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-tensat-exec: internal error: %s\n", e.what());
    return 1;
  }
}
