// Stopwatch: elapsed wall-clock seconds on the steady clock, for phase times and limits.
//
//   Stopwatch sw;  ...;  double s = sw.seconds();  sw.restart();
#pragma once

#include <chrono>

namespace tensat {

class Stopwatch {
 public:
  using Clock = std::chrono::steady_clock;
  Stopwatch() : start_(Clock::now()) {}
  /// Seconds since construction or the last restart().
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double millis() const { return seconds() * 1e3; }
  void restart() { start_ = Clock::now(); }
  Clock::time_point start() const { return start_; }

 private:
  Clock::time_point start_;
};

/// Seconds from `t` to now on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace tensat
