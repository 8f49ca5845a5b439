// Backtracking e-matcher over compiled patterns (see ematch.h).
#include "egraph/ematch.h"

namespace tensat {

namespace {

class Machine {
 public:
  Machine(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out, const SearchOptions& opt)
      : eg_(eg), p_(p), out_(out), opt_(opt), subst_(nvars), lit_(p.nodes.size()) {}

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
        const EClass& ec = eg_.eclass(cls);
        const size_t arity = pn.split_auto ? 3 : pn.children.size();
        for (ENodeId nid : ec.nodes) {
          const ENode& en = eg_.node(nid);
          if (en.op != pn.op || en.children.size() != arity) continue;
          if (opt_.skip_filtered && eg_.is_filtered(nid)) continue;
          size_t mark = todo_.size();
          if (pn.split_auto) {
            todo_.push_back({pn.children[1], en.children[2]});
            todo_.push_back({pn.children[0], en.children[0]});
          } else {
            for (size_t j = arity; j-- > 0;) todo_.push_back({pn.children[j], en.children[j]});
          }
          step();
          todo_.resize(mark);
          if (full()) break;
        }
        break;
      }
    }
    todo_.push_back({pi, cls});
  }

  const EGraph& eg_;
  const Pattern& p_;
  Matches& out_;
  const SearchOptions& opt_;
  std::vector<EClassId> subst_;
  std::vector<EClassId> lit_;
  std::vector<std::pair<int, EClassId>> todo_;
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

size_t search_pattern_at(const EGraph& eg, const Pattern& p, size_t nvars, EClassId cls,
                         Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern_at");
  Machine m(eg, p, nvars, out, opt);
  if (!m.prepare()) return 0;
  m.run_at(eg.find(cls));
  return m.count();
}

}  // namespace tensat
