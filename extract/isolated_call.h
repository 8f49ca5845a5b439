// Runs a function in a forked child process and returns the bytes it produced, so that an
// abort or hang inside a third-party library (CBC/CLP, built with assertions on Debian) ends
// the child, not the caller.
//
// Usage:
//   IsolatedResult r = run_isolated([&] { return encode(solve()); }, /*deadline_s=*/20.0);
//   if (r.failure.empty()) use(decode(r.bytes)); else warn(r.failure);
//
// The child runs `fn`, writes its bytes to a pipe, closes it and leaves with _exit (no exit
// handlers of the parent run). The parent reads until the pipe closes; a child still running at
// `deadline_s` is killed. Only the child's exit status and the completeness of the message tell
// success: a caller must encode its result so that a truncated message does not decode. The
// child's exit (unmapping the address space it shares copy-on-write) is not waited for after a
// complete message; such children are reaped by later calls. POSIX only. The parent may have
// other threads: the child logs through a lock-free sink of its own (isolated_call.cpp).
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace tensat::extract {

struct IsolatedResult {
  std::string bytes;    ///< what fn returned (possibly incomplete when failure is set)
  std::string failure;  ///< empty on success; else why (signal, exit status, killed, no fork)
  bool ran_in_process = false;  ///< fork or pipe failed: fn ran in this process instead
};

/// `complete(bytes)` says whether a message is whole (then the child's exit is not awaited).
/// `stop` (if given) is polled every 10 ms: once set, the child is killed (failure "stopped").
IsolatedResult run_isolated(const std::function<std::string()>& fn, double deadline_s,
                            const std::function<bool(const std::string&)>& complete,
                            const std::atomic<bool>* stop = nullptr);

}  // namespace tensat::extract
