// PipelineOptions: every choice of an onnx-tensat run, parsed once (the command line maps its
// flags 1:1 onto these fields, turning names into the enums below).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/cycle_filter.h"
#include "extract/extract.h"
#include "gpu_cost/cost_model.h"
#include "lang/types.h"

namespace tensat {

/// Where verification runs (--verify): auto = the GPU executor where a GPU exists, else the
/// CPU reference executor.
enum class VerifyMode { Auto, Gpu, Cpu, Off };
std::optional<VerifyMode> verify_mode_from_name(std::string_view s);
std::string_view verify_mode_name(VerifyMode m);

/// Whether both models are timed on the GPU (--measure): auto = where a GPU exists; on =
/// required (an error without a GPU); off = never. When they are timed, the original model
/// is written unless the optimized one is faster by more than the measured spread.
enum class MeasureMode { Auto, On, Off };
std::optional<MeasureMode> measure_mode_from_name(std::string_view s);
std::string_view measure_mode_name(MeasureMode m);

struct PipelineOptions {
  std::string input, output;
  std::map<std::string, Shape> input_shapes;   ///< --input-shape NAME:1x3x224x224

  // exploration (TENSAT defaults)
  size_t node_limit = 50000;
  size_t iter_limit = 15;
  double time_limit_s = 60.0;                  ///< exploration wall-clock limit
  size_t k_multi = 1;
  /// k_multi > 1 with the ILP: explore and extract at k_multi - 1 first, add that result to the
  /// k_multi e-graph and start the extraction from it, so the result is never worse
  /// (pipeline/seed.h).
  bool k1_seed = true;
  /// k_multi 1 with the ILP (also the k_multi 1 run of a k_multi 2 seed): where the e-graph
  /// explored without multi-pattern rules has at most a quarter of the e-nodes, its extraction
  /// first, as the warm start (pipeline/seed.h).
  bool k0_seed = true;
  CycleFilterMode cycle_filter = CycleFilterMode::Efficient;
  std::vector<std::string> rule_files;         ///< --rules (.rules text or TASO .pb); empty = built-in set

  // extraction
  extract::Method extract = extract::Method::Ilp;
  double ilp_time_limit_s = 30.0;  // a safety net: NasNet-A's budget takes 3.9 s idle, over 10 s on two busy cores
  int64_t ilp_work = -1;                       ///< ILP work budget (extract/ilp.h); < 0: tied to the e-graph's size
  int64_t ilp_stall_work = -1;                 ///< ILP stall stop (extract/ilp.h); < 0: a quarter of the budget; 0: off
  extract::OrderConstraints ilp_order = extract::OrderConstraints::None;
  int threads = 1;

  // cost model
  cost::CostModelKind cost_model = cost::CostModelKind::Auto;  ///< auto: cuda, else table, else roofline
  std::string device_profile = cost::kDefaultProfile;  ///< device predicted for: its built-in table, else roofline
  std::string cost_cache;                      ///< cuda: persistent cache file
  std::string cost_table;                      ///< table file (default: the profile's built-in table)

  // verification
  VerifyMode verify = VerifyMode::Auto;
  bool force = false;                          ///< write the output even if verification fails
  /// Write the symbolic input dimensions the source declares (a dynamic batch stays dynamic),
  /// checked at twice the --input-shape values too; false (--fixed-shapes): the fixed shapes.
  bool keep_symbolic_dims = true;
  uint64_t seed = 1;                           ///< random inputs for verification

  // output
  std::string report_path;                     ///< --report FILE.json
  bool quiet = false;
  int verbose = 0;
  bool progress = false;                       ///< per-iteration progress lines (a terminal, or -v)
  MeasureMode measure = MeasureMode::Auto;     ///< time both models on the GPU (never-slower rule)
  int measure_repeats = 100;                   ///< timed samples per mode (at least 50)
  std::string dump_egraph;                     ///< write the explored e-graph (with costs) as JSON
  /// --external-data: tensors of 1 KB or more go to OUT.data beside the output (onnx's layout),
  /// as they always do when the model would exceed protobuf's 2 GB limit.
  bool external_data = false;
};

}  // namespace tensat
