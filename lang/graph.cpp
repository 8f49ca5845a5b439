// ir::Graph implementation.
#include "lang/graph.h"

#include <cassert>

namespace tensat::ir {

size_t NodeHash::operator()(const Node& n) const {
  size_t h = std::hash<int>()(static_cast<int>(n.op));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (auto c : n.children) mix(c);
  mix(std::hash<int64_t>()(n.num));
  mix(std::hash<std::string>()(n.sym));
  return h;
}

bool Graph::try_add(Node n, NodeId* out, std::string* error) {
  if (n.op != Op::Num) n.num = 0;
  if (n.op != Op::Sym) n.sym.clear();
  if (auto it = index_.find(n); it != index_.end()) {
    *out = it->second;
    return true;
  }
  std::vector<const ValueType*> ct;
  ct.reserve(n.children.size());
  for (auto c : n.children) {
    if (c >= nodes_.size()) {
      if (error) *error = std::string(op_name(n.op)) + ": child id out of range";
      return false;
    }
    ct.push_back(&types_[c]);
  }
  InferResult r = infer_type(n.op, n.num, n.sym, ct);
  if (!r) {
    if (error) *error = r.error;
    return false;
  }
  NodeId id = static_cast<NodeId>(nodes_.size());
  index_.emplace(n, id);
  nodes_.push_back(std::move(n));
  types_.push_back(std::move(*r.type));
  *out = id;
  return true;
}

NodeId Graph::add(Node n) {
  NodeId id = 0;
  std::string err;
  if (!try_add(std::move(n), &id, &err)) throw TypeError(err);
  return id;
}

NodeId Graph::num(int64_t v) { return add(Node{Op::Num, {}, v, {}}); }
NodeId Graph::sym(std::string s) { return add(Node{Op::Sym, {}, 0, std::move(s)}); }
NodeId Graph::op(Op o, std::vector<NodeId> children) { return add(Node{o, std::move(children), 0, {}}); }
NodeId Graph::input(std::string_view name, const TensorType& t) {
  return op(Op::Input, {sym(make_leaf_id(name, t))});
}
NodeId Graph::weight(std::string_view name, const TensorType& t) {
  return op(Op::Weight, {sym(make_leaf_id(name, t))});
}

void Graph::set_root(NodeId r) {
  assert(r < nodes_.size());
  root_ = r;
  has_root_ = true;
}

std::vector<NodeId> Graph::outputs() const {
  if (!has_root_) return {};
  if (nodes_[root_].op == Op::Noop) return nodes_[root_].children;
  return {root_};
}

Graph Graph::compact(std::vector<int64_t>* old_to_new) const {
  Graph g;
  if (old_to_new) old_to_new->assign(nodes_.size(), -1);
  if (!has_root_) return g;
  std::vector<bool> live(nodes_.size(), false);
  live[root_] = true;
  for (size_t i = nodes_.size(); i-- > 0;) {
    if (!live[i]) continue;
    for (auto c : nodes_[i].children) live[c] = true;
  }
  std::vector<NodeId> remap(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!live[i]) continue;
    Node n = nodes_[i];
    for (auto& c : n.children) c = remap[c];
    remap[i] = g.add(std::move(n));
    if (old_to_new) (*old_to_new)[i] = static_cast<int64_t>(remap[i]);
  }
  g.set_root(remap[root_]);
  return g;
}

int64_t Graph::param_int(NodeId n, size_t child) const {
  const Node& p = nodes_.at(nodes_.at(n).children.at(child));
  assert(p.op == Op::Num);
  return p.num;
}

const std::string& Graph::param_sym(NodeId n, size_t child) const {
  const Node& p = nodes_.at(nodes_.at(n).children.at(child));
  assert(p.op == Op::Sym);
  return p.sym;
}

std::unordered_map<std::string, int> op_counts(const Graph& g) {
  std::unordered_map<std::string, int> out;
  for (const auto& n : g.nodes()) {
    if (is_param_leaf(n.op)) continue;
    out[std::string(op_name(n.op))]++;
  }
  return out;
}

std::vector<bool> transposed_weights_read_as_b(const Graph& g, bool matrix_a) {
  const size_t n = g.size();
  std::vector<bool> read_as_b(n, false);
  for (NodeId i = 0; i < n; ++i) {
    const Node& nd = g.node(i);
    if (nd.op != Op::Transpose) continue;
    const NodeId w = nd.children[1];
    const ValueType& wt = g.type(w);
    if (g.node(w).op != Op::Weight || wt.kind != Kind::Tensor || wt.tensor.dtype != DType::F32 ||
        wt.tensor.shape.size() != 2)
      continue;
    const auto perm = parse_dims(g.type(nd.children[0]));
    read_as_b[i] = perm && *perm == std::vector<int64_t>{1, 0};
  }
  // (matmul ACT A B C): B is child 2. (Whether the reader is such a matmul first: another
  // reader may have a single child.)
  for (NodeId i = 0; i < n; ++i) {
    const Node& nd = g.node(i);
    for (size_t k = 0; k < nd.children.size(); ++k) {
      const NodeId c = nd.children[k];
      if (!read_as_b[c]) continue;
      const bool as_b = nd.op == Op::Matmul && k == 2 &&
                        (!matrix_a || (g.type(nd.children[1]).kind == Kind::Tensor &&
                                       g.type(nd.children[1]).tensor.shape.size() == 2));
      if (!as_b) read_as_b[c] = false;
    }
  }
  if (g.has_root())
    for (NodeId o : g.outputs()) read_as_b[o] = false;
  return read_as_b;
}

std::vector<bool> weight_only_nodes(const Graph& g) {
  std::vector<bool> wo(g.size(), false);
  for (NodeId i = 0; i < g.size(); ++i) {
    bool all = true;
    for (NodeId c : g.node(i).children) all = all && wo[c];
    wo[i] = is_weight_only(g.node(i).op, all);
  }
  return wo;
}

}  // namespace tensat::ir
