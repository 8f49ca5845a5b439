// Runs a function in a forked child process (see isolated_call.h).
#include "extract/isolated_call.h"

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "support/stopwatch.h"

namespace tensat::extract {

namespace {

// Children whose message was read but that may still be exiting: reaped without blocking at
// the next call (so at most a few zombies exist at a time).
void defer_reap(pid_t pid) {
  static std::mutex mu;
  static std::vector<pid_t> pending;
  std::lock_guard<std::mutex> lock(mu);
  if (pid > 0) pending.push_back(pid);
  std::erase_if(pending, [](pid_t p) {
    int st = 0;
    const pid_t r = waitpid(p, &st, WNOHANG);
    return r == p || (r < 0 && errno == ECHILD);
  });
}

}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& fn, double deadline_s,
                            const std::function<bool(const std::string&)>& complete, const std::atomic<bool>* stop) {
  IsolatedResult res;
  defer_reap(0);  // reap earlier children that have exited
  // From pipe() to the parent's closing its write end, no other thread forks: a child forked
  // in between would hold that end open, and this call would wait for that child's exit to
  // see the end of its message (the k_multi 0 seed's ILP forks beside the main extraction).
  static std::mutex fork_mu;
  std::unique_lock fork_lock(fork_mu);
  int fds[2];
  if (pipe(fds) != 0) {
    fork_lock.unlock();
    spdlog::warn("isolated call: pipe() failed ({}); running in process", std::strerror(errno));
    res.ran_in_process = true;
    res.bytes = fn();
    return res;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    fork_lock.unlock();
    spdlog::warn("isolated call: fork() failed ({}); running in process", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    res.ran_in_process = true;
    res.bytes = fn();
    return res;
  }
  if (pid == 0) {  // child: run, send, leave without running the parent's exit handlers
    // A lock another thread held at the fork stays locked here: glibc resets malloc's and
    // stdio's, not spdlog's sinks' (the k_multi 0 seed's ILP forks beside the main extraction,
    // pipeline/seed.h). So the child logs through a sink of its own without one (the old sinks
    // are kept alive, not destroyed locked).
    if (spdlog::logger* l = spdlog::default_logger_raw()) {
      static auto* old = new std::vector<spdlog::sink_ptr>(l->sinks());
      (void)old;
      l->sinks() = {std::make_shared<spdlog::sinks::stderr_sink_st>()};
      l->set_pattern("%l: %v");  // (as onnx-tensat's lines, without colour)
    }
    close(fds[0]);
    int code = 0;
    try {
      const std::string msg = fn();
      for (size_t off = 0; off < msg.size();) {
        const ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          code = 3;
          break;
        }
        off += static_cast<size_t>(w);
      }
    } catch (...) {
      code = 2;
    }
    close(fds[1]);  // the parent's end of message: it need not wait for this process's teardown
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  close(fds[1]);
  fork_lock.unlock();
  const Stopwatch clock;
  auto elapsed = [&] { return clock.seconds(); };
  bool killed = false, stopped = false;
  char buf[1 << 16];
  for (;;) {
    const double left = deadline_s - elapsed();
    stopped = stop && stop->load(std::memory_order_relaxed);
    if (left <= 0.0 || stopped) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min(left, stop ? 0.01 : 1.0) * 1000) + 1);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of message (or error)
    res.bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (!killed && complete(res.bytes)) {
    spdlog::debug("isolated call: result after {:.3f} s", elapsed());
    defer_reap(pid);
    return res;
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (stopped) {
    res.failure = "stopped: its caller no longer needs the result";
  } else if (killed) {
    res.failure = "it ran past the hard deadline (" + std::to_string(deadline_s) + " s) and was killed";
  } else if (WIFSIGNALED(wstatus)) {
    res.failure = std::string("its process ended on signal ") + strsignal(WTERMSIG(wstatus)) +
                  (WTERMSIG(wstatus) == SIGABRT ? " (an assertion failed)" : "");
  } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    res.failure = "its process exited with status " + std::to_string(WEXITSTATUS(wstatus));
  } else {
    res.failure = "its process sent an incomplete result";
  }
  return res;
}

}  // namespace tensat::extract
