// ENode: an operator applied to child e-classes, a hashable value (egg's Language).
//
// Parameter leaves carry their value inline: a Num node its integer in `num`, a Sym node the
// id of its interned string (EGraph::intern) in `num`. Every other node has num == 0.
// Parameters of operators are ordinary children: classes that hold a Num or Sym leaf.
//
// Children are stored inline up to 7 (small_vec.h): every operator but noop and opaque fits,
// so an e-node is one 64-byte block without a heap allocation of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "egraph/ids.h"
#include "lang/op.h"
#include "egraph/small_vec.h"

namespace tensat {

/// Child classes of an e-node: inline up to kInlineChildren.
inline constexpr uint32_t kInlineChildren = 7;
using ChildList = SmallVec<EClassId, kInlineChildren>;

struct ENode {
  Op op = Op::Num;
  int64_t num = 0;  ///< Num: the value; Sym: interned symbol id; else 0
  ChildList children;

  bool operator==(const ENode&) const = default;
  bool is_leaf() const { return children.empty(); }

  static ENode make_num(int64_t v) { return ENode{Op::Num, v, {}}; }
  static ENode make_sym(uint32_t sym_id) { return ENode{Op::Sym, static_cast<int64_t>(sym_id), {}}; }
  static ENode make(Op op, std::initializer_list<EClassId> children) { return ENode{op, 0, ChildList(children)}; }
  static ENode make(Op op, const std::vector<EClassId>& children) { return ENode{op, 0, ChildList(children)}; }
};

struct ENodeHash {
  // The e-graph's hash-cons (id_table.h) keeps 32 bits of this per entry: fold the high bits
  // in well, class ids are small consecutive integers.
  size_t operator()(const ENode& n) const {
    size_t h = static_cast<size_t>(n.op) * 0x100000001b3ULL;
    h = hash_mix(h, static_cast<size_t>(n.num));
    for (auto c : n.children) h = hash_mix(h, c.v);
    h ^= h >> 33;  // avalanche: class ids are small consecutive integers
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
  }
};

}  // namespace tensat
