// Tests of run_isolated: a result, an abort, a hang and an incomplete message in the child.
#include <gtest/gtest.h>

#include <unistd.h>

#include <spdlog/details/console_globals.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "extract/isolated_call.h"

namespace tensat::extract {
namespace {

bool ends_with_dot(const std::string& s) { return !s.empty() && s.back() == '.'; }

TEST(IsolatedCall, ReturnsTheChildsBytes) {
  const std::string big(300000, 'x');  // larger than a pipe buffer
  const auto r = run_isolated([&] { return big + "."; }, 30.0, ends_with_dot);
  EXPECT_EQ(r.failure, "");
  EXPECT_EQ(r.bytes, big + ".");
  EXPECT_FALSE(r.ran_in_process);
}

TEST(IsolatedCall, AnAbortInTheChildIsAFailureNotACrash) {
  const auto r = run_isolated([]() -> std::string { std::abort(); }, 30.0, ends_with_dot);
  EXPECT_NE(r.failure.find("signal"), std::string::npos) << r.failure;
}

TEST(IsolatedCall, AHungChildIsKilledAtTheDeadline) {
  const auto r = run_isolated([]() -> std::string { sleep(30); return "."; }, 0.3, ends_with_dot);
  EXPECT_NE(r.failure.find("killed"), std::string::npos) << r.failure;
}

TEST(IsolatedCall, AStoppedCallKillsItsChild) {
  const std::atomic<bool> stop{true};
  const auto r = run_isolated([]() -> std::string { sleep(30); return "."; }, 30.0, ends_with_dot, &stop);
  EXPECT_NE(r.failure.find("stopped"), std::string::npos) << r.failure;
}

TEST(IsolatedCall, AnIncompleteMessageIsAFailure) {
  const auto r = run_isolated([] { return std::string("no end"); }, 30.0, ends_with_dot);
  EXPECT_NE(r.failure.find("incomplete"), std::string::npos) << r.failure;
  EXPECT_EQ(r.bytes, "no end");
}

// The child logs while another thread of the parent holds the console sinks' lock at the fork
// (as the k_multi 0 seed's ILP forks beside the main extraction): it does not wait for a lock
// nobody in the child will release. (This binary links spdlog's library, as the tools do: the
// header-only build would have a default logger of its own.)
TEST(IsolatedCall, TheChildLogsWhileAnotherThreadHoldsTheLoggersLock) {
  std::atomic<bool> held{false}, release{false};
  std::thread holder([&] {
    std::lock_guard lock(spdlog::details::console_mutex::mutex());
    held = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto r = run_isolated(
      [] {
        spdlog::warn("isolated call test: a line from the child");
        return std::string(".");
      },
      5.0, ends_with_dot);
  release = true;
  holder.join();
  EXPECT_EQ(r.failure, "");
  EXPECT_EQ(r.bytes, ".");
}

}  // namespace
}  // namespace tensat::extract
