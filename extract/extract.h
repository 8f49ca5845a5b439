// Extraction entry point: pick a method by name, run it, summarise the result as JSON.
//
// Usage:
//   auto g = tensat::extract::read_egraph_json("model.json");
//   tensat::extract::ExtractOptions o;
//   o.method = tensat::extract::Method::Ilp;
//   o.ilp.time_limit_s = 10;
//   auto r = tensat::extract::extract(g, o);   // r.choice: one node per used class
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "extract/extract_graph.h"
#include "extract/greedy.h"
#include "extract/ilp.h"

namespace tensat::extract {

enum class Method { Greedy, Dag, Ilp };

/// "greedy" | "dag" | "ilp"; throws InputError otherwise.
Method parse_method(const std::string& s);
std::string to_string(Method m);

struct ExtractOptions {
  Method method = Method::Ilp;
  IlpOptions ilp;
};

/// Runs the chosen method; the result is always checked (complete, acyclic, unfiltered).
ExtractResult extract(const ExtractGraph& g, const ExtractOptions& opts);

/// {"method", "cost", "time_s", "acyclic", "status", "gap"} (gap null when unknown); for the
/// ILP also "bound" (the proven lower bound), "proof" (what proved "optimal": lm-cut, lp or
/// cbc; empty otherwise) and "work_budget", "work_used".
nlohmann::json summary_json(const ExtractResult& r);

/// The restricted search's figures (ilp.cpp's restricted_search, restriction.h): {"rounds",
/// "twins", "classes", "slack", "cost", "bound" (null when not finite)}; null where it did not
/// run. summary_json's "restriction", and the pipeline report's.
nlohmann::json restriction_json(const ExtractResult& r);

}  // namespace tensat::extract
