// Timing statistics and the never-slower rule (gpu_cost/timing_stats.h), anywhere.
#include <gtest/gtest.h>

#include "gpu_cost/timing_stats.h"

namespace tensat::gpu {
namespace {

TEST(TimingStats, QuantilesInterpolateLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]
  TimingStats t = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(t.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(t.q1_ms, 1.75);
  EXPECT_DOUBLE_EQ(t.q3_ms, 3.25);
  EXPECT_DOUBLE_EQ(t.iqr_ms(), 1.5);
  EXPECT_EQ(t.samples, 4);
  EXPECT_DOUBLE_EQ(t.min_ms, 1);
  EXPECT_DOUBLE_EQ(t.max_ms, 4);
  // Odd count: the middle sample; numpy.percentile([5, 1, 9, 3, 7], 25) == 3.
  TimingStats o = summarize({5, 1, 9, 3, 7});
  EXPECT_DOUBLE_EQ(o.median_ms, 5);
  EXPECT_DOUBLE_EQ(o.q1_ms, 3);
  EXPECT_DOUBLE_EQ(o.q3_ms, 7);
  EXPECT_NEAR(o.relative_iqr(), 0.8, 1e-12);
}

TEST(TimingStats, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).samples, 0);
  TimingStats one = summarize({0.25});
  EXPECT_DOUBLE_EQ(one.median_ms, 0.25);
  EXPECT_DOUBLE_EQ(one.iqr_ms(), 0.0);
}

TimingStats around(double median, double iqr) {
  TimingStats t;
  t.median_ms = median;
  t.q1_ms = median - iqr / 2;
  t.q3_ms = median + iqr / 2;
  t.samples = 100;
  return t;
}

TEST(NeverSlower, KeepsTheOptimizedModelOnlyWhenFasterThanTheNoise) {
  // 10% faster, spread 1%: kept.
  Verdict v = compare_timings(around(2.0, 0.02), around(1.8, 0.01));
  EXPECT_TRUE(v.keep_optimized);
  EXPECT_NEAR(v.spread_ms, 0.02, 1e-12);
  EXPECT_EQ(v.reason, "faster on this GPU (1.8000 ms vs 2.0000 ms)");
  // Faster by less than the spread of either side: not kept.
  EXPECT_FALSE(compare_timings(around(2.0, 0.2), around(1.9, 0.01)).keep_optimized);
  EXPECT_FALSE(compare_timings(around(2.0, 0.01), around(1.9, 0.2)).keep_optimized);
  // Tight samples: faster by less than kMinGain of the original is noise (two programs of one
  // model differ by that much); by more, kept.
  Verdict tiny = compare_timings(around(2.0, 0.0002), around(1.995, 0.0002));
  EXPECT_FALSE(tiny.keep_optimized);
  EXPECT_NEAR(tiny.spread_ms, kMinGain * 2.0, 1e-12);
  EXPECT_TRUE(compare_timings(around(2.0, 0.0002), around(1.985, 0.0002)).keep_optimized);
  // Equal or slower: not kept, and the message says so.
  EXPECT_FALSE(compare_timings(around(2.0, 0), around(2.0, 0)).keep_optimized);
  Verdict slower = compare_timings(around(2.0, 0.01), around(2.1, 0.01));
  EXPECT_FALSE(slower.keep_optimized);
  EXPECT_EQ(slower.reason, "not faster on this GPU (2.1000 ms vs 2.0000 ms)");
}

TEST(NeverSlower, PredictedCostsHaveNoSpread) {
  EXPECT_TRUE(compare_predicted(1.0, 0.999).keep_optimized);
  EXPECT_FALSE(compare_predicted(1.0, 1.0).keep_optimized);
  EXPECT_EQ(compare_predicted(1.0, 1.5).reason, "not faster by the cost model (1.5000 ms vs 1.0000 ms)");
}

}  // namespace
}  // namespace tensat::gpu
