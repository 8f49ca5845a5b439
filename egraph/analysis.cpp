// E-class analysis: make and merge (see analysis.h).
#include "egraph/analysis.h"

#include <algorithm>
#include <array>

namespace tensat {

namespace {

SplitTree leaf(int64_t size) {
  // Leaves are immutable and compared by value: hand out a shared one per size (most concats
  // of a model have operands of a few sizes), saving an allocation per concat operand.
  thread_local std::array<SplitTree, 64> cache;
  SplitTree& slot = cache[static_cast<uint64_t>(size) * 0x9e3779b97f4a7c15ULL >> 58];
  if (slot && slot->size == size) return slot;
  auto n = std::make_shared<SplitNode>();
  n->size = size;
  slot = n;
  return n;
}

SplitTree inner(SplitTree l, SplitTree r) {
  auto n = std::make_shared<SplitNode>();
  n->size = l->size + r->size;
  n->left = std::move(l);
  n->right = std::move(r);
  return n;
}

void set_tree(ClassData& d, size_t axis, SplitTree t) {
  if (!t || t->is_leaf()) return;
  if (d.split.size() <= axis) {
    // Room for every axis at once: trees are set axis by axis, and growing one axis at a time
    // reallocated each time.
    const size_t rank = d.type.is_tensor() ? d.type.shape().size() : 0;
    if (d.split.capacity() <= axis) d.split.reserve(std::max(axis + 1, rank));
    d.split.resize(axis + 1);
  }
  d.split[axis] = std::move(t);
}

size_t rank_of(const ClassData& d) { return d.type.is_tensor() ? d.type.shape().size() : 0; }

}  // namespace

bool split_tree_equal(const SplitTree& a, const SplitTree& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->size == b->size && split_tree_equal(a->left, b->left) &&
         split_tree_equal(a->right, b->right);
}

std::string split_tree_str(const SplitTree& t) {
  if (!t) return "-";
  std::string s = "(" + std::to_string(t->size);
  if (!t->is_leaf()) s += " " + split_tree_str(t->left) + " " + split_tree_str(t->right);
  return s + ")";
}

std::optional<int64_t> ClassData::boundary(int64_t axis) const {
  SplitTree t = tree(axis);
  if (!t || t->is_leaf()) return std::nullopt;
  return t->left->size;
}

std::optional<ClassData> make_data(Op op, int64_t num, std::string_view sym,
                                   const std::vector<const ClassData*>& children,
                                   std::string* error) {
  ClassData d;
  if (!make_data_into(d, op, num, sym, children, error)) return std::nullopt;
  return d;
}

bool make_data_into(ClassData& d, Op op, int64_t num, std::string_view sym,
                    const std::vector<const ClassData*>& children, std::string* error) {
  thread_local std::vector<const ValueType*> types;
  types.clear();
  for (auto* c : children) types.push_back(&c->type);
  InferResult r = infer_type(op, num, sym, types);
  if (!r) {
    if (error) *error = std::move(r.error);
    return false;
  }
  d.type = std::move(*r.type);
  d.split.clear();  // keeps its capacity
  d.split_axis = -1;

  // weight_only
  bool all = true;
  for (auto* c : children) all = all && c->weight_only;
  d.weight_only = is_weight_only(op, all);

  // split trees
  switch (op) {
    case Op::Concat: {
      auto axis = static_cast<size_t>(children[0]->type.num);
      const ClassData& a = *children[1];
      const ClassData& b = *children[2];
      SplitTree ta = a.tree(static_cast<int64_t>(axis)), tb = b.tree(static_cast<int64_t>(axis));
      if (!ta) ta = leaf(a.type.shape()[axis]);
      if (!tb) tb = leaf(b.type.shape()[axis]);
      size_t rank = rank_of(d);
      for (size_t ax = 0; ax < rank; ++ax) {
        if (ax == axis) {
          set_tree(d, ax, inner(ta, tb));
        } else if (split_tree_equal(a.tree(static_cast<int64_t>(ax)), b.tree(static_cast<int64_t>(ax)))) {
          set_tree(d, ax, a.tree(static_cast<int64_t>(ax)));
        }
      }
      break;
    }
    case Op::Relu:
    case Op::Tanh:
    case Op::Sigmoid: d.split = children[0]->split; break;
    case Op::Transpose: {
      auto perm = parse_dims(children[0]->type);
      const ClassData& x = *children[1];
      if (perm) {
        for (size_t i = 0; i < perm->size(); ++i) set_tree(d, i, x.tree((*perm)[i]));
      }
      break;
    }
    case Op::Conv:
      set_tree(d, 0, children[4]->tree(0));  // batch items are convolved independently
      set_tree(d, 1, children[5]->tree(0));  // output channel o is computed by w[o]
      break;
    case Op::Poolmax:
    case Op::Poolavg: {  // per batch item and per channel
      const ClassData& x = *children.back();
      set_tree(d, 0, x.tree(0));
      set_tree(d, 1, x.tree(1));
      break;
    }
    case Op::Matmul: {
      const ClassData& a = *children[1];
      const ClassData& b = *children[2];
      size_t ra = rank_of(a), rb = rank_of(b), rd = rank_of(d);
      if (ra >= 2 && rd >= 2) set_tree(d, rd - 2, a.tree(static_cast<int64_t>(ra - 2)));
      if (rb > 0 && rd > 0) set_tree(d, rd - 1, b.tree(static_cast<int64_t>(rb - 1)));
      break;
    }
    case Op::Split: {
      int64_t axis = children[0]->type.num, pos = children[1]->type.num;
      const ClassData& x = *children[2];
      d.split_axis = static_cast<int>(axis);
      d.split = x.split;
      if (x.boundary(axis) != pos && static_cast<size_t>(axis) < d.split.size())
        d.split[static_cast<size_t>(axis)] = nullptr;
      break;
    }
    case Op::Split0:
    case Op::Split1: {
      const ClassData& t = *children[0];
      d.split = t.split;
      if (t.split_axis >= 0 && static_cast<size_t>(t.split_axis) < d.split.size()) {
        auto& slot = d.split[static_cast<size_t>(t.split_axis)];
        if (slot) {
          SplitTree sub = op == Op::Split0 ? slot->left : slot->right;
          slot = (sub && !sub->is_leaf()) ? sub : nullptr;
        }
      }
      break;
    }
    default: break;
  }
  // Trim trailing empty axes so equal data compares equal.
  while (!d.split.empty() && !d.split.back()) d.split.pop_back();
  return true;
}

std::pair<bool, bool> merge_data(ClassData& a, const ClassData& b) {
  bool a_changed = false, b_differs = false;
  if (b.weight_only && !a.weight_only) {
    a.weight_only = true;
    a_changed = true;
  } else if (a.weight_only && !b.weight_only) {
    b_differs = true;
  }
  size_t n = std::max(a.split.size(), b.split.size());
  for (size_t ax = 0; ax < n; ++ax) {
    SplitTree ta = ax < a.split.size() ? a.split[ax] : nullptr;
    SplitTree tb = ax < b.split.size() ? b.split[ax] : nullptr;
    if (!ta && tb) {
      if (a.split.size() <= ax) a.split.resize(ax + 1);
      a.split[ax] = tb;
      a_changed = true;
    } else if (ta && !split_tree_equal(ta, tb)) {
      b_differs = true;  // conflict or b had none: the existing tree is kept
    }
  }
  if (a.split_axis < 0 && b.split_axis >= 0) {
    a.split_axis = b.split_axis;
    a_changed = true;
  } else if (a.split_axis != b.split_axis) {
    b_differs = true;
  }
  return {a_changed, b_differs};
}

}  // namespace tensat
