// The onnx-tensat pipeline (see pipeline.h).
#include "pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "exporter/exporter.h"
#include "extract/extract.h"
#include "extract/serialize_json.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/gpu_executor.h"
#include "gpu_cost/gpu_runtime.h"
#include "importer/importer.h"
#include "pipeline/costing.h"
#include "pipeline/egraph_extract.h"
#include "pipeline/rule_sources.h"
#include "pipeline/weight_folding.h"
#include "support/atomic_file.h"
#include "support/stopwatch.h"

namespace tensat {

namespace {

std::unique_ptr<cost::CostModel> make_model(const PipelineOptions& o, const ir::Graph& g) {
  cost::CostOptions co;
  co.profile = o.device_profile;
  co.cache_path = o.cost_cache;
  co.table_path = o.cost_table;
  if (o.cost_model == cost::CostModelKind::Table && co.table_path.empty()) co.table_path = o.cost_cache;
  if (o.cost_model == cost::CostModelKind::Auto && co.table_path.empty()) {
    std::string def = default_cost_table();
    if (!def.empty() && std::filesystem::exists(def)) co.table_path = def;
  }
  if (o.cost_model == cost::CostModelKind::Auto) {
    std::set<std::string> sigs;
    std::vector<const ValueType*> kids;
    for (ir::NodeId i = 0; i < g.size(); ++i) {
      const ir::Node& n = g.node(i);
      kids.clear();
      for (auto c : n.children) kids.push_back(&g.type(c));
      if (!cost::structural_cost(n.op, kids)) sigs.insert(cost::signature(n.op, kids));
    }
    co.required.assign(sigs.begin(), sigs.end());
  }
  try {
    return cost::make_cost_model(o.cost_model, co);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("cost model: ") + e.what());
  }
}

// The executor verification runs on; nullopt for --verify off.
std::optional<Executor> resolve_verify(VerifyMode v) {
  switch (v) {
    case VerifyMode::Off: return std::nullopt;
    case VerifyMode::Cpu: return Executor::Cpu;
    case VerifyMode::Gpu:
      if (!gpu::available()) throw UsageError("--verify gpu: no GPU is available on this machine");
      return Executor::Gpu;
    case VerifyMode::Auto: break;
  }
  return gpu::available() ? Executor::Gpu : Executor::Cpu;
}

}  // namespace

void run_pipeline(const PipelineOptions& o, PipelineReport& rep) {
  const Stopwatch total;
  rep.input = o.input;
  rep.output = o.output;
  const std::optional<Executor> verify_on = resolve_verify(o.verify);

  // ---- import --------------------------------------------------------------------------
  Stopwatch t;
  ImportOptions iopts;
  iopts.input_shapes = o.input_shapes;
  ImportResult imp = import_onnx_file(o.input, iopts);
  rep.times["import"] = t.seconds();
  rep.ops_before = imp.stats.onnx_op_counts;
  rep.opaque_nodes = imp.stats.opaque_nodes;

  // ---- rules and cost model ---------------------------------------------------------------
  std::vector<Rewrite> rules;
  try {
    rules = compile_rewrites(load_rule_sources(o.rule_files));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  rep.egraph.rules = rules.size();
  auto model = make_model(o, imp.graph);
  rep.cost_model = model->name();
  rep.cost_before = graph_cost(imp.graph, *model);

  // ---- explore ----------------------------------------------------------------------------
  t.restart();
  EGraph eg;
  EClassId root = add_graph(eg, imp.graph);
  RunnerConfig rc;
  rc.node_limit = o.node_limit;
  rc.iter_limit = o.iter_limit;
  rc.time_limit_s = o.time_limit_s;
  rc.k_multi = o.k_multi;
  rc.cycle_filter = o.cycle_filter;
  if (o.progress) {
    rc.on_iteration = [](const IterationReport& it) {
      std::fprintf(stderr, "explore: iteration %zu: %zu e-nodes, %zu e-classes, %zu filtered%s\n", it.iteration + 1,
                   it.nodes, it.classes, it.filtered_total, it.multi ? " (multi-pattern rules applied)" : "");
    };
  }
  RunReport run = Runner(eg).with_config(rc).run(rules);
  rep.times["explore"] = t.seconds();
  rep.egraph.nodes = run.nodes;
  rep.egraph.classes = run.classes;
  rep.egraph.iterations = run.iterations.size();
  rep.egraph.filtered = run.filtered;
  rep.egraph.stop_reason = std::string(stop_reason_name(run.stop_reason));
  rep.rule_summary = run.summary();
  {
    auto totals = run.totals();
    for (size_t r = 0; r < totals.size() && r < run.rule_names.size(); ++r)
      if (totals[r].matches || totals[r].applied)
        rep.rule_stats[run.rule_names[r]] = {{"matches", totals[r].matches}, {"applied", totals[r].applied}};
  }

  // ---- extract ----------------------------------------------------------------------------
  t.restart();
  std::vector<double> costs = enode_costs(eg, *model);
  ExtractView view = to_extract_graph(eg, root, costs);
  if (!o.dump_egraph.empty()) extract::write_egraph_json(view.graph, o.dump_egraph);
  extract::ExtractOptions eo;
  eo.method = o.extract;
  eo.ilp.time_limit_s = o.ilp_time_limit_s;
  eo.ilp.stall_s = o.ilp_stall_s;
  eo.ilp.threads = o.threads;
  eo.ilp.order = o.ilp_order;
  if (o.progress && eo.method == extract::Method::Ilp)
    std::fprintf(stderr, "extract: ILP over %zu e-nodes in %zu e-classes (time limit %.0f s)...\n",
                 view.graph.nodes.size(), view.graph.classes.size(), o.ilp_time_limit_s);
  extract::ExtractResult ex = extract::extract(view.graph, eo);
  ir::Graph best = choice_to_graph(eg, root, view, ex.choice);
  rep.times["extract"] = t.seconds();
  rep.extraction.method = ex.method;
  rep.extraction.status = ex.status;
  rep.extraction.gap = ex.gap;
  rep.extraction.dag_cost = ex.dag_cost;
  rep.cost_extracted = graph_cost(best, *model);
  rep.cost_after = rep.cost_extracted;
  if (rep.cost_extracted > rep.cost_before) {
    // Never hand back a model the cost model predicts to be slower (e.g. greedy tree
    // extraction duplicating shared subterms): keep the original graph.
    spdlog::warn("the extracted graph costs more than the original ({:.4f} > {:.4f} ms); keeping the original",
                 rep.cost_extracted, rep.cost_before);
    best = imp.graph;
    rep.kept_original = true;
    rep.cost_after = rep.cost_before;
  }
  model->flush();

  // ---- fold weights, export (to a temporary file next to the output) --------------------------
  t.restart();
  FoldStats fs;
  best = fold_weights(best, imp.weights, &fs);
  std::optional<StagedExport> staging;
  try {
    staging.emplace(o.output);
  } catch (const FileError& e) {
    throw UsageError(e.what());
  }
  ExportStats es;
  ExportOptions eopts;
  eopts.external_data = o.external_data ? ExternalDataMode::Always : ExternalDataMode::Auto;
  export_onnx_to(best, imp.weights, imp.ctx, *staging, eopts, &es);
  if (!es.external_data.empty() && !o.quiet)
    std::fprintf(stderr, "onnx-tensat: tensors of %s are in its external data file %s (%.1f MB)\n", o.output.c_str(),
                 es.external_data.c_str(), static_cast<double>(es.external_bytes) / 1e6);
  rep.times["export"] = t.seconds();
  rep.folded_weights = fs.folded;
  rep.ops_after = es.op_counts;
  if (!es.checker_skipped_reason.empty())
    spdlog::warn("ONNX checker skipped: {}; relying on the numeric verification", es.checker_skipped_reason);

  // ---- verify -----------------------------------------------------------------------------
  t.restart();
  if (verify_on || o.measure) {
    ImportOptions vopts = iopts;
    vopts.external_data_files = staging->redirects();  // the staged data file, not yet in place
    ImportResult opt = import_onnx_file(staging->model_temp_path(), vopts);
    if (verify_on) {
      rep.verify = verify_models(imp, opt, *verify_on, o.seed);
      rep.verify_ran = true;
    }
    if (o.measure && gpu::available()) {
      exec::Inputs inputs;
      for (const auto& n : imp.graph.nodes()) {
        if (n.op != Op::Input) continue;
        auto leaf = parse_leaf_id(imp.graph.node(n.children[0]).sym);
        if (leaf && leaf->type.dtype == DType::F32)
          inputs[leaf->name] = exec::random_tensor(leaf->type.shape, o.seed);
      }
      if (imp.stats.opaque_nodes == 0) {
        rep.measured_before_ms = gpu::time_ms(imp.graph, imp.weights, inputs);
        rep.measured_after_ms = gpu::time_ms(opt.graph, opt.weights, inputs);
        rep.measured = true;
      } else {
        spdlog::warn("--measure: the model has opaque nodes, which the GPU executor cannot run; not measured");
      }
    }
  }
  rep.times["verify"] = t.seconds();

  if (rep.verify_ran && !rep.verify.passed && !o.force) {
    rep.times["total"] = total.seconds();
    throw VerificationError("verification failed (" + rep.verify.method + "): " + rep.verify.failure +
                            "; nothing written (use --force to write anyway)");
  }
  staging->commit();
  rep.written = true;
  rep.times["total"] = total.seconds();
}

}  // namespace tensat
