// How electsim ends when a user or the system sends a terminating signal
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ): with exit status
// 128 + the signal number and no temporary or half-written output file.
#pragma once

#include <array>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace electsim {

inline constexpr std::array<int, 6> kTerminatingSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

enum class SignalResponse {
  // Remove the temporary output files and exit at once: for commands that
  // have nothing finished to report until they are done (run, replay).
  kExitNow,
  // Remember the signal and let the command stop at its next check, report
  // what finished and exit with 128 + the signal (sweep). A second signal
  // exits at once, as kExitNow does.
  kStopGracefully,
};

// Installs the handlers for kTerminatingSignals. A SIGXFSZ the kernel sends
// because one of our own writes went past the file size limit is not a
// request to stop: the write then fails with EFBIG, and that is reported as
// a write failure, as a full disk's ENOSPC is.
void HandleTerminatingSignals(SignalResponse response);

// The signal that asked the command to stop (kStopGracefully), or 0.
int StopSignal();

// "SIGINT", "SIGTERM", ...: for the line that says why a command stopped.
const char* SignalName(int signal_number);

// Holds the terminating signals back for a scope in this thread, so that a
// file is created and registered for clean-up as one step. Threads started
// inside the scope keep them blocked for good, which sends every signal to
// the main thread (the only one that creates files).
class TerminatingSignalsBlocked {
 public:
  TerminatingSignalsBlocked();
  ~TerminatingSignalsBlocked();
  TerminatingSignalsBlocked(const TerminatingSignalsBlocked&) = delete;
  TerminatingSignalsBlocked& operator=(const TerminatingSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// `jobs` threads (at least one) that run each task given to Run, all at
// once: the one parallel loop of sweep, fuzz and bench, above many
// independent single-threaded simulations. The threads start once, not once
// per batch of seeds: a sweep of short trials runs a batch every 256 seeds,
// and a thread started and ended for each (a new stack, a new allocator heap
// torn down at its end) took 8% of the Raft trial's time. The workers leave
// every signal to the main thread.
class WorkerPool {
 public:
  // If a thread cannot start, those started are joined and the error rethrown.
  explicit WorkerPool(unsigned jobs);
  // Joins the workers, idle between tasks.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on every worker and returns once each has returned from it.
  // `task` must not throw. From one thread at a time.
  void Run(const std::function<void()>& task);

 private:
  void Work();
  void Close();

  std::mutex mutex_;
  std::condition_variable task_given_;     // a new task, or closing_
  std::condition_variable task_finished_;  // busy_ reached 0
  const std::function<void()>* task_ = nullptr;
  uint64_t tasks_given_ = 0;
  size_t busy_ = 0;  // workers still in the current task
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace electsim
