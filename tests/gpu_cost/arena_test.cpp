// The arena planner (gpu_cost/arena.h), anywhere: buffers live at the same time never share
// bytes, memory is reused once a value is dead, aliases and outputs extend lifetimes, and the
// invariant checker itself catches a bad plan.
#include <gtest/gtest.h>

#include <random>

#include "gpu_cost/arena.h"

namespace tensat::gpu {
namespace {

// The test's own overlap check (independent of check_arena).
void expect_disjoint_when_live(const ArenaPlanner::Plan& p) {
  for (size_t i = 0; i < p.buffers.size(); ++i)
    for (size_t j = i + 1; j < p.buffers.size(); ++j) {
      const auto &a = p.buffers[i], &b = p.buffers[j];
      if (a.bytes == 0 || b.bytes == 0 || a.last < b.first || b.last < a.first) continue;
      const bool apart = p.offsets[i] + a.bytes <= p.offsets[j] || p.offsets[j] + b.bytes <= p.offsets[i];
      EXPECT_TRUE(apart) << "buffers " << i << " and " << j << " overlap while both live";
    }
}

TEST(Arena, ChainReusesMemory) {
  // x0 -> x1 -> x2 -> x3, each 1 KiB, each read only by the next step: two buffers suffice.
  ArenaPlanner a;
  int prev = a.add(1024, 0);
  for (int s = 1; s < 4; ++s) {
    int b = a.add(1024, s);
    a.use(prev, s);
    prev = b;
  }
  a.keep_to_end(prev);
  auto p = a.plan();
  EXPECT_EQ(p.total_bytes, 2048u);
  EXPECT_EQ(p.sum_bytes, 4096u);
  std::string why;
  EXPECT_TRUE(check_arena(p, 256, &why)) << why;
  expect_disjoint_when_live(p);
  // A step's output never lands on its input.
  for (size_t i = 1; i < p.offsets.size(); ++i) EXPECT_NE(p.offsets[i], p.offsets[i - 1]);
}

TEST(Arena, AnAliasReadLateKeepsItsBufferAlive) {
  // b0 is written at step 0; a view of it (the executor records the view's uses on b0) is
  // read at step 5, so b0 must not be reused by b1..b4.
  ArenaPlanner a;
  int b0 = a.add(4096, 0);
  std::vector<int> mids;
  for (int s = 1; s < 5; ++s) {
    mids.push_back(a.add(4096, s));
    if (s > 1) a.use(mids[mids.size() - 2], s);
  }
  a.use(b0, 5);  // the alias's read
  a.use(mids.back(), 5);
  auto p = a.plan();
  for (int m : mids) EXPECT_NE(p.offsets[static_cast<size_t>(m)], p.offsets[static_cast<size_t>(b0)]);
  expect_disjoint_when_live(p);
  EXPECT_EQ(p.buffers[static_cast<size_t>(b0)].last, 5);
}

TEST(Arena, OutputsLiveToTheEnd) {
  ArenaPlanner a;
  int out = a.add(512, 0);
  int t1 = a.add(512, 1);
  int t2 = a.add(512, 2);
  a.use(t1, 2);
  a.keep_to_end(out);
  auto p = a.plan();
  EXPECT_EQ(p.buffers[static_cast<size_t>(out)].last, 2);
  EXPECT_NE(p.offsets[static_cast<size_t>(t2)], p.offsets[static_cast<size_t>(out)]);
  expect_disjoint_when_live(p);
}

TEST(Arena, AlignmentAndEmptyBuffers) {
  ArenaPlanner a;
  int x = a.add(1, 0);
  int e = a.add(0, 0);
  int y = a.add(300, 0);
  a.use(x, 1);
  a.use(e, 1);
  a.use(y, 1);
  auto p = a.plan(256);
  for (size_t i = 0; i < p.offsets.size(); ++i) EXPECT_EQ(p.offsets[i] % 256, 0u);
  EXPECT_EQ(p.total_bytes, 256u + 512u);  // 1 -> 256, 300 -> 512; the empty one takes nothing
  std::string why;
  EXPECT_TRUE(check_arena(p, 256, &why)) << why;
  (void)e;
}

TEST(Arena, RandomSchedulesKeepTheInvariants) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    ArenaPlanner a;
    const int steps = 1 + static_cast<int>(rng() % 40);
    std::vector<int> bufs;
    for (int s = 0; s < steps; ++s) {
      // Each step reads up to three earlier buffers, then defines one.
      for (int k = 0; k < 3 && !bufs.empty(); ++k)
        if (rng() % 2) a.use(bufs[rng() % bufs.size()], s);
      bufs.push_back(a.add(rng() % 5000, s));
      if (rng() % 10 == 0) a.keep_to_end(bufs.back());
    }
    auto p = a.plan();
    std::string why;
    ASSERT_TRUE(check_arena(p, 256, &why)) << "round " << round << ": " << why;
    expect_disjoint_when_live(p);
    EXPECT_LE(p.total_bytes, p.sum_bytes);
  }
}

TEST(Arena, CheckerCatchesAnOverlap) {
  ArenaPlanner a;
  int x = a.add(1024, 0), y = a.add(1024, 0);
  a.use(x, 1);
  a.use(y, 1);
  auto p = a.plan();
  p.offsets[static_cast<size_t>(y)] = p.offsets[static_cast<size_t>(x)];  // plant the bug
  std::string why;
  EXPECT_FALSE(check_arena(p, 256, &why));
  EXPECT_NE(why.find("overlap"), std::string::npos) << why;
}

}  // namespace
}  // namespace tensat::gpu
