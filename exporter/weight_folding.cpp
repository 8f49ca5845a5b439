// Weight folding: evaluates weight-only subgraphs with the CPU reference executor.
#include "exporter/weight_folding.h"

#include <cstring>

#include "refexec/executor.h"

namespace tensat {

std::vector<bool> compute_weight_only(const ir::Graph& g) {
  std::vector<bool> wo(g.size(), false);
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    const ir::Node& n = g.node(i);
    switch (n.op) {
      case Op::Num:
      case Op::Sym:
      case Op::Weight:
      case Op::Zeros: wo[i] = true; break;
      case Op::Input:
      case Op::Opaque:
      case Op::Select:
      case Op::Noop: wo[i] = false; break;
      default: {
        bool all = true;
        for (auto c : n.children) all = all && wo[c];
        wo[i] = all;
      }
    }
  }
  return wo;
}

FoldedWeights fold_weights(const ir::Graph& g, const WeightStore& weights, const std::vector<ir::NodeId>& targets) {
  FoldedWeights out;
  if (targets.empty()) return out;
  ir::Graph sub = g;
  sub.set_root(sub.op(Op::Noop, targets));
  sub = sub.compact();
  refexec::RunResult r = refexec::run(sub, weights, {});
  out.reserve(targets.size());
  for (auto& t : r.outputs) {
    std::string bytes(t.data.size() * sizeof(float), '\0');
    if (!t.data.empty()) std::memcpy(bytes.data(), t.data.data(), bytes.size());
    out.push_back(std::move(bytes));
  }
  return out;
}

}  // namespace tensat
