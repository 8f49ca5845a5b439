// GPU executor: evaluates an ir::Graph on the GPU with the kernels the cuda cost model
// measures (gpu_ops.h) and the opaque operators' kernels (gpu_opaque.h). Used for
// verification (GPU instead of the CPU reference) and for timing whole models.
//
// Same API as the CPU reference executor (refexec/executor.h), over the executors' shared
// types (exec/tensor.h): inputs by name, weights from the WeightStore, opaque nodes computed
// where exec/opaque_plan.h says a kernel applies, the others supplied by the caller in
// RunOptions::provided. Only the nodes the outputs need are evaluated.
//
// A Program is built once and run many times; nothing is allocated while it runs:
//   - weights, inputs, provided values and constants live in buffers uploaded at build time;
//     nodes computable from weights alone (weight-only, as the cost models count them: free)
//     and opaque shape computations are evaluated once at build time, not at run time
//   - every other value lives in one arena planned from the values' lifetimes (arena.h):
//     reshape, data-free transposes, split parts and opaque views alias their operand
//   - kernels are prepared (cuDNN algorithms found, workspaces sized) at build time
// launch() enqueues one kernel call per step with no synchronization in between (eager, as
// ONNX Runtime's CUDA provider runs a model); capture() records the same sequence once as a
// CUDA graph that replay() launches.
//
// A conv that only a relu reads runs fused with it, one step, as runtimes run the pair
// (lang/runtime_fusion.h); its own value is then not kept (RunOptions::keep_all keeps them apart).
//
// Timing (time_program, time_pair): warm-up, then `repeats` samples per mode, summarized as
// median and interquartile range (timing_stats.h):
//   graph  back-to-back replays of the captured graph, one event between replays
//   eager  one launch() per sample between two events, synchronized after each sample
// Opaque nodes without a kernel are region boundaries: timing gives them random values before
// the timed region and lists their op types in Timing::left_out.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "exec/tensor.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/timing_stats.h"
#include "lang/graph.h"
#include "lang/weights.h"

namespace tensat::gpu {

using exec::ExecError;
using exec::RunOptions;
using exec::RunResult;
using exec::Tensor;
using Inputs = std::unordered_map<std::string, Tensor>;

class Program {
 public:
  /// Builds the program. random_boundaries: an opaque value the executor cannot compute and
  /// the caller did not provide gets a random value (timing) instead of an ExecError (run).
  /// Throws ExecError for a missing input, weight or opaque value or a non-float32 value that
  /// must be computed with, GpuError for a failing CUDA/cuDNN/cuBLAS call.
  Program(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, const RunOptions& opts,
          bool random_boundaries = false);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  /// Enqueues every step (eager).
  void launch();
  /// Captures launch() as a CUDA graph (once; again if the context's shared workspace moved
  /// since). Throws GpuError if the capture fails.
  void capture();
  /// Enqueues one replay of the captured graph (captures first if needed).
  void replay();

  /// Downloads a float32 value (synchronous).
  Tensor fetch(ir::NodeId id) const;
  bool has_value(ir::NodeId id) const;

  int steps() const;    ///< kernel calls per inference
  /// Enqueues step i alone (0 <= i < steps()); for profiling. Its operands hold their values
  /// only if steps 0..i-1 ran last in this order (the arena reuses memory): re-running the
  /// steps in order ends as launch() does.
  void launch_step(int i);
  ir::NodeId step_node(int i) const;  ///< the node step i computes
  int step_kernels(int i) const;      ///< kernel launches of step i
  std::string step_detail(int i) const;  ///< the kernel's set-up (Kernel::detail)
  /// What step i computes, as a cost model prices it: its operator and operand types. A relu
  /// whose conv it runs fused (a conv only the relu reads, lang/runtime_fusion.h) is Conv with
  /// ACT relu over the conv's operands; step_node is the relu.
  Op step_op(int i) const;
  const std::vector<const ValueType*>& step_children(int i) const;
  int kernels() const;  ///< kernel launches per inference (roofline.h op_work's count per operator)
  size_t arena_bytes() const;
  size_t arena_unshared_bytes() const;  ///< what the arena's values would take without reuse
  size_t resident_bytes() const;        ///< weights, inputs, constants, provided values
  /// Op types of the opaque values given random values (random_boundaries), with counts.
  const std::map<std::string, int>& left_out() const;
  bool relaxed_capture() const;  ///< the graph needed relaxed capture mode

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Evaluates the graph on `ctx`'s GPU (see Program for the errors).
RunResult run(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs,
              const RunOptions& opts = {});
/// As above on a fresh context (device 0, no TF32).
RunResult run(const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, const RunOptions& opts = {});

struct TimingOptions {
  int warmup = 10;
  int repeats = 100;  ///< samples per mode (at least 50 for a report)
  bool graph = true;
  bool eager = true;
  int rounds = 5;     ///< time_pair: samples are taken in this many alternating rounds
};

struct ModeTiming {
  bool ok = false;
  TimingStats stats;
  std::string error;  ///< why the mode could not be timed (e.g. the capture failed)
};

struct Timing {
  ModeTiming graph, eager;
  int steps = 0, kernels = 0;
  size_t arena_bytes = 0, arena_unshared_bytes = 0, resident_bytes = 0;
  std::map<std::string, int> left_out;  ///< opaque op types timed as region boundaries
  bool relaxed_capture = false;
  /// The figure a comparison uses: graph mode where it could be timed, else eager.
  const ModeTiming& primary() const { return graph.ok ? graph : eager; }
  const char* primary_mode() const { return graph.ok ? "graph" : "eager"; }
};

Timing time_program(Context& ctx, Program& p, const TimingOptions& o = {});
/// Times two programs in alternating rounds (ABBA order), so drifts of clock and temperature
/// affect both alike; used for the before/after comparison.
std::pair<Timing, Timing> time_pair(Context& ctx, Program& a, Program& b, const TimingOptions& o = {});

/// One step's time inside the model (profile_steps).
struct StepTime {
  ir::NodeId id = 0;
  int kernels = 0;
  TimingStats stats;
  double isolated_ms = 0;  ///< the step alone, per call of 10 back to back in a graph; 0: not timed
  bool isolated_eager = false;  ///< the capture failed: the 10 calls were launched eagerly
  std::string detail;      ///< Program::step_detail
};
/// Per-step times of the program inside the whole sequence (Context::step_samples_ms): graph
/// mode (a CUDA graph with an event between steps) unless `graph` is false or the capture
/// fails (then eager, and *why says so).
/// isolated: also time each step alone, 10 calls back to back in a captured graph, as time_op
/// measures an operator (StepTime::isolated_ms); steps are re-run in order, so the program's
/// values afterwards are those of launch().
std::vector<StepTime> profile_steps(Context& ctx, Program& p, int warmup, int repeats, bool graph,
                                    std::string* why = nullptr, bool isolated = false);

/// Median end-to-end milliseconds (graph mode where it can be captured, else eager) of the
/// graph with random boundaries: a convenience over Program + time_program.
double time_ms(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, int warmup = 10,
               int repeats = 100, const RunOptions& opts = {});
double time_ms(const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, int warmup = 10,
               int repeats = 100, const RunOptions& opts = {});

}  // namespace tensat::gpu
