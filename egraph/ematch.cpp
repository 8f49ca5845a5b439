// Backtracking e-matcher over compiled patterns (see ematch.h).
//
// A compiled pattern visits its operator nodes in a fixed order: pre-order from the root,
// first child first (a work list of pending sub-patterns, the first child on top). At each
// operator node it scans the class's e-nodes with that operator and tests each candidate's
// children in place, as Checks grouped by kind, cheap and selective ones first:
//   literals  the child is the literal's class,
//   equals    the child is the class of a variable bound at an earlier node,
//   sames     two children are the same class (a variable occurring twice in this node),
//   looks     one level of look-ahead: a sub-pattern child's class holds its operator,
//   binds     the first occurrence of a variable (in visiting order): bind it to the child.
// Whether an occurrence binds or compares is known when compiling, since the visiting order is
// fixed. Bindings need no undo: a later candidate at the same node overwrites them before
// anything reads them, and every variable is bound when a match is recorded. A candidate that
// passes pushes its sub-patterns and goes on with the work list; an empty list is a match.
#include "egraph/ematch.h"

#include <memory>

namespace tensat {

CompiledPattern::CompiledPattern(const Pattern& p, size_t nvars) : nvars_(nvars) {
  const size_t n = p.nodes.size();
  root = p.root_index();
  nodes.assign(n, Node{});
  for (size_t i = 0; i < n; ++i) {
    const PatNode& pn = p.nodes[i];
    Node& nd = nodes[i];
    nd.kind = pn.kind;
    nd.op = pn.op;
    nd.var = pn.var;
    nd.lit = -1;
    nd.arity = static_cast<uint32_t>(pn.split_auto ? 3 : pn.children.size());
    const OpInfo& info = op_info(pn.op);
    nd.check_arity = pn.kind == PatNode::Kind::Op && info.min_arity != info.max_arity;
    if (pn.kind == PatNode::Kind::Num || pn.kind == PatNode::Kind::Sym) {
      nd.lit = static_cast<int>(lits.size());
      lits.push_back({pn.kind, pn.num, pn.sym});
    }
  }
  // Operator nodes in visiting order.
  std::vector<int> order, stack;
  if (p.root().kind == PatNode::Kind::Op) stack.push_back(root);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    order.push_back(i);
    const PatNode& pn = p.nodes[static_cast<size_t>(i)];
    for (size_t j = pn.children.size(); j-- > 0;)
      if (p.nodes[static_cast<size_t>(pn.children[j])].kind == PatNode::Kind::Op) stack.push_back(pn.children[j]);
  }
  std::vector<uint8_t> seen(nvars, 0);  // variable bound at an earlier node
  std::vector<int> first_here(nvars);   // position binding each variable at this node
  for (int i : order) {
    const PatNode& pn = p.nodes[static_cast<size_t>(i)];
    Node& nd = nodes[static_cast<size_t>(i)];
    auto each_child = [&](auto&& f) {
      for (size_t j = 0; j < pn.children.size(); ++j) {
        const uint32_t pos = static_cast<uint32_t>(pn.split_auto && j == 1 ? 2 : j);  // (split AXIS x): POS is free
        f(pos, p.nodes[static_cast<size_t>(pn.children[j])], pn.children[j]);
      }
    };
    nd.lit_b = static_cast<uint32_t>(checks.size());
    each_child([&](uint32_t pos, const PatNode& cn, int ci) {
      if (cn.kind == PatNode::Kind::Num || cn.kind == PatNode::Kind::Sym)
        checks.push_back({pos, static_cast<uint32_t>(nodes[static_cast<size_t>(ci)].lit)});
    });
    nd.eq_b = static_cast<uint32_t>(checks.size());
    each_child([&](uint32_t pos, const PatNode& cn, int) {
      if (cn.kind == PatNode::Kind::Var && seen[static_cast<size_t>(cn.var)])
        checks.push_back({pos, static_cast<uint32_t>(cn.var)});
    });
    nd.same_b = static_cast<uint32_t>(checks.size());
    first_here.assign(nvars, -1);
    each_child([&](uint32_t pos, const PatNode& cn, int) {
      if (cn.kind != PatNode::Kind::Var || seen[static_cast<size_t>(cn.var)]) return;
      int& f = first_here[static_cast<size_t>(cn.var)];
      if (f < 0) f = static_cast<int>(pos);
      else checks.push_back({pos, static_cast<uint32_t>(f)});
    });
    nd.look_b = static_cast<uint32_t>(checks.size());
    each_child([&](uint32_t pos, const PatNode& cn, int) {
      if (cn.kind == PatNode::Kind::Op) checks.push_back({pos, static_cast<uint32_t>(cn.op)});
    });
    nd.bind_b = static_cast<uint32_t>(checks.size());
    for (size_t v = 0; v < nvars; ++v) {
      if (first_here[v] < 0) continue;
      checks.push_back({static_cast<uint32_t>(first_here[v]), static_cast<uint32_t>(v)});
      seen[v] = 1;
    }
    nd.bind_e = static_cast<uint32_t>(checks.size());
    // Sub-patterns in reverse order, so that the first child ends up on top of the work list.
    nd.sub_b = static_cast<uint32_t>(subs.size());
    for (size_t j = pn.children.size(); j-- > 0;)
      if (p.nodes[static_cast<size_t>(pn.children[j])].kind == PatNode::Kind::Op)
        subs.push_back({pn.children[j], static_cast<uint32_t>(pn.split_auto && j == 1 ? 2 : j)});
    nd.sub_e = static_cast<uint32_t>(subs.size());
  }
}

namespace {

using Node = CompiledPattern::Node;
using Check = CompiledPattern::Check;

struct Todo {
  int pi;
  EClassId cls;
};

// A Machine's buffers, kept between searches (one search runs at a time per thread; a nested
// one gets its own).
struct Scratch {
  std::vector<EClassId> subst, lit;
  std::vector<Todo> todo;
  bool busy = false;
};
thread_local Scratch tls_scratch;

class Machine {
 public:
  Machine(const EGraph& eg, const CompiledPattern& p, Matches& out, const SearchOptions& opt)
      : eg_(eg),
        p_(p),
        out_(out),
        limit_(opt.limit),
        skip_filtered_(opt.skip_filtered),
        own_(tls_scratch.busy ? new Scratch : nullptr),
        sc_(own_ ? *own_ : tls_scratch),
        subst_(sc_.subst),
        lit_(sc_.lit),
        todo_(sc_.todo) {
    sc_.busy = true;
    subst_.assign(p.nvars(), EClassId());
    lit_.assign(p.lits.size(), EClassId());
    todo_.resize(p.nodes.size() + 1);
  }
  ~Machine() { sc_.busy = false; }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  /// Resolves literals; false if some literal has no class (then nothing can match).
  bool prepare() {
    for (size_t i = 0; i < p_.lits.size(); ++i) {
      const CompiledPattern::Literal& l = p_.lits[i];
      auto c = l.kind == PatNode::Kind::Num ? eg_.lookup_num(l.num) : eg_.lookup_sym(l.sym);
      if (!c) return false;
      lit_[i] = *c;
    }
    return true;
  }

  /// All matches rooted at `cls` (canonical).
  void run_at(EClassId cls) {
    root_ = cls;
    const Node& rn = p_.nodes[static_cast<size_t>(p_.root)];
    ntodo_ = 0;
    if (rn.kind != PatNode::Kind::Op) {  // a lone variable or literal: nothing is bound yet
      for (auto& v : subst_) v = EClassId();
      todo_[ntodo_++] = {p_.root, cls};
      step();
      return;
    }
    // The root's e-nodes are scanned here rather than by step(): most roots fail on their own
    // e-node's checks, and this is the hottest loop of the search.
    scan(rn, cls);
  }

  bool full() const { return count_ >= limit_; }
  size_t count() const { return count_; }

 private:
  // Goes on with the work list: records a match when it is empty.
  void step() {
    if (full()) return;
    if (ntodo_ == 0) {
      out_.push(root_, subst_.data());
      ++count_;
      return;
    }
    const Todo t = todo_[--ntodo_];
    const Node& pn = p_.nodes[static_cast<size_t>(t.pi)];
    switch (pn.kind) {
      case PatNode::Kind::Var: {  // only as the root
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
        if (lit_[static_cast<size_t>(pn.lit)] == t.cls) step();
        break;
      case PatNode::Kind::Op:
        scan(pn, t.cls);
        break;
    }
    todo_[ntodo_++] = t;
  }

  // Tries every e-node of class `cls` (canonical: a child of a canonical node, or a root from
  // the operator index) with operator node `pn`'s operator: its checks in place, then the rest
  // of the work list with its sub-patterns on top. The class's packed e-nodes (operator and
  // children, EGraph::class_nodes) are sorted by operator: the scan stops after pn.op's run.
  void scan(const Node& pn, EClassId cls) {
    const Op op = pn.op;
    const Check* const c = p_.checks.data();
    const auto* sb = p_.subs.data() + pn.sub_b;
    const auto* se = p_.subs.data() + pn.sub_e;
    for (const EGraph::PackedNode en : eg_.class_nodes(cls)) {
      if (en.op != op) {
        if (en.op > op) break;
        continue;
      }
      if (pn.check_arity && en.nkids != pn.arity) continue;
      const EClassId* kids = en.kids;
      bool ok = true;
      for (uint32_t k = pn.lit_b; k < pn.eq_b && ok; ++k) ok = kids[c[k].pos] == lit_[c[k].arg];
      for (uint32_t k = pn.eq_b; k < pn.same_b && ok; ++k) ok = kids[c[k].pos] == subst_[c[k].arg];
      for (uint32_t k = pn.same_b; k < pn.look_b && ok; ++k) ok = kids[c[k].pos] == kids[c[k].arg];
      for (uint32_t k = pn.look_b; k < pn.bind_b && ok; ++k)
        ok = (eg_.class_ops(kids[c[k].pos]) >> c[k].arg) & 1u;
      // Filtered e-nodes are skipped whatever their children: test that last, it rarely fails.
      if (!ok || (skip_filtered_ && eg_.is_filtered(en.id))) continue;
      for (uint32_t k = pn.bind_b; k < pn.bind_e; ++k) subst_[c[k].arg] = kids[c[k].pos];
      const size_t mark = ntodo_;
      for (const auto* s = sb; s != se; ++s) todo_[ntodo_++] = {s->first, kids[s->second]};
      step();
      ntodo_ = mark;
      if (full()) break;
    }
  }

  const EGraph& eg_;
  const CompiledPattern& p_;
  Matches& out_;
  const size_t limit_;
  const bool skip_filtered_;
  std::unique_ptr<Scratch> own_;  ///< only when the thread's scratch is in use
  Scratch& sc_;
  std::vector<EClassId>& subst_;
  std::vector<EClassId>& lit_;   ///< class of each literal
  std::vector<Todo>& todo_;      ///< work list; at most one entry per pattern node
  size_t ntodo_ = 0;
  EClassId root_;
  size_t count_ = 0;
};

}  // namespace

size_t search_compiled(const EGraph& eg, const CompiledPattern& p, Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern");
  Machine m(eg, p, out, opt);
  if (!m.prepare()) return 0;
  const Node& root = p.nodes[static_cast<size_t>(p.root)];
  for (EClassId c : root.kind == PatNode::Kind::Op ? eg.classes_with_op(root.op) : eg.class_ids()) {
    m.run_at(c);
    if (m.full()) break;
  }
  return m.count();
}

size_t search_compiled_in(const EGraph& eg, const CompiledPattern& p, const std::vector<EClassId>& roots,
                          Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern_in");
  Machine m(eg, p, out, opt);
  if (!m.prepare()) return 0;
  for (EClassId c : roots) {
    m.run_at(c);
    if (m.full()) break;
  }
  return m.count();
}

size_t search_pattern(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out,
                      const SearchOptions& opt) {
  return search_compiled(eg, CompiledPattern(p, nvars), out, opt);
}

size_t search_pattern_in(const EGraph& eg, const Pattern& p, size_t nvars,
                         const std::vector<EClassId>& roots, Matches& out, const SearchOptions& opt) {
  return search_compiled_in(eg, CompiledPattern(p, nvars), roots, out, opt);
}

size_t search_pattern_at(const EGraph& eg, const Pattern& p, size_t nvars, EClassId cls,
                         Matches& out, const SearchOptions& opt) {
  eg.require_clean("search_pattern_at");
  CompiledPattern cp(p, nvars);
  Machine m(eg, cp, out, opt);
  if (!m.prepare()) return 0;
  m.run_at(eg.find(cls));
  return m.count();
}

}  // namespace tensat
