// The onnx-tensat pipeline (see pipeline.h).
#include "pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>

#include "egraph/bridge.h"
#include "egraph/cycle_filter.h"
#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "exporter/exporter.h"
#include "extract/extract.h"
#include "extract/serialize_json.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/timing_stats.h"
#include "importer/importer.h"
#include "lang/runtime_fusion.h"
#include "pipeline/costing.h"
#include "pipeline/egraph_extract.h"
#include "pipeline/measure.h"
#include "pipeline/rule_sources.h"
#include "pipeline/seed.h"
#include "pipeline/shape_values.h"
#include "pipeline/weight_folding.h"
#include "support/atomic_file.h"
#include "support/stopwatch.h"

namespace tensat {

namespace {

std::unique_ptr<cost::CostModel> make_model(const PipelineOptions& o) {
  cost::CostOptions co;
  co.profile = o.device_profile;
  co.cache_path = o.cost_cache;
  co.table_path = o.cost_table;
  if (o.cost_model == cost::CostModelKind::Table && co.table_path.empty()) co.table_path = o.cost_cache;
  try {
    return cost::make_cost_model(o.cost_model, co);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("cost model: ") + e.what());
  }
}

// What rests on estimated prices: the misses, the before/after comparison, the decisions.
void summarize_fallback(const cost::CostModel& model, const EGraph& eg, const ExtractView& view,
                        const ENodePrices& prices, const extract::Choice& choice, PipelineReport& rep) {
  rep.fallback.prices = model.fallback_prices();
  if (rep.fallback.prices.empty()) return;
  rep.fallback.priced_by = model.fallback_name();
  rep.fallback.comparison_robust = comparison_robust(rep.fallback.before, rep.fallback.after);
  std::vector<double> fb(view.node_of_index.size());
  for (size_t i = 0; i < fb.size(); ++i) fb[i] = prices.fallback[view.node_of_index[i].v];
  rep.fallback.decisions = analyze_fallback_decisions(view.graph, fb, choice, [&](extract::NodeIdx n) {
    const ENode& e = eg.node(view.node_of_index[n]);
    std::vector<const ValueType*> kids;
    for (auto ch : e.children) kids.push_back(&eg.type(ch));
    return cost::signature(e.op, kids);
  });
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

// Whether both models are timed (--measure); on without a GPU is a usage error.
bool resolve_measure(MeasureMode m) {
  switch (m) {
    case MeasureMode::Off: return false;
    case MeasureMode::On:
      if (!gpu::available()) throw UsageError("--measure on: no GPU is available on this machine");
      return true;
    case MeasureMode::Auto: break;
  }
  return gpu::available();
}

// The --input-shape shapes with every symbolic dimension of the declared inputs at twice its
// value plus one (one symbol, one value; a symbol whose value there another already has takes
// the next free one, so that two symbols fixed at the same value are told apart), and their
// "x:3x3x224x224" form. Plus one: sizes that agree at the fixed shapes agree at any multiple of
// them where one is a multiple of the other ("2*S" taken for "N" at N = 2S).
std::map<std::string, Shape> other_symbolic(const ModelContext& ctx, std::map<std::string, Shape> shapes,
                                            std::string& text) {
  std::map<std::string, int64_t> value;  // symbol -> its value there
  std::set<int64_t> taken;
  const auto symbolic = symbolic_input_dims(ctx);
  for (const auto& in : ctx.declared_inputs) {  // in declaration order
    auto axes = symbolic.find(in.name());
    auto it = shapes.find(in.name());
    if (axes == symbolic.end() || it == shapes.end()) continue;
    for (const auto& [axis, name] : axes->second) {
      if (axis >= it->second.size()) continue;
      auto [v, added] = value.emplace(name, 2 * it->second[axis] + 1);
      if (added) {
        while (taken.count(v->second)) ++v->second;
        taken.insert(v->second);
      }
      it->second[axis] = v->second;
    }
    std::string dims;
    for (int64_t d : it->second) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    text += (text.empty() ? "" : " ") + in.name() + ":" + dims;
  }
  return shapes;
}

// A use without a node (importer.h FixedDimUse) that holds at every size: sizes read from a
// shape value whose elements are labelled fixed (or, for a Reshape target, fixed or input
// symbols) and computed without selecting by the shapes. A Reshape target whose elements could
// not be labelled (the shape it reads is of a tensor the input graph's labels do not reach)
// holds where its computation selects by nothing a shape reaches (ShapeValue::may_select): the
// reshape's own labels (exporter/dim_labels.h) and the second check then decide, as for any
// reshape. A constant built into an operator (no value) never holds.
bool size_use_holds(const ImportResult& r, const FixedDimUse& u) {
  if (u.value.empty()) return false;
  auto sv = r.ctx.shape_values.find(u.value);
  if (sv == r.ctx.shape_values.end()) return false;
  if (!sv->second.values_labelled) return u.may_follow && !sv->second.may_select;
  if (sv->second.selects) return false;
  return u.may_follow || std::all_of(sv->second.value_labels.begin(), sv->second.value_labels.end(),
                                     [](const std::string& l) { return l.empty(); });
}

}  // namespace

void run_pipeline(const PipelineOptions& o, PipelineReport& rep) {
  const Stopwatch total;
  rep.input = o.input;
  rep.output = o.output;
  const std::optional<Executor> verify_on = resolve_verify(o.verify);
  const bool measure_on = resolve_measure(o.measure);

  // ---- import --------------------------------------------------------------------------
  Stopwatch t;
  ImportOptions iopts;
  iopts.input_shapes = o.input_shapes;
  ImportResult imp = import_onnx_file(o.input, iopts);
  // Constants computed from symbolic input dimensions that the graph reads as data (a range of
  // positions sliced to the sequence length, a mask) would keep the output at the fixed shapes:
  // imported again as values computed at run time (shape_values.h), which an output with
  // symbolic dimensions computes at any size. Kept where each one can be labelled and nothing
  // else computed from the shapes stays a weight; the first import is then the original the
  // output is checked against.
  std::optional<ImportResult> plain;
  std::string shape_values_why;  // why not, for the report
  auto sizes_from_shapes = [](const ImportResult& r) {
    return std::any_of(r.fixed_dim_uses.begin(), r.fixed_dim_uses.end(),
                       [](const FixedDimUse& u) { return !u.node && !u.value.empty(); });
  };
  if (o.keep_symbolic_dims && verify_on && !symbolic_input_dims(imp.ctx).empty() &&
      (!shape_derived_weight(imp.graph, imp.ctx).empty() || sizes_from_shapes(imp))) {
    ImportOptions ropts = iopts;
    ropts.shape_values_at_run_time = true;
    ImportResult again = import_onnx_file(o.input, ropts);
    (void)label_shape_values(again);
    const std::string left = shape_derived_weight(again.graph, again.ctx);
    const bool constant_use = std::any_of(again.fixed_dim_uses.begin(), again.fixed_dim_uses.end(),
                                          [&](const FixedDimUse& u) { return !u.node && !size_use_holds(again, u); });
    // The shape values the graph reads (input leaves) must be labelled; those only lowering read
    // (sizes) stand or fall with their uses above.
    std::string unlabelled;
    for (const auto& n : again.graph.nodes())
      if (n.op == Op::Input)
        if (auto leaf = parse_leaf_id(again.graph.node(n.children[0]).sym))
          if (auto sv = again.ctx.shape_values.find(leaf->name);
              sv != again.ctx.shape_values.end() && !sv->second.labelled && unlabelled.empty())
            unlabelled = "'" + leaf->name + "': " + sv->second.why_not;
    if (unlabelled.empty() && left.empty() && !constant_use) {
      plain = std::move(imp);
      imp = std::move(again);
    } else if (!left.empty()) {
      shape_values_why = "'" + left + "' cannot be computed at run time";
    } else if (constant_use) {
      shape_values_why = "lowering built one into an operator's constant, or read sizes from one that follows a symbol";
    } else {
      shape_values_why = unlabelled;
    }
    if (!shape_values_why.empty()) spdlog::info("shape values not computed at run time: {}", shape_values_why);
  }
  const ImportResult& original = plain ? *plain : imp;  // what the output is checked against
  rep.times["import"] = t.seconds();
  rep.ops_before = imp.stats.onnx_op_counts;
  rep.opaque_nodes = imp.stats.opaque_nodes;
  rep.opaque_reasons = imp.stats.opaque_reasons;

  // ---- rules and cost model ---------------------------------------------------------------
  std::vector<Rewrite> rules;
  try {
    rules = compile_rewrites(load_rule_sources(o.rule_files));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  rep.egraph.rules = rules.size();
  auto model = make_model(o);
  const Costing costing(*model, opaque_folding(imp.ctx));
  rep.cost_model = model->name();
  rep.cost_model_detail = model->detail();
  if (!ir::runtime_fusion_enabled())
    rep.cost_model_detail += std::string(rep.cost_model_detail.empty() ? "" : "; ") +
                             "runtime fusion off (TENSAT_RUNTIME_FUSION=0): a conv only a relu reads priced apart";
  rep.fallback.before = costing.price(imp.graph);
  rep.cost_before = rep.fallback.before.total;

  extract::ExtractOptions eo;
  eo.method = o.extract;
  eo.ilp.time_limit_s = o.ilp_time_limit_s;
  eo.ilp.work = o.ilp_work;
  eo.ilp.stall_work = o.ilp_stall_work;
  eo.ilp.threads = o.threads;
  eo.ilp.order = o.ilp_order;
  RunnerConfig rc;
  rc.node_limit = o.node_limit;
  rc.iter_limit = o.iter_limit;
  rc.time_limit_s = o.time_limit_s;
  rc.k_multi = o.k_multi;
  rc.cycle_filter = o.cycle_filter;

  // ---- seed: the extraction of a lower k_multi as the warm start (pipeline/seed.h) ------------
  // At k_multi 2 and above, computed here (before the larger exploration: its e-graph is freed
  // first) and added to the e-graph; at k_multi 1 (also that of a k_multi 2 seed), the k_multi 0
  // result as the ILP's late hint (below), computed beside the explorations from here on.
  SeedContext seed_ctx{imp.graph, rules, rc, costing, eo, nullptr};
  std::optional<K0Seed> k0;
  if (o.extract == extract::Method::Ilp && o.k0_seed && (o.k_multi == 1 || (o.k_multi >= 2 && o.k1_seed))) {
    k0.emplace(seed_ctx);
    seed_ctx.k0 = &*k0;
  }
  std::optional<Seed> seed;
  if (o.extract == extract::Method::Ilp && o.k_multi >= 2 && o.k1_seed) {
    t.restart();
    seed = lower_k_seed(seed_ctx, o.k_multi);
    if (k0) k0->stop();  // (its one use, the k_multi 1 extraction, is done)
    rep.times["seed"] = t.seconds();
    if (seed && o.progress)
      std::fprintf(stderr, "seed: k_multi %zu result %.4f ms in %.3f s\n", seed->k_multi, seed->cost,
                   rep.times["seed"]);
  }

  // ---- explore ----------------------------------------------------------------------------
  t.restart();
  EGraph eg;
  EClassId root = add_graph(eg, imp.graph);
  if (o.progress) {
    rc.on_iteration = [](const IterationReport& it) {
      std::fprintf(stderr, "explore: iteration %zu: %zu e-nodes, %zu e-classes, %zu filtered%s\n", it.iteration + 1,
                   it.nodes, it.classes, it.filtered_total, it.multi ? " (multi-pattern rules applied)" : "");
    };
  }
  RunReport run = Runner(eg).with_config(rc).run(rules);
  rep.times["explore"] = t.seconds();
  if (o.k_multi == 1 && k0) k0->limit(run.nodes);
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
  std::vector<EClassId> seed_classes;
  if (seed) {
    seed_classes = add_seed(eg, root, *seed);
    if (seed_classes.empty()) seed.reset();
  }
  const ENodePrices prices = costing.price(eg);
  rep.times["extract.price"] = t.seconds();
  ExtractView view = to_extract_graph(eg, root, prices.cost);
  rep.times["extract.graph"] = t.seconds() - rep.times["extract.price"];
  if (!o.dump_egraph.empty()) extract::write_egraph_json(view.graph, o.dump_egraph);
  if (seed)
    if (extract::Choice hint = seed_choice(eg, view, *seed, seed_classes); !hint.empty())
      eo.ilp.hints.push_back(std::move(hint));
  LateSeed late;
  if (o.k_multi == 1) eo.ilp.late_hints = k0_late_hint(seed_ctx, eg, root, view, late);
  if (o.progress && eo.method == extract::Method::Ilp)
    std::fprintf(stderr, "extract: ILP over %zu e-nodes in %zu e-classes (time limit %.0f s)...\n",
                 view.graph.nodes.size(), view.graph.classes.size(), o.ilp_time_limit_s);
  extract::ExtractResult ex = extract::extract(view.graph, eo);
  if (k0) k0->stop();  // (the cost model is this thread's alone again)
  ir::Graph best = choice_to_graph(eg, root, view, ex.choice);
  rep.times["extract"] = t.seconds();
  static_cast<extract::ExtractResult&>(rep.extraction) = ex;
  rep.extraction.choice.clear();  // (the report keeps the figures; the choice is `best`)
  // (The late hint counts where it became the ILP's incumbent.)
  if (const std::optional<Seed>& s = seed ? seed : std::isnan(ex.late_hint_cost) ? std::nullopt : late.seed) {
    rep.extraction.seed_cost = s->cost;
    rep.extraction.seed_k_multi = s->k_multi;
  }
  if (late.asked) {
    rep.times["extract.seed"] = late.seconds;  // (within the extraction's time)
    rep.times["seed.k0"] = late.beside_s;      // (beside the exploration)
  }
  rep.fallback.after = costing.price(best);
  rep.cost_extracted = rep.fallback.after.total;
  rep.cost_after = rep.cost_extracted;
  if (const gpu::Verdict v = gpu::compare_predicted(rep.cost_before, rep.cost_extracted); !v.keep_optimized) {
    // Never hand back a model the cost model does not predict to be faster (e.g. greedy tree
    // extraction duplicating shared subterms): keep the original graph. With a GPU, the
    // measured rule below decides as well.
    best = imp.graph;
    rep.kept_original = true;
    rep.kept_reason = "kept original: " + v.reason;
    if (rep.cost_extracted > rep.cost_before) spdlog::warn("{}", rep.kept_reason);
    rep.cost_after = rep.cost_before;
    rep.fallback.after = rep.fallback.before;
  }
  model->flush();
  summarize_fallback(*model, eg, view, prices, ex.choice, rep);

  // ---- fold weights, export (to a temporary file next to the output) --------------------------
  t.restart();
  std::optional<StagedExport> staging;
  ExportOptions eopts;
  eopts.external_data = o.external_data ? ExternalDataMode::Always : ExternalDataMode::Auto;
  // Symbolic input dimensions: kept where the output can be checked at other values of them.
  const bool symbolic_inputs = !symbolic_input_dims(imp.ctx).empty();
  const bool try_symbolic = symbolic_inputs && o.keep_symbolic_dims && verify_on.has_value();
  std::string fixed_by_flags;  // why the fixed shapes are written whatever the graph
  if (symbolic_inputs && !o.keep_symbolic_dims)
    fixed_by_flags = "--fixed-shapes";
  else if (symbolic_inputs && !verify_on)
    fixed_by_flags = "--verify off: an output with symbolic dimensions is only written verified";
  // What the import resolved at the fixed shapes along a symbolic dimension (importer.h,
  // FixedDimUse), which no output with symbolic dimensions may keep: the first, or "".
  const std::string fixed_by_import = [&]() -> std::string {
    if (!try_symbolic) return "";
    bool on_nodes = false;
    for (const auto& u : imp.fixed_dim_uses) {
      if (!u.node && !size_use_holds(imp, u)) return u.what;
      if (!u.node) continue;
      on_nodes = true;
    }
    if (!on_nodes) return "";
    try {
      const DimLabels labels(imp.graph, imp.ctx, imp.weights);
      for (const auto& u : imp.fixed_dim_uses)
        if (u.node && labels.of(*u.node).at(u.axis) != kStaticDim) return u.what;
    } catch (const DimLabelError& e) {
      return std::string("the input graph: ") + e.what();
    }
    return "";
  }();
  const ir::Graph* written = nullptr;
  // New temporary files for the output (again for each export).
  auto restage = [&] {
    staging.reset();
    try {
      staging.emplace(o.output);
    } catch (const FileError& e) {
      throw UsageError(e.what());
    }
  };
  // Folds and exports a graph to fresh temporary files (again for the original, if timing
  // keeps it, or at the fixed shapes, if the symbolic ones fail), with the symbolic input
  // dimensions where `symbolic` and the graph allows.
  auto write_graph = [&](const ir::Graph& graph, bool symbolic) {
    written = &graph;
    rep.symbolic = {};
    rep.symbolic.fixed_reason = fixed_by_flags;
    eopts.keep_symbolic_dims = symbolic;
    if (symbolic && !fixed_by_import.empty()) {
      rep.symbolic.fixed_reason = fixed_by_import;
      if (!shape_values_why.empty() && !plain)
        rep.symbolic.fixed_reason += "; computing it at run time: " + shape_values_why;
      eopts.keep_symbolic_dims = false;
    } else if (symbolic) {
      // A constant computed from the input shapes is only right at the fixed ones (a mask, a
      // range of positions); fold_weights would hide it under a new name, and a rewrite can take
      // it out of the graph while the graph still depends on its fixed size: the input graph's
      // count too.
      std::string w = shape_derived_weight(graph, imp.ctx);
      if (w.empty()) w = shape_derived_weight(imp.graph, imp.ctx);
      if (!w.empty()) {
        rep.symbolic.fixed_reason = "'" + w + "' is a constant the import computed from the input shapes (Shape, "
                                    "Size), at their fixed values" +
                                    (shape_values_why.empty() ? "" : "; computing it at run time: " + shape_values_why);
        eopts.keep_symbolic_dims = false;
      }
    }
    FoldStats fs;
    ir::Graph folded = fold_weights(graph, imp.weights, &fs);
    restage();
    ExportStats es;
    try {
      export_onnx_to(folded, imp.weights, imp.ctx, *staging, eopts, &es);
    } catch (const DimLabelError& e) {
      // Thrown before any tensor is written: written at the fixed shapes instead.
      rep.symbolic.fixed_reason = e.what();
      eopts.keep_symbolic_dims = false;
      restage();
      es = ExportStats{};
      export_onnx_to(folded, imp.weights, imp.ctx, *staging, eopts, &es);
    }
    rep.symbolic.kept = es.symbolic_dims;
    rep.symbolic.computed = es.shape_values;
    rep.folded_weights = fs.folded;
    rep.ops_after = es.op_counts;
    rep.external_data = es.external_data;
    rep.external_bytes = es.external_bytes;
    if (!es.checker_skipped_reason.empty())
      spdlog::warn("ONNX checker skipped: {}; relying on the numeric verification", es.checker_skipped_reason);
  };
  // "Kept original" hands back the input file itself, byte for byte, where it is one file (no
  // external data, and --external-data not asked for): not even what importing and exporting
  // normalize changes (e.g. batch norms folded into Mul/Add, which PyTorch ran 0.2% slower
  // than the DenseNet-121 export's BatchNormalization: H200, 2026-11-26). It keeps the input's
  // declared shapes, also where --input-shape fixed them for the optimization. Such a copy is
  // not verified: it is the model itself.
  bool output_is_input = false;
  auto write_original = [&] {
    if (!imp.ctx.external_data_files.empty() || o.external_data) return write_graph(imp.graph, try_symbolic);
    std::error_code ec;
    const auto size = std::filesystem::file_size(o.input, ec);
    std::ifstream in(o.input, std::ios::binary);
    if (ec || !in) throw UsageError(o.input + ": cannot be read again to write it as the output");
    restage();
    std::string chunk(1 << 20, '\0');
    uintmax_t copied = 0;
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const auto got = static_cast<size_t>(in.gcount());
      staging->model_file().write(std::string_view(chunk.data(), got));
      copied += got;
    }
    if (in.bad() || copied != size)
      throw UsageError(o.input + ": read " + std::to_string(copied) + " of its " + std::to_string(size) +
                       " bytes to write it as the output; nothing written");
    rep.folded_weights = 0;
    rep.symbolic = {};  // the input file itself, as it declares its inputs
    rep.ops_after = imp.stats.onnx_op_counts;
    rep.external_data.clear();
    rep.external_bytes = 0;
    output_is_input = true;
  };
  auto verify_unchanged = [&] {
    rep.verify = VerifyResult{};
    rep.verify.method = kVerifyUnchanged;
    rep.verify.passed = true;
    rep.verify_ran = true;
  };
  if (rep.kept_original)
    write_original();
  else
    write_graph(best, try_symbolic);
  // Re-imports the staged model (its data file is not in place yet).
  auto import_staged = [&] {
    ImportOptions vopts = iopts;
    vopts.external_data_files = staging->redirects();
    return import_onnx_file(staging->model_temp_path(), vopts);
  };
  rep.times["export"] = t.seconds();

  // Verifies the staged model at the fixed shapes and, where it keeps symbolic dimensions, at
  // twice their values plus one (original and output imported there); a model that fails there is
  // written again at the fixed shapes. Returns the staged model imported at the fixed shapes.
  auto verify_written = [&] {
    ImportResult opt = import_staged();
    rep.verify = verify_models(original, opt, *verify_on, o.seed);
    rep.verify_ran = true;
    if (rep.symbolic.kept.empty()) return opt;
    std::string why;
    if (!rep.verify.passed) {
      why = "the output failed verification at the fixed shapes";  // (--force writes the fixed ones)
    } else {
      std::string at;
      ImportOptions other = iopts;
      other.input_shapes = other_symbolic(imp.ctx, o.input_shapes, at);
      // An import or executor error there: not kept either (the message says which model).
      const char* stage = "the original";
      try {
        ImportResult original2 = import_onnx_file(o.input, other);
        stage = "the output";
        other.external_data_files = staging->redirects();
        ImportResult opt2 = import_onnx_file(staging->model_temp_path(), other);
        stage = "running both";
        VerifyResult v2 = verify_models(original2, opt2, *verify_on, o.seed);
        if (!v2.passed) why = "not verified at " + at + ": " + v2.failure;
      } catch (const std::exception& e) {
        why = "not verified at " + at + ": " + stage + ": " + e.what();
      }
      if (why.empty()) {
        rep.symbolic.checked_at = at;
        return opt;
      }
    }
    spdlog::info("symbolic input dimensions not kept: {}", why);
    write_graph(*written, false);
    rep.symbolic.fixed_reason = why;
    opt = import_staged();
    rep.verify = verify_models(original, opt, *verify_on, o.seed);
    return opt;
  };

  // ---- verify, measure ------------------------------------------------------------------------
  t.restart();
  const bool measure = measure_on && !rep.kept_original;
  if (output_is_input) {
    if (verify_on) verify_unchanged();
  } else if (verify_on || measure) {
    ImportResult opt = verify_on ? verify_written() : import_staged();
    if (measure && (!rep.verify_ran || rep.verify.passed)) {
      const Stopwatch tm;
      rep.measure = measure_models(original, opt, o.seed, o.measure_repeats);
      rep.times["measure"] = tm.seconds();
      if (!rep.measure.ok) {
        spdlog::warn("--measure: the models could not be timed on the GPU ({}); the predicted costs decide",
                     rep.measure.error);
      } else if (!rep.measure.verdict.keep_optimized) {
        // Never hand back a model that is not faster where it can be checked: the original.
        rep.kept_original = true;
        rep.kept_reason = "kept original: " + rep.measure.verdict.reason;
        spdlog::warn("{}", rep.kept_reason);
        rep.cost_after = rep.cost_before;
        write_original();
        if (verify_on && output_is_input) {
          verify_unchanged();
        } else if (verify_on) {
          verify_written();
        }
      }
    }
  }
  rep.times["verify"] = t.seconds() - (rep.times.count("measure") ? rep.times["measure"] : 0.0);

  if (rep.verify_ran && !rep.verify.passed && !o.force) {
    rep.times["total"] = total.seconds();
    throw VerificationError("verification failed (" + rep.verify.method + "): " + rep.verify.failure +
                            "; nothing written (use --force to write anyway)");
  }
  if (measure_on && rep.kept_original && !rep.measure.ok && rep.measure.error.empty()) {
    // Kept by the cost model before anything was timed: the output is the original, timed
    // alone (as two programs in alternating rounds), so --measure gives a whole-model figure
    // for every model it accepts.
    const Stopwatch tm;
    rep.measure = measure_models(original, original, o.seed, o.measure_repeats);
    rep.times["measure"] = tm.seconds();
    if (rep.measure.ok) {
      rep.measure.verdict.keep_optimized = false;
      rep.measure.verdict.reason = "the output is the original (" + rep.kept_reason + ")";
    } else {
      spdlog::warn("--measure: the model could not be timed on the GPU ({})", rep.measure.error);
    }
  }
  staging->commit();
  rep.written = true;
  if (!rep.external_data.empty() && !o.quiet)
    std::fprintf(stderr, "onnx-tensat: tensors of %s are in its external data file %s (%.1f MB)\n", o.output.c_str(),
                 rep.external_data.c_str(), static_cast<double>(rep.external_bytes) / 1e6);
  rep.times["total"] = total.seconds();
}

}  // namespace tensat
