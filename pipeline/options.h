// PipelineOptions: every choice of an onnx-tensat run (the command-line flags map 1:1).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "egraph/types.h"

namespace tensat {

struct PipelineOptions {
  std::string input, output;
  std::map<std::string, Shape> input_shapes;   ///< --input-shape NAME:1x3x224x224

  // exploration (TENSAT defaults)
  size_t node_limit = 50000;
  size_t iter_limit = 15;
  double time_limit_s = 60.0;                  ///< exploration wall-clock limit
  size_t k_multi = 1;
  std::string cycle_filter = "efficient";      ///< efficient | vanilla | none
  std::vector<std::string> rule_files;         ///< --rules (.rules text or TASO .pb); empty = built-in set

  // extraction
  std::string extract = "ilp";                 ///< greedy | dag | ilp
  double ilp_time_limit_s = 10.0;
  double ilp_stall_s = -1.0;                   ///< ILP stall stop (s); < 0: max(0.3, 3% of the limit); 0: off
  std::string ilp_order = "none";              ///< none | real | int
  int threads = 1;

  // cost model
  std::string cost_model = "auto";             ///< auto | cuda | roofline | table
  std::string device_profile = "t4";           ///< t4 | v100 | a100 | h100 (roofline, fallbacks)
  std::string cost_cache;                      ///< cuda cache file / table file
  std::string cost_table;                      ///< table file (default: the committed one)

  // verification
  std::string verify = "auto";                 ///< auto | gpu | cpu | off
  bool force = false;                          ///< write the output even if verification fails
  uint64_t seed = 1;                           ///< random inputs for verification

  // output
  std::string report_path;                     ///< --report FILE.json
  bool quiet = false;
  int verbose = 0;
  bool progress = false;                       ///< per-iteration progress lines (a terminal, or -v)
  bool measure = false;                        ///< time both graphs end to end on the GPU
  std::string dump_egraph;                     ///< write the explored e-graph (with costs) as JSON
};

}  // namespace tensat
