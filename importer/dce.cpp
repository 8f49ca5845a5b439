// Dead-code elimination before lowering (see dce.h).
#include "importer/dce.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importer/onnx_graph.h"

namespace tensat::detail {

int eliminate_dead_code(onnx::GraphProto& g) {
  std::unordered_map<std::string, int> readers;
  std::vector<std::vector<std::string>> reads(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    reads[static_cast<size_t>(i)] = node_reads(g.node(i));
    for (const auto& r : reads[static_cast<size_t>(i)]) readers[r]++;
  }
  for (const auto& o : g.output()) readers[o.name()]++;

  std::vector<bool> dead(static_cast<size_t>(g.node_size()), false);
  int removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = g.node_size(); i-- > 0;) {  // readers usually come later: one sweep suffices
      if (dead[static_cast<size_t>(i)]) continue;
      bool read = false;
      for (const auto& o : g.node(i).output()) read = read || (!o.empty() && readers[o] > 0);
      if (read) continue;
      dead[static_cast<size_t>(i)] = true;
      ++removed;
      changed = true;
      for (const auto& r : reads[static_cast<size_t>(i)]) readers[r]--;
    }
  }
  if (removed) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < g.node_size(); ++i)
      if (!dead[static_cast<size_t>(i)]) kept.Add()->Swap(g.mutable_node(i));
    g.mutable_node()->Swap(&kept);
  }

  std::unordered_set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  auto unread = [&](const onnx::TensorProto& t) { return !inputs.count(t.name()) && readers[t.name()] <= 0; };
  bool any = false;
  for (const auto& t : g.initializer()) any = any || unread(t);
  if (any) {
    google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
    for (auto& t : *g.mutable_initializer())
      if (!unread(t)) inits.Add()->Swap(&t);
    g.mutable_initializer()->Swap(&inits);
  }
  return removed;
}

}  // namespace tensat::detail
