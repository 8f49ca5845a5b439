// ir::Graph <-> EGraph (see bridge.h).
#include "egraph/bridge.h"

#include <stdexcept>
#include <string>

namespace tensat {

namespace {

// The class of every node of g its root reaches, children first: class_of(i, node, cls) gives
// node i's class from its children's (in cls), or nullopt, which ends the walk (false).
template <class ClassOf>
bool classes_of_reachable(const ir::Graph& g, std::vector<EClassId>& cls, ClassOf&& class_of) {
  const size_t n = g.size();
  std::vector<bool> live(n, false);
  live[g.root()] = true;
  for (size_t i = n; i-- > 0;) {
    if (!live[i]) continue;
    for (auto c : g.node(static_cast<ir::NodeId>(i)).children) live[c] = true;
  }
  cls.assign(n, EClassId{});
  for (size_t i = 0; i < n; ++i) {
    if (!live[i]) continue;
    const std::optional<EClassId> c = class_of(i, g.node(static_cast<ir::NodeId>(i)), cls);
    if (!c) return false;
    cls[i] = *c;
  }
  return true;
}

}  // namespace

EClassId add_graph(EGraph& eg, const ir::Graph& g, std::vector<EClassId>* node_classes) {
  if (!g.has_root()) throw std::invalid_argument("add_graph: the graph has no root");
  std::vector<EClassId> cls;
  classes_of_reachable(g, cls, [&](size_t i, const ir::Node& nd, const std::vector<EClassId>& done) {
    ENode en;
    en.op = nd.op;
    if (nd.op == Op::Num) en.num = nd.num;
    else if (nd.op == Op::Sym) en.num = eg.intern(nd.sym);
    for (auto c : nd.children) en.children.push_back(done[c]);
    std::string err;
    EClassId added;
    if (!eg.try_add(std::move(en), &added, &err))
      throw std::invalid_argument("add_graph: node %" + std::to_string(i) + ": " + err);
    return std::optional<EClassId>(added);
  });
  eg.rebuild();
  if (node_classes) *node_classes = cls;
  return eg.find(cls[g.root()]);
}

std::optional<EClassId> find_graph(const EGraph& eg, const ir::Graph& g, std::vector<EClassId>* node_classes) {
  if (!g.has_root()) throw std::invalid_argument("find_graph: the graph has no root");
  std::vector<EClassId> cls;
  const bool found = classes_of_reachable(g, cls, [&](size_t, const ir::Node& nd, const std::vector<EClassId>& done) {
    std::optional<EClassId> c;
    if (nd.op == Op::Num) {
      c = eg.lookup_num(nd.num);
    } else if (nd.op == Op::Sym) {
      c = eg.lookup_sym(nd.sym);
    } else {
      ENode en;
      en.op = nd.op;
      for (auto k : nd.children) en.children.push_back(done[k]);
      c = eg.lookup(std::move(en));
    }
    return c ? std::optional<EClassId>(eg.find(*c)) : std::nullopt;
  });
  if (!found) return std::nullopt;
  if (node_classes) *node_classes = cls;
  return cls[g.root()];
}

ir::Graph term_from_choice(const EGraph& eg, EClassId root, const std::vector<int64_t>& choice) {
  ir::Graph g;
  const size_t nc = eg.class_capacity();
  std::vector<int64_t> built(nc, -1);  // class -> ir node id
  std::vector<uint8_t> state(nc, 0);   // 0 new, 1 on the stack, 2 done
  struct Frame {
    EClassId cls;
    size_t next_child;
  };
  auto chosen = [&](EClassId c) -> const ENode& {
    if (c.v >= choice.size() || choice[c.v] < 0)
      throw std::invalid_argument("term_from_choice: no e-node chosen for class #" + std::to_string(c.v));
    ENodeId nid(static_cast<uint32_t>(choice[c.v]));
    if (nid.v >= eg.node_capacity() || !eg.is_alive(nid) || eg.class_of(nid) != c)
      throw std::invalid_argument("term_from_choice: e-node " + std::to_string(nid.v) +
                                  " is not in class #" + std::to_string(c.v));
    return eg.node(nid);
  };
  std::vector<Frame> st;
  root = eg.find(root);
  st.push_back({root, 0});
  state[root.v] = 1;
  while (!st.empty()) {
    Frame& f = st.back();
    const ENode& en = chosen(f.cls);
    if (f.next_child < en.children.size()) {
      EClassId k = eg.find(en.children[f.next_child++]);
      if (state[k.v] == 1)
        throw std::invalid_argument("term_from_choice: the choice is cyclic at class #" + std::to_string(k.v));
      if (state[k.v] == 0) {
        state[k.v] = 1;
        st.push_back({k, 0});
      }
      continue;
    }
    ir::Node node;
    node.op = en.op;
    if (en.op == Op::Num) node.num = en.num;
    else if (en.op == Op::Sym) node.sym = eg.symbol(static_cast<uint32_t>(en.num));
    for (auto c : en.children) node.children.push_back(static_cast<ir::NodeId>(built[eg.find(c).v]));
    built[f.cls.v] = g.add(std::move(node));
    state[f.cls.v] = 2;
    st.pop_back();
  }
  g.set_root(static_cast<ir::NodeId>(built[root.v]));
  return g;
}

}  // namespace tensat
