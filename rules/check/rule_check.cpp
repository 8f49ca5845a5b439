// The numeric rule checker: random instantiation (a hint-guided shape generator), term
// matching, substitution and numeric comparison. See rule_check.h.
#include "rules/check/rule_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "lang/sexpr.h"
#include "lang/types.h"

namespace tensat::rules::check {

namespace {

bool is_var(const SExpr& e) { return e.is_atom && !e.quoted && e.atom.size() >= 2 && e.atom[0] == '?'; }
std::string var_name(const SExpr& e) { return e.atom.substr(1); }

std::optional<Op> head_op(const SExpr& e) {
  if (e.is_atom || e.list.empty() || !e.list[0].is_atom) return std::nullopt;
  return op_from_name(e.list[0].atom);
}

bool is_sugar_split(const SExpr& e) { return head_op(e) == Op::Split && e.list.size() == 3; }

const Shape* shape_of(const ir::Graph& g, ir::NodeId n) {
  const ValueType& t = g.type(n);
  return t.is_tensor() ? &t.tensor.shape : nullptr;
}

bool only_weights_below(const ir::Graph& g, ir::NodeId n) {
  const ir::Node& node = g.node(n);
  if (node.op == Op::Input || node.op == Op::Opaque || node.op == Op::Select) return false;
  for (auto c : node.children)
    if (!only_weights_below(g, c)) return false;
  return true;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Ok: return "ok";
    case Outcome::LhsIllTyped: return "lhs-ill-typed";
    case Outcome::ConditionFalse: return "condition-false";
    case Outcome::RhsIllTyped: return "rhs-ill-typed";
    case Outcome::TypeMismatch: return "type-mismatch";
    case Outcome::NoBoundary: return "no-boundary";
  }
  return "?";
}

ir::NodeId World::leaf(bool weight, const Shape& shape) {
  std::string name = (weight ? "w" : "x") + std::to_string(counter++);
  TensorType t{DType::F32, shape};
  refexec::Tensor data = refexec::random_tensor(shape, seed * 7919 + static_cast<uint64_t>(counter));
  if (weight) {
    weights.put_f32(name, shape, data.data);
    return g.weight(name, t);
  }
  inputs[name] = std::move(data);
  return g.input(name, t);
}

// ---- split tree ----------------------------------------------------------------------------

std::optional<int64_t> split_boundary(const ir::Graph& g, ir::NodeId n, int64_t axis) {
  const ir::Node& node = g.node(n);
  auto rank = [&](ir::NodeId id) -> int64_t {
    const Shape* s = shape_of(g, id);
    return s ? static_cast<int64_t>(s->size()) : -1;
  };
  switch (node.op) {
    case Op::Concat: {
      int64_t ax = g.node(node.children[0]).num;
      if (ax == axis) return (*shape_of(g, node.children[1]))[static_cast<size_t>(ax)];
      auto a = split_boundary(g, node.children[1], axis), b = split_boundary(g, node.children[2], axis);
      return a == b ? a : std::nullopt;
    }
    case Op::Relu:
    case Op::Tanh:
    case Op::Sigmoid: return split_boundary(g, node.children[0], axis);
    case Op::Transpose: {
      auto perm = parse_dims(g.type(node.children[0]));
      if (!perm || axis < 0 || axis >= static_cast<int64_t>(perm->size())) return std::nullopt;
      return split_boundary(g, node.children[1], (*perm)[static_cast<size_t>(axis)]);
    }
    case Op::Conv:
      if (axis == 1) return split_boundary(g, node.children[5], 0);
      if (axis == 0) return split_boundary(g, node.children[4], 0);  // proposed for the engine
      return std::nullopt;
    case Op::Matmul:
      if (axis == rank(n) - 1) return split_boundary(g, node.children[2], rank(node.children[2]) - 1);
      if (axis == rank(n) - 2 && rank(node.children[1]) == rank(n))  // proposed for the engine
        return split_boundary(g, node.children[1], axis);
      return std::nullopt;
    case Op::Poolmax:
    case Op::Poolavg:  // proposed for the engine
      if (axis == 0 || axis == 1) return split_boundary(g, node.children.back(), axis);
      return std::nullopt;
    default: return std::nullopt;
  }
}

// ---- substitution ---------------------------------------------------------------------------

std::optional<ir::NodeId> substitute(ir::Graph& g, const SExpr& pat, const Binding& b, std::string* why) {
  if (pat.is_atom) {
    if (is_var(pat)) {
      auto it = b.find(var_name(pat));
      if (it == b.end()) {
        if (why) *why = "unbound variable " + pat.atom;
        return std::nullopt;
      }
      return it->second;
    }
    if (atom_is_int(pat)) return g.num(std::stoll(pat.atom));
    return g.sym(pat.atom);
  }
  auto op = head_op(pat);
  std::vector<ir::NodeId> kids;
  for (size_t i = 1; i < pat.list.size(); ++i) {
    auto k = substitute(g, pat.list[i], b, why);
    if (!k) return std::nullopt;
    kids.push_back(*k);
  }
  if (is_sugar_split(pat)) {
    int64_t axis = g.node(kids[0]).num;
    auto pos = split_boundary(g, kids[1], axis);
    if (!pos) {
      if (why) *why = "no split-tree boundary for " + pat.str();
      return std::nullopt;
    }
    kids.insert(kids.begin() + 1, g.num(*pos));
  }
  ir::NodeId id = 0;
  std::string err;
  if (!g.try_add(ir::Node{*op, std::move(kids), 0, {}}, &id, &err)) {
    if (why) *why = err + " in " + pat.str();
    return std::nullopt;
  }
  return id;
}

// ---- conditions -----------------------------------------------------------------------------

bool conditions_hold(const ir::Graph& g, const RuleSpec& r, const Binding& b, std::string* why) {
  for (const SExpr& c : r.conditions) {
    const std::string& name = c.list[0].atom;
    auto node = [&](size_t i) { return b.at(var_name(c.list[i])); };
    auto integer = [&](size_t i) -> int64_t {
      if (is_var(c.list[i])) return g.node(node(i)).num;
      return std::stoll(c.list[i].atom);
    };
    bool ok = false;
    if (name == "weight-only") {
      ok = only_weights_below(g, node(1));
    } else if (name == "not-weight-only") {
      ok = !only_weights_below(g, node(1));
    } else if (name == "same-shape") {
      const Shape *a = shape_of(g, node(1)), *bb = shape_of(g, node(2));
      ok = a && bb && *a == *bb;
    } else if (name == "rank") {
      const Shape* a = shape_of(g, node(1));
      ok = a && static_cast<int64_t>(a->size()) == integer(2);
    } else if (name == "kernel") {
      const Shape* a = shape_of(g, node(1));
      ok = a && a->size() == 4 && (*a)[2] == integer(2) && (*a)[3] == integer(3);
    } else if (name == "kernel-le") {
      const Shape *w = shape_of(g, node(1)), *rr = shape_of(g, node(2));
      ok = w && rr && w->size() == 4 && rr->size() == 4 && (*w)[2] <= (*rr)[2] && (*w)[3] <= (*rr)[3] &&
           (*w)[2] % 2 == 1 && (*w)[3] % 2 == 1 && (*rr)[2] % 2 == 1 && (*rr)[3] % 2 == 1;
    } else if (name == "groups") {
      const Shape *x = shape_of(g, node(1)), *w = shape_of(g, node(2));
      ok = x && w && x->size() == 4 && w->size() == 4 && (*w)[1] > 0 && (*x)[1] % (*w)[1] == 0 &&
           (*x)[1] / (*w)[1] == integer(3);
    } else if (name == "distinct" || name == "ordered") {
      // `ordered` only breaks the symmetry between equivalent sides (which of two e-classes
      // comes first); the checker checks the rule for either order.
      ok = node(1) != node(2);
    }
    if (!ok) {
      if (why) *why = "condition " + c.str() + " is false";
      return false;
    }
  }
  return true;
}

// ---- matching -------------------------------------------------------------------------------

bool match(const ir::Graph& g, const SExpr& pat, ir::NodeId n, Binding& b) {
  const ir::Node& node = g.node(n);
  if (pat.is_atom) {
    if (is_var(pat)) {
      auto [it, fresh] = b.emplace(var_name(pat), n);
      return fresh || it->second == n;
    }
    if (atom_is_int(pat)) return node.op == Op::Num && node.num == std::stoll(pat.atom);
    return node.op == Op::Sym && node.sym == pat.atom;
  }
  auto op = head_op(pat);
  if (!op || node.op != *op) return false;
  std::vector<const SExpr*> kids;
  for (size_t i = 1; i < pat.list.size(); ++i) kids.push_back(&pat.list[i]);
  if (is_sugar_split(pat)) {  // any POS
    return node.children.size() == 3 && match(g, *kids[0], node.children[0], b) &&
           match(g, *kids[1], node.children[2], b);
  }
  if (kids.size() != node.children.size()) return false;
  for (size_t i = 0; i < kids.size(); ++i)
    if (!match(g, *kids[i], node.children[i], b)) return false;
  return true;
}

std::optional<std::vector<ir::NodeId>> match_and_apply(ir::Graph& g, const RuleSpec& r,
                                                       const std::vector<ir::NodeId>& roots,
                                                       std::string* why) {
  if (roots.size() != r.lhs.size()) {
    if (why) *why = "wrong number of roots";
    return std::nullopt;
  }
  Binding b;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!match(g, r.lhs[i], roots[i], b)) {
      if (why) *why = "left-hand side " + std::to_string(i + 1) + " does not match";
      return std::nullopt;
    }
  }
  if (!conditions_hold(g, r, b, why)) return std::nullopt;
  std::vector<ir::NodeId> out;
  for (size_t i = 0; i < roots.size(); ++i) {
    auto id = substitute(g, r.rhs[i], b, why);
    if (!id) return std::nullopt;
    if (!(g.type(*id) == g.type(roots[i]))) {
      if (why) *why = "shape check: right-hand side " + g.type(*id).str() + " vs matched " + g.type(roots[i]).str();
      return std::nullopt;
    }
    out.push_back(*id);
  }
  return out;
}

// ---- random instantiation -------------------------------------------------------------------

namespace {

constexpr int64_t kFree = -1;

struct Hint {
  int rank = -1;               ///< -1: any
  std::vector<int64_t> dims;   ///< size rank (when rank >= 0); kFree where unconstrained
  bool kernel = false;         ///< dims 2, 3 are a conv kernel
  bool even_kernel = false;    ///< kernel may be even (padding not `same`)
  bool bcast = false;          ///< operand of ewadd/ewmul: may be broadcast
  bool weight = false;         ///< prefer a weight leaf
  static Hint of(const Shape& s) {
    Hint h;
    h.rank = static_cast<int>(s.size());
    h.dims.assign(s.begin(), s.end());
    return h;
  }
  static Hint rank_only(int r) {
    Hint h;
    h.rank = r;
    h.dims.assign(static_cast<size_t>(r), kFree);
    return h;
  }
  int64_t at(size_t i) const { return i < dims.size() ? dims[i] : kFree; }
};

enum class Role { Tensor, Bias, Param };

struct Gen {
  const RuleSpec& rule;
  std::mt19937_64& rng;
  Instance& inst;
  std::map<std::string, Role> role;
  std::map<std::string, int> cond_rank;
  std::set<std::string> force_weight, force_input;
  std::vector<std::string> kernel_vars;  // conv weight-like vars (for copying kernels)
  std::string why;

  ir::Graph& g() { return inst.w.g; }

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  template <class T>
  T pick(std::initializer_list<T> xs) {
    std::vector<T> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  }
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  void scan_roles(const SExpr& e) {
    auto op = head_op(e);
    if (!op) return;
    int nparams = is_sugar_split(e) ? 1 : op_info(*op).num_params;
    for (size_t i = 1; i < e.list.size(); ++i) {
      const SExpr& c = e.list[i];
      int idx = static_cast<int>(i) - 1;
      if (is_var(c)) {
        Role r = idx < nparams ? Role::Param
                 : ((*op == Op::Matmul && idx == 3) || (*op == Op::Conv && idx == 6)) ? Role::Bias
                                                                                      : Role::Tensor;
        auto [it, fresh] = role.emplace(var_name(c), r);
        if (!fresh && it->second == Role::Tensor && r == Role::Bias) it->second = Role::Bias;
      } else {
        scan_roles(c);
      }
    }
  }

  void scan_conditions() {
    for (const SExpr& c : rule.conditions) {
      const std::string& n = c.list[0].atom;
      if (n == "rank") cond_rank[var_name(c.list[1])] = static_cast<int>(std::stoll(c.list[2].atom));
      if (n == "weight-only") force_weight.insert(var_name(c.list[1]));
      if (n == "not-weight-only") force_input.insert(var_name(c.list[1]));
    }
  }

  bool fail(const std::string& w) {
    if (why.empty()) why = w;
    return false;
  }

  const Shape* shape(ir::NodeId n) { return shape_of(g(), n); }

  // A random dimension; `copy_rank`/`pos` let it copy a bound variable's dimension.
  int64_t random_dim(int rank, size_t pos) {
    if (chance(0.6)) {
      std::vector<const Shape*> same;
      for (auto& [name, id] : inst.bind) {
        if (role[name] != Role::Tensor) continue;
        const Shape* s = shape(id);
        if (s && static_cast<int>(s->size()) == rank) same.push_back(s);
      }
      if (!same.empty()) return (*same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng)])[pos];
    }
    if (chance(0.08)) return 1;
    return pick<int64_t>({2, 3, 4, 4, 6, 8});
  }

  int64_t kernel_dim(bool even_ok) {
    if (!kernel_vars.empty() && chance(0.6)) {
      const Shape* s = shape(inst.bind[kernel_vars[std::uniform_int_distribution<size_t>(0, kernel_vars.size() - 1)(rng)]]);
      if (s && s->size() == 4) return (*s)[2 + static_cast<size_t>(uniform(0, 1))];
    }
    return even_ok ? pick<int64_t>({1, 2, 3, 3}) : pick<int64_t>({1, 3, 3});
  }

  std::optional<ir::NodeId> make_tensor_var(const std::string& name, const Hint& h) {
    int rank = h.rank;
    if (auto it = cond_rank.find(name); it != cond_rank.end()) rank = it->second;
    if (rank < 0) rank = static_cast<int>(uniform(1, 4));
    Shape s(static_cast<size_t>(rank));
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = static_cast<int>(h.dims.size()) == rank ? h.dims[i] : kFree;
      if (d == kFree) d = (h.kernel && i >= 2) ? kernel_dim(h.even_kernel) : random_dim(rank, i);
      s[i] = d;
    }
    if (h.bcast && rank > 0 && chance(0.2)) s[static_cast<size_t>(uniform(0, rank - 1))] = 1;
    if (h.bcast && rank > 1 && chance(0.05)) s.erase(s.begin());
    bool weight = force_weight.count(name) ? true : force_input.count(name) ? false : chance(h.weight ? 0.7 : 0.3);
    ir::NodeId id = inst.w.leaf(weight, s);
    inst.bind[name] = id;
    if (h.kernel) kernel_vars.push_back(name);
    return id;
  }

  // A parameter child at index `idx` of operator `op`; `ctx` carries what the choice needs.
  struct ParamCtx {
    int rank = -1;                // concat/split axis, transpose perm
    bool odd_kernel = true;       // pool padding
  };
  std::optional<ir::NodeId> param(const SExpr& e, Op op, int idx, const ParamCtx& ctx) {
    if (!is_var(e)) {
      if (!e.is_atom) return std::nullopt;
      return atom_is_int(e) ? g().num(std::stoll(e.atom)) : g().sym(e.atom);
    }
    std::string name = var_name(e);
    if (auto it = inst.bind.find(name); it != inst.bind.end()) return it->second;
    ir::NodeId id = 0;
    // Activations: the plain ones, and parameterized ones (exact float parameters; a negative
    // leaky slope and bounds that cut both sides).
    auto act = [&] {
      return g().sym(pick<std::string>({"none", "relu", "sigmoid", "tanh", "relu6", "clip_-1.5_0.25", "leaky_0.1"}));
    };
    auto param_act = [&] { return g().sym(pick<std::string>({"relu6", "clip_-1.5_0.25", "leaky_0.1", "leaky_-0.5"})); };
    switch (op) {
      case Op::Matmul: id = act(); break;
      case Op::Conv:
        if (idx <= 1) id = g().num(chance(0.7) ? 1 : 2);
        else if (idx == 2) id = g().sym(pick<std::string>({"same", "same", "valid", "p1_0_0_1"}));
        else id = act();
        break;
      case Op::Poolmax:
      case Op::Poolavg:
        if (idx <= 1) id = g().num(pick<int64_t>({1, 2, 3, 3}));
        else if (idx <= 3) id = g().num(pick<int64_t>({1, 2}));
        else if (idx == 4) id = g().sym(ctx.odd_kernel && chance(0.5) ? "same" : "valid");
        else id = g().num(pick<int64_t>({0, 1}));
        break;
      case Op::Concat:
      case Op::Split:
        if (ctx.rank <= 0) return std::nullopt;
        id = g().num(uniform(0, ctx.rank - 1));
        break;
      case Op::Transpose: {
        if (ctx.rank <= 0) return std::nullopt;
        std::vector<int64_t> perm(static_cast<size_t>(ctx.rank));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        id = ctx.rank == 1 ? g().num(perm[0]) : g().sym(dims_to_sym(perm));
        break;
      }
      case Op::Merge: id = g().num(2); break;
      case Op::Act: id = param_act(); break;
      default: return std::nullopt;
    }
    inst.bind[name] = id;
    return id;
  }

  std::optional<ir::NodeId> add(Op op, std::vector<ir::NodeId> kids) {
    ir::NodeId id = 0;
    std::string err;
    if (!g().try_add(ir::Node{op, std::move(kids), 0, {}}, &id, &err)) {
      fail(err);
      return std::nullopt;
    }
    return id;
  }

  std::optional<ir::NodeId> tensor(const SExpr& e, const Hint& h) {
    if (e.is_atom) {
      if (!is_var(e)) {
        if (e.atom == "none") return g().sym("none");
        fail("literal where a tensor is expected");
        return std::nullopt;
      }
      std::string name = var_name(e);
      if (auto it = inst.bind.find(name); it != inst.bind.end()) return it->second;
      if (role[name] == Role::Bias && h.rank == 1 && chance(0.35)) {
        ir::NodeId id = g().sym("none");
        inst.bind[name] = id;
        return id;
      }
      return make_tensor_var(name, h);
    }
    return op_node(e, h);
  }

  std::optional<ir::NodeId> op_node(const SExpr& e, const Hint& h) {
    auto op = head_op(e);
    if (!op) return std::nullopt;
    const auto& a = e.list;
    switch (*op) {
      case Op::Ewadd:
      case Op::Ewmul: {
        Hint ha = h;
        ha.bcast = true;
        auto x = tensor(a[1], ha);
        if (!x || !shape(*x)) return std::nullopt;
        Hint hb = h.rank >= 0 ? h : Hint::of(*shape(*x));
        hb.bcast = true;
        auto y = tensor(a[2], hb);
        if (!y) return std::nullopt;
        return add(*op, {*x, *y});
      }
      case Op::Relu:
      case Op::Tanh:
      case Op::Sigmoid: {
        auto x = tensor(a[1], h);
        if (!x) return std::nullopt;
        return add(*op, {*x});
      }
      case Op::Act: {
        auto f = param(a[1], *op, 0, {});
        auto x = tensor(a[2], h);
        if (!f || !x) return std::nullopt;
        return add(*op, {*f, *x});
      }
      case Op::Matmul: {
        auto act = param(a[1], *op, 0, {});
        int r = h.rank >= 2 ? h.rank : pick<int>({2, 2, 3});
        Hint ha = Hint::rank_only(r);
        for (int i = 0; i < r - 1; ++i) ha.dims[static_cast<size_t>(i)] = h.at(static_cast<size_t>(i));
        auto x = tensor(a[2], ha);
        if (!act || !x || !shape(*x) || shape(*x)->size() < 2) return std::nullopt;
        Shape sx = *shape(*x);
        int rb = (sx.size() == 3 && chance(0.5)) ? 2 : static_cast<int>(sx.size());
        Hint hb = Hint::rank_only(rb);
        hb.weight = true;
        for (int i = 0; i < rb - 2; ++i)
          hb.dims[static_cast<size_t>(i)] = sx[sx.size() - static_cast<size_t>(rb) + static_cast<size_t>(i)];
        hb.dims[static_cast<size_t>(rb - 2)] = sx.back();
        hb.dims[static_cast<size_t>(rb - 1)] = h.rank >= 2 ? h.at(static_cast<size_t>(h.rank - 1)) : kFree;
        auto w = tensor(a[3], hb);
        if (!w || !shape(*w) || shape(*w)->empty()) return std::nullopt;
        Hint hbias = Hint::rank_only(1);
        hbias.dims[0] = shape(*w)->back();
        hbias.weight = true;
        auto bias = tensor(a[4], hbias);
        if (!bias) return std::nullopt;
        return add(*op, {*act, *x, *w, *bias});
      }
      case Op::Conv: {
        auto sh = param(a[1], *op, 0, {}), sw = param(a[2], *op, 1, {}), pad = param(a[3], *op, 2, {}),
             act = param(a[4], *op, 3, {});
        if (!sh || !sw || !pad || !act) return std::nullopt;
        Hint hx = Hint::rank_only(4);
        hx.dims[0] = h.at(0);
        auto x = tensor(a[5], hx);
        if (!x || !shape(*x) || shape(*x)->size() != 4) return std::nullopt;
        int64_t cin = (*shape(*x))[1];
        int64_t groups = 1;
        if (chance(0.3)) groups = (cin % 2 == 0 && chance(0.6)) ? 2 : cin;
        Hint hw = Hint::rank_only(4);
        hw.kernel = true;
        hw.weight = true;
        hw.even_kernel = g().node(*pad).sym != "same";
        hw.dims[0] = h.at(1) != kFree ? h.at(1) : groups * pick<int64_t>({1, 2, 3});
        hw.dims[1] = cin / groups;
        auto w = tensor(a[6], hw);
        if (!w || !shape(*w) || shape(*w)->size() != 4) return std::nullopt;
        Hint hbias = Hint::rank_only(1);
        hbias.dims[0] = (*shape(*w))[0];
        hbias.weight = true;
        auto bias = tensor(a[7], hbias);
        if (!bias) return std::nullopt;
        return add(*op, {*sh, *sw, *pad, *act, *x, *w, *bias});
      }
      case Op::Poolmax:
      case Op::Poolavg: {
        std::vector<ir::NodeId> kids;
        size_t np = static_cast<size_t>(op_info(*op).num_params);
        for (size_t i = 0; i < np; ++i) {
          ParamCtx ctx;
          if (i == 4) ctx.odd_kernel = g().node(kids[0]).num % 2 == 1 && g().node(kids[1]).num % 2 == 1;
          auto p = param(a[i + 1], *op, static_cast<int>(i), ctx);
          if (!p) return std::nullopt;
          kids.push_back(*p);
        }
        Hint hx = Hint::rank_only(4);
        hx.dims[0] = h.at(0);
        hx.dims[1] = h.at(1);
        auto x = tensor(a[np + 1], hx);
        if (!x) return std::nullopt;
        kids.push_back(*x);
        return add(*op, kids);
      }
      case Op::Transpose: {
        ParamCtx ctx;
        ctx.rank = h.rank >= 1 ? h.rank : pick<int>({2, 3, 4});
        auto perm = param(a[1], *op, 0, ctx);
        if (!perm) return std::nullopt;
        auto pv = parse_dims(g().type(*perm));
        if (!pv) return std::nullopt;
        Hint hx = Hint::rank_only(static_cast<int>(pv->size()));
        for (size_t i = 0; i < pv->size(); ++i)
          if ((*pv)[i] >= 0 && static_cast<size_t>((*pv)[i]) < pv->size()) hx.dims[static_cast<size_t>((*pv)[i])] = h.at(i);
        auto x = tensor(a[2], hx);
        if (!x) return std::nullopt;
        return add(*op, {*perm, *x});
      }
      case Op::Reshape: {
        auto x = tensor(a[2], Hint::rank_only(pick<int>({2, 3, 4})));
        if (!x || !shape(*x)) return std::nullopt;
        ir::NodeId s;
        if (is_var(a[1]) && !inst.bind.count(var_name(a[1]))) {
          Shape t = *shape(*x);
          std::shuffle(t.begin(), t.end(), rng);
          if (t.size() > 1 && chance(0.5)) {  // merge the first two dimensions
            t[1] *= t[0];
            t.erase(t.begin());
          }
          s = t.size() == 1 ? g().num(t[0]) : g().sym(dims_to_sym(t));
          inst.bind[var_name(a[1])] = s;
        } else {
          auto p = is_var(a[1]) ? std::optional<ir::NodeId>(inst.bind[var_name(a[1])]) : param(a[1], *op, 0, {});
          if (!p) return std::nullopt;
          s = *p;
        }
        return add(*op, {s, *x});
      }
      case Op::Enlarge: {
        Hint hw = Hint::rank_only(4);
        hw.kernel = true;
        hw.weight = true;
        hw.dims[0] = h.at(0);
        hw.dims[1] = h.at(1);
        auto w = tensor(a[1], hw);
        Hint hr = Hint::rank_only(4);
        hr.kernel = true;
        hr.weight = true;
        hr.dims[2] = hr.dims[3] = 3;
        auto r = w ? tensor(a[2], hr) : std::nullopt;
        if (!w || !r) return std::nullopt;
        return add(*op, {*w, *r});
      }
      case Op::Concat: {
        ParamCtx ctx;
        ctx.rank = h.rank >= 1 ? h.rank : pick<int>({1, 2, 3, 4});
        auto ax = param(a[1], *op, 0, ctx);
        if (!ax) return std::nullopt;
        int64_t axis = g().node(*ax).num;
        int r = std::max<int>(ctx.rank, static_cast<int>(axis) + 1);
        Hint ha = h.rank == r ? h : Hint::rank_only(r);
        ha.bcast = false;
        if (axis >= 0 && axis < r) ha.dims[static_cast<size_t>(axis)] = kFree;
        auto x = tensor(a[2], ha);
        if (!x || !shape(*x)) return std::nullopt;
        Hint hb = Hint::of(*shape(*x));
        hb.weight = ha.weight;
        if (axis >= 0 && static_cast<size_t>(axis) < hb.dims.size()) hb.dims[static_cast<size_t>(axis)] = kFree;
        auto y = tensor(a[3], hb);
        if (!y) return std::nullopt;
        return add(*op, {*ax, *x, *y});
      }
      case Op::Split0:
      case Op::Split1: {
        const SExpr& s = a[1];
        if (head_op(s) != Op::Split) return fail("split_i of a non-split pattern"), std::nullopt;
        ParamCtx ctx;
        ctx.rank = h.rank >= 1 ? h.rank : pick<int>({1, 2, 3, 4});
        auto ax = param(s.list[1], Op::Split, 0, ctx);
        if (!ax) return std::nullopt;
        int64_t axis = g().node(*ax).num;
        Hint hx = h.rank >= 1 ? h : Hint::rank_only(std::max<int>(ctx.rank, static_cast<int>(axis) + 1));
        if (axis >= 0 && static_cast<size_t>(axis) < hx.dims.size()) hx.dims[static_cast<size_t>(axis)] = kFree;
        auto x = tensor(s.list.back(), hx);
        if (!x || !shape(*x)) return std::nullopt;
        const Shape& sx = *shape(*x);
        if (axis < 0 || axis >= static_cast<int64_t>(sx.size())) return fail("split axis out of range"), std::nullopt;
        ir::NodeId pos;
        if (is_sugar_split(s)) {
          auto b = split_boundary(g(), *x, axis);
          if (!b) return fail("no split-tree boundary on the left-hand side"), std::nullopt;
          pos = g().num(*b);
        } else if (is_var(s.list[2]) && !inst.bind.count(var_name(s.list[2]))) {
          int64_t n = sx[static_cast<size_t>(axis)];
          if (n < 2) return fail("split of a dimension of size 1"), std::nullopt;
          pos = g().num(uniform(1, n - 1));
          inst.bind[var_name(s.list[2])] = pos;
        } else {
          auto p = is_var(s.list[2]) ? std::optional<ir::NodeId>(inst.bind[var_name(s.list[2])])
                                     : param(s.list[2], Op::Split, 1, ctx);
          if (!p) return std::nullopt;
          pos = *p;
        }
        auto sp = add(Op::Split, {*ax, pos, *x});
        if (!sp) return std::nullopt;
        return add(*op, {*sp});
      }
      case Op::Merge: {
        auto count = param(a[1], *op, 0, {});
        if (!count) return std::nullopt;
        Hint hw = Hint::rank_only(4);
        hw.kernel = true;
        hw.weight = true;
        auto w = tensor(a[2], hw);
        if (!w) return std::nullopt;
        return add(*op, {*count, *w});
      }
      default: fail(std::string("generator does not support ") + std::string(op_name(*op))); return std::nullopt;
    }
  }
};

}  // namespace

Outcome draw(const RuleSpec& r, std::mt19937_64& rng, Instance* out) {
  Instance& inst = *out;
  inst = Instance{};
  inst.w.seed = rng();
  Gen gen{r, rng, inst, {}, {}, {}, {}, {}, {}};
  for (const auto& l : r.lhs) gen.scan_roles(l);
  gen.scan_conditions();
  for (const auto& l : r.lhs) {
    auto id = gen.op_node(l, Hint{});
    if (!id) {
      inst.why = gen.why;
      return Outcome::LhsIllTyped;
    }
    inst.lhs.push_back(*id);
  }
  if (!conditions_hold(inst.w.g, r, inst.bind, &inst.why)) return Outcome::ConditionFalse;
  for (size_t i = 0; i < r.rhs.size(); ++i) {
    auto id = substitute(inst.w.g, r.rhs[i], inst.bind, &inst.why);
    if (!id) return inst.why.rfind("no split-tree", 0) == 0 ? Outcome::NoBoundary : Outcome::RhsIllTyped;
    if (!(inst.w.g.type(*id) == inst.w.g.type(inst.lhs[i]))) {
      inst.why = "rhs " + inst.w.g.type(*id).str() + " vs lhs " + inst.w.g.type(inst.lhs[i]).str();
      return Outcome::TypeMismatch;
    }
    inst.rhs.push_back(*id);
  }
  return Outcome::Ok;
}

double compare(const Instance& inst, std::string* detail) {
  ir::Graph g = inst.w.g;
  std::vector<ir::NodeId> outs = inst.lhs;
  outs.insert(outs.end(), inst.rhs.begin(), inst.rhs.end());
  g.set_root(g.op(Op::Noop, outs));
  refexec::RunResult res = refexec::run(g, inst.w.weights, inst.w.inputs);
  size_t n = inst.lhs.size();
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const refexec::Tensor& a = res.outputs[i];
    const refexec::Tensor& b = res.outputs[n + i];
    if (a.shape != b.shape || a.size() != b.size()) {
      if (detail) *detail = "side " + std::to_string(i + 1) + ": shapes differ " + shape_str(a.shape) + " vs " + shape_str(b.shape);
      return INFINITY;
    }
    double maxa = 0, maxd = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      maxa = std::max(maxa, std::fabs(static_cast<double>(a.data[k])));
      double d = std::fabs(static_cast<double>(a.data[k]) - static_cast<double>(b.data[k]));
      if (std::isnan(d)) d = INFINITY;
      maxd = std::max(maxd, d);
    }
    double ratio = maxd / (1e-4 * (1 + maxa));
    if (ratio > worst) {
      worst = ratio;
      if (detail)
        *detail = "side " + std::to_string(i + 1) + ": max|lhs-rhs| = " + std::to_string(maxd) + ", max|lhs| = " +
                  std::to_string(maxa) + ", shape " + shape_str(a.shape);
    }
  }
  return worst;
}

}  // namespace tensat::rules::check
