// Backtracking e-matcher over compiled patterns (see ematch.h).
#include "egraph/ematch.h"

namespace tensat {

namespace {

class Machine {
 public:
  Machine(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out, const SearchOptions& opt)
      : eg_(eg), p_(p), out_(out), opt_(opt), subst_(nvars), lit_(p.nodes.size()) {
    // Per operator node: (e-node child position, pattern child) pairs, leaves (variables and
    // literals) first, so that variables are bound before sub-patterns look at them.
    order_.resize(p.nodes.size());
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      const PatNode& pn = p.nodes[i];
      if (pn.kind != PatNode::Kind::Op) continue;
      std::vector<std::pair<int, int>> leaves, subs;
      for (size_t j = 0; j < pn.children.size(); ++j) {
        int pos = pn.split_auto && j == 1 ? 2 : static_cast<int>(j);  // (split AXIS x): POS is free
        bool leaf = p.nodes[static_cast<size_t>(pn.children[j])].kind != PatNode::Kind::Op;
        (leaf ? leaves : subs).push_back({pos, pn.children[j]});
      }
      order_[i] = std::move(leaves);
      order_[i].insert(order_[i].end(), subs.begin(), subs.end());
    }
  }

  /// Resolves literals; false if some literal has no class (then nothing can match).
  bool prepare() {
    for (size_t i = 0; i < p_.nodes.size(); ++i) {
      const PatNode& n = p_.nodes[i];
      if (n.kind == PatNode::Kind::Num) {
        auto c = eg_.lookup_num(n.num);
        if (!c) return false;
        lit_[i] = *c;
      } else if (n.kind == PatNode::Kind::Sym) {
        auto c = eg_.lookup_sym(n.sym);
        if (!c) return false;
        lit_[i] = *c;
      }
    }
    return true;
  }

  void run_at(EClassId cls) {
    root_ = cls;
    for (auto& s : subst_) s = EClassId();
    todo_.clear();
    todo_.push_back({p_.root_index(), cls});
    step();
  }

  bool full() const { return count_ >= opt_.limit; }
  size_t count() const { return count_; }

 private:
  void step() {
    if (full()) return;
    if (todo_.empty()) {
      out_.push(root_, subst_.data());
      ++count_;
      return;
    }
    auto [pi, cls] = todo_.back();
    todo_.pop_back();
    const PatNode& pn = p_.nodes[static_cast<size_t>(pi)];
    switch (pn.kind) {
      case PatNode::Kind::Var: {
        EClassId& slot = subst_[static_cast<size_t>(pn.var)];
        if (!slot.valid()) {
          slot = cls;
          step();
          slot = EClassId();
        } else if (slot == cls) {
          step();
        }
        break;
      }
      case PatNode::Kind::Num:
      case PatNode::Kind::Sym:
        if (lit_[static_cast<size_t>(pi)] == cls) step();
        break;
      case PatNode::Kind::Op: {
        // `cls` is canonical (a child of a canonical node, or a root from the operator index),
        // and the class's nodes are sorted by operator: scan only pn.op's run.
        const EClass& ec = eg_.eclass_canonical(cls);
        const size_t arity = pn.split_auto ? 3 : pn.children.size();
        const auto& order = order_[static_cast<size_t>(pi)];
        for (ENodeId nid : ec.nodes) {
          const ENode& en = eg_.node(nid);
          if (en.op != pn.op) {
            if (en.op > pn.op) break;
            continue;
          }
          if (en.children.size() != arity) continue;
          if (opt_.skip_filtered && eg_.is_filtered(nid)) continue;
          const size_t bound_mark = bound_.size();
          if (match_leaves(order, en)) {
            // Leaves are done; only sub-patterns go on the work list (first child on top).
            size_t mark = todo_.size();
            for (size_t j = order.size(); j-- > 0;) {
              int ci = order[j].second;
              if (p_.nodes[static_cast<size_t>(ci)].kind == PatNode::Kind::Op)
                todo_.push_back({ci, en.children[static_cast<size_t>(order[j].first)]});
            }
            step();
            todo_.resize(mark);
          }
          while (bound_.size() > bound_mark) {  // undo this e-node's bindings
            subst_[static_cast<size_t>(bound_.back())] = EClassId();
            bound_.pop_back();
          }
          if (full()) break;
        }
        break;
      }
    }
    todo_.push_back({pi, cls});
  }

  // Matches the leaf children of an e-node in place, before descending: literals must be
  // their literal's class, bound variables their binding, fresh variables are bound (recorded
  // in bound_ for the caller to undo); and, one level of look-ahead, a sub-pattern's class must
  // hold its operator. Prunes most failing partial matches without enumerating siblings.
  bool match_leaves(const std::vector<std::pair<int, int>>& order, const ENode& en) {
    for (auto [pos, ci] : order) {
      EClassId c = en.children[static_cast<size_t>(pos)];
      const PatNode& cn = p_.nodes[static_cast<size_t>(ci)];
      switch (cn.kind) {
        case PatNode::Kind::Var: {
          EClassId& b = subst_[static_cast<size_t>(cn.var)];
          if (!b.valid()) {
            b = c;
            bound_.push_back(cn.var);
          } else if (b != c) {
            return false;
          }
          break;
        }
        case PatNode::Kind::Num:
        case PatNode::Kind::Sym:
          if (lit_[static_cast<size_t>(ci)] != c) return false;
          break;
        case PatNode::Kind::Op:
          if (!eg_.eclass_canonical(c).has_op(cn.op)) return false;
          break;
      }
    }
    return true;
  }

  const EGraph& eg_;
  const Pattern& p_;
  std::vector<std::vector<std::pair<int, int>>> order_;
  Matches& out_;
  const SearchOptions& opt_;
  std::vector<EClassId> subst_;
  std::vector<EClassId> lit_;
  std::vector<std::pair<int, EClassId>> todo_;
  std::vector<int> bound_;  ///< variables bound by match_leaves, in order
  EClassId root_;
  size_t count_ = 0;
};

}  // namespace

size_t search_pattern(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out,
                      const SearchOptions& opt) {
  eg.require_clean("search_pattern");
  Machine m(eg, p, nvars, out, opt);
  if (!m.prepare()) return 0;
  const PatNode& root = p.root();
  if (root.kind == PatNode::Kind::Op) {
    for (EClassId c : eg.classes_with_op(root.op)) {
      m.run_at(c);
      if (m.full()) break;
    }
  } else {
    for (EClassId c : eg.class_ids()) {
      m.run_at(c);
      if (m.full()) break;
    }
  }
  return m.count();
}

size_t search_pattern_in(const EGraph& eg, const Pattern& p, size_t nvars,
                         const std::vector<EClassId>& roots, Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern_in");
  Machine m(eg, p, nvars, out, opt);
  if (!m.prepare()) return 0;
  for (EClassId c : roots) {
    m.run_at(c);
    if (m.full()) break;
  }
  return m.count();
}

size_t search_pattern_at(const EGraph& eg, const Pattern& p, size_t nvars, EClassId cls,
                         Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern_at");
  Machine m(eg, p, nvars, out, opt);
  if (!m.prepare()) return 0;
  m.run_at(eg.find(cls));
  return m.count();
}

}  // namespace tensat
