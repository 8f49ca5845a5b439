// Timing statistics and the never-slower decision (see timing_stats.h).
#include "gpu_cost/timing_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace tensat::gpu {

namespace {

std::string ms_pair(const char* verdict, double after, double before, const char* where) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %s (%.4f ms vs %.4f ms)", verdict, where, after, before);
  return buf;
}

}  // namespace

double quantile_sorted(const std::vector<double>& s, double p) {
  if (s.empty()) return 0.0;
  p = std::clamp(p, 0.0, 1.0);
  const double h = p * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

TimingStats summarize(std::vector<double> samples) {
  TimingStats t;
  if (samples.empty()) return t;
  for ([[maybe_unused]] double v : samples) assert(std::isfinite(v) && "timing samples are finite");
  std::sort(samples.begin(), samples.end());
  t.samples = static_cast<int>(samples.size());
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.median_ms = quantile_sorted(samples, 0.5);
  t.q1_ms = quantile_sorted(samples, 0.25);
  t.q3_ms = quantile_sorted(samples, 0.75);
  return t;
}

Verdict compare_timings(const TimingStats& before, const TimingStats& after) {
  Verdict v;
  v.before_ms = before.median_ms;
  v.after_ms = after.median_ms;
  v.spread_ms = std::max({before.iqr_ms(), after.iqr_ms(), kMinGain * before.median_ms});
  v.keep_optimized = before.median_ms - after.median_ms > v.spread_ms;
  v.reason = ms_pair(v.keep_optimized ? "faster" : "not faster", v.after_ms, v.before_ms, "on this GPU");
  return v;
}

Verdict compare_predicted(double before_ms, double after_ms) {
  Verdict v;
  v.before_ms = before_ms;
  v.after_ms = after_ms;
  v.keep_optimized = after_ms < before_ms;
  v.reason = ms_pair(v.keep_optimized ? "faster" : "not faster", after_ms, before_ms, "by the cost model");
  return v;
}

}  // namespace tensat::gpu
