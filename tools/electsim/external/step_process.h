// One external process that speaks the step protocol (docs/step-protocol.md):
// started with its standard input and output on one end of a stream socket,
// fed lines, read line by line within a budget of real time, and killed when
// the object goes. A socket rather than two pipes: a write to a process that
// died fails with EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in electsim.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace electsim::external {

class StepProcess {
 public:
  // Starts `argv` (argv[0] is a path, or a name looked up on PATH). The
  // status names the program when it cannot be started.
  static absl::StatusOr<std::unique_ptr<StepProcess>> Start(const std::vector<std::string>& argv, int64_t budget_ms);
  ~StepProcess();
  StepProcess(const StepProcess&) = delete;
  StepProcess& operator=(const StepProcess&) = delete;

  // Writes `line` and a newline. Fails when the process has gone.
  absl::Status WriteLine(std::string_view line);
  // The next line, without its newline. Fails on end of file (with the
  // process's exit status), on a line over 1 MiB, or when the process wrote
  // nothing for the budget while a line was awaited (a per-read bound, not
  // one for the whole line).
  absl::StatusOr<std::string_view> ReadLine();

 private:
  StepProcess(pid_t pid, int fd, int64_t budget_ms) : pid_(pid), fd_(fd), budget_ms_(budget_ms) {}
  // How the process ended, once it has ("exited with status 2", "killed by signal 9").
  std::string HowItEnded();

  pid_t pid_;
  int fd_;
  int64_t budget_ms_;
  std::string buffer_;
  size_t line_start_ = 0;  // where the next line starts in buffer_
  size_t scanned_ = 0;     // bytes after line_start_ already searched for a newline
  bool reaped_ = false;
};

}  // namespace electsim::external
