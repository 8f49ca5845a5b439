// Rule compilation and right-hand-side instantiation (see rewrite.h).
#include "egraph/rewrite.h"

#include <cassert>

namespace tensat {

namespace {

[[noreturn]] void rule_error(const RuleSpec& s, const std::string& msg) {
  throw RuleError(s.file + ":" + std::to_string(s.line) + ": rule " + s.name + ": " + msg);
}

}  // namespace

bool Rewrite::rhs_reads_split_tree() const {
  for (const auto& p : rhs)
    for (const auto& pn : p.nodes)
      if (pn.split_auto) return true;
  return false;
}

std::string Rewrite::str() const {
  std::string s = name + ": ";
  for (size_t i = 0; i < lhs.size(); ++i) s += (i ? " ; " : "") + lhs[i].str(vars);
  s += " => ";
  for (size_t i = 0; i < rhs.size(); ++i) s += (i ? " ; " : "") + rhs[i].str(vars);
  for (size_t i = 0; i < conditions.size(); ++i) s += (i ? ", " : " if ") + conditions[i].str(vars);
  return s;
}

Rewrite compile_rewrite(const RuleSpec& spec) {
  Rewrite rw;
  rw.name = spec.name;
  rw.file = spec.file;
  rw.line = spec.line;
  if (spec.lhs.empty()) rule_error(spec, "no left-hand side");
  if (spec.lhs.size() != spec.rhs.size())
    rule_error(spec, std::to_string(spec.lhs.size()) + " left-hand sides but " +
                         std::to_string(spec.rhs.size()) + " right-hand sides");
  try {
    for (const auto& e : spec.lhs) {
      rw.lhs.push_back(compile_pattern(e, rw.vars, /*rhs=*/false));
      if (rw.lhs.back().root().kind != PatNode::Kind::Op)
        rule_error(spec, "a left-hand side must be an operator term, not " + e.str());
    }
    for (const auto& e : spec.rhs) rw.rhs.push_back(compile_pattern(e, rw.vars, /*rhs=*/true));
    for (const auto& e : spec.conditions) rw.conditions.push_back(compile_condition(e, rw.vars));
  } catch (const RuleError& err) {
    rule_error(spec, err.what());
  }
  return rw;
}

std::vector<Rewrite> compile_rewrites(const std::vector<RuleSpec>& specs) {
  std::vector<Rewrite> out;
  out.reserve(specs.size());
  for (const auto& s : specs) out.push_back(compile_rewrite(s));
  return out;
}

std::string_view outcome_name(ApplyOutcome o) {
  switch (o) {
    case ApplyOutcome::Applied: return "applied";
    case ApplyOutcome::Unchanged: return "unchanged";
    case ApplyOutcome::FailedCondition: return "failed-condition";
    case ApplyOutcome::IllTyped: return "ill-typed";
    case ApplyOutcome::NoSplitBoundary: return "no-split-boundary";
    case ApplyOutcome::WouldCycle: return "would-cycle";
  }
  return "?";
}

std::optional<EClassId> Applier::literal_class(const EGraph& eg, const PatNode& pn) {
  if (literal_eg_ != &eg) {
    literals_.assign(kLiteralSlots, LiteralSlot{});
    literal_eg_ = &eg;
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(&pn);
  LiteralSlot& slot = literals_[((a >> 4) * 0x9e3779b97f4a7c15ULL) >> 56];  // 8 bits: 256 slots
  if (slot.pn == &pn) return eg.find(slot.cls);
  auto c = pn.kind == PatNode::Kind::Num ? eg.lookup_num(pn.num) : eg.lookup_sym(pn.sym);
  if (c) slot = LiteralSlot{&pn, *c};  // a leaf's class never goes away
  return c;
}

ApplyOutcome Applier::plan(const EGraph& eg, const Pattern& p, const EClassId* subst, Plan& out, bool with_data) {
  out.slots.clear();
  out.slots.reserve(p.nodes.size() * 2 + 1);
  // Slot::data points into `own`: reserve so that it never reallocates during this plan.
  if (out.own.size() < p.nodes.size() * 2 + 1) out.own.resize(p.nodes.size() * 2 + 1);
  out.nown = 0;
  map_.assign(p.nodes.size(), -1);
  auto existing = [&](EClassId c) {
    Slot& s = out.slots.emplace_back();  // reserved above: no reallocation
    s.cls = eg.find(c);
    s.data = &eg.eclass_canonical(s.cls).data;
    return static_cast<int>(out.slots.size()) - 1;
  };
  // A new node: its data is computed in place, into the plan's next `own` entry (reusing its
  // storage); -1 if it does not type-check.
  auto add_new = [&](Slot s, const std::vector<const ClassData*>& kids) {
    ClassData& own = out.own[out.nown];
    if (!make_data_into(own, s.op, s.num, s.sym, kids)) return -1;
    s.own = static_cast<int>(out.nown++);
    s.data = &own;
    out.slots.push_back(s);
    return static_cast<int>(out.slots.size()) - 1;
  };
  // A Num/Sym literal: its class if present, else a new leaf.
  auto new_leaf = [&](bool is_num, int64_t num, std::string_view sym) -> int {
    Slot s;
    s.op = is_num ? Op::Num : Op::Sym;
    s.num = is_num ? num : 0;
    s.sym = sym;
    if (!with_data) {
      out.slots.push_back(s);
      return static_cast<int>(out.slots.size()) - 1;
    }
    kid_data_.clear();
    return add_new(s, kid_data_);  // a literal always type-checks
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PatNode& pn = p.nodes[i];
    int slot = -1;
    switch (pn.kind) {
      case PatNode::Kind::Var: slot = existing(subst[pn.var]); break;
      case PatNode::Kind::Num:
      case PatNode::Kind::Sym:
        if (auto c = literal_class(eg, pn)) slot = existing(*c);
        else slot = new_leaf(pn.kind == PatNode::Kind::Num, pn.num, pn.sym);
        break;
      case PatNode::Kind::Op: {
        int kids[8];
        int nk = 0;
        if (pn.split_auto) {
          assert(with_data && "(split AXIS x) reads a split tree");
          int axis_slot = map_[static_cast<size_t>(pn.children[0])];
          int x_slot = map_[static_cast<size_t>(pn.children[1])];
          const ClassData& ad = *out.slots[static_cast<size_t>(axis_slot)].data;
          if (ad.type.kind != Kind::Int) return ApplyOutcome::IllTyped;
          auto pos = out.slots[static_cast<size_t>(x_slot)].data->boundary(ad.type.num);
          if (!pos) return ApplyOutcome::NoSplitBoundary;
          auto pc = eg.lookup_num(*pos);
          int pos_slot = pc ? existing(*pc) : new_leaf(true, *pos, {});
          kids[0] = axis_slot;
          kids[1] = pos_slot;
          kids[2] = x_slot;
          nk = 3;
        } else {
          if (pn.children.size() > 8) return ApplyOutcome::IllTyped;
          for (int c : pn.children) kids[nk++] = map_[static_cast<size_t>(c)];
        }
        bool all_existing = true;
        for (int k = 0; k < nk; ++k) all_existing = all_existing && out.slots[static_cast<size_t>(kids[k])].cls.valid();
        if (all_existing) {
          probe_.op = pn.op;
          probe_.num = 0;
          probe_.children.clear();
          for (int k = 0; k < nk; ++k) probe_.children.push_back(out.slots[static_cast<size_t>(kids[k])].cls);
          if (auto c = eg.lookup_canonical(probe_)) {
            slot = existing(*c);
            break;
          }
        }
        Slot s;
        s.op = pn.op;
        s.nkids = static_cast<int16_t>(nk);
        for (int k = 0; k < nk; ++k) s.kids[k] = static_cast<int16_t>(kids[k]);
        if (!with_data) {  // structure only: which nodes exist (data stays null)
          out.slots.push_back(s);
          slot = static_cast<int>(out.slots.size()) - 1;
          break;
        }
        kid_data_.clear();
        for (int k = 0; k < nk; ++k) kid_data_.push_back(out.slots[static_cast<size_t>(kids[k])].data);
        // The sides of a multi-pattern rule share subterms ((split_0 (split 1 T)) and
        // (split_1 (split 1 T))): a new node equal to one an earlier side planned (same
        // operator, same existing or same new children) gets that node's data, which
        // make_data would compute again (same inputs, same result).
        if (const ClassData* same = planned_earlier(out, s, kid_data_)) {
          s.data = same;
          out.slots.push_back(s);
          slot = static_cast<int>(out.slots.size()) - 1;
          break;
        }
        slot = add_new(s, kid_data_);
        if (slot < 0) return ApplyOutcome::IllTyped;
        break;
      }
    }
    map_[i] = slot;
  }
  out.root = map_.back();
  return ApplyOutcome::Applied;
}

const ClassData* Applier::planned_earlier(const Plan& cur, const Slot& s,
                                          const std::vector<const ClassData*>& kid_data) const {
  for (const Plan* p = plans_.data(); p != &cur; ++p) {
    for (const Slot& e : p->slots) {
      if (e.cls.valid() || e.op != s.op || e.nkids != s.nkids || e.nkids == 0) continue;
      bool same = true;
      for (int k = 0; k < s.nkids && same; ++k) {
        const Slot& a = p->slots[static_cast<size_t>(e.kids[k])];
        const Slot& b = cur.slots[static_cast<size_t>(s.kids[k])];
        // Existing children: the same class. New ones: the same planned node, whose data
        // (an earlier side's, shared the same way) identifies it.
        same = a.cls.valid() ? a.cls == b.cls : !b.cls.valid() && a.data == kid_data[static_cast<size_t>(k)];
      }
      if (same) return e.data;
    }
  }
  return nullptr;
}

EClassId Applier::commit(EGraph& eg, Plan& plan, bool fresh) {
  for (auto& s : plan.slots) {
    if (s.cls.valid()) continue;
    ENode n;
    n.op = s.op;
    if (s.op == Op::Num) n.num = s.num;
    else if (s.op == Op::Sym) n.num = eg.intern(s.sym);
    n.children.reserve(static_cast<size_t>(s.nkids));
    for (int k = 0; k < s.nkids; ++k) n.children.push_back(plan.slots[static_cast<size_t>(s.kids[k])].cls);
    if (fresh) {
      assert(s.own >= 0 && "a fresh plan computed its own data (only later sides share)");
      s.cls = eg.add_planned(std::move(n), std::move(plan.own[static_cast<size_t>(s.own)]));
      continue;
    }
    EClassId c;
    [[maybe_unused]] bool ok = eg.try_add(std::move(n), &c);
    assert(ok && "planned node failed to type-check");
    s.cls = c;
  }
  return plan.slots[static_cast<size_t>(plan.root)].cls;
}

bool Applier::cycles(const EGraph& eg, size_t n, const EClassId* roots, CycleGuard& guard) {
  for (size_t i = 0; i < n; ++i) {
    const Plan& pl = plans_[i];
    const Slot& r = pl.slots[static_cast<size_t>(pl.root)];
    EClassId matched = eg.find(roots[i]);
    if (r.cls.valid()) {
      if (r.cls == matched) continue;
      pointed_.clear();
      if (guard.would_cycle(eg, matched, pointed_, r.cls)) return true;
      continue;
    }
    pointed_.clear();
    for (const auto& s : pl.slots) {
      if (s.cls.valid()) continue;
      for (int k = 0; k < s.nkids; ++k) {
        const Slot& kid = pl.slots[static_cast<size_t>(s.kids[k])];
        if (kid.cls.valid() && kid.data->type.kind != Kind::Int && kid.data->type.kind != Kind::Sym)
          pointed_.push_back(kid.cls);
      }
    }
    if (guard.would_cycle(eg, matched, pointed_, std::nullopt)) return true;
  }
  return false;
}

ApplyOutcome Applier::apply(EGraph& eg, const Rewrite& rw, const EClassId* roots,
                            const EClassId* subst, CycleGuard* guard, bool typed_before) {
  for (const auto& c : rw.conditions)
    if (!check_condition(eg, c, subst)) return ApplyOutcome::FailedCondition;
  const size_t n = rw.rhs.size();
  if (plans_.size() < n) plans_.resize(n);
  // A match that got this far before (same rule, same canonical classes) type-checked then,
  // and types never change: if its right-hand side reads no split tree, only the cycle
  // check's answer can differ. Ask it first from the plan's structure (which nodes exist),
  // skipping the analysis data of new nodes; most such matches are refused again.
  if (typed_before && guard && !rw.rhs_reads_split_tree()) {
    bool planned = true;
    for (size_t i = 0; i < n; ++i) plans_[i].slots.clear();
    for (size_t i = 0; i < n && planned; ++i)
      planned = plan(eg, rw.rhs[i], subst, plans_[i], /*with_data=*/false) == ApplyOutcome::Applied;
    if (planned && cycles(eg, n, roots, *guard)) return ApplyOutcome::WouldCycle;
  }
  for (size_t i = 0; i < n; ++i) plans_[i].slots.clear();  // planned_earlier reads sides < i
  for (size_t i = 0; i < n; ++i) {
    ApplyOutcome o = plan(eg, rw.rhs[i], subst, plans_[i], /*with_data=*/true);
    if (o != ApplyOutcome::Applied) return o;
    const Slot& r = plans_[i].slots[static_cast<size_t>(plans_[i].root)];
    if (r.data->type != eg.type(roots[i])) return ApplyOutcome::IllTyped;
  }
  if (guard && cycles(eg, n, roots, *guard)) return ApplyOutcome::WouldCycle;
  bool changed = false;
  for (size_t i = 0; i < n; ++i) {
    size_t before = eg.num_nodes();
    EClassId r = commit(eg, plans_[i], /*fresh=*/!changed && i == 0);
    changed = changed || eg.num_nodes() != before;
    changed = eg.merge_checked(roots[i], r, rw.name) || changed;
  }
  // A multi-pattern side that is one part of a split, (split_i (split AXIS POS t)), also gets
  // the other part: a split is one tuple-valued operation (TENSAT's split), and rules that
  // read a part of a merged product (matmul-split0-weight after matmul-merge3) need it to
  // exist. The sibling is a new class nothing points to: it can close no cycle.
  if (n > 1) {
    for (size_t i = 0; i < n; ++i) {
      const Pattern& pat = rw.rhs[i];
      const PatNode& top = pat.nodes.back();
      if (top.kind != PatNode::Kind::Op || (top.op != Op::Split0 && top.op != Op::Split1)) continue;
      const Slot& part = plans_[i].slots[static_cast<size_t>(plans_[i].root)];
      if (part.nkids != 1) continue;  // the part existed: planned as its class, no children
      const EClassId split = plans_[i].slots[static_cast<size_t>(part.kids[0])].cls;
      ENode sib;
      sib.op = top.op == Op::Split0 ? Op::Split1 : Op::Split0;
      sib.children.push_back(eg.find(split));
      const size_t before = eg.num_nodes();
      EClassId c;
      if (eg.try_add(std::move(sib), &c)) changed = changed || eg.num_nodes() != before;
    }
  }
  return changed ? ApplyOutcome::Applied : ApplyOutcome::Unchanged;
}

}  // namespace tensat
