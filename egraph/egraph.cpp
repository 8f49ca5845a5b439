// EGraph implementation: hash-consing, unions, egg-style rebuild, invariant check.
#include "egraph/egraph.h"

#include <algorithm>
#include <bit>
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
  const size_t h = ENodeHash()(n);
  if (ENodeId id = memo_find(n, h); id.valid()) {
    *out = class_of(id);
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
  *out = insert_new(std::move(n), h, std::move(*data));
  return true;
}

EClassId EGraph::add_planned(ENode n, ClassData data) {
  canonicalize(n);
  if (n.op != Op::Num && n.op != Op::Sym) n.num = 0;
  const size_t h = ENodeHash()(n);
  if (ENodeId id = memo_find(n, h); id.valid()) return class_of(id);
  assert(make(n, nullptr) && make(n, nullptr)->type == data.type && "planned data of another node");
  return insert_new(std::move(n), h, std::move(data));
}

EClassId EGraph::insert_new(ENode&& n, size_t hash, ClassData&& data) {
  ENodeId nid(static_cast<uint32_t>(nodes_.size()));
  EClassId cid = uf_.make_set();
  assert(cid.v == classes_.size());
  classes_.emplace_back();
  ++num_classes_;
  EClass& cls = classes_.back();
  cls.nodes.push_back(nid);
  cls.data = std::move(data);
  lists_changed_.push_back(cid.v);
  for (auto c : n.children) {
    auto& ps = classes_[c.v].parents;
    if (ps.empty() || ps.back() != nid) {
      ps.push_back(nid);
      lists_changed_.push_back(c.v);
    }
  }
  node_ops_.push_back(n.op);
  nodes_.push_back(std::move(n));
  memo_.insert(nid.v, hash);  // keyed by nodes_[nid]
  node_class_.push_back(cid);
  node_dead_.push_back(false);
  filtered_.push_back(false);
  touched_nodes_.push_back(cid);
  clean_ = false;
  return cid;
}

void EGraph::reserve(size_t nodes) {
  nodes_.reserve(nodes);
  node_ops_.reserve(nodes);
  node_class_.reserve(nodes);
  node_dead_.reserve(nodes);
  filtered_.reserve(nodes);
  classes_.reserve(nodes);
  uf_.reserve(nodes);
  // Not the hash-cons: a table sized for the limit would spread the e-nodes over memory that
  // has to be cleared, and cost more cache misses than its rehashes.
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
  return lookup_canonical(n);
}

std::optional<EClassId> EGraph::lookup_canonical(const ENode& n) const {
  ENodeId id = memo_find(n, ENodeHash()(n));
  if (!id.valid()) return std::nullopt;
  return class_of(id);
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
  root.nodes.append(other.nodes.begin(), other.nodes.end());
  root.parents.append(other.parents.begin(), other.parents.end());
  other = EClass{};
  lists_changed_.push_back(a.v);
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
      if (canon == nodes_[n.v]) continue;  // already canonical: in the hash-cons as it is
      // Re-key: out under the old value, in under the new one unless an equal e-node exists.
      [[maybe_unused]] bool erased = memo_.erase(n.v, ENodeHash()(nodes_[n.v]));
      assert(erased && "a live e-node missing from the hash-cons");
      const size_t h = ENodeHash()(canon);
      ENodeId other = memo_find(canon, h);
      if (!other.valid()) {
        memo_.insert(n.v, h);  // keyed by nodes_[n], assigned below
      } else {
        assert(other != n && !node_dead_[other.v]);
        node_dead_[n.v] = true;
        ++num_dead_;
        // Its class and its children's classes list it (as e-node, as parent): drop it there.
        lists_changed_.push_back(node_class_[n.v].v);
        for (EClassId ch : canon.children) lists_changed_.push_back(ch.v);
        if (filtered_[n.v]) --num_filtered_;  // dead now
        if (filtered_[other.v] && !filtered_[n.v]) {
          filtered_[other.v] = false;  // the survivor stands for an unfiltered node now
          --num_filtered_;
          touched_nodes_.push_back(node_class_[other.v]);
        }
        EClassId a = uf_.find_mut(node_class_[n.v]), b = uf_.find_mut(node_class_[other.v]);
        if (a != b) union_roots(a, b);
      }
      lists_changed_.push_back(node_class_[n.v].v);  // its class's packed copy of it changes
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
// of order: sorts that suffix and merges it with the sorted prefix (a short list: inserts the
// suffix's elements one by one).
template <class Less>
void sort_tail(ENodeList& v, Less less) {
  auto mid = std::is_sorted_until(v.begin(), v.end(), less);
  if (mid == v.end()) return;
  if (v.size() <= 32) {  // most lists: insert the tail in place (inplace_merge would allocate)
    for (auto it = mid; it != v.end(); ++it)
      for (auto p = it; p != v.begin() && less(*p, *(p - 1)); --p) std::iter_swap(p, p - 1);
    return;
  }
  std::sort(mid, v.end(), less);
  std::inplace_merge(v.begin(), mid, v.end(), less);
}

}  // namespace

void EGraph::rebuild_classes() {
  uf_.compress_all();
  // Classes whose node or parent lists changed since the last rebuild: drop dead entries,
  // restore the order, re-pack the e-nodes. The other classes' lists and packed runs are as
  // they were, so a rebuild costs what changed plus a pass over compact per-class arrays.
  if (class_ops_.size() < classes_.size()) {
    class_ops_.resize(classes_.size(), 0);
    run_begin_.resize(classes_.size(), 0);
    run_words_.resize(classes_.size(), 0);
    run_cap_.resize(classes_.size(), 0);
    list_mark_.resize(classes_.size(), 0);
  }
  ++list_epoch_;
  for (uint32_t raw : lists_changed_) {
    const uint32_t i = uf_.find(EClassId(raw)).v;
    if (list_mark_[i] == list_epoch_) continue;
    list_mark_[i] = list_epoch_;
    EClass& c = classes_[i];
    c.nodes.erase_if([this](ENodeId n) { return node_dead_[n.v]; });
    // By operator, then age: e-matching scans only the run of the operator it looks for.
    // Both lists are mostly sorted already (new entries are appended): sort only the tail
    // that breaks the order and merge it in; the result is the same as a full sort.
    auto by_op_then_id = [this](ENodeId x, ENodeId y) {
      Op ox = node_ops_[x.v], oy = node_ops_[y.v];
      return ox != oy ? ox < oy : x < y;
    };
    sort_tail(c.nodes, by_op_then_id);
    c.parents.erase_if([this](ENodeId n) { return node_dead_[n.v]; });
    sort_tail(c.parents, std::less<ENodeId>());
    c.parents.resize(static_cast<size_t>(std::unique(c.parents.begin(), c.parents.end()) - c.parents.begin()));
    uint64_t ops = 0;
    for (auto n : c.nodes) ops |= uint64_t{1} << static_cast<unsigned>(node_ops_[n.v]);
    c.ops = ops;
    class_ops_[i] = ops;
    pack(i);
  }
  lists_changed_.clear();
  // The merged-away classes lost their lists (they stay non-roots for good).
  class_ids_.clear();
  for (auto& v : by_op_) v.clear();
  for (uint32_t i = 0; i < classes_.size(); ++i) {
    if (!uf_.is_root(EClassId(i))) {
      if (run_cap_[i]) {
        packed_waste_ += run_cap_[i];
        run_cap_[i] = run_words_[i] = 0;
      }
      class_ops_[i] = 0;
      continue;
    }
    class_ids_.push_back(EClassId(i));
    for (uint64_t ops = class_ops_[i]; ops; ops &= ops - 1)
      by_op_[static_cast<size_t>(std::countr_zero(ops))].push_back(EClassId(i));
  }
  // Re-pack everything when more than half of the packed arrays is stale.
  if (packed_waste_ * 2 > packed_.size()) {
    packed_.clear();
    packed_waste_ = 0;
    for (EClassId c : class_ids_) {
      run_cap_[c.v] = 0;
      pack(c.v);
    }
  }
}

void EGraph::pack(uint32_t i) {
  const auto& nodes = classes_[i].nodes;
  uint32_t words = 0;
  for (ENodeId n : nodes) words += 2 + static_cast<uint32_t>(nodes_[n.v].children.size());
  if (words > run_cap_[i]) {  // move to the end, with room to grow (classes grow by merges)
    packed_waste_ += run_cap_[i];
    run_begin_[i] = static_cast<uint32_t>(packed_.size());
    run_cap_[i] = words + words / 2 + 2;
    packed_.resize(packed_.size() + run_cap_[i]);
  }
  run_words_[i] = words;
  EClassId* w = packed_.data() + run_begin_[i];
  for (ENodeId n : nodes) {
    const ENode& nd = nodes_[n.v];
    const uint32_t nk = static_cast<uint32_t>(nd.children.size());
    assert(nk < (1u << 24));
    *w++ = EClassId(n.v);
    *w++ = EClassId(static_cast<uint32_t>(nd.op) | nk << 8);
    for (EClassId c : nd.children) *w++ = c;
  }
}

void EGraph::require_clean(std::string_view who) const {
  if (!clean_) throw std::logic_error(std::string(who) + ": the e-graph must be rebuilt first");
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
    // The rebuild keeps these for classes whose lists changed only: check every class.
    const std::string cls = "class #" + std::to_string(i);
    uint64_t ops = 0;
    size_t k = 0;
    for (const PackedNode pn : class_nodes(cid)) {
      if (k >= c.nodes.size() || pn.id != c.nodes[k]) return cls + ": packed e-node list differs";
      const ENode& nd = nodes_[pn.id.v];
      if (pn.op != nd.op || pn.nkids != nd.children.size() ||
          !std::equal(nd.children.begin(), nd.children.end(), pn.kids))
        return cls + ": packed e-node " + std::to_string(pn.id.v) + " differs";
      if (k > 0 && !(node_ops_[c.nodes[k - 1].v] < pn.op || (node_ops_[c.nodes[k - 1].v] == pn.op && c.nodes[k - 1] < pn.id)))
        return cls + ": e-nodes not sorted by operator, then id";
      ops |= uint64_t{1} << static_cast<unsigned>(pn.op);
      ++k;
    }
    if (k != c.nodes.size()) return cls + ": packed e-node list differs";
    if (ops != c.ops || ops != class_ops_[i]) return cls + ": operator mask differs";
    for (size_t j = 0; j < c.parents.size(); ++j) {
      if (node_dead_[c.parents[j].v]) return cls + ": dead parent " + std::to_string(c.parents[j].v);
      if (j > 0 && !(c.parents[j - 1] < c.parents[j])) return cls + ": parents not sorted and distinct";
    }
    for (auto n : c.nodes) {
      std::string where = "node " + std::to_string(n.v) + " " + node_str(n) + " in #" + std::to_string(i);
      if (node_dead_[n.v]) return where + ": dead node in a class";
      if (seen[n.v]++) return where + ": node in two classes";
      if (class_of(n) != cid) return where + ": node_class disagrees";
      const ENode& nd = nodes_[n.v];
      for (auto ch : nd.children)
        if (!uf_.is_root(ch)) return where + ": child not canonical";
      ENodeId found = memo_find(nd, ENodeHash()(nd));
      if (!found.valid()) return where + ": missing from the hash-cons";
      if (found != n) return where + ": congruent to node " + std::to_string(found.v);
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
  size_t filtered = 0;
  for (size_t n = 0; n < nodes_.size(); ++n) filtered += filtered_[n] && !node_dead_[n];
  if (filtered != num_filtered()) return "filtered count " + std::to_string(num_filtered()) + " != " + std::to_string(filtered);
  for (size_t n = 0; n < nodes_.size(); ++n)
    if (!node_dead_[n] && !seen[n]) return "live node " + std::to_string(n) + " in no class";
  // The hash-cons holds exactly the live e-nodes (each found under its value above).
  if (memo_.size() != nodes_.size() - num_dead_) return "hash-cons size differs from the live e-node count";
  std::string dead;
  memo_.for_each([&](uint32_t id) {
    if (node_dead_[id] && dead.empty()) dead = "hash-cons holds dead node " + std::to_string(id);
  });
  if (!dead.empty()) return dead;
  return {};
}

}  // namespace tensat
