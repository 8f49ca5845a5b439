// Backtracking e-matcher over compiled patterns (see ematch.h).
#include "egraph/ematch.h"

#include <memory>

namespace tensat {

namespace {

struct Item {
  uint32_t pos;  ///< e-node child position
  PatNode::Kind kind;
  Op op;         ///< Kind::Op: the sub-pattern's operator (look-ahead)
  int idx;       ///< Kind::Var: the variable; otherwise the pattern node
};
struct Todo {
  int pi;
  EClassId cls;
};

// A Machine's buffers, kept between searches (one search runs at a time per thread; a nested
// one gets its own).
struct Scratch {
  std::vector<Item> items;
  std::vector<uint32_t> item_begin;
  std::vector<std::pair<int, uint32_t>> subs;
  std::vector<uint32_t> sub_begin;
  std::vector<EClassId> subst, lit;
  std::vector<Todo> todo;
  std::vector<int> bound;
  bool busy = false;
};
thread_local Scratch tls_scratch;

class Machine {
 public:
  Machine(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out, const SearchOptions& opt)
      : eg_(eg),
        p_(p),
        out_(out),
        limit_(opt.limit),
        skip_filtered_(opt.skip_filtered),
        own_(tls_scratch.busy ? new Scratch : nullptr),
        sc_(own_ ? *own_ : tls_scratch),
        items_(sc_.items),
        item_begin_(sc_.item_begin),
        subs_(sc_.subs),
        sub_begin_(sc_.sub_begin),
        subst_(sc_.subst),
        lit_(sc_.lit),
        todo_(sc_.todo),
        bound_(sc_.bound) {
    sc_.busy = true;
    items_.clear();
    subs_.clear();
    subst_.assign(nvars, EClassId());
    lit_.assign(p.nodes.size(), EClassId());
    todo_.resize(p.nodes.size() + 1);
    bound_.resize(nvars + 1);
    // Per operator node: its e-node children to check in place (leaves, i.e. variables and
    // literals, first, so that variables are bound before sub-patterns look at them; then
    // sub-patterns, checked one level ahead), and the sub-patterns to descend into.
    const size_t n = p.nodes.size();
    item_begin_.assign(n + 1, 0);
    sub_begin_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      item_begin_[i] = static_cast<uint32_t>(items_.size());
      sub_begin_[i] = static_cast<uint32_t>(subs_.size());
      const PatNode& pn = p.nodes[i];
      if (pn.kind != PatNode::Kind::Op) continue;
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t j = 0; j < pn.children.size(); ++j) {
          int pos = pn.split_auto && j == 1 ? 2 : static_cast<int>(j);  // (split AXIS x): POS is free
          const int ci = pn.children[j];
          const PatNode& cn = p.nodes[static_cast<size_t>(ci)];
          const bool leaf = cn.kind != PatNode::Kind::Op;
          if (leaf != (pass == 0)) continue;
          Item it;
          it.pos = static_cast<uint32_t>(pos);
          it.kind = cn.kind;
          it.op = cn.op;
          it.idx = cn.kind == PatNode::Kind::Var ? cn.var : ci;
          items_.push_back(it);
        }
      }
      // Sub-patterns in reverse order, so that the first child ends up on top of the work list.
      for (uint32_t k = static_cast<uint32_t>(items_.size()); k-- > item_begin_[i];)
        if (items_[k].kind == PatNode::Kind::Op) subs_.push_back({items_[k].idx, items_[k].pos});
    }
    item_begin_[n] = static_cast<uint32_t>(items_.size());
    sub_begin_[n] = static_cast<uint32_t>(subs_.size());
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
    ntodo_ = 0;
    todo_[ntodo_++] = {p_.root_index(), cls};
    step();
  }

  ~Machine() { sc_.busy = false; }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  bool full() const { return count_ >= limit_; }
  size_t count() const { return count_; }

 private:
  void step() {
    if (full()) return;
    if (ntodo_ == 0) {
      out_.push(root_, subst_.data());
      ++count_;
      return;
    }
    const Todo t = todo_[--ntodo_];
    const PatNode& pn = p_.nodes[static_cast<size_t>(t.pi)];
    switch (pn.kind) {
      case PatNode::Kind::Var: {
        EClassId& slot = subst_[static_cast<size_t>(pn.var)];
        if (!slot.valid()) {
          slot = t.cls;
          step();
          slot = EClassId();
        } else if (slot == t.cls) {
          step();
        }
        break;
      }
      case PatNode::Kind::Num:
      case PatNode::Kind::Sym:
        if (lit_[static_cast<size_t>(t.pi)] == t.cls) step();
        break;
      case PatNode::Kind::Op: {
        // `cls` is canonical (a child of a canonical node, or a root from the operator index),
        // and the class's nodes are sorted by operator: scan only pn.op's run.
        const EClass& ec = eg_.eclass_canonical(t.cls);
        const size_t arity = pn.split_auto ? 3 : pn.children.size();
        const Op op = pn.op;
        const Item* ib = items_.data() + item_begin_[static_cast<size_t>(t.pi)];
        const Item* ie = items_.data() + item_begin_[static_cast<size_t>(t.pi) + 1];
        const auto* sb = subs_.data() + sub_begin_[static_cast<size_t>(t.pi)];
        const auto* se = subs_.data() + sub_begin_[static_cast<size_t>(t.pi) + 1];
        for (ENodeId nid : ec.nodes) {
          const Op nop = eg_.node_op(nid);
          if (nop != op) {
            if (nop > op) break;
            continue;
          }
          const ENode& en = eg_.node(nid);
          if (en.children.size() != arity) continue;
          if (skip_filtered_ && eg_.is_filtered(nid)) continue;
          const size_t bound_mark = nbound_;
          if (match_leaves(ib, ie, en.children.data())) {
            // Leaves are done; only sub-patterns go on the work list (first child on top).
            const size_t mark = ntodo_;
            for (const auto* s = sb; s != se; ++s) todo_[ntodo_++] = {s->first, en.children[s->second]};
            step();
            ntodo_ = mark;
          }
          while (nbound_ > bound_mark)  // undo this e-node's bindings
            subst_[static_cast<size_t>(bound_[--nbound_])] = EClassId();
          if (full()) break;
        }
        break;
      }
    }
    todo_[ntodo_++] = t;
  }

  // Matches the leaf children of an e-node in place, before descending: literals must be
  // their literal's class, bound variables their binding, fresh variables are bound (recorded
  // in bound_ for the caller to undo); and, one level of look-ahead, a sub-pattern's class must
  // hold its operator. Prunes most failing partial matches without enumerating siblings.
  bool match_leaves(const Item* it, const Item* end, const EClassId* kids) {
    for (; it != end; ++it) {
      const EClassId c = kids[it->pos];
      switch (it->kind) {
        case PatNode::Kind::Var: {
          EClassId& b = subst_[static_cast<size_t>(it->idx)];
          if (!b.valid()) {
            b = c;
            bound_[nbound_++] = it->idx;
          } else if (b != c) {
            return false;
          }
          break;
        }
        case PatNode::Kind::Num:
        case PatNode::Kind::Sym:
          if (lit_[static_cast<size_t>(it->idx)] != c) return false;
          break;
        case PatNode::Kind::Op:
          if (!((eg_.class_ops(c) >> static_cast<unsigned>(it->op)) & 1u)) return false;
          break;
      }
    }
    return true;
  }

  const EGraph& eg_;
  const Pattern& p_;
  Matches& out_;
  const size_t limit_;
  const bool skip_filtered_;
  std::unique_ptr<Scratch> own_;  ///< only when the thread's scratch is in use
  Scratch& sc_;
  std::vector<Item>& items_;
  std::vector<uint32_t>& item_begin_;            ///< per pattern node: its range of items_
  std::vector<std::pair<int, uint32_t>>& subs_;  ///< (pattern node, child position), reversed
  std::vector<uint32_t>& sub_begin_;             ///< per pattern node: its range of subs_
  std::vector<EClassId>& subst_;
  std::vector<EClassId>& lit_;
  std::vector<Todo>& todo_;  ///< work list; at most one entry per pattern node
  size_t ntodo_ = 0;
  std::vector<int>& bound_;  ///< variables bound by match_leaves, in order (at most nvars)
  size_t nbound_ = 0;
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
