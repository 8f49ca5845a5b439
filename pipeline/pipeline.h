// The onnx-tensat pipeline: import -> explore -> extract -> export -> verify -> report.
//
// Each phase is one call into its part (importer/, egraph/ + rules/, extract/, exporter/,
// verification here); this file only wires them and collects the report data.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "extract/extract_graph.h"
#include "gpu_cost/cost_model.h"
#include "pipeline/costing.h"
#include "pipeline/measure.h"
#include "pipeline/options.h"
#include "pipeline/verify.h"

namespace tensat {

/// Verification failed (exit status 3); the message names the output and the error.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad usage found by the pipeline (exit status 2): unknown flag values, unreadable rules.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PipelineReport {
  std::string input, output;
  std::string cost_model;                     ///< name: "table:h100", "roofline:t4", "cuda:<device>"
  std::string cost_model_detail;              ///< how its costs were obtained (method, version, size)
  double cost_before = 0, cost_after = 0;     ///< ms, same cost model; constant work is free in both
  double cost_extracted = 0;                  ///< the extracted graph's cost (== cost_after unless kept_original)
  bool kept_original = false;                 ///< the original graph was written (see kept_reason)
  /// "kept original: not faster by the cost model (x ms vs y ms)" or "kept original: not
  /// faster on this GPU (x ms vs y ms)", x the optimized model's, y the original's.
  std::string kept_reason;
  /// Signatures the cost model could not price from measurements (table misses).
  struct {
    std::string priced_by;                    ///< what priced them (CostModel::fallback_name)
    std::vector<cost::FallbackPrice> prices;  ///< every distinct one, by signature
    GraphPrice before, after;                 ///< cost_before / cost_after and their estimated parts
    bool comparison_robust = true;            ///< after <= before for estimates scaled 1/2..2
    FallbackDecisions decisions;              ///< extraction decisions resting on estimates
  } fallback;
  std::string external_data;                  ///< the output's external data file ("" when none)
  uint64_t external_bytes = 0;                ///< bytes in it
  int folded_weights = 0;                     ///< weight-only subgraphs computed into new initializers
  std::map<std::string, double> times;        ///< import, explore, extract, export, verify, total (s)
  struct {
    size_t nodes = 0, classes = 0, iterations = 0, filtered = 0;
    std::string stop_reason;
    size_t rules = 0;
  } egraph;
  /// The extraction's figures (extract::ExtractResult without its choice), and the seed's.
  struct Extraction : extract::ExtractResult {
    double seed_cost = std::numeric_limits<double>::quiet_NaN();  ///< the seed's cost (pipeline/seed.h), else NaN
    size_t seed_k_multi = 0;                                       ///< the k_multi the seed was explored at
  } extraction;
  VerifyResult verify;
  bool verify_ran = false;
  /// Symbolic input dimensions (--input-shape fixed them for the optimization): those the
  /// output keeps ("x: N"), where it was also verified (the doubled shapes, "x:2x3x224x224"),
  /// or why it was written at the fixed shapes.
  struct {
    std::vector<std::string> kept;
    std::string checked_at;
    std::string fixed_reason;
    /// Constants the import computed from the input shapes, written as their computation
    /// (ModelContext::shape_values) where the dimensions are kept.
    std::vector<std::string> computed;
  } symbolic;
  std::map<std::string, int> ops_before, ops_after;
  MeasureResult measure;                      ///< both models timed on the GPU (measure.ok)
  int opaque_nodes = 0;
  std::map<std::string, int> opaque_reasons;  ///< "OpType: why it was kept as written" -> nodes
  std::string rule_summary;                   ///< per-rule table (matches, applied)
  nlohmann::json rule_stats;                  ///< per rule: matches, applied
  bool written = false;

  nlohmann::json to_json() const;
  /// onnxsim-style table on stderr.
  void print(FILE* out) const;
  /// The opaque nodes' line of print(): how many, and the most frequent reasons.
  void print_opaque(FILE* out) const;

 private:
  nlohmann::json fallback_json() const;
  void print_fallback(FILE* out) const;
};

/// Runs the whole pipeline. Throws ImportError/UsageError (exit 2), VerificationError
/// (exit 3, after filling `report`), anything else is an internal error (exit 1).
void run_pipeline(const PipelineOptions& opts, PipelineReport& report);

}  // namespace tensat
