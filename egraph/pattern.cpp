// Pattern and condition compilation (see pattern.h).
#include "egraph/pattern.h"

#include <algorithm>
#include <functional>

namespace tensat {

int VarTable::find(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

int VarTable::intern(std::string_view name) {
  int i = find(name);
  if (i >= 0) return i;
  names.emplace_back(name);
  return static_cast<int>(names.size()) - 1;
}

namespace {

bool is_var(const SExpr& e) { return e.is_atom && !e.quoted && e.atom.size() > 1 && e.atom[0] == '?'; }

std::string at(const SExpr& e) {
  return "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": ";
}

int compile_rec(const SExpr& e, VarTable& vars, bool rhs, Pattern& p, bool param_pos) {
  PatNode n;
  if (e.is_atom) {
    if (is_var(e)) {
      std::string name = e.atom.substr(1);
      if (rhs && vars.find(name) < 0)
        throw RuleError(at(e) + "variable ?" + name + " is not bound by a left-hand side");
      n.kind = PatNode::Kind::Var;
      n.var = vars.intern(name);
    } else {
      // Sym literals may stand in tensor positions (a bias is `none` when absent); integers
      // only in parameter positions.
      if (!param_pos && atom_is_int(e))
        throw RuleError(at(e) + "integer literal '" + e.atom + "' in a tensor position (use a variable or a term)");
      if (atom_is_int(e)) {
        n.kind = PatNode::Kind::Num;
        n.num = std::stoll(e.atom);
      } else {
        n.kind = PatNode::Kind::Sym;
        n.sym = e.atom;
      }
    }
    p.nodes.push_back(std::move(n));
    return static_cast<int>(p.nodes.size()) - 1;
  }
  if (e.list.empty() || !e.list[0].is_atom) throw RuleError(at(e) + "expected an operator");
  auto op = op_from_name(e.list[0].atom);
  if (!op || is_param_leaf(*op)) throw RuleError(at(e) + "unknown operator '" + e.list[0].atom + "'");
  const OpInfo& info = op_info(*op);
  int arity = static_cast<int>(e.list.size()) - 1;
  bool split_auto = *op == Op::Split && arity == 2;
  if (!split_auto && (arity < info.min_arity || (info.max_arity >= 0 && arity > info.max_arity)))
    throw RuleError(at(e) + std::string(info.name) + " takes " + std::to_string(info.min_arity) +
                    (info.max_arity == info.min_arity ? "" : "+") + " arguments, got " +
                    std::to_string(arity));
  if (*op == Op::Opaque) throw RuleError(at(e) + "rules never match or build opaque nodes");
  n.kind = PatNode::Kind::Op;
  n.op = *op;
  n.split_auto = split_auto;
  int nparams = split_auto ? 1 : info.num_params;
  for (int i = 0; i < arity; ++i)
    n.children.push_back(compile_rec(e.list[static_cast<size_t>(i) + 1], vars, rhs, p, i < nparams));
  p.nodes.push_back(std::move(n));
  return static_cast<int>(p.nodes.size()) - 1;
}

}  // namespace

Pattern compile_pattern(const SExpr& e, VarTable& vars, bool rhs) {
  Pattern p;
  compile_rec(e, vars, rhs, p, /*param_pos=*/false);
  return p;
}

std::string Pattern::str(const VarTable& vars) const {
  std::function<std::string(int)> rec = [&](int i) -> std::string {
    const PatNode& n = nodes[static_cast<size_t>(i)];
    switch (n.kind) {
      case PatNode::Kind::Var: return "?" + vars.names[static_cast<size_t>(n.var)];
      case PatNode::Kind::Num: return std::to_string(n.num);
      case PatNode::Kind::Sym: return n.sym;
      case PatNode::Kind::Op: {
        std::string s = "(" + std::string(op_name(n.op));
        for (int c : n.children) s += " " + rec(c);
        return s + ")";
      }
    }
    return "?";
  };
  return rec(root_index());
}

std::vector<int> Pattern::vars_in_order() const {
  std::vector<int> out;
  std::function<void(int)> rec = [&](int i) {
    const PatNode& n = nodes[static_cast<size_t>(i)];
    if (n.kind == PatNode::Kind::Var) {
      if (std::find(out.begin(), out.end(), n.var) == out.end()) out.push_back(n.var);
    }
    for (int c : n.children) rec(c);
  };
  rec(root_index());
  return out;
}

int Pattern::height() const {
  // Post-order: children come before parents, so one pass computes every node's height.
  std::vector<int> h(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int c : nodes[i].children) h[i] = std::max(h[i], h[static_cast<size_t>(c)] + 1);
  return h.empty() ? 0 : h.back();
}

int Pattern::op_height() const {
  // Heights measured from the root: walk down from it.
  int best = -1;
  std::function<void(int, int)> rec = [&](int i, int depth) {
    const PatNode& n = nodes[static_cast<size_t>(i)];
    if (n.kind != PatNode::Kind::Op) return;
    best = std::max(best, depth);
    for (int c : n.children) rec(c, depth + 1);
  };
  if (!nodes.empty()) rec(root_index(), 0);
  return best;
}

Condition compile_condition(const SExpr& e, const VarTable& vars) {
  if (e.is_atom || e.list.empty() || !e.list[0].is_atom)
    throw RuleError(at(e) + "a condition is a list: (name ?x ...)");
  const std::string& name = e.list[0].atom;
  auto var = [&](size_t i) {
    if (i >= e.list.size() || !is_var(e.list[i]))
      throw RuleError(at(e) + "condition " + name + ": argument " + std::to_string(i) + " must be a variable");
    int v = vars.find(e.list[i].atom.substr(1));
    if (v < 0) throw RuleError(at(e) + "condition " + name + ": variable " + e.list[i].atom + " is not bound by a left-hand side");
    return v;
  };
  auto integer = [&](size_t i) {
    if (i >= e.list.size() || !atom_is_int(e.list[i]))
      throw RuleError(at(e) + "condition " + name + ": argument " + std::to_string(i) + " must be an integer");
    return std::stoll(e.list[i].atom);
  };
  auto arity = [&](size_t n) {
    if (e.list.size() != n + 1)
      throw RuleError(at(e) + "condition " + name + " takes " + std::to_string(n) + " arguments");
  };
  Condition c;
  using K = Condition::Kind;
  if (name == "weight-only" || name == "not-weight-only") {
    arity(1);
    c.kind = name == "weight-only" ? K::WeightOnly : K::NotWeightOnly;
    c.a = var(1);
  } else if (name == "same-shape" || name == "kernel-le" || name == "distinct" || name == "ordered") {
    arity(2);
    c.kind = name == "same-shape"  ? K::SameShape
             : name == "kernel-le" ? K::KernelLe
             : name == "distinct"  ? K::Distinct
                                   : K::Ordered;
    c.a = var(1);
    c.b = var(2);
  } else if (name == "rank") {
    arity(2);
    c.kind = K::Rank;
    c.a = var(1);
    c.n1 = integer(2);
  } else if (name == "kernel") {
    arity(3);
    c.kind = K::Kernel;
    c.a = var(1);
    c.n1 = integer(2);
    c.n2 = integer(3);
  } else if (name == "groups") {
    arity(3);
    c.kind = K::Groups;
    c.a = var(1);
    c.b = var(2);
    if (is_var(e.list[3])) c.g_var = var(3);
    else c.n1 = integer(3);
  } else {
    throw RuleError(at(e) + "unknown condition '" + name + "'");
  }
  return c;
}

std::string Condition::str(const VarTable& vars) const {
  auto v = [&](int i) { return "?" + vars.names[static_cast<size_t>(i)]; };
  using K = Kind;
  switch (kind) {
    case K::WeightOnly: return "(weight-only " + v(a) + ")";
    case K::NotWeightOnly: return "(not-weight-only " + v(a) + ")";
    case K::SameShape: return "(same-shape " + v(a) + " " + v(b) + ")";
    case K::Rank: return "(rank " + v(a) + " " + std::to_string(n1) + ")";
    case K::Kernel: return "(kernel " + v(a) + " " + std::to_string(n1) + " " + std::to_string(n2) + ")";
    case K::KernelLe: return "(kernel-le " + v(a) + " " + v(b) + ")";
    case K::Groups: return "(groups " + v(a) + " " + v(b) + " " + (g_var >= 0 ? v(g_var) : std::to_string(n1)) + ")";
    case K::Distinct: return "(distinct " + v(a) + " " + v(b) + ")";
    case K::Ordered: return "(ordered " + v(a) + " " + v(b) + ")";
  }
  return "?";
}

bool check_condition(const EGraph& eg, const Condition& c, const EClassId* subst) {
  using K = Condition::Kind;
  auto tensor4 = [&](int v) -> const Shape* {
    const ValueType& t = eg.type(subst[v]);
    if (!t.is_tensor() || t.shape().size() != 4) return nullptr;
    return &t.shape();
  };
  switch (c.kind) {
    case K::WeightOnly: return eg.data(subst[c.a]).weight_only;
    case K::NotWeightOnly: return !eg.data(subst[c.a]).weight_only;
    case K::SameShape: {
      const ValueType& a = eg.type(subst[c.a]);
      const ValueType& b = eg.type(subst[c.b]);
      return a.is_tensor() && b.is_tensor() && a.shape() == b.shape();
    }
    case K::Rank: {
      const ValueType& a = eg.type(subst[c.a]);
      return a.is_tensor() && static_cast<int64_t>(a.shape().size()) == c.n1;
    }
    case K::Kernel: {
      const Shape* w = tensor4(c.a);
      return w && (*w)[2] == c.n1 && (*w)[3] == c.n2;
    }
    case K::KernelLe: {
      const Shape* w = tensor4(c.a);
      const Shape* r = tensor4(c.b);
      if (!w || !r) return false;
      for (size_t i : {2u, 3u})
        if ((*w)[i] % 2 == 0 || (*r)[i] % 2 == 0 || (*w)[i] > (*r)[i]) return false;
      return true;
    }
    case K::Groups: {
      const Shape* x = tensor4(c.a);
      const Shape* w = tensor4(c.b);
      if (!x || !w || (*w)[1] <= 0 || (*x)[1] % (*w)[1] != 0) return false;
      int64_t g = (*x)[1] / (*w)[1];
      if (c.g_var >= 0) {
        const ValueType& gt = eg.type(subst[c.g_var]);
        return gt.kind == Kind::Int && gt.num == g;
      }
      return g == c.n1;
    }
    case K::Distinct: return eg.find(subst[c.a]) != eg.find(subst[c.b]);
    case K::Ordered: return eg.find(subst[c.a]) < eg.find(subst[c.b]);
  }
  return false;
}

}  // namespace tensat
