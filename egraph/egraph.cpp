// EGraph implementation: hash-consing, unions, egg-style rebuild, invariant check.
#include "egraph/egraph.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace tensat {

static_assert(kNumOps < 64, "EClass::ops is a 64-bit mask");

EGraph::EGraph() : by_op_(static_cast<size_t>(kNumOps)) {}

uint32_t EGraph::intern(std::string_view s) {
  auto it = symbol_ids_.find(s);
  if (it != symbol_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(symbols_.size());
  symbols_.emplace_back(s);
  symbol_ids_.emplace(std::string(s), id);
  return id;
}

void EGraph::canonicalize(ENode& n) const {
  for (auto& c : n.children) c = uf_.find(c);
}

std::optional<ClassData> EGraph::make(const ENode& n, std::string* error) const {
  thread_local std::vector<const ClassData*> kids;
  kids.clear();
  for (auto c : n.children) kids.push_back(&classes_[uf_.find(c).v].data);
  std::string_view sym = n.op == Op::Sym ? std::string_view(symbols_[static_cast<size_t>(n.num)])
                                         : std::string_view();
  return make_data(n.op, n.op == Op::Num ? n.num : 0, sym, kids, error);
}

bool EGraph::try_add(ENode n, EClassId* out, std::string* error) {
  canonicalize(n);
  if (n.op != Op::Num && n.op != Op::Sym) n.num = 0;
  if (auto it = memo_.find(n); it != memo_.end()) {
    *out = class_of(it->second);
    return true;
  }
  for (auto c : n.children) {
    if (c.v >= classes_.size()) {
      if (error) *error = std::string(op_name(n.op)) + ": child class id out of range";
      return false;
    }
  }
  auto data = make(n, error);
  if (!data) return false;
  *out = insert_new(std::move(n), std::move(*data));
  return true;
}

EClassId EGraph::add_planned(ENode n, ClassData data) {
  canonicalize(n);
  if (n.op != Op::Num && n.op != Op::Sym) n.num = 0;
  if (auto it = memo_.find(n); it != memo_.end()) return class_of(it->second);
  assert(make(n, nullptr) && make(n, nullptr)->type == data.type && "planned data of another node");
  return insert_new(std::move(n), std::move(data));
}

EClassId EGraph::insert_new(ENode&& n, ClassData&& data) {
  ENodeId nid(static_cast<uint32_t>(nodes_.size()));
  EClassId cid = uf_.make_set();
  assert(cid.v == classes_.size());
  classes_.emplace_back();
  ++num_classes_;
  EClass& cls = classes_.back();
  cls.nodes.push_back(nid);
  cls.data = std::move(data);
  for (auto c : n.children) {
    auto& ps = classes_[c.v].parents;
    if (ps.empty() || ps.back() != nid) ps.push_back(nid);
  }
  memo_.emplace(n, nid);
  node_ops_.push_back(n.op);
  nodes_.push_back(std::move(n));
  node_class_.push_back(cid);
  node_dead_.push_back(false);
  filtered_.push_back(false);
  touched_nodes_.push_back(cid);
  clean_ = false;
  return cid;
}

EClassId EGraph::add(ENode n) {
  EClassId id;
  std::string err;
  if (!try_add(std::move(n), &id, &err)) throw std::invalid_argument("EGraph::add: " + err);
  return id;
}

std::optional<EClassId> EGraph::lookup(ENode n) const {
  canonicalize(n);
  if (n.op != Op::Num && n.op != Op::Sym) n.num = 0;
  auto it = memo_.find(n);
  if (it == memo_.end()) return std::nullopt;
  return class_of(it->second);
}

std::optional<EClassId> EGraph::lookup_canonical(const ENode& n) const {
  auto it = memo_.find(n);
  if (it == memo_.end()) return std::nullopt;
  return class_of(it->second);
}

std::optional<EClassId> EGraph::lookup_num(int64_t v) const { return lookup_canonical(ENode::make_num(v)); }

std::optional<EClassId> EGraph::lookup_sym(std::string_view s) const {
  auto it = symbol_ids_.find(s);
  if (it == symbol_ids_.end()) return std::nullopt;
  return lookup_canonical(ENode::make_sym(it->second));
}

EClassId EGraph::union_roots(EClassId a, EClassId b) {
  // Keep the older class (smaller id) as root: a class that existed when the cycle filter took
  // its per-iteration snapshot keeps a root id the snapshot knows (cycle_filter.h), and the
  // ids, hence the runs, do not depend on parent counts.
  if (b.v < a.v) std::swap(a, b);
  EClass& root = classes_[a.v];
  EClass& other = classes_[b.v];
  assert(root.data.type == other.data.type && "merging classes of different types");
  auto [root_changed, other_differs] = merge_data(root.data, other.data);
  if (root_changed) {
    analysis_pending_.insert(analysis_pending_.end(), root.parents.begin(), root.parents.end());
    touched_data_.push_back(a);
  }
  if (other_differs) analysis_pending_.insert(analysis_pending_.end(), other.parents.begin(), other.parents.end());
  pending_.insert(pending_.end(), other.parents.begin(), other.parents.end());
  // `a` gains e-nodes; the parents of `b` get a new child id (a changed e-node each).
  touched_nodes_.push_back(a);
  for (ENodeId p : other.parents) touched_nodes_.push_back(node_class_[p.v]);
  root.nodes.insert(root.nodes.end(), other.nodes.begin(), other.nodes.end());
  root.parents.insert(root.parents.end(), other.parents.begin(), other.parents.end());
  other = EClass{};
  uf_.union_roots(a, b);
  --num_classes_;
  ++union_count_;
  clean_ = false;
  return a;
}

bool EGraph::merge(EClassId a, EClassId b) {
  a = uf_.find_mut(a);
  b = uf_.find_mut(b);
  if (a == b) return false;
  union_roots(a, b);
  return true;
}

bool EGraph::merge_checked(EClassId a, EClassId b, std::string_view why) {
  a = uf_.find_mut(a);
  b = uf_.find_mut(b);
  if (a == b) return false;
  if (classes_[a.v].data.type != classes_[b.v].data.type) {
    spdlog::warn("{}: refusing to merge classes of different types: #{} {} vs #{} {}", why, a.v,
                 classes_[a.v].data.type.str(), b.v, classes_[b.v].data.type.str());
    return false;
  }
  union_roots(a, b);
  return true;
}

void EGraph::rebuild() {
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty()) {
      ENodeId n = pending_.back();
      pending_.pop_back();
      if (node_dead_[n.v]) continue;
      ENode canon = nodes_[n.v];
      canonicalize(canon);
      auto [it, inserted] = memo_.try_emplace(canon, n);
      if (!inserted && it->second != n) {
        ENodeId other = it->second;
        assert(!node_dead_[other.v]);
        node_dead_[n.v] = true;
        ++num_dead_;
        if (filtered_[other.v] && !filtered_[n.v]) {
          filtered_[other.v] = false;  // the survivor stands for an unfiltered node now
          touched_nodes_.push_back(node_class_[other.v]);
        }
        EClassId a = uf_.find_mut(node_class_[n.v]), b = uf_.find_mut(node_class_[other.v]);
        if (a != b) union_roots(a, b);
      }
      nodes_[n.v] = std::move(canon);
    }
    while (!analysis_pending_.empty()) {
      ENodeId n = analysis_pending_.back();
      analysis_pending_.pop_back();
      if (node_dead_[n.v]) continue;
      auto d = make(nodes_[n.v], nullptr);
      assert(d && "a node that type-checked stopped type-checking");
      if (!d) continue;
      EClassId c = uf_.find_mut(node_class_[n.v]);
      EClass& cls = classes_[c.v];
      assert(cls.data.type == d->type);
      auto [changed, _] = merge_data(cls.data, *d);
      if (changed) {
        analysis_pending_.insert(analysis_pending_.end(), cls.parents.begin(), cls.parents.end());
        touched_data_.push_back(c);
      }
    }
  }
  rebuild_classes();
  clean_ = true;
}

namespace {

// Sorts `v` (strict weak order `less`, total on distinct elements) when only a suffix is out
// of order: sorts that suffix and merges it with the sorted prefix.
template <class Less>
void sort_tail(std::vector<ENodeId>& v, Less less) {
  auto mid = std::is_sorted_until(v.begin(), v.end(), less);
  if (mid == v.end()) return;
  std::sort(mid, v.end(), less);
  std::inplace_merge(v.begin(), mid, v.end(), less);
}

}  // namespace

void EGraph::rebuild_classes() {
  uf_.compress_all();
  class_ids_.clear();
  for (auto& v : by_op_) v.clear();
  class_ops_.assign(classes_.size(), 0);
  for (uint32_t i = 0; i < classes_.size(); ++i) {
    if (!uf_.is_root(EClassId(i))) continue;
    EClass& c = classes_[i];
    class_ids_.push_back(EClassId(i));
    std::erase_if(c.nodes, [this](ENodeId n) { return node_dead_[n.v]; });
    // By operator, then age: e-matching scans only the run of the operator it looks for.
    // Both lists are mostly sorted already (new entries are appended): sort only the tail
    // that breaks the order and merge it in; the result is the same as a full sort.
    auto by_op_then_id = [this](ENodeId x, ENodeId y) {
      Op ox = nodes_[x.v].op, oy = nodes_[y.v].op;
      return ox != oy ? ox < oy : x < y;
    };
    sort_tail(c.nodes, by_op_then_id);
    std::erase_if(c.parents, [this](ENodeId n) { return node_dead_[n.v]; });
    sort_tail(c.parents, std::less<ENodeId>());
    c.parents.erase(std::unique(c.parents.begin(), c.parents.end()), c.parents.end());
    uint64_t seen = 0;
    for (auto n : c.nodes) {
      auto op = static_cast<size_t>(nodes_[n.v].op);
      if (seen & (uint64_t{1} << op)) continue;
      seen |= uint64_t{1} << op;
      by_op_[op].push_back(EClassId(i));
    }
    c.ops = seen;
    class_ops_[i] = seen;
  }
}

void EGraph::require_clean(std::string_view who) const {
  if (!clean_) throw std::logic_error(std::string(who) + ": the e-graph must be rebuilt first");
}

size_t EGraph::num_filtered() const {
  size_t k = 0;
  for (size_t i = 0; i < filtered_.size(); ++i)
    if (filtered_[i] && !node_dead_[i]) ++k;
  return k;
}

std::string EGraph::node_str(ENodeId id) const {
  const ENode& n = nodes_[id.v];
  if (n.op == Op::Num) return std::to_string(n.num);
  if (n.op == Op::Sym) return symbols_[static_cast<size_t>(n.num)];
  std::string s = "(" + std::string(op_name(n.op));
  for (auto c : n.children) s += " #" + std::to_string(find(c).v);
  return s + ")";
}

std::string EGraph::check_invariants() const {
  if (!clean_) return "e-graph is dirty (rebuild() not called)";
  std::vector<int> seen(nodes_.size(), 0);
  size_t live_classes = 0;
  for (uint32_t i = 0; i < classes_.size(); ++i) {
    EClassId cid(i);
    if (!uf_.is_root(cid)) {
      if (!classes_[i].nodes.empty()) return "non-root class #" + std::to_string(i) + " holds nodes";
      continue;
    }
    ++live_classes;
    const EClass& c = classes_[i];
    if (c.nodes.empty()) return "class #" + std::to_string(i) + " is empty";
    for (auto n : c.nodes) {
      std::string where = "node " + std::to_string(n.v) + " " + node_str(n) + " in #" + std::to_string(i);
      if (node_dead_[n.v]) return where + ": dead node in a class";
      if (seen[n.v]++) return where + ": node in two classes";
      if (class_of(n) != cid) return where + ": node_class disagrees";
      const ENode& nd = nodes_[n.v];
      for (auto ch : nd.children)
        if (!uf_.is_root(ch)) return where + ": child not canonical";
      auto it = memo_.find(nd);
      if (it == memo_.end()) return where + ": missing from the hash-cons";
      if (it->second != n) return where + ": congruent to node " + std::to_string(it->second.v);
      auto d = make(nd, nullptr);
      if (!d) return where + ": does not type-check";
      if (d->type != c.data.type) return where + ": type " + d->type.str() + " != class type " + c.data.type.str();
      for (auto ch : nd.children) {
        const auto& ps = classes_[ch.v].parents;
        if (!std::binary_search(ps.begin(), ps.end(), n)) return where + ": missing from child's parents";
      }
    }
  }
  if (live_classes != num_classes_) return "class count mismatch";
  for (size_t n = 0; n < nodes_.size(); ++n)
    if (!node_dead_[n] && !seen[n]) return "live node " + std::to_string(n) + " in no class";
  // Hash-cons completeness: every canonical memo key points at a live node of the right class.
  for (const auto& [key, id] : memo_) {
    bool canonical = std::all_of(key.children.begin(), key.children.end(),
                                 [this](EClassId c) { return uf_.is_root(c); });
    if (!canonical) continue;  // stale keys are never looked up
    if (node_dead_[id.v]) return "memo maps a canonical key to dead node " + std::to_string(id.v);
    if (!(nodes_[id.v] == key)) return "memo key differs from node " + std::to_string(id.v);
  }
  return {};
}

}  // namespace tensat
