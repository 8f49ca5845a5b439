// IdTable: a hash set of 32-bit ids whose keys live elsewhere (the e-graph's hash-cons).
//
// The e-graph stores every e-node once, in its node array; the hash-cons only has to map an
// e-node's value to its id. A std::unordered_map<ENode, ENodeId> kept a second copy of every
// e-node in a heap-allocated list entry, and a look-up chased bucket -> entry -> key. Here a
// slot is 8 bytes (id, 32 bits of the key's hash) in one flat array with linear probing: a
// look-up reads one or two adjacent slots and compares the key (through the caller's
// `equal(id)`) only on a hash match, so a miss usually touches no e-node at all.
//
// The caller supplies the hash on every call and must erase an id under the hash it was
// inserted with (the e-graph erases a node before re-canonicalizing it). Deletion shifts later
// entries back (no tombstones), so the table never degrades. At most half full; it grows by 4
// (an e-graph grows from hundreds to tens of thousands of e-nodes in one run: rehashing at
// every doubling cost more than the sparser table).
//
//   IdTable t;
//   t.insert(7, h);                                  // key 7 must not be present
//   uint32_t id = t.find(h, [&](uint32_t i) { return keys[i] == k; });   // or IdTable::kNone
//   t.erase(7, h);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tensat {

class IdTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// The id of the entry with hash `h` for which `equal(id)` holds, or kNone.
  template <class Equal>
  uint32_t find(uint64_t h, Equal&& equal) const {
    if (size_ == 0) return kNone;
    const uint32_t tag = fold(h);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.tag == tag && equal(s.id)) return s.id;
    }
  }

  /// Adds `id` under hash `h`; the caller guarantees no equal key is present.
  void insert(uint32_t id, uint64_t h) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 256 : slots_.size() * 4);
    place(Slot{id, fold(h)});
    ++size_;
  }

  /// Removes `id`, which was inserted under hash `h`. Returns false if it is not there.
  bool erase(uint32_t id, uint64_t h) {
    if (size_ == 0) return false;
    size_t i = fold(h) & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].id == kNone) return false;
      if (slots_[i].id == id) break;
    }
    // Backward shift: move later entries of the probe run into the hole when their home slot
    // is not cyclically in (hole, their position].
    for (size_t j = (i + 1) & mask_; slots_[j].id != kNone; j = (j + 1) & mask_) {
      const size_t home = slots_[j].tag & mask_;
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    --size_;
    return true;
  }

  /// Calls f(id) for every id (in table order).
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.id != kNone) f(s.id);
  }

  void clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
  }

 private:
  struct Slot {
    uint32_t id = kNone;
    uint32_t tag = 0;  ///< 32 bits of the hash: the home slot, and a cheap pre-check
  };
  static uint32_t fold(uint64_t h) { return static_cast<uint32_t>(h ^ (h >> 32)); }
  void place(Slot s) {
    size_t i = s.tag & mask_;
    while (slots_[i].id != kNone) i = (i + 1) & mask_;
    slots_[i] = s;
  }
  void rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old)
      if (s.id != kNone) place(s);
  }

  std::vector<Slot> slots_;  ///< power-of-two size
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tensat
