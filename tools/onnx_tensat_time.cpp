// onnx-tensat-time: times ONNX models on this machine's GPU with onnx-tensat's executor, and
// shows where the time goes.
//
//   onnx-tensat-time MODEL.onnx... [--repeats N] [--profile [--isolated]] [--top K] [--json OUT.json]
//                    [--cost-model table|roofline|cuda|none] [--cost-table FILE]
//                    [--input-shape NAME:1x3x224x224]...
//
// Per model: the whole-model time as --measure takes it (gpu_executor.h: graph mode = replays
// of one captured CUDA graph, eager = one launch per operator; median and interquartile range
// of N samples each), and the cost model's prediction of it (the sum of the executed steps'
// operator costs). --profile adds the time of every step inside the model: the steps captured
// in one CUDA graph with an event between steps, replayed N times (profile_steps), summed per
// operator kind against the prediction, and the K steps that exceed their predicted cost the
// most; --isolated also times each step alone (10 calls back to back in a captured graph, as
// the cuda cost model times an operator). Opaque nodes without a GPU kernel are region
// boundaries (random values, listed).
//
// Exit status: 0 success; 2 bad input or usage (no GPU, an unreadable model, a model the executor
// refuses, e.g. non-float32 inputs); 1 internal. The JSON file is rewritten (atomically) after
// each model, so what was timed survives a later failure.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "gpu_cost/cost_model.h"
#include "gpu_cost/gpu_executor.h"
#include "gpu_cost/gpu_runtime.h"
#include "importer/importer.h"
#include "pipeline/measure.h"
#include "pipeline/opaque_ops.h"
#include "support/atomic_file.h"
#include "support/blas_threads.h"
#include "tools/tool_cli.h"

namespace {

namespace cost = tensat::cost;
namespace gpu = tensat::gpu;
using json = nlohmann::json;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::vector<std::string> models, shapes;
  int repeats = 100;
  bool profile = false;
  bool isolated = false;
  int top = 15;
  std::string json_out;
  std::string cost_model = "table";
  std::string cost_table;
  uint64_t seed = 1;
};

json stats_json(const gpu::TimingStats& s) {
  return {{"median_ms", s.median_ms}, {"q1_ms", s.q1_ms}, {"q3_ms", s.q3_ms}, {"iqr_ms", s.iqr_ms()},
          {"samples", s.samples}};
}

std::string mode_text(const gpu::ModeTiming& m) {
  if (!m.ok) return "not timed (" + m.error + ")";
  char b[96];
  std::snprintf(b, sizeof b, "%.4f ms (IQR %.4f, %.1f%%)", m.stats.median_ms, m.stats.iqr_ms(),
                100 * m.stats.relative_iqr());
  return b;
}

json time_model(const Args& a, const std::string& path, gpu::Context& ctx, cost::CostModel* model) {
  tensat::ImportOptions io;
  for (const auto& f : a.shapes) {
    auto [name, shape] = tensat::parse_input_shape_flag(f);
    io.input_shapes[name] = shape;
  }
  tensat::ImportResult imp = tensat::import_onnx_file(path, io);
  const tensat::exec::Inputs inputs = tensat::timing_inputs(imp.graph, a.seed);
  const tensat::exec::OpaqueOps ops = tensat::describe_opaque_ops(imp.ctx);
  tensat::exec::RunOptions ro;
  ro.opaque = &ops;
  gpu::Program p(ctx, imp.graph, imp.weights, inputs, ro, true);
  gpu::TimingOptions to;
  to.repeats = a.repeats;
  const gpu::Timing t = gpu::time_program(ctx, p, to);

  // The prediction over the steps the executor runs (constant steps are computed at build), each
  // priced as what it computes (a relu with its conv fused: the fused conv).
  auto predicted = [&](int i) { return model ? model->op_cost(p.step_op(i), p.step_children(i)) : 0.0; };
  auto signature = [&](int i) { return cost::signature(p.step_op(i), p.step_children(i)); };
  double pred_total = 0;
  for (int i = 0; i < p.steps(); ++i) pred_total += predicted(i);

  json r = {{"model", path}, {"device", ctx.device_name()}, {"steps", t.steps}, {"kernels", t.kernels},
            {"arena_bytes", t.arena_bytes}, {"resident_bytes", t.resident_bytes}};
  if (t.graph.ok) r["graph"] = stats_json(t.graph.stats);
  if (t.eager.ok) r["eager"] = stats_json(t.eager.stats);
  if (model) r["predicted_ms"] = pred_total, r["cost_model"] = model->name();
  json lo = json::object();
  for (const auto& [op, k] : t.left_out) lo[op] = k;
  r["left_out"] = lo;

  std::printf("%s\n  %d steps, %d kernels, arena %.1f MB\n  graph %s\n  eager %s\n", path.c_str(), t.steps, t.kernels,
              static_cast<double>(t.arena_bytes) / 1e6, mode_text(t.graph).c_str(), mode_text(t.eager).c_str());
  if (model)
    std::printf("  predicted %.4f ms (%s; graph/predicted %.3f)\n", pred_total, model->name().c_str(),
                t.graph.ok && pred_total > 0 ? t.graph.stats.median_ms / pred_total : 0.0);
  if (!t.left_out.empty()) {
    std::printf("  left out of the figures (no GPU kernel):");
    for (const auto& [op, k] : t.left_out) std::printf(" %s x%d", op.c_str(), k);
    std::printf("\n");
  }

  if (a.profile) {
    std::string why;
    std::vector<gpu::StepTime> steps = gpu::profile_steps(ctx, p, 10, a.repeats, true, &why, a.isolated);
    double sum = 0;
    struct Kind {
      int steps = 0, kernels = 0;
      double measured = 0, predicted = 0, isolated = 0;
    };
    std::map<std::string, Kind> kinds;
    struct Row {
      double measured, predicted, isolated;
      int step;
      int kernels;
      std::string detail;
    };
    std::vector<Row> rows;
    json js = json::array();
    for (size_t si = 0; si < steps.size(); ++si) {
      const gpu::StepTime& s = steps[si];
      const int step = static_cast<int>(si);
      const double pr = predicted(step);
      sum += s.stats.median_ms;
      Kind& k = kinds[std::string(tensat::op_name(p.step_op(step)))];
      ++k.steps;
      k.kernels += s.kernels;
      k.measured += s.stats.median_ms;
      k.predicted += pr;
      k.isolated += s.isolated_ms;
      rows.push_back({s.stats.median_ms, pr, s.isolated_ms, step, s.kernels, s.detail});
      js.push_back({{"node", s.id},
                    {"op", std::string(tensat::op_name(p.step_op(step)))},
                    {"signature", signature(step)},
                    {"kernels", s.kernels}, {"median_ms", s.stats.median_ms}, {"iqr_ms", s.stats.iqr_ms()},
                    {"predicted_ms", pr}, {"isolated_ms", s.isolated_ms}, {"isolated_eager", s.isolated_eager},
                    {"detail", s.detail}});
    }
    // What the events alone add per step: the same sequence with every step empty, in the same
    // mode (the "net" column takes it off each step).
    double per_event = 0;
    std::string empty_why;
    {
      auto empty = ctx.step_samples_ms(p.steps(), [](int) {}, 3, std::min(a.repeats, 30), why.empty(), &empty_why);
      for (auto& e : empty) per_event += gpu::summarize(std::move(e)).median_ms;
      per_event = empty.empty() ? 0.0 : per_event / static_cast<double>(empty.size());
    }
    std::printf("  profile (%s; median of %d per step): steps sum to %.4f ms (graph replay %.4f ms); an empty "
                "step measures %.4f ms\n",
                why.empty() ? "one CUDA graph, an event between steps" : why.c_str(), a.repeats, sum,
                t.graph.ok ? t.graph.stats.median_ms : 0.0, per_event);
    if (!empty_why.empty()) std::printf("  (the empty sequence: %s; its figure is an eager one)\n", empty_why.c_str());
    const bool any_eager =
        std::any_of(steps.begin(), steps.end(), [](const gpu::StepTime& st) { return st.isolated_eager; });
    if (a.isolated && any_eager) std::printf("  (some steps alone were timed eagerly: their capture failed)\n");
    std::printf("  %-12s %6s %8s %11s %11s %12s %8s %12s\n", "op", "steps", "kernels", "measured", "net",
                "predicted", "net/pred", "alone");
    json jk = json::object();
    for (const auto& [name, k] : kinds) {
      const double net = std::max(0.0, k.measured - k.steps * per_event);
      std::printf("  %-12s %6d %8d %9.4f ms %9.4f ms %9.4f ms %8.3f %9.4f ms\n", name.c_str(), k.steps, k.kernels,
                  k.measured, net, k.predicted, k.predicted > 0 ? net / k.predicted : 0.0, k.isolated);
      jk[name] = {{"steps", k.steps},       {"kernels", k.kernels},     {"measured_ms", k.measured},
                  {"net_ms", net},          {"predicted_ms", k.predicted}, {"isolated_ms", k.isolated}};
    }
    std::sort(rows.begin(), rows.end(),
              [](const Row& x, const Row& y) { return x.measured - x.predicted > y.measured - y.predicted; });
    std::printf("  steps above their predicted cost the most:\n");
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(std::max(a.top, 0)); ++i)
      std::printf("    %8.4f ms vs %8.4f ms (alone %.4f)  %s  [%s]\n", rows[i].measured, rows[i].predicted,
                  rows[i].isolated, signature(rows[i].step).c_str(), rows[i].detail.c_str());
    r["profile"] = {{"mode", why.empty() ? "graph" : "eager"},
                    {"sum_ms", sum},
                    {"empty_step_ms", per_event},
                    {"by_op", jk},
                    {"steps", js}};
  }
  std::fflush(stdout);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  CLI::App app{"onnx-tensat-time: time ONNX models on this machine's GPU with onnx-tensat's executor"};
  Args a;
  app.add_option("models", a.models, "ONNX models")->required();
  app.add_option("--repeats", a.repeats, "timed samples per mode (and per step with --profile)")
      ->default_val(a.repeats)
      ->check(CLI::Range(5, 100000));
  app.add_flag("--profile", a.profile, "time every step inside the model, per operator kind and the worst steps");
  app.add_option("--top", a.top, "--profile: how many steps to list")->default_val(a.top);
  auto* profile = app.get_option("--profile");
  app.add_flag("--isolated", a.isolated,
               "--profile: also time each step alone, 10 calls back to back in a captured graph (as the cuda "
               "cost model measures an operator)")
      ->needs(profile);
  app.add_option("--json", a.json_out, "write the results here");
  app.add_option("--cost-model", a.cost_model, "the prediction to compare with: table|roofline|cuda|none")
      ->default_val(a.cost_model);
  app.add_option("--cost-table", a.cost_table, "a cost table file for --cost-model table (default: built-in h100)");
  app.add_option("--input-shape", a.shapes, "fix an input's shape, NAME:1x3x224x224 (repeatable)");
  app.add_option("--seed", a.seed, "seed of the random inputs")->default_val(a.seed);
  int verbose = 0;
  app.add_flag("-v,--verbose", verbose, "more logging (repeat for debug)");
  if (auto code = tensat::tools::parse_command_line(app, argc, argv)) return *code;
  tensat::tools::use_tool_logger("onnx-tensat-time", verbose);
  try {
    if (!gpu::available())
      throw UsageError("timing needs a GPU, and none was found on this machine (" +
                       std::to_string(gpu::device_count()) + " CUDA devices)");
    std::unique_ptr<cost::CostModel> model;
    if (a.cost_model != "none") {
      cost::CostOptions co;
      co.table_path = a.cost_table;
      try {
        model = cost::make_cost_model(a.cost_model, co);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--cost-model: ") + e.what());
      }
    }
    gpu::Context ctx;
    json all = json::array();
    // The JSON file is rewritten after each model, so what was timed survives a later failure.
    auto save = [&] {
      if (a.json_out.empty()) return;
      try {
        tensat::write_file_atomic(a.json_out, all.dump(1) + "\n");
      } catch (const tensat::FileError& e) {
        throw UsageError(e.what());
      }
    };
    save();
    for (const auto& m : a.models) {
      all.push_back(time_model(a, m, ctx, model.get()));
      save();
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "onnx-tensat-time: error: %s\n", e.what());
    return 2;
  } catch (const tensat::ImportError& e) {
    std::fprintf(stderr, "onnx-tensat-time: error: %s\n", e.what());
    return 2;
  } catch (const tensat::exec::ExecError& e) {
    std::fprintf(stderr, "onnx-tensat-time: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-tensat-time: internal error: %s\n", e.what());
    return 1;
  }
}
