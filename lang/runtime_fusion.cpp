// Runtime fusion (see runtime_fusion.h).
#include "lang/runtime_fusion.h"

#include <cassert>
#include <cstdlib>
#include <string>

namespace tensat::ir {

bool runtime_fusion_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TENSAT_RUNTIME_FUSION");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

std::vector<int64_t> relu_conv_fusions(const Graph& g, const std::vector<bool>* live) {
  std::vector<int64_t> absorbs(g.size(), -1);
  if (!runtime_fusion_enabled()) return absorbs;
  assert(!live || live->size() == g.size());
  std::vector<uint32_t> readers(g.size(), 0);
  for (NodeId id = 0; id < g.size(); ++id) {
    if (live && !(*live)[id]) continue;
    for (NodeId c : g.node(id).children) ++readers[c];
  }
  // A graph output is read by whoever receives it (a single output is the root itself).
  for (NodeId o : g.outputs()) readers[o] += 2;
  const int act = op_info(Op::Conv).act_param;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.op != Op::Relu || (live && !(*live)[id])) continue;
    const NodeId c = n.children[0];
    const Node& conv = g.node(c);
    if (conv.op != Op::Conv || readers[c] != 1) continue;
    if (g.param_sym(c, static_cast<size_t>(act)) != "none") continue;
    absorbs[id] = c;
  }
  return absorbs;
}

std::vector<const ValueType*> fused_conv_children(const Graph& g, NodeId conv) {
  static const ValueType relu_sym = [] {
    ValueType t;
    t.kind = Kind::Sym;
    t.sym = "relu";
    return t;
  }();
  const Node& n = g.node(conv);
  assert(n.op == Op::Conv);
  std::vector<const ValueType*> kids;
  for (NodeId c : n.children) kids.push_back(&g.type(c));
  kids[static_cast<size_t>(op_info(Op::Conv).act_param)] = &relu_sym;
  return kids;
}

}  // namespace tensat::ir
