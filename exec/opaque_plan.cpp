// Planning the opaque nodes of a graph (see opaque_plan.h).
#include "exec/opaque_plan.h"

#include "exec/opaque_host.h"

namespace tensat::exec {

OpaquePlan::OpaquePlan(const ir::Graph& g, const WeightStore& weights, const OpaqueOps* ops,
                       const std::unordered_map<ir::NodeId, Tensor>& provided)
    : g_(g), ops_(ops), how_(g.size(), OpaqueHow::NotOpaque), constant_(g.size(), nullptr) {
  std::vector<const ValueType*> kids;
  std::vector<const WeightData*> consts;
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    const ir::Node& nd = g.node(i);
    if (nd.op == Op::Weight) {
      auto leaf = parse_leaf_id(g.node(nd.children[0]).sym);
      if (leaf && weights.contains(leaf->name) && weights.get(leaf->name).type == leaf->type)
        constant_[i] = &weights.get(leaf->name);
      continue;
    }
    if (nd.op == Op::Select && g.node(nd.children[1]).op == Op::Opaque) {
      how_[i] = OpaqueHow::Boundary;
      why_[i] = op_type(i) + ": more than one output";
      continue;
    }
    if (nd.op != Op::Opaque) continue;
    how_[i] = OpaqueHow::Boundary;
    if (provided.count(i)) {
      why_[i] = op_type(i) + ": value provided by the caller";
      continue;
    }
    auto id = parse_opaque_id(g.node(nd.children[0]).sym);
    if (!ops_ || !id || id->index < 0 || static_cast<size_t>(id->index) >= ops_->size()) {
      why_[i] = "opaque node without a description";
      continue;
    }
    const OpaqueOp& op = (*ops_)[static_cast<size_t>(id->index)];
    kids.clear();
    consts.clear();
    for (size_t c = 1; c < nd.children.size(); ++c) {
      kids.push_back(&g.type(nd.children[c]));
      consts.push_back(constant_[nd.children[c]]);
    }
    opaque::DecodeResult r = opaque::decode(op, kids, id->outputs, consts);
    if (!r.decoded) {
      why_[i] = r.why;
      continue;
    }
    bool all_constant = true;
    for (size_t k : r.decoded->data) all_constant = all_constant && consts[k] != nullptr;
    std::string why;
    if (all_constant) {
      if (auto v = opaque::eval_host(op, *r.decoded, kids, id->outputs[0], consts, &why)) {
        owned_.push_back(std::move(*v));
        constant_[i] = &owned_.back();
        how_[i] = OpaqueHow::Host;
        continue;
      }
    }
    if (r.decoded->f32) {
      how_[i] = OpaqueHow::Kernel;
      decoded_.emplace(i, std::move(*r.decoded));
      continue;
    }
    why_[i] = why.empty() ? op.op_type + ": data of another type than float32 at run time" : why;
  }
}

std::string OpaquePlan::op_type(ir::NodeId n) const {
  const ir::Node* nd = &g_.node(n);
  if (nd->op == Op::Select) nd = &g_.node(nd->children[1]);
  if (nd->op != Op::Opaque) return std::string(op_name(nd->op));
  auto id = parse_opaque_id(g_.node(nd->children[0]).sym);
  if (!ops_ || !id || id->index < 0 || static_cast<size_t>(id->index) >= ops_->size()) return "opaque";
  return (*ops_)[static_cast<size_t>(id->index)].op_type;
}

const std::string& OpaquePlan::why(ir::NodeId n) const {
  static const std::string none;
  auto it = why_.find(n);
  return it == why_.end() ? none : it->second;
}

std::vector<ir::NodeId> OpaquePlan::data_children(ir::NodeId n) const {
  std::vector<ir::NodeId> v;
  for (size_t k : decoded(n).data) v.push_back(g_.node(n).children[k + 1]);
  return v;
}

}  // namespace tensat::exec
