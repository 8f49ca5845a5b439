// Deterministic random tensors (see tensor.h).
#include "exec/tensor.h"

namespace tensat::exec {

namespace {
// SplitMix64: a counter-based generator, so element i depends only on (seed, i).
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Tensor random_tensor(const Shape& shape, uint64_t seed, float lo, float hi) {
  Tensor t(shape);
  const uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < t.size(); ++i) {
    // 24 random bits -> a float in [0, 1) exactly representable, so lo + u*(hi-lo) < hi
    // for the usual ranges.
    float u = static_cast<float>(splitmix64(base + i) >> 40) * (1.0f / 16777216.0f);
    t.data[i] = lo + u * (hi - lo);
  }
  return t;
}

}  // namespace tensat::exec
