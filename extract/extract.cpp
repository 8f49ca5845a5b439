// Extraction entry point (see extract.h).
#include "extract/extract.h"

#include <cmath>

#include "extract/graph_index.h"
#include "extract/local_search.h"
#include "support/enum_names.h"

namespace tensat::extract {

namespace {
constexpr EnumNames<Method, 3> kMethodNames{{{{Method::Greedy, "greedy"}, {Method::Dag, "dag"}, {Method::Ilp, "ilp"}}}};
}  // namespace

Method parse_method(const std::string& s) {
  if (const auto m = kMethodNames.parse(s)) return *m;
  throw InputError("unknown extraction method \"" + s + "\" (expected " + kMethodNames.list(", ") + ")");
}

std::string to_string(Method m) { return std::string(kMethodNames.name(m)); }

ExtractResult extract(const ExtractGraph& g, const ExtractOptions& opts) {
  g.validate();
  switch (opts.method) {
    case Method::Greedy: return extract_greedy(g);
    case Method::Dag: {
      // Greedy DAG, then local search on its extraction (never worse, see local_search.h).
      const GraphIndex index(g);
      const ExtractResult dag = extract_greedy_dag(g, index);
      ExtractResult r = improve_local(g, index, dag.choice);
      r.method = dag.method;
      r.status = dag.status;
      r.time_s += dag.time_s;
      return r;
    }
    case Method::Ilp: return extract_ilp(g, opts.ilp);
  }
  throw InternalError("extract: unknown method");
}

nlohmann::json summary_json(const ExtractResult& r) {
  nlohmann::json j = nlohmann::json::object();
  j["method"] = r.method;
  j["cost"] = r.dag_cost;
  j["time_s"] = r.time_s;
  j["acyclic"] = r.acyclic;
  j["status"] = r.status;
  j["gap"] = std::isfinite(r.gap) ? nlohmann::json(r.gap) : nlohmann::json(nullptr);
  if (r.method == "ilp") {
    j["bound"] = std::isfinite(r.best_bound) ? nlohmann::json(r.best_bound) : nlohmann::json(nullptr);
    j["proof"] = r.proof;
    j["work_budget"] = r.work_budget;
    j["work_used"] = r.work_used;
    j["blocks"] = r.blocks;
    j["twins"] = r.twin_parts;
    j["swapped"] = r.swapped;
    if (r.restriction_rounds > 0) j["restriction"] = restriction_json(r);
  }
  return j;
}

nlohmann::json restriction_json(const ExtractResult& r) {
  if (r.restriction_rounds == 0) return nullptr;
  return {{"rounds", r.restriction_rounds},
          {"twins", r.restricted_twins},
          {"classes", r.restricted_classes},
          {"slack", r.restriction_slack},
          {"cost", r.restricted_cost},
          {"bound", std::isfinite(r.restricted_bound) ? nlohmann::json(r.restricted_bound) : nlohmann::json(nullptr)}};
}

}  // namespace tensat::extract
