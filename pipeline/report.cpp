// PipelineReport: the JSON report (--report) and the human table on stderr.
#include <cmath>
#include <cstdio>
#include <set>

#include "pipeline/pipeline.h"

namespace tensat {

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
  j["speedup_pct"] = cost_after > 0 ? (cost_before / cost_after - 1.0) * 100.0 : 0.0;
  j["times"] = times;
  j["egraph"] = {{"nodes", egraph.nodes},          {"classes", egraph.classes},
                 {"iterations", egraph.iterations}, {"stop_reason", egraph.stop_reason},
                 {"filtered", egraph.filtered},     {"rules", egraph.rules}};
  j["extraction"] = {{"method", extraction.method}, {"status", extraction.status}};
  j["extraction"]["gap"] = std::isnan(extraction.gap) ? nlohmann::json() : nlohmann::json(extraction.gap);
  if (verify_ran) {
    j["verify"] = {{"method", verify.method},
                   {"passed", verify.passed},
                   {"max_abs_err", verify.max_abs_err},
                   {"compared", verify.compared},
                   {"opaque_regions", verify.opaque_regions}};
    if (!verify.passed) j["verify"]["failure"] = verify.failure;
  } else {
    j["verify"] = {{"method", "off"}, {"passed", nullptr}, {"max_abs_err", nullptr}};
  }
  j["ops_before"] = ops_before;
  j["ops_after"] = ops_after;
  j["opaque_nodes"] = opaque_nodes;
  j["rules_fired"] = rule_stats.is_null() ? nlohmann::json::object() : rule_stats;
  if (measured) j["measured"] = {{"before_ms", measured_before_ms}, {"after_ms", measured_after_ms}};
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
  if (measured) std::fprintf(out, "| %-20s | %10.4f | %10.4f |\n", "measured (ms)", measured_before_ms, measured_after_ms);
  std::fprintf(out, "+----------------------+------------+------------+\n");
  double speedup = cost_after > 0 ? (cost_before / cost_after - 1.0) * 100.0 : 0.0;
  std::fprintf(out, "predicted speedup %.1f%% (cost model %s%s%s)\n", speedup, cost_model.c_str(),
               cost_model_detail.empty() ? "" : ": ", cost_model_detail.c_str());
  print_fallback(out);
  if (kept_original)
    std::fprintf(out, "the extracted graph (%.4f ms) was no better than the original: the original graph was kept\n",
                 cost_extracted);
  std::fprintf(out, "e-graph: %zu e-nodes, %zu e-classes, %zu iterations, stop: %s, %zu filtered by the cycle filter\n",
               egraph.nodes, egraph.classes, egraph.iterations, egraph.stop_reason.c_str(), egraph.filtered);
  std::fprintf(out, "extraction: %s, %s", extraction.method.c_str(), extraction.status.c_str());
  if (!std::isnan(extraction.gap) && extraction.method == "ilp") std::fprintf(out, ", gap %.3g", extraction.gap);
  std::fprintf(out, "\n");
  if (verify_ran)
    std::fprintf(out, "verification: %s on %s, %d tensors compared, max abs error %.3g%s\n",
                 verify.passed ? "passed" : "FAILED", verify.method.c_str(), verify.compared, verify.max_abs_err,
                 verify.opaque_regions ? (", " + std::to_string(verify.opaque_regions) + " opaque nodes as region boundaries").c_str() : "");
  else
    std::fprintf(out, "verification: off\n");
  auto tm = [&](const char* k) { return times.count(k) ? times.at(k) : 0.0; };
  std::fprintf(out, "time: import %.3f s, explore %.3f s, extract %.3f s, export %.3f s, verify %.3f s, total %.3f s\n",
               tm("import"), tm("explore"), tm("extract"), tm("export"), tm("verify"), tm("total"));
}

}  // namespace tensat
