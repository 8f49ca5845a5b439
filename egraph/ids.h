// Strong ids of the e-graph: EClassId names an e-class, ENodeId an e-node.
//
// Both are small value types over uint32_t so that tables are flat vectors indexed by id and
// a class id cannot be passed where a node id is meant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace tensat {

struct EClassId {
  uint32_t v = std::numeric_limits<uint32_t>::max();
  constexpr EClassId() = default;
  constexpr explicit EClassId(uint32_t x) : v(x) {}
  constexpr bool valid() const { return v != std::numeric_limits<uint32_t>::max(); }
  constexpr auto operator<=>(const EClassId&) const = default;
};

struct ENodeId {
  uint32_t v = std::numeric_limits<uint32_t>::max();
  constexpr ENodeId() = default;
  constexpr explicit ENodeId(uint32_t x) : v(x) {}
  constexpr bool valid() const { return v != std::numeric_limits<uint32_t>::max(); }
  constexpr auto operator<=>(const ENodeId&) const = default;
};

inline size_t hash_mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

}  // namespace tensat

template <>
struct std::hash<tensat::EClassId> {
  size_t operator()(tensat::EClassId id) const noexcept { return std::hash<uint32_t>()(id.v); }
};
template <>
struct std::hash<tensat::ENodeId> {
  size_t operator()(tensat::ENodeId id) const noexcept { return std::hash<uint32_t>()(id.v); }
};
