// MatchMemo: a set of matches (rule, roots, substitution over canonical class ids) as 64-bit
// fingerprints, for the runner (runner.h).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "egraph/egraph.h"

namespace tensat {

// The runner keeps two per rule:
//   - matches whose application is known to be a no-op: one applied or found unchanged before
//     gives the same e-nodes again (hash-consing), so it is Unchanged; an ill-typed one stays
//     ill-typed (class types never change). Outcomes that can change (conditions on
//     weight_only, split trees, the cycle filter) are not remembered there;
//   - matches the cycle guard refused: they type-checked, so the applier may ask the guard
//     again before computing analysis data (Applier::apply's typed_before).
// A fingerprint collision can only skip an application or call an ill-typed match refused:
// both are no-ops, so it is always sound.
class MatchMemo {
 public:
  static uint64_t key(const EGraph& eg, size_t rule, const EClassId* roots, size_t nroots,
                      const EClassId* subst, size_t nvars) {
    // Each (position, class) pair is mixed on its own, so that the mixes run in parallel
    // rather than as one long dependency chain; the position keeps the key order-sensitive.
    uint64_t h = 0;
    uint64_t pos = 0;
    for (size_t i = 0; i < nroots; ++i, ++pos) h ^= mix((pos << 32) ^ eg.find(roots[i]).v);
    for (size_t i = 0; i < nvars; ++i, ++pos) h ^= mix((pos << 32) ^ (uint64_t{1} << 63) ^ eg.find(subst[i]).v);
    return mix(h ^ mix(0x9e3779b97f4a7c15ULL ^ rule));
  }
  bool known(uint64_t k) const {
    if (slots_.empty()) return false;
    k |= 1;  // 0 marks an empty slot
    for (size_t i = k & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return true;
      if (slots_[i] == 0) return false;
    }
  }
  void remember(uint64_t k) {
    // Grows by 4: a rule's table goes from empty to thousands of keys in one iteration, and
    // rehashing at every doubling cost more than the look-ups.
    if ((size_ + 1) * 2 > slots_.size()) grow(slots_.size() * 4);
    if (insert(k | 1)) ++size_;
  }

 private:
  static uint64_t mix(uint64_t x) {  // splitmix64 finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // Open addressing, linear probing, at most half full: no allocation per entry.
  bool insert(uint64_t k) {
    for (size_t i = k & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return false;
      if (slots_[i] == 0) {
        slots_[i] = k;
        return true;
      }
    }
  }
  void grow(size_t at_least) {  // to a power of two, at least 256 slots
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(std::bit_ceil(std::max<size_t>(256, at_least)), 0);
    for (uint64_t k : old)
      if (k) insert(k);
  }
  std::vector<uint64_t> slots_;
  size_t size_ = 0;
};

}  // namespace tensat
