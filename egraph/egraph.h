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
#include <utility>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/enode.h"
#include "egraph/id_table.h"
#include "egraph/ids.h"
#include "egraph/unionfind.h"

namespace tensat {

/// An e-class's e-node or parent list: most classes have a few, stored inline (small_vec.h).
using ENodeList = SmallVec<ENodeId, 3>;

struct EClass {
  ENodeList nodes;    ///< live e-nodes of this class (after rebuild: sorted by operator, then id)
  ENodeList parents;  ///< e-nodes that have this class as a child (after rebuild: sorted, distinct)
  ClassData data;
  uint64_t ops = 0;  ///< after rebuild: bit k set if some e-node has operator k (kNumOps < 64)
  bool has_op(Op op) const { return (ops >> static_cast<unsigned>(op)) & 1u; }
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
  /// Adds a node whose analysis data the caller computed with make_data over the current
  /// data of its (existing) children: the rewrite applier, which plans a right-hand side
  /// before committing it. Saves re-running shape inference.
  EClassId add_planned(ENode n, ClassData data);
  EClassId add_num(int64_t v) { return add(ENode::make_num(v)); }
  EClassId add_sym(std::string_view s) { return add(ENode::make_sym(intern(s))); }
  /// Class of an existing node equal to `n` (after canonicalizing its children), if any.
  std::optional<EClassId> lookup(ENode n) const;
  /// Like lookup, for a node whose children are already canonical (no copy).
  std::optional<EClassId> lookup_canonical(const ENode& n) const;
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

  /// Makes room for `nodes` e-nodes and as many classes (the runner reserves up to its node
  /// limit): growing by reallocation copies every e-node and e-class several times, and the
  /// reserved memory costs nothing until it is used.
  void reserve(size_t nodes);

  // ---- access -----------------------------------------------------------------------------
  const EClass& eclass(EClassId id) const { return classes_[find(id).v]; }
  /// eclass() of a canonical id (a child of a node after rebuild, an id from class_ids()).
  const EClass& eclass_canonical(EClassId id) const { return classes_[id.v]; }
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
  /// EClass::ops of a canonical class, from a compact array (valid after rebuild).
  uint64_t class_ops(EClassId id) const { return class_ops_[id.v]; }
  /// The e-nodes of a canonical class, packed at rebuild (valid after rebuild): the same list
  /// as eclass().nodes (sorted by operator, then id), each with its operator and (canonical)
  /// children, in one contiguous run. E-matching and the cycle filter read these instead of
  /// the EClass and ENode objects, which are large and scattered: one class is a cache line
  /// or two.
  struct PackedNode {
    ENodeId id;
    Op op;
    uint32_t nkids;
    const EClassId* kids;
  };
  class NodeRun {
   public:
    // An entry is [node id][operator | arity << 8][children...], as EClassId words.
    class iterator {
     public:
      explicit iterator(const EClassId* p) : p_(p) {}
      PackedNode operator*() const {
        return {ENodeId(p_[0].v), static_cast<Op>(p_[1].v & 0xffu), p_[1].v >> 8, p_ + 2};
      }
      iterator& operator++() {
        p_ += 2 + (p_[1].v >> 8);
        return *this;
      }
      bool operator==(const iterator& o) const { return p_ == o.p_; }

     private:
      const EClassId* p_;
    };
    NodeRun(const EClassId* b, const EClassId* e) : b_(b), e_(e) {}
    iterator begin() const { return iterator(b_); }
    iterator end() const { return iterator(e_); }
    bool empty() const { return b_ == e_; }

   private:
    const EClassId *b_, *e_;
  };
  NodeRun class_nodes(EClassId id) const {
    const EClassId* b = packed_.data() + run_begin_[id.v];
    return NodeRun(b, b + run_words_[id.v]);
  }
  /// The operator of an e-node, from a compact array (an e-node's operator never changes).
  Op node_op(ENodeId id) const { return node_ops_[id.v]; }
  /// Throws std::logic_error if the e-graph needs a rebuild (search calls this).
  void require_clean(std::string_view who) const;

  // ---- cycle filter list ------------------------------------------------------------------
  const std::vector<bool>& filtered() const { return filtered_; }
  bool is_filtered(ENodeId id) const { return filtered_[id.v]; }
  void set_filtered(ENodeId id, bool f = true) {
    if (filtered_[id.v] != f) {
      touched_nodes_.push_back(node_class_[id.v]);  // its matches change
      if (!node_dead_[id.v]) num_filtered_ += f ? 1 : -1;
    }
    filtered_[id.v] = f;
  }
  /// Live filtered e-nodes (a counter: the runner reports it every iteration).
  size_t num_filtered() const { return static_cast<size_t>(num_filtered_); }

  // ---- debugging --------------------------------------------------------------------------
  /// Empty if every invariant holds, else a description of the first violation.
  std::string check_invariants() const;
  /// "(matmul #3 #7 #9 #2)" with class ids, or the value of a leaf.
  std::string node_str(ENodeId id) const;
  /// Number of unions performed so far (a cheap "did anything change" counter).
  uint64_t union_count() const { return union_count_; }
  /// Classes changed since the last call (may repeat; not canonical). `nodes`: classes whose
  /// e-nodes changed (new classes, roots of unions, classes of e-nodes whose child was merged
  /// away, e-nodes (un)filtered): they matter where a pattern has an operator. `data`: classes
  /// whose analysis data grew: they matter where a pattern has a variable (conditions, split
  /// trees). Incremental search (change_tracker.h) starts from these.
  /// The e-node changes take_touched would hand out now (may repeat; not canonical).
  const std::vector<EClassId>& touched_nodes() const { return touched_nodes_; }
  void take_touched(std::vector<EClassId>& nodes, std::vector<EClassId>& data) {
    nodes = std::exchange(touched_nodes_, {});
    data = std::exchange(touched_data_, {});
  }

 private:
  void canonicalize(ENode& n) const;
  /// The live e-node equal to `n` (canonical children; hash `h` = ENodeHash()(n)), if any.
  ENodeId memo_find(const ENode& n, size_t h) const {
    return ENodeId(memo_.find(h, [&](uint32_t id) { return nodes_[id] == n; }));
  }
  std::optional<ClassData> make(const ENode& n, std::string* error) const;
  EClassId insert_new(ENode&& n, size_t hash, ClassData&& data);
  EClassId union_roots(EClassId a, EClassId b);
  void rebuild_classes();
  /// Copies class i's (sorted, live) e-nodes into the packed arrays.
  void pack(uint32_t i);

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  };
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> symbol_ids_;

  std::vector<ENode> nodes_;
  std::vector<Op> node_ops_;          ///< nodes_[i].op, packed (e-matching scans these)
  std::vector<uint64_t> class_ops_;   ///< classes_[i].ops, packed (after rebuild)
  // class_nodes(): class i's e-nodes are packed_[run_begin_[i], + run_words_[i]), in a run of
  // run_cap_[i] words. A class whose run outgrew its room gets a new run at the end; the old
  // one is waste, and everything is re-packed when waste is half the array.
  std::vector<uint32_t> run_begin_, run_words_, run_cap_;
  std::vector<EClassId> packed_;
  size_t packed_waste_ = 0;
  /// Classes (any id, repeats) whose node or parent lists, or whose e-nodes' children,
  /// changed since the last rebuild.
  std::vector<uint32_t> lists_changed_;
  std::vector<uint32_t> list_mark_;
  uint32_t list_epoch_ = 0;
  std::vector<EClassId> node_class_;  ///< class the node was added to (find() it)
  std::vector<bool> node_dead_;
  std::vector<bool> filtered_;
  size_t num_dead_ = 0;
  int64_t num_filtered_ = 0;  ///< live e-nodes with filtered_ set

  UnionFind uf_;
  std::vector<EClass> classes_;
  size_t num_classes_ = 0;
  /// The hash-cons: every live e-node's id, keyed by the e-node itself (nodes_[id], which is
  /// canonical after rebuild). Dead e-nodes are not in it; rebuild erases an e-node before it
  /// re-canonicalizes it and re-inserts it under its new value.
  IdTable memo_;

  std::vector<ENodeId> pending_;           ///< nodes to re-canonicalize
  std::vector<ENodeId> analysis_pending_;  ///< nodes whose make() may have changed
  std::vector<EClassId> class_ids_;
  std::vector<std::vector<EClassId>> by_op_;
  bool clean_ = true;
  uint64_t union_count_ = 0;
  std::vector<EClassId> touched_nodes_, touched_data_;
};

}  // namespace tensat
