// How electsim ends when a user or the system sends a terminating signal
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ): with exit status
// 128 + the signal number and no temporary or half-written output file.
#pragma once

#include <array>
#include <csignal>
#include <functional>

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

// Runs `worker` on `jobs` threads (at least one) and joins them: the one
// parallel loop of sweep, fuzz and bench, above many independent
// single-threaded simulations. The workers leave every signal to the main
// thread. If a thread cannot start, `stop` is called so that the running
// workers return, they are joined and the error is rethrown.
void RunWorkers(unsigned jobs, const std::function<void()>& worker, const std::function<void()>& stop);

}  // namespace electsim
