// Union-find implementation.
#include "egraph/unionfind.h"

#include <cassert>

namespace tensat {

EClassId UnionFind::make_set() {
  uint32_t id = static_cast<uint32_t>(parents_.size());
  parents_.push_back(id);
  return EClassId(id);
}

EClassId UnionFind::find_mut(EClassId x) {
  uint32_t root = x.v;
  while (parents_[root] != root) root = parents_[root];
  uint32_t c = x.v;
  while (parents_[c] != root) {
    uint32_t next = parents_[c];
    parents_[c] = root;
    c = next;
  }
  return EClassId(root);
}

void UnionFind::compress_all() {
  // When roots are the smallest ids of their sets (the e-graph's policy), every parent below i
  // is already compressed, so each find() here takes at most two steps.
  for (uint32_t i = 0; i < parents_.size(); ++i) parents_[i] = find(EClassId(i)).v;
}

EClassId UnionFind::union_roots(EClassId root, EClassId child) {
  assert(is_root(root) && is_root(child));
  parents_[child.v] = root.v;
  return root;
}

}  // namespace tensat
