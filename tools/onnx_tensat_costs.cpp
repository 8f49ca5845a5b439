// onnx-tensat-costs: the cost tables' tool.
//
//   onnx-tensat-costs MODEL.onnx... --out TABLE.json [--k-multi N] [exploration flags]
//     Explores each model as onnx-tensat does (same importer, rules and runner) and measures
//     every kernel signature its e-graph reaches with the cuda cost model (CudaCostModel and
//     its CostCache: whatever method that model measures with is the table's), adding them
//     to TABLE.json (a cost-cache file, version 2). Needs a GPU: without one it says so and
//     exits 2.
//   onnx-tensat-costs --fit-report TABLE.json|PROFILE [--device NAME]
//     How well the model calibrated to a table prices what the table lacks: fit on four
//     fifths, median and 90th-percentile relative error on the fifth held out, per operator
//     kind (calibrated_model.h). PROFILE names a built-in table (h100).
//
// Exit status: 0 success; 2 bad input or usage (no GPU for measuring, an unreadable model or
// table); 1 internal error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "egraph/bridge.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "gpu_cost/calibrated_model.h"
#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cuda_model.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/roofline.h"
#include "importer/importer.h"
#include "pipeline/costing.h"
#include "pipeline/options.h"
#include "pipeline/rule_sources.h"
#include "support/blas_threads.h"
#include "support/stopwatch.h"
#include "tools/tool_cli.h"

namespace {

namespace cost = tensat::cost;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::vector<std::string> models;
  std::string out, fit_report, device;
  std::vector<std::string> shapes;
  bool tf32 = false;
  tensat::PipelineOptions explore;  // exploration fields only, onnx-tensat's defaults
};

std::string percent(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * x);
  return b;
}

// The table text and a name for messages: a file, or a built-in table by profile name.
std::pair<std::string, std::string> table_text(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) {
    std::ifstream in(arg, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (!in) throw UsageError(arg + ": cannot be read");
    return {ss.str(), arg};
  }
  if (const cost::EmbeddedTable* t = cost::embedded_table(arg))
    return {std::string(t->text), "built-in " + std::string(t->file)};
  throw UsageError(arg + ": no such file (nor a built-in table: " + cost::embedded_profile_list() + ")");
}

int fit_report(const Args& a) {
  auto [text, origin] = table_text(a.fit_report);
  std::string err;
  auto file = cost::parse_cost_cache(text, &err);
  if (!file) throw UsageError(origin + ": not a cost table this onnx-tensat reads: " + err);
  if (file->devices.empty()) throw UsageError(origin + ": holds no device");
  std::string device = a.device.empty() ? file->devices.begin()->first : a.device;
  auto d = file->devices.find(device);
  if (d == file->devices.end()) throw UsageError(origin + ": no device \"" + device + "\"");
  const cost::DeviceProfile* p = cost::match_profile(device);
  const cost::DeviceProfile& fallback = p ? *p : *cost::find_profile(cost::kDefaultProfile);
  cost::FitReport rep = cost::held_out_fit_report(d->second.costs, fallback);
  std::printf("fit report: %s, device %s (%s, v%d): %zu signatures, %zu unusable\n", origin.c_str(), device.c_str(),
              d->second.method.c_str(), file->version, rep.signatures, rep.unusable);
  std::printf("fitted on four fifths; relative error |estimate - measured| / measured on the fifth held out "
              "(FNV-1a(signature) %% 5 == 0)\n\n");
  std::printf("| kind | fitted on | held out | analytic median | analytic p90 | calibrated median | calibrated p90 "
              "| priced by | analytic fit (per call, per further kernel, per GFLOP, per GB) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& k : rep.kinds) {
    std::string fit = "—";
    if (k.fit.samples) {
      char b[128];
      std::snprintf(b, sizeof b, "%.4g, %.4g, %.4g, %.4g ms", k.fit.per_call, k.fit.per_extra_kernel,
                    k.fit.per_flop * 1e9, k.fit.per_byte * 1e9);
      fit = b;
    }
    std::printf("| %s | %zu | %zu | %s | %s | %s | %s | %s | %s |\n", k.kind.c_str(), k.train, k.held_out,
                percent(k.analytic_median).c_str(), percent(k.analytic_p90).c_str(), percent(k.median).c_str(),
                percent(k.p90).c_str(), k.by.c_str(), fit.c_str());
  }
  return 0;
}

int measure(const Args& a) {
  if (a.models.empty()) throw UsageError("no models given (onnx-tensat-costs MODEL.onnx... --out TABLE.json)");
  if (a.out.empty()) throw UsageError("--out TABLE.json is required to measure");
  if (!tensat::gpu::available())
    throw UsageError("measuring a cost table needs a GPU, and none was found on this machine (" +
                     std::to_string(tensat::gpu::device_count()) + " CUDA devices); run it where one is");
  cost::CostOptions co;
  co.cache_path = a.out;
  co.allow_tf32 = a.tf32;
  auto model = cost::make_cost_model(cost::CostModelKind::Cuda, co);
  auto* cuda = dynamic_cast<cost::CudaCostModel*>(model.get());
  std::vector<tensat::Rewrite> rules;
  try {
    rules = tensat::compile_rewrites(tensat::load_rule_sources(a.explore.rule_files));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  tensat::ImportOptions io;
  for (const auto& f : a.shapes) {
    auto [name, shape] = tensat::parse_input_shape_flag(f);
    io.input_shapes[name] = shape;
  }
  for (const auto& path : a.models) {
    const tensat::Stopwatch t;
    tensat::ImportResult imp = tensat::import_onnx_file(path, io);
    tensat::EGraph eg;
    tensat::add_graph(eg, imp.graph);
    tensat::RunnerConfig rc;
    rc.node_limit = a.explore.node_limit;
    rc.iter_limit = a.explore.iter_limit;
    rc.time_limit_s = a.explore.time_limit_s;
    rc.k_multi = a.explore.k_multi;
    rc.cycle_filter = a.explore.cycle_filter;
    tensat::RunReport run = tensat::Runner(eg).with_config(rc).run(rules);
    const size_t before = cuda->measured();
    const tensat::Costing costing(*model, tensat::opaque_folding(imp.ctx));
    costing.price(imp.graph);
    costing.price(eg);
    model->flush();
    std::printf("%s: %zu e-nodes, %zu new measurements (%zu failed so far), %.1f s\n", path.c_str(), run.nodes,
                cuda->measured() - before, cuda->failures(), t.seconds());
    std::fflush(stdout);
  }
  model->flush();
  const cost::CostCache::Entries* e = cuda->cache().entries(cuda->device());
  std::printf("%s: %zu signatures for %s (method %s, version %d)\n", a.out.c_str(), e ? e->size() : 0,
              cuda->device().c_str(), cuda->cache().method(cuda->device()).c_str(), cost::kCostCacheVersion);
  return cuda->failures() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  CLI::App app{"onnx-tensat-costs: measure a cost table on a GPU, or report how well the calibrated model fits one"};
  Args a;
  app.add_option("models", a.models, "ONNX models whose e-graphs' signatures to measure");
  app.add_option("--out", a.out, "the cost table to write (existing entries of the same method are kept)");
  app.add_option("--fit-report", a.fit_report, "print the held-out fit quality of a table (a file, or: " +
                                                   cost::embedded_profile_list() + ")");
  app.add_option("--device", a.device, "--fit-report: the table's device (default: its only or first)");
  app.add_option("--input-shape", a.shapes, "fix an input's shape, NAME:1x3x224x224 (repeatable)");
  app.add_option("--k-multi", a.explore.k_multi, "iterations in which multi-pattern rules apply")
      ->default_val(a.explore.k_multi);
  app.add_option("--node-limit", a.explore.node_limit, "e-graph node limit")->default_val(a.explore.node_limit);
  app.add_option("--iter-limit", a.explore.iter_limit, "exploration iteration limit")->default_val(a.explore.iter_limit);
  app.add_option("--time-limit", a.explore.time_limit_s, "exploration time limit (s)")
      ->default_val(a.explore.time_limit_s);
  app.add_option("--rules", a.explore.rule_files, "rule file (.rules or TASO .pb); repeatable; default: built-in set");
  app.add_flag("--tf32", a.tf32, "measure with TF32 tensor cores (the device name gets \" tf32\")");
  int verbose = 0;
  app.add_flag("-v,--verbose", verbose, "more logging (repeat for debug)");
  if (auto code = tensat::tools::parse_command_line(app, argc, argv)) return *code;
  tensat::tools::use_tool_logger("onnx-tensat-costs", verbose);
  try {
    if (!a.fit_report.empty()) {
      if (!a.models.empty() || !a.out.empty()) throw UsageError("--fit-report takes no models and no --out");
      return fit_report(a);
    }
    return measure(a);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "onnx-tensat-costs: error: %s\n", e.what());
    return 2;
  } catch (const tensat::ImportError& e) {
    std::fprintf(stderr, "onnx-tensat-costs: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-tensat-costs: internal error: %s\n", e.what());
    return 1;
  }
}
