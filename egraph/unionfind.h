// Union-find over e-class ids with path compression (egg's unionfind.rs).
//
// The caller decides which root survives a union (the e-graph keeps the older class as
// root), so `union_roots` takes two roots and makes the second point at the first.
#pragma once

#include <vector>

#include "egraph/ids.h"

namespace tensat {

class UnionFind {
 public:
  /// Creates a fresh singleton set; its id is the next integer.
  EClassId make_set();
  size_t size() const { return parents_.size(); }
  void reserve(size_t n) { parents_.reserve(n); }

  /// Canonical representative, without compressing paths (usable on a const e-graph).
  EClassId find(EClassId x) const {  // inline: the hottest call of the engine
    uint32_t c = x.v;
    while (parents_[c] != c) c = parents_[c];
    return EClassId(c);
  }
  /// Canonical representative, compressing the path on the way.
  EClassId find_mut(EClassId x);
  /// Makes root `child` point at root `root`; both must be roots. Returns root.
  EClassId union_roots(EClassId root, EClassId child);
  bool is_root(EClassId x) const { return parents_[x.v] == x.v; }
  /// Points every id directly at its root (after a rebuild, so that find() is one step).
  void compress_all();

 private:
  std::vector<uint32_t> parents_;
};

}  // namespace tensat
