// PipelineReport: the JSON report (--report) and the human table on stderr.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "extract/extract.h"
#include "pipeline/pipeline.h"

namespace tensat {

namespace {

nlohmann::json mode_json(const gpu::ModeTiming& m) {
  if (!m.ok) return {{"error", m.error}};
  return {{"median_ms", m.stats.median_ms}, {"q1_ms", m.stats.q1_ms},   {"q3_ms", m.stats.q3_ms},
          {"iqr_ms", m.stats.iqr_ms()},     {"min_ms", m.stats.min_ms}, {"max_ms", m.stats.max_ms},
          {"samples", m.stats.samples}};
}

nlohmann::json timing_json(const gpu::Timing& t) {
  return {{"graph", mode_json(t.graph)},
          {"eager", mode_json(t.eager)},
          {"steps", t.steps},
          {"kernels", t.kernels},
          {"arena_bytes", t.arena_bytes},
          {"arena_unshared_bytes", t.arena_unshared_bytes},
          {"left_out", t.left_out}};
}

std::string fmt3g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string verify_opaque_text(const VerifyResult& v) {
  std::string s;
  if (v.opaque_computed) s += ", " + std::to_string(v.opaque_computed) + " opaque nodes computed";
  if (v.opaque_regions) s += ", " + std::to_string(v.opaque_regions) + " opaque values as region boundaries";
  return s;
}

std::string left_out_text(const std::map<std::string, int>& m) {
  std::string s;
  for (const auto& [op, n] : m) s += (s.empty() ? "" : ", ") + op + (n > 1 ? " x" + std::to_string(n) : "");
  return s;
}

// same: both are the original (kept by the cost model, timed as two programs).
void print_mode(FILE* out, const char* name, const gpu::ModeTiming& a, const gpu::ModeTiming& b, bool same) {
  if (!a.ok || !b.ok) {
    std::fprintf(out, "  %-6s not timed: %s\n", name, (a.ok ? b.error : a.error).c_str());
    return;
  }
  std::fprintf(out, "  %-6s %s %.4f ms (IQR %.4f), %s %.4f ms (IQR %.4f), %+.1f%%\n", name,
               same ? "original, first program" : "original", a.stats.median_ms, a.stats.iqr_ms(),
               same ? "second program" : "optimized", b.stats.median_ms, b.stats.iqr_ms(),
               b.stats.median_ms > 0 ? (a.stats.median_ms / b.stats.median_ms - 1.0) * 100.0 : 0.0);
}

}  // namespace

nlohmann::json PipelineReport::to_json() const {
  nlohmann::json j;
  j["input"] = input;
  j["output"] = output;
  j["written"] = written;
  j["cost_model"] = cost_model;
  j["cost_model_detail"] = cost_model_detail;
  j["cost_before"] = cost_before;
  j["cost_after"] = cost_after;
  j["cost_extracted"] = cost_extracted;
  j["kept_original"] = kept_original;
  if (kept_original) j["kept_reason"] = kept_reason;
  if (!external_data.empty()) j["external_data"] = {{"file", external_data}, {"bytes", external_bytes}};
  j["speedup_pct"] = cost_after > 0 ? (cost_before / cost_after - 1.0) * 100.0 : 0.0;
  j["times"] = times;
  j["egraph"] = {{"nodes", egraph.nodes},          {"classes", egraph.classes},
                 {"iterations", egraph.iterations}, {"stop_reason", egraph.stop_reason},
                 {"filtered", egraph.filtered},     {"rules", egraph.rules}};
  j["extraction"] = {{"method", extraction.method}, {"status", extraction.status}};
  j["extraction"]["gap"] = std::isnan(extraction.gap) ? nlohmann::json() : nlohmann::json(extraction.gap);
  if (extraction.method == "ilp") {
    j["extraction"]["work_budget"] = extraction.work_budget;
    j["extraction"]["work_used"] = extraction.work_used;
    j["extraction"]["blocks"] = extraction.blocks;
    j["extraction"]["twins"] = extraction.twin_parts;
    j["extraction"]["swapped"] = extraction.swapped;
    if (extraction.restriction_rounds > 0) j["extraction"]["restriction"] = extract::restriction_json(extraction);
  }
  if (!std::isnan(extraction.seed_cost)) {
    j["extraction"]["seed_cost"] = extraction.seed_cost;
    j["extraction"]["seed_k_multi"] = extraction.seed_k_multi;
  }
  if (verify_ran) {
    j["verify"] = {{"method", verify.method},
                   {"passed", verify.passed},
                   {"max_abs_err", verify.max_abs_err},
                   {"max_scaled_err", verify.max_scaled_err},
                   {"compared", verify.compared},
                   {"opaque_regions", verify.opaque_regions},
                   {"opaque_computed", verify.opaque_computed}};
    if (!verify.passed) j["verify"]["failure"] = verify.failure;
  } else {
    j["verify"] = {{"method", "off"}, {"passed", nullptr}, {"max_abs_err", nullptr}, {"max_scaled_err", nullptr}};
  }
  if (!symbolic.kept.empty() || !symbolic.fixed_reason.empty())
    j["symbolic_dims"] = {{"kept", symbolic.kept},
                          {"checked_at", symbolic.checked_at},
                          {"fixed_reason", symbolic.fixed_reason},
                          {"computed_at_run_time", symbolic.computed}};
  j["ops_before"] = ops_before;
  j["ops_after"] = ops_after;
  j["opaque_nodes"] = opaque_nodes;
  j["opaque_reasons"] = opaque_reasons;
  j["rules_fired"] = rule_stats.is_null() ? nlohmann::json::object() : rule_stats;
  if (measure.ok) {
    j["measured"] = {{"device", measure.device},
                     {"mode", measure.mode},
                     {"before_ms", measure.verdict.before_ms},
                     {"after_ms", measure.verdict.after_ms},
                     {"spread_ms", measure.verdict.spread_ms},
                     {"faster", measure.verdict.keep_optimized},
                     {"verdict", measure.verdict.reason},
                     {"before", timing_json(measure.before)},
                     {"after", timing_json(measure.after)}};
  } else if (!measure.error.empty()) {
    j["measured"] = {{"error", measure.error}};
  }
  j["fallback"] = fallback_json();
  return j;
}

nlohmann::json PipelineReport::fallback_json() const {
  nlohmann::json f;
  f["signatures"] = fallback.prices.size();
  f["priced_by"] = fallback.priced_by;
  f["before_ms"] = fallback.before.fallback;
  f["after_ms"] = fallback.after.fallback;
  f["comparison_robust"] = fallback.comparison_robust;
  f["spread"] = kFallbackSpread;
  const FallbackDecisions& d = fallback.decisions;
  nlohmann::json ex = nlohmann::json::array();
  for (const auto& e : d.examples)
    ex.push_back({{"eclass", e.eclass},
                  {"chosen", e.chosen},
                  {"chosen_ms", e.chosen_ms},
                  {"chosen_fallback_ms", e.chosen_fallback_ms},
                  {"alternative", e.alternative},
                  {"alternative_ms", e.alternative_ms},
                  {"alternative_fallback_ms", e.alternative_fallback_ms},
                  {"both_sides", e.both_sides},
                  {"sensitive", e.sensitive}});
  f["decisions"] = {{"count", d.decisions}, {"both_sides", d.both_sides}, {"sensitive", d.sensitive}, {"examples", ex}};
  nlohmann::json prices = nlohmann::json::array();
  for (const auto& p : fallback.prices) prices.push_back({{"signature", p.signature}, {"ms", p.ms}, {"by", p.by}});
  f["prices"] = std::move(prices);
  return f;
}

void PipelineReport::print_fallback(FILE* out) const {
  if (fallback.prices.empty()) {
    if (cost_model.rfind("table:", 0) == 0) std::fprintf(out, "cost table: every signature priced was measured\n");
    return;
  }
  std::fprintf(out, "cost table: %zu signatures not in the table, priced by %s (%.4f of %.4f ms before, %.4f of %.4f ms after)\n",
               fallback.prices.size(), fallback.priced_by.c_str(), fallback.before.fallback, cost_before,
               fallback.after.fallback, cost_after);
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < fallback.prices.size() && i < kShown; ++i)
    std::fprintf(out, "  %s: %.4f ms (%s)\n", fallback.prices[i].signature.c_str(), fallback.prices[i].ms,
                 fallback.prices[i].by.c_str());
  if (fallback.prices.size() > kShown)
    std::fprintf(out, "  ... %zu more in the JSON report (fallback.prices)\n", fallback.prices.size() - kShown);
  const FallbackDecisions& d = fallback.decisions;
  if (d.decisions)
    std::fprintf(out,
                 "estimates: %zu extraction decisions rest on them, %zu with estimates on both sides, %zu would reverse "
                 "if they were off by %gx (fallback.decisions)\n",
                 d.decisions, d.both_sides, d.sensitive, kFallbackSpread);
  if (fallback.before.fallback > 0 || fallback.after.fallback > 0)
    std::fprintf(out, "estimates: the before/after comparison %s if they were off by up to %gx either way\n",
                 fallback.comparison_robust ? "holds" : "WOULD REVERSE", kFallbackSpread);
}

void PipelineReport::print_opaque(FILE* out) const {
  if (opaque_nodes == 0) return;
  // The most frequent reasons first: what keeps most of the model out of the optimizer.
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [why, n] : opaque_reasons) by_count.emplace_back(-n, why);
  std::sort(by_count.begin(), by_count.end());
  std::string shown;
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < by_count.size() && i < kShown; ++i)
    shown += (i ? "; " : "") + by_count[i].second + " (" + std::to_string(-by_count[i].first) + ")";
  if (by_count.size() > kShown) shown += "; " + std::to_string(by_count.size() - kShown) + " more in opaque_reasons";
  std::fprintf(out, "opaque: %d node%s kept as written (not rewritten, executed as they are): %s\n", opaque_nodes,
               opaque_nodes == 1 ? "" : "s", shown.c_str());
}

void PipelineReport::print(FILE* out) const {
  std::set<std::string> ops;
  for (auto& [k, v] : ops_before) ops.insert(k);
  for (auto& [k, v] : ops_after) ops.insert(k);
  std::fprintf(out, "onnx-tensat: %s -> %s\n", input.c_str(), output.c_str());
  std::fprintf(out, "+----------------------+------------+------------+\n");
  std::fprintf(out, "| %-20s | %10s | %10s |\n", "op", "original", "optimized");
  std::fprintf(out, "+----------------------+------------+------------+\n");
  int tb = 0, ta = 0;
  for (const auto& op : ops) {
    int b = ops_before.count(op) ? ops_before.at(op) : 0, a = ops_after.count(op) ? ops_after.at(op) : 0;
    tb += b;
    ta += a;
    std::fprintf(out, "| %-20s | %10d | %10d |\n", op.c_str(), b, a);
  }
  std::fprintf(out, "+----------------------+------------+------------+\n");
  std::fprintf(out, "| %-20s | %10d | %10d |\n", "total", tb, ta);
  std::fprintf(out, "| %-20s | %10.4f | %10.4f |\n", "predicted cost (ms)", cost_before, cost_after);
  if (measure.ok)
    std::fprintf(out, "| %-20s | %10.4f | %10.4f |\n", ("measured " + measure.mode + " (ms)").c_str(),
                 measure.verdict.before_ms, measure.verdict.after_ms);
  std::fprintf(out, "+----------------------+------------+------------+\n");
  double speedup = cost_after > 0 ? (cost_before / cost_after - 1.0) * 100.0 : 0.0;
  std::fprintf(out, "predicted speedup %.1f%% (cost model %s%s%s)\n", speedup, cost_model.c_str(),
               cost_model_detail.empty() ? "" : ": ", cost_model_detail.c_str());
  print_fallback(out);
  if (measure.ok) {
    const bool same = measure.verdict.reason.rfind("the output is the original", 0) == 0;
    std::fprintf(out, "measured on %s (median of %d per mode, alternating rounds%s):\n", measure.device.c_str(),
                 measure.before.primary().stats.samples, same ? "; the output is the original, timed twice" : "");
    print_mode(out, "graph", measure.before.graph, measure.after.graph, same);
    print_mode(out, "eager", measure.before.eager, measure.after.eager, same);
    const std::string lo = left_out_text(measure.before.left_out);
    if (!lo.empty()) std::fprintf(out, "  left out of the figures (region boundaries, no GPU kernel): %s\n", lo.c_str());
  } else if (!measure.error.empty()) {
    std::fprintf(out, "not measured: %s\n", measure.error.c_str());
  }
  if (kept_original) std::fprintf(out, "%s\n", kept_reason.c_str());
  print_opaque(out);
  std::fprintf(out, "e-graph: %zu e-nodes, %zu e-classes, %zu iterations, stop: %s, %zu filtered by the cycle filter\n",
               egraph.nodes, egraph.classes, egraph.iterations, egraph.stop_reason.c_str(), egraph.filtered);
  std::fprintf(out, "extraction: %s, %s", extraction.method.c_str(), extraction.status.c_str());
  if (!std::isnan(extraction.gap) && extraction.method == "ilp") std::fprintf(out, ", gap %.3g", extraction.gap);
  if (extraction.method == "ilp")
    std::fprintf(out, ", work %lld of %lld", static_cast<long long>(extraction.work_used),
                 static_cast<long long>(extraction.work_budget));
  if (extraction.method == "ilp" && extraction.swapped > 0)
    std::fprintf(out, ", %zu e-nodes swapped out", extraction.swapped);
  if (extraction.method == "ilp" && extraction.blocks > 1) std::fprintf(out, ", %zu blocks", extraction.blocks);
  if (extraction.method == "ilp" && extraction.twin_parts > 0)
    std::fprintf(out, " (%zu solved as twins of another)", extraction.twin_parts);
  if (extraction.method == "ilp" && extraction.restriction_rounds > 0) {
    std::fprintf(out, "; restricted search: %d round%s (the last with %zu classes restricted to base nodes)",
                 extraction.restriction_rounds, extraction.restriction_rounds == 1 ? "" : "s",
                 extraction.restricted_classes);
    if (extraction.restricted_twins > 0)
      std::fprintf(out, ", %zu block%s solved as twins of another", extraction.restricted_twins,
                   extraction.restricted_twins == 1 ? "" : "s");
    std::fprintf(out, ", best %.4f", extraction.restricted_cost);
    if (std::isfinite(extraction.restricted_bound)) std::fprintf(out, ", bound %.4f", extraction.restricted_bound);
  }
  if (!std::isnan(extraction.seed_cost))
    std::fprintf(out, ", started from the k_multi %zu result (%.4f ms)", extraction.seed_k_multi, extraction.seed_cost);
  std::fprintf(out, "\n");
  if (verify_ran && verify.method == kVerifyUnchanged)
    std::fprintf(out, "verification: not needed, the output is the input file\n");
  else if (verify_ran)
    // Above 1 the absolute error says little alone (it is measured against the tensor's scale).
    std::fprintf(out, "verification: %s on %s, %d tensors compared, max abs error %.3g%s%s\n",
                 verify.passed ? "passed" : "FAILED", verify.method.c_str(), verify.compared, verify.max_abs_err,
                 verify.max_abs_err > 1.0 ? (" (" + fmt3g(verify.max_scaled_err) + " of the tensor's largest value)").c_str()
                                          : "",
                 verify_opaque_text(verify).c_str());
  else
    std::fprintf(out, "verification: off\n");
  if (!symbolic.kept.empty()) {  // (kept only where verified at both shapes: pipeline.cpp)
    std::string dims;
    for (const auto& d : symbolic.kept) dims += (dims.empty() ? "" : ", ") + d;
    std::fprintf(out, "shapes: symbolic input dimensions kept (%s), verified at the fixed shapes and at %s\n",
                 dims.c_str(), symbolic.checked_at.c_str());
    if (!symbolic.computed.empty())
      std::fprintf(out,
                   "shapes: %zu constants computed from the input shapes written as their computation (e.g. '%s')\n",
                   symbolic.computed.size(), symbolic.computed.front().c_str());
  } else if (!symbolic.fixed_reason.empty()) {
    std::fprintf(out,
                 "shapes: written at the fixed --input-shape shapes, not the symbolic ones the input declares: %s\n",
                 symbolic.fixed_reason.c_str());
  }
  auto tm = [&](const char* k) { return times.count(k) ? times.at(k) : 0.0; };
  std::fprintf(out, "time: import %.3f s, ", tm("import"));
  if (times.count("seed")) std::fprintf(out, "seed %.3f s, ", tm("seed"));
  std::fprintf(out, "explore %.3f s, extract %.3f s (pricing %.3f s", tm("explore"), tm("extract"), tm("extract.price"));
  if (times.count("extract.seed"))
    std::fprintf(out, ", k_multi 0 seed %.3f s beside the exploration, %.3f s waited", tm("seed.k0"),
                 tm("extract.seed"));
  std::fprintf(out, "), export %.3f s, verify %.3f s, ", tm("export"), tm("verify"));
  if (times.count("measure")) std::fprintf(out, "measure %.3f s, ", tm("measure"));
  std::fprintf(out, "total %.3f s\n", tm("total"));
}

}  // namespace tensat
