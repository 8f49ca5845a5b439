// Tests of run_isolated: a result, an abort, a hang and an incomplete message in the child.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

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

TEST(IsolatedCall, AnIncompleteMessageIsAFailure) {
  const auto r = run_isolated([] { return std::string("no end"); }, 30.0, ends_with_dot);
  EXPECT_NE(r.failure.find("incomplete"), std::string::npos) << r.failure;
  EXPECT_EQ(r.bytes, "no end");
}

}  // namespace
}  // namespace tensat::extract
