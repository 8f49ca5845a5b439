// Timing statistics of repeated measurements and the never-slower decision.
//
// Plain C++ (no CUDA): the GPU executor fills the samples, the pipeline and the report read
// the summaries, and the tests check the arithmetic anywhere.
//
//   median     the 50% quantile of the samples
//   q1, q3     the 25% and 75% quantiles (linear interpolation between order statistics,
//              the "type 7" rule of R and numpy's default), so iqr() = q3 - q1 is the spread
//   min, max   for the report
//
// The never-slower rule (compare_timings): the optimized model is kept only when its median
// is below the original's by more than the measured spread, spread = max(IQR before, IQR
// after, kMinGain x the original's median). Anything else (slower, equal, or faster by less
// than the noise) keeps the original. The floor: two programs of one model differ by more
// than their IQRs, which replayed CUDA graphs make tiny (SqueezeNet against itself: 0.2512 vs
// 0.2515 ms, IQR 0.0002 ms, H100, 2026-11-27: allocations and algorithm choices of two builds).
// The same rule without a GPU compares predicted costs, whose spread is 0 (compare_predicted).
#pragma once

#include <string>
#include <vector>

namespace tensat::gpu {

struct TimingStats {
  double median_ms = 0;
  double q1_ms = 0, q3_ms = 0;
  double min_ms = 0, max_ms = 0;
  int samples = 0;
  double iqr_ms() const { return q3_ms - q1_ms; }
  /// The spread relative to the median (0 when the median is 0).
  double relative_iqr() const { return median_ms > 0 ? iqr_ms() / median_ms : 0.0; }
};

/// Summarizes samples (any order; empty gives all zeros). Non-finite samples are a bug of the
/// caller and are asserted against.
TimingStats summarize(std::vector<double> samples_ms);

/// Quantile p in [0, 1] of sorted samples by linear interpolation (type 7).
double quantile_sorted(const std::vector<double>& sorted, double p);

struct Verdict {
  bool keep_optimized = false;  ///< the optimized model is faster by more than the spread
  double before_ms = 0, after_ms = 0;
  double spread_ms = 0;         ///< the noise the gain had to exceed (IQRs, or the kMinGain floor)
  /// "faster on this GPU (x ms vs y ms)" or "not faster on this GPU (x ms vs y ms)", x the
  /// optimized model's median, y the original's.
  std::string reason;
};

/// The least relative gain a measured comparison counts (see the header comment): 0.5%, four
/// times the difference measured between two programs of one model.
inline constexpr double kMinGain = 0.005;
/// The measured never-slower rule (see the header comment).
Verdict compare_timings(const TimingStats& before, const TimingStats& after);
/// The same rule on predicted costs (spread 0): keep only if after < before.
Verdict compare_predicted(double before_ms, double after_ms);

}  // namespace tensat::gpu
