// EGraph: hash-consed e-nodes, union-find e-classes, deferred rebuild (egg's EGraph).
//
// Claims, checked by check_invariants() in tests and debug builds:
//   - after rebuild() every live e-node is canonical (its children are class roots),
//   - the hash-cons (memo) maps every live e-node to itself, and no two live e-nodes are
//     equal (congruence closure: congruent nodes were merged into one class),
//   - every class's type is the type infer_type gives each of its e-nodes.
//
// Adding a node or merging classes marks the e-graph dirty; search (ematch.h) refuses a dirty
// e-graph, rebuild() restores the invariants with egg's worklist (parents of merged classes
// are re-canonicalized; congruent ones merged; analysis data re-made where it grew).
//
// E-node ids are stable: a node that becomes a duplicate of another during rebuild is marked
// dead and dropped from its class, never reused. `filtered` (one flag per e-node id) is the
// cycle filter's list (cycle_filter.h); extraction ignores those nodes.
//
//   EGraph eg;
//   EClassId x = eg.add(ENode::make(Op::Input, {eg.add_sym("x@4_4")}));
//   EClassId r = eg.add(ENode::make(Op::Relu, {x}));
//   eg.rebuild();
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/enode.h"
#include "egraph/ids.h"
#include "egraph/unionfind.h"

namespace tensat {

struct EClass {
  std::vector<ENodeId> nodes;    ///< live e-nodes of this class (sorted after rebuild)
  std::vector<ENodeId> parents;  ///< e-nodes that have this class as a child
  ClassData data;
};

class EGraph {
 public:
  EGraph();

  // ---- symbols --------------------------------------------------------------------------
  uint32_t intern(std::string_view s);
  const std::string& symbol(uint32_t id) const { return symbols_[id]; }

  // ---- adding -----------------------------------------------------------------------------
  /// Adds (or finds) a node; children are canonicalized. Returns false with `error` set if the
  /// node does not type-check (the e-graph is unchanged).
  bool try_add(ENode n, EClassId* out, std::string* error = nullptr);
  /// Like try_add; throws std::invalid_argument on a type error.
  EClassId add(ENode n);
  EClassId add_num(int64_t v) { return add(ENode::make_num(v)); }
  EClassId add_sym(std::string_view s) { return add(ENode::make_sym(intern(s))); }
  /// Class of an existing node equal to `n` (after canonicalizing its children), if any.
  std::optional<EClassId> lookup(ENode n) const;
  /// The class of Num v / Sym s if present.
  std::optional<EClassId> lookup_num(int64_t v) const;
  std::optional<EClassId> lookup_sym(std::string_view s) const;

  // ---- merging ----------------------------------------------------------------------------
  /// Merges two classes of equal type (asserted). Returns true if they were different.
  bool merge(EClassId a, EClassId b);
  /// Merges only if the types are equal; otherwise logs (naming `why`, e.g. a rule) and
  /// returns false without merging. Returns true if the classes were different and merged.
  bool merge_checked(EClassId a, EClassId b, std::string_view why);
  /// Restores congruence closure and the analysis; rebuilds the operator index.
  void rebuild();
  bool is_clean() const { return clean_; }

  EClassId find(EClassId id) const { return uf_.find(id); }

  // ---- access -----------------------------------------------------------------------------
  const EClass& eclass(EClassId id) const { return classes_[find(id).v]; }
  const ClassData& data(EClassId id) const { return classes_[find(id).v].data; }
  const ValueType& type(EClassId id) const { return data(id).type; }
  const ENode& node(ENodeId id) const { return nodes_[id.v]; }
  EClassId class_of(ENodeId id) const { return find(node_class_[id.v]); }
  bool is_alive(ENodeId id) const { return !node_dead_[id.v]; }

  size_t num_nodes() const { return nodes_.size() - num_dead_; }  ///< live e-nodes
  size_t num_classes() const { return num_classes_; }              ///< live e-classes
  size_t node_capacity() const { return nodes_.size(); }    ///< bound on ENodeId values
  size_t class_capacity() const { return classes_.size(); } ///< bound on EClassId values
  /// Canonical class ids (valid after rebuild).
  const std::vector<EClassId>& class_ids() const { return class_ids_; }
  /// Classes holding at least one node with operator `op` (valid after rebuild).
  const std::vector<EClassId>& classes_with_op(Op op) const {
    return by_op_[static_cast<size_t>(op)];
  }
  /// Throws std::logic_error if the e-graph needs a rebuild (search calls this).
  void require_clean(std::string_view who) const;

  // ---- cycle filter list ------------------------------------------------------------------
  const std::vector<bool>& filtered() const { return filtered_; }
  bool is_filtered(ENodeId id) const { return filtered_[id.v]; }
  void set_filtered(ENodeId id, bool f = true) { filtered_[id.v] = f; }
  size_t num_filtered() const;

  // ---- debugging --------------------------------------------------------------------------
  /// Empty if every invariant holds, else a description of the first violation.
  std::string check_invariants() const;
  /// "(matmul #3 #7 #9 #2)" with class ids, or the value of a leaf.
  std::string node_str(ENodeId id) const;
  /// Number of unions performed so far (a cheap "did anything change" counter).
  uint64_t union_count() const { return union_count_; }

 private:
  void canonicalize(ENode& n) const;
  std::optional<ClassData> make(const ENode& n, std::string* error) const;
  EClassId union_roots(EClassId a, EClassId b);
  void rebuild_classes();

  std::vector<std::string> symbols_;
  std::unordered_map<std::string, uint32_t> symbol_ids_;

  std::vector<ENode> nodes_;
  std::vector<EClassId> node_class_;  ///< class the node was added to (find() it)
  std::vector<bool> node_dead_;
  std::vector<bool> filtered_;
  size_t num_dead_ = 0;

  UnionFind uf_;
  std::vector<EClass> classes_;
  size_t num_classes_ = 0;
  std::unordered_map<ENode, ENodeId, ENodeHash> memo_;

  std::vector<ENodeId> pending_;           ///< nodes to re-canonicalize
  std::vector<ENodeId> analysis_pending_;  ///< nodes whose make() may have changed
  std::vector<EClassId> class_ids_;
  std::vector<std::vector<EClassId>> by_op_;
  bool clean_ = true;
  uint64_t union_count_ = 0;
};

}  // namespace tensat
