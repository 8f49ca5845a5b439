// onnx-tensat IN OUT: import an ONNX model, (optimize,) export it, report.
//
// Exit status: 0 success; 2 bad input or usage (one-line message, no output written);
// 3 verification failed; 1 internal error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "exporter/exporter.h"
#include "importer/importer.h"

namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Options {
  std::string in, out;
  std::vector<std::string> input_shapes;
  std::string report;
  int verbose = 0;
  bool quiet = false;
};

void print_table(const std::map<std::string, int>& before, const std::map<std::string, int>& after) {
  std::set<std::string> ops;
  for (auto& [k, v] : before) ops.insert(k);
  for (auto& [k, v] : after) ops.insert(k);
  std::fprintf(stderr, "+--------------------+------------+------------+\n");
  std::fprintf(stderr, "| %-18s | %10s | %10s |\n", "op", "original", "optimized");
  std::fprintf(stderr, "+--------------------+------------+------------+\n");
  int tb = 0, ta = 0;
  for (const auto& op : ops) {
    int b = before.count(op) ? before.at(op) : 0, a = after.count(op) ? after.at(op) : 0;
    tb += b;
    ta += a;
    std::fprintf(stderr, "| %-18s | %10d | %10d |\n", op.c_str(), b, a);
  }
  std::fprintf(stderr, "+--------------------+------------+------------+\n");
  std::fprintf(stderr, "| %-18s | %10d | %10d |\n", "total", tb, ta);
  std::fprintf(stderr, "+--------------------+------------+------------+\n");
}

int run(const Options& o) {
  auto t0 = Clock::now();
  tensat::ImportOptions iopts;
  for (const auto& f : o.input_shapes) {
    auto [name, shape] = tensat::parse_input_shape_flag(f);
    iopts.input_shapes[name] = shape;
  }
  tensat::ImportResult imp = tensat::import_onnx_file(o.in, iopts);
  auto t1 = Clock::now();
  tensat::ExportStats es;
  tensat::export_onnx_file(imp.graph, imp.weights, imp.ctx, o.out, {}, &es);
  auto t2 = Clock::now();
  if (!es.checker_skipped_reason.empty())
    spdlog::warn("ONNX checker skipped: {}; relying on the numeric checks", es.checker_skipped_reason);

  if (!o.quiet) {
    std::fprintf(stderr, "onnx-tensat %s: %s -> %s\n", TENSAT_VERSION, o.in.c_str(), o.out.c_str());
    print_table(imp.stats.onnx_op_counts, es.op_counts);
    std::fprintf(stderr, "opaque nodes: %d, folded BatchNorms: %d, folded weights: %d\n", imp.stats.opaque_nodes,
                 imp.stats.folded_batchnorms, es.folded_weights);
    std::fprintf(stderr, "time: import %.3f s, export %.3f s, total %.3f s\n", secs(t0, t1), secs(t1, t2),
                 secs(t0, t2));
  }
  if (!o.report.empty()) {
    nlohmann::json j;
    j["input"] = o.in;
    j["output"] = o.out;
    j["ops_before"] = imp.stats.onnx_op_counts;
    j["ops_after"] = es.op_counts;
    j["opaque_nodes"] = imp.stats.opaque_nodes;
    j["opaque_reasons"] = imp.stats.opaque_reasons;
    j["times"] = {{"import", secs(t0, t1)}, {"export", secs(t1, t2)}, {"total", secs(t0, t2)}};
    j["checker"] = es.checker_ran ? "passed" : "skipped: " + es.checker_skipped_reason;
    std::ofstream f(o.report);
    f << j.dump(2) << "\n";
    if (!f) throw tensat::ExportError(o.report + ": cannot write the report");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"onnx-tensat: equality-saturation superoptimizer for ONNX models (TENSAT)"};
  Options o;
  app.add_option("input", o.in, "input ONNX model")->required();
  app.add_option("output", o.out, "output ONNX model (written atomically; the input is never modified)")->required();
  app.add_option("--input-shape", o.input_shapes, "fix an input's shape, NAME:1x3x224x224 (repeatable)");
  app.add_option("--report", o.report, "write a JSON report to this file");
  app.add_flag("-v,--verbose", o.verbose, "more logging (repeat for debug)");
  app.add_flag("-q,--quiet", o.quiet, "print nothing but errors");
  app.set_version_flag("--version", std::string("onnx-tensat ") + TENSAT_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  auto logger = spdlog::stderr_color_mt("onnx-tensat");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(o.quiet ? spdlog::level::err
                            : o.verbose >= 2 ? spdlog::level::debug
                                             : o.verbose == 1 ? spdlog::level::info : spdlog::level::warn);
  if (o.in == o.out) {
    std::fprintf(stderr, "onnx-tensat: error: output path equals the input path; the input is never overwritten\n");
    return 2;
  }
  try {
    return run(o);
  } catch (const tensat::ImportError& e) {
    std::fprintf(stderr, "onnx-tensat: error: %s\n", e.what());
    return 2;
  } catch (const tensat::ExportError& e) {
    std::fprintf(stderr, "onnx-tensat: internal error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-tensat: internal error: %s\n", e.what());
    return 1;
  }
}
