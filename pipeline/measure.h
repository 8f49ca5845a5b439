// Measuring the original and the optimized model on this machine's GPU, for the report and
// for the never-slower rule (gpu_cost/timing_stats.h): both models run with the GPU
// executor on the same random inputs, opaque nodes without a kernel as region boundaries,
// timed in alternating rounds in CUDA-graph mode and eagerly (gpu_cost/gpu_executor.h).
#pragma once

#include <cstdint>
#include <string>

#include "gpu_cost/gpu_executor.h"
#include "gpu_cost/timing_stats.h"
#include "importer/importer.h"

namespace tensat {

struct MeasureResult {
  bool ok = false;
  std::string error;           ///< why the models could not be measured
  std::string device;
  gpu::Timing before, after;
  std::string mode;            ///< the mode the verdict compares: "graph", else "eager"
  gpu::Verdict verdict;        ///< keep_optimized: faster by more than the spread
};

/// Random float32 values for the graph's float32 inputs, as --measure times a model (the
/// executor gives the other inputs and opaque boundaries random values itself).
exec::Inputs timing_inputs(const ir::Graph& g, uint64_t seed);

/// Times both models (at least 50 samples per mode). Never throws for a model the GPU cannot
/// run: the result says why (ok false).
MeasureResult measure_models(const ImportResult& original, const ImportResult& optimized, uint64_t seed,
                             int repeats);

}  // namespace tensat
