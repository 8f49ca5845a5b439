// Measuring both models on the GPU (see measure.h).
#include "pipeline/measure.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "pipeline/opaque_ops.h"

namespace tensat {

exec::Inputs timing_inputs(const ir::Graph& g, uint64_t seed) {
  exec::Inputs inputs;
  for (const auto& n : g.nodes()) {
    if (n.op != Op::Input) continue;
    auto leaf = parse_leaf_id(g.node(n.children[0]).sym);
    if (leaf && leaf->type.dtype == DType::F32) inputs[leaf->name] = exec::random_tensor(leaf->type.shape, seed);
  }
  return inputs;
}

MeasureResult measure_models(const ImportResult& original, const ImportResult& optimized, uint64_t seed,
                             int repeats) {
  MeasureResult r;
  try {
    gpu::Context ctx;
    r.device = ctx.device_name();
    const exec::Inputs inputs = timing_inputs(original.graph, seed);
    const exec::OpaqueOps ops_a = describe_opaque_ops(original.ctx), ops_b = describe_opaque_ops(optimized.ctx);
    exec::RunOptions oa, ob;
    oa.opaque = &ops_a;
    ob.opaque = &ops_b;
    gpu::Program a(ctx, original.graph, original.weights, inputs, oa, true);
    gpu::Program b(ctx, optimized.graph, optimized.weights, inputs, ob, true);
    gpu::TimingOptions to;
    to.repeats = std::max(50, repeats);
    std::tie(r.before, r.after) = gpu::time_pair(ctx, a, b, to);
    const bool graph = r.before.graph.ok && r.after.graph.ok;
    if (!graph && !(r.before.eager.ok && r.after.eager.ok)) {
      r.error = "neither mode could be timed for both models";
      return r;
    }
    if (!graph)
      spdlog::warn("--measure: CUDA-graph mode failed ({}); comparing eager times",
                   r.before.graph.error.empty() ? r.after.graph.error : r.before.graph.error);
    r.mode = graph ? "graph" : "eager";
    r.verdict = gpu::compare_timings(graph ? r.before.graph.stats : r.before.eager.stats,
                                     graph ? r.after.graph.stats : r.after.eager.stats);
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace tensat
