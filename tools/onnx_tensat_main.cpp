// onnx-tensat IN OUT: import an ONNX model, explore equivalent graphs by equality
// saturation, extract the cheapest, export it, verify it against the original, report.
//
// Exit status: 0 success; 2 bad input or usage (one-line message, no output written);
// 3 verification failed (nothing written unless --force); 1 internal error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>

#include "extract/extract_graph.h"
#include "extract/ilp.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/roofline.h"
#include "importer/importer.h"
#include "pipeline/pipeline.h"
#include "support/atomic_file.h"
#include "support/blas_threads.h"
#include "tools/tool_cli.h"

namespace {

void write_report(const tensat::PipelineReport& rep, const std::string& path) {
  if (path.empty()) return;
  try {
    tensat::write_file_atomic(path, rep.to_json().dump(2) + "\n");
  } catch (const tensat::FileError& e) {
    std::fprintf(stderr, "onnx-tensat: warning: cannot write the report: %s\n", e.what());
  }
}

// Name -> enum validators for the choice flags: CLI11 checks the name and stores the enum, so
// the pipeline never sees a string it has to validate. Help and errors list the names only.
template <typename E, typename F>
CLI::Validator one_of(std::initializer_list<E> values, F name) {
  std::map<std::string, E> m;
  std::string names;
  for (E v : values) {
    m.emplace(std::string(name(v)), v);
    names += (names.empty() ? "" : "|") + std::string(name(v));
  }
  CLI::Validator v(
      [m, names](std::string& s) -> std::string {
        const auto it = m.find(s);
        if (it == m.end()) return "'" + s + "' is not one of " + names;
        s = std::to_string(static_cast<int>(it->second));
        return {};
      },
      "");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  CLI::App app{"onnx-tensat: equality-saturation superoptimizer for ONNX models (TENSAT)"};
  tensat::PipelineOptions o;
  std::vector<std::string> shapes;
  app.add_option("input", o.input, "input ONNX model")->required();
  app.add_option("output", o.output, "output ONNX model (written atomically; the input is never modified)")->required();
  app.add_option("--input-shape", shapes, "fix an input's shape, NAME:1x3x224x224 (repeatable)");
  auto* g1 = "Exploration";
  app.add_option("--node-limit", o.node_limit, "e-graph node limit")->default_val(o.node_limit)->group(g1);
  app.add_option("--iter-limit", o.iter_limit, "exploration iteration limit")->default_val(o.iter_limit)->group(g1);
  app.add_option("--time-limit", o.time_limit_s, "exploration time limit (s)")->default_val(o.time_limit_s)->group(g1);
  app.add_option("--k-multi", o.k_multi, "iterations in which multi-pattern rules apply")->default_val(o.k_multi)->group(g1);
  bool no_k1_seed = false;
  app.add_flag("--no-k1-seed", no_k1_seed,
               "with --k-multi above 1: do not start the extraction from the k_multi - 1 result (which makes it "
               "never worse than k_multi 1)")
      ->group(g1);
  bool no_k0_seed = false;
  app.add_flag("--no-k0-seed", no_k0_seed,
               "at --k-multi 1 (and in the k_multi 1 seed of --k-multi 2): do not start the extraction from the "
               "k_multi 0 result where that e-graph has at most a quarter of the e-nodes")
      ->group(g1);
  using tensat::CycleFilterMode;
  app.add_option("--cycle-filter", o.cycle_filter, "efficient|vanilla|none")
      ->transform(one_of({CycleFilterMode::Efficient, CycleFilterMode::Vanilla, CycleFilterMode::None},
                                                  tensat::cycle_filter_name))
      ->default_str("efficient")->group(g1);
  app.add_option("--rules", o.rule_files, "rule file (.rules text or TASO .pb); repeatable; default: built-in set")
      ->group(g1);
  auto* g2 = "Extraction";
  namespace ex = tensat::extract;
  app.add_option("--extract", o.extract, "greedy|dag|ilp")
      ->transform(one_of({ex::Method::Greedy, ex::Method::Dag, ex::Method::Ilp},
                                                  [](ex::Method m) { return ex::to_string(m); }))
      ->default_str("ilp")->group(g2);
  app.add_option("--ilp-time-limit", o.ilp_time_limit_s,
                 "ILP wall-clock limit (s): a safety net; the work budget ends the search, so the output does not "
                 "depend on the machine's load")
      ->default_val(o.ilp_time_limit_s)->group(g2);
  const ex::IlpOptions ilp_defaults;
  app.add_option("--ilp-work", o.ilp_work,
                 fmt::format("ILP work budget for proving or improving, in deterministic units (simplex iterations, "
                             "CBC events; default: {} per e-node, at least {})",
                             ilp_defaults.work_per_node, ilp_defaults.min_work))
      ->group(g2);
  app.add_option("--ilp-stall-work", o.ilp_stall_work,
                 "ILP stall stop: CBC ends when its best extraction has not improved for this much work (default: a "
                 "quarter of the budget; 0: off, e.g. with a larger --ilp-work to prove optimality)")
      ->group(g2);
  app.add_option("--ilp-order", o.ilp_order, "ILP topological-order constraints: none|real|int")
      ->transform(one_of({ex::OrderConstraints::None, ex::OrderConstraints::Real, ex::OrderConstraints::Integer},
                  [](ex::OrderConstraints v) { return ex::to_string(v); }))
      ->default_str("none")->group(g2);
  app.add_option("--threads", o.threads, "solver threads (above 1 the result may differ from run to run)")->default_val(o.threads)->group(g2);
  auto* g3 = "Cost model";
  using tensat::cost::CostModelKind;
  app.add_option("--cost-model", o.cost_model,
                 "auto|cuda|roofline|table. auto: cuda on a GPU, else the device profile's measured table (or "
                 "--cost-table), else its roofline model; table: measured costs, misses priced by a model "
                 "calibrated to the table; roofline: the analytic model (ablation)")
      ->transform(one_of({CostModelKind::Auto, CostModelKind::Cuda, CostModelKind::Roofline,
                                                   CostModelKind::Table},
                                                  tensat::cost::cost_model_kind_name))
      ->default_str("auto")->group(g3);
  app.add_option("--device-profile", o.device_profile,
                 "the GPU costs are predicted for without one: " + tensat::cost::profile_list() +
                     " (measured table built in: " + tensat::cost::embedded_profile_list() +
                     "; the others: roofline only)")
      ->check(CLI::IsMember(tensat::cost::profile_names(), CLI::ignore_case))
      ->transform([](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
      })
      ->default_val(o.device_profile)->group(g3);
  app.add_option("--cost-cache", o.cost_cache, "cuda: persistent cache file of measured costs")->group(g3);
  app.add_option("--cost-table", o.cost_table,
                 "table/auto: a cost table measured on a GPU (onnx-tensat-costs; default: the device profile's "
                 "built-in table)")
      ->group(g3);
  auto* g4 = "Verification and output";
  using tensat::VerifyMode;
  app.add_option("--verify", o.verify, "auto|gpu|cpu|off")
      ->transform(one_of({VerifyMode::Auto, VerifyMode::Gpu, VerifyMode::Cpu, VerifyMode::Off}, tensat::verify_mode_name))
      ->default_str("auto")->group(g4);
  app.add_flag("--force", o.force, "write the output even if verification fails")->group(g4);
  app.add_flag("--fixed-shapes", [&o](int64_t) { o.keep_symbolic_dims = false; },
               "write the output at the --input-shape shapes, not with the symbolic dimensions the input declares")
      ->group(g4);
  using tensat::MeasureMode;
  app.add_option("--measure", o.measure,
                 "auto|on|off: time both models on the GPU and write the original unless the optimized one is faster "
                 "by more than the measured spread (auto: where a GPU exists)")
      ->transform(one_of({MeasureMode::Auto, MeasureMode::On, MeasureMode::Off}, tensat::measure_mode_name))
      ->default_str("auto")->group(g4);
  app.add_option("--measure-repeats", o.measure_repeats, "timed samples per model and mode (at least 50)")
      ->check(CLI::Range(50, 100000))->default_val(o.measure_repeats)->group(g4);
  app.add_option("--seed", o.seed, "seed of the random verification inputs")->default_val(o.seed)->group(g4);
  app.add_option("--report", o.report_path, "write a JSON report to this file")->group(g4);
  app.add_option("--dump-egraph", o.dump_egraph, "write the explored e-graph with costs as egraph-serialize JSON")
      ->group(g4);
  app.add_flag("--external-data", o.external_data,
               "write tensors of 1 KB or more to OUT.data beside the output (always done above 2 GB)")
      ->group(g4);
  int verbose = 0;
  app.add_flag("-v,--verbose", verbose, "progress and more logging (-vv debug, -vvv trace)")->group(g4);
  app.add_flag("-q,--quiet", o.quiet, "print nothing but errors")->group(g4);
  app.set_version_flag("--version", std::string("onnx-tensat ") + TENSAT_VERSION);
  if (auto code = tensat::tools::parse_command_line(app, argc, argv)) return *code;
  o.verbose = verbose;
  o.k1_seed = !no_k1_seed;
  o.k0_seed = !no_k0_seed;
  o.progress = !o.quiet && (verbose > 0 || ::isatty(STDERR_FILENO));
  tensat::tools::use_tool_logger("onnx-tensat", verbose, o.quiet);

  tensat::PipelineReport rep;
  auto fail = [&](int code, const char* kind, const std::string& msg) {
    std::fprintf(stderr, "onnx-tensat: %s: %s\n", kind, msg.c_str());
    return code;
  };
  try {
    for (const auto& f : shapes) {
      auto [name, shape] = tensat::parse_input_shape_flag(f);
      o.input_shapes[name] = shape;
    }
    std::error_code ec;
    if (std::filesystem::exists(o.output) &&
        std::filesystem::equivalent(o.input, o.output, ec))
      return fail(2, "error", "output path is the input file; the input is never overwritten");
    tensat::run_pipeline(o, rep);
  } catch (const tensat::ImportError& e) {
    return fail(2, "error", e.what());
  } catch (const tensat::UsageError& e) {
    return fail(2, "error", e.what());
  } catch (const tensat::VerificationError& e) {
    if (!o.quiet) rep.print(stderr);
    write_report(rep, o.report_path);
    return fail(3, "error", e.what());
  } catch (const std::exception& e) {
    return fail(1, "internal error", e.what());
  }
  if (!o.quiet) rep.print(stderr);
  write_report(rep, o.report_path);
  if (rep.verify_ran && !rep.verify.passed) {
    std::fprintf(stderr, "onnx-tensat: warning: verification failed but --force wrote %s: %s\n", o.output.c_str(),
                 rep.verify.failure.c_str());
    return 3;
  }
  return 0;
}
