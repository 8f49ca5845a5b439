// Arena planning (see arena.h).
#include "gpu_cost/arena.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace tensat::gpu {

namespace {

size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

bool lifetimes_meet(const ArenaPlanner::Buffer& a, const ArenaPlanner::Buffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

int ArenaPlanner::add(size_t bytes, int step) {
  assert(step >= 0);
  buffers_.push_back(Buffer{bytes, step, step});
  to_end_.push_back(false);
  last_step_ = std::max(last_step_, step);
  return static_cast<int>(buffers_.size()) - 1;
}

void ArenaPlanner::use(int b, int step) {
  Buffer& buf = buffers_.at(static_cast<size_t>(b));
  assert(step >= buf.first && "a buffer is read after the step that writes it");
  buf.last = std::max(buf.last, step);
  last_step_ = std::max(last_step_, step);
}

void ArenaPlanner::keep_to_end(int b) { to_end_.at(static_cast<size_t>(b)) = true; }

ArenaPlanner::Plan ArenaPlanner::plan(size_t alignment) const {
  assert(alignment > 0 && (alignment & (alignment - 1)) == 0);
  std::vector<Buffer> bufs = buffers_;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (to_end_[i]) bufs[i].last = last_step_;
  Plan p;
  p.buffers = bufs;
  p.offsets.assign(bufs.size(), 0);
  std::vector<size_t> order(bufs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties by definition order, so the plan is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
  std::vector<size_t> placed;  // indices of placed buffers
  struct Span {
    size_t begin, end;
  };
  std::vector<Span> busy;
  for (size_t i : order) {
    const size_t size = align_up(bufs[i].bytes, alignment);
    p.sum_bytes += size;
    if (size == 0) continue;  // empty values need no memory (offset 0, never dereferenced)
    busy.clear();
    for (size_t j : placed)
      if (lifetimes_meet(bufs[i], bufs[j])) busy.push_back({p.offsets[j], p.offsets[j] + align_up(bufs[j].bytes, alignment)});
    std::sort(busy.begin(), busy.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    // Best fit: the smallest gap between busy spans that holds the buffer; else after them all.
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Span& s : busy) {
      if (s.begin > cursor && s.begin - cursor >= size && s.begin - cursor < best_gap) {
        best = cursor;
        best_gap = s.begin - cursor;
      }
      cursor = std::max(cursor, s.end);
    }
    p.offsets[i] = best != SIZE_MAX ? best : cursor;
    p.total_bytes = std::max(p.total_bytes, p.offsets[i] + size);
    placed.push_back(i);
  }
  return p;
}

bool check_arena(const ArenaPlanner::Plan& plan, size_t alignment, std::string* why) {
  const std::vector<ArenaPlanner::Buffer>& bufs = plan.buffers;
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (plan.offsets.size() != bufs.size()) return fail("one offset per buffer expected");
  if (plan.total_bytes > plan.sum_bytes) return fail("the arena is larger than all buffers together");
  for (size_t i = 0; i < bufs.size(); ++i) {
    const size_t size = align_up(bufs[i].bytes, alignment);
    if (plan.offsets[i] % alignment) return fail("buffer " + std::to_string(i) + " is not aligned");
    if (size && plan.offsets[i] + size > plan.total_bytes) return fail("buffer " + std::to_string(i) + " ends past the arena");
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      const size_t sj = align_up(bufs[j].bytes, alignment);
      if (!size || !sj || !lifetimes_meet(bufs[i], bufs[j])) continue;
      if (plan.offsets[i] < plan.offsets[j] + sj && plan.offsets[j] < plan.offsets[i] + size)
        return fail("buffers " + std::to_string(i) + " and " + std::to_string(j) + " are live together and overlap");
    }
  }
  return true;
}

}  // namespace tensat::gpu
