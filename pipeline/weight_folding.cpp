// Weight folding (see weight_folding.h).
#include "pipeline/weight_folding.h"

#include "refexec/executor.h"

namespace tensat {

ir::Graph fold_weights(const ir::Graph& in, WeightStore& weights, FoldStats* stats) {
  const ir::Graph g = in.compact();
  const std::vector<bool> wo = weight_only_nodes(g);
  // Transposed weight matrices a Gemm reads with transB = 1 stay: the exporter writes the
  // weight itself (lang/graph.h).
  const std::vector<bool> gemm_b = ir::transposed_weights_read_as_b(g, /*matrix_a=*/true);
  // A weight-only node is needed when something that runs reads it (the noop root joining the
  // outputs is never weight-only, so an output counts as read).
  std::vector<bool> needed(g.size(), false);
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    if (wo[i]) continue;
    for (ir::NodeId c : g.node(i).children) needed[c] = true;
  }
  std::vector<ir::NodeId> targets;
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    const Op op = g.node(i).op;
    if (needed[i] && wo[i] && !gemm_b[i] && g.type(i).kind == Kind::Tensor && op != Op::Weight && !is_param_leaf(op))
      targets.push_back(i);
  }
  if (stats) stats->folded = static_cast<int>(targets.size());
  if (targets.empty()) return g;

  ir::Graph sub = g;
  sub.set_root(sub.op(Op::Noop, targets));
  const exec::RunResult values = refexec::run(sub.compact(), weights, {});

  // Rebuild in topological order: a target becomes a weight leaf holding its value, every
  // other node is copied over its mapped children (what only the targets read is dropped by
  // the final compaction).
  std::vector<int64_t> target_index(g.size(), -1);
  for (size_t k = 0; k < targets.size(); ++k) target_index[targets[k]] = static_cast<int64_t>(k);
  ir::Graph out;
  std::vector<ir::NodeId> map(g.size(), 0);
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    if (int64_t k = target_index[i]; k >= 0) {
      const exec::Tensor& v = values.outputs[static_cast<size_t>(k)];
      WeightData w;
      w.type = g.type(i).tensor;
      // (assign copies once; resize would first zero the bytes, a pass over every new page)
      if (!v.data.empty()) w.bytes.assign(reinterpret_cast<const char*>(v.data.data()), v.data.size() * sizeof(float));
      const std::string name = weights.fresh_name("tensat_folded");
      const TensorType type = w.type;
      weights.put(name, std::move(w));
      map[i] = out.weight(name, type);
      continue;
    }
    ir::Node n = g.node(i);
    for (auto& c : n.children) c = map[c];
    map[i] = out.add(std::move(n));
  }
  out.set_root(map[g.root()]);
  return out.compact();
}

}  // namespace tensat
