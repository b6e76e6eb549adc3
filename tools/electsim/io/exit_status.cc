#include "tools/electsim/io/exit_status.h"

#include <csignal>
#include <cstdio>

#include "tools/electsim/io/terminal_text.h"
#include "tools/electsim/io/termination.h"

namespace electsim {

int ExitStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal: return kExitFailed;  // the simulation stopped on a process's error
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnknown: return kExitIncomplete;
    default: return kExitBadInput;
  }
}

// Messages may carry text from files or arguments; escaping is idempotent, so
// text the loader already escaped passes unchanged.
int ReportError(const absl::Status& status) {
  std::cerr << "electsim: " << EscapeForTerminal(std::string(status.message())) << "\n";
  return ExitStatusFor(status);
}

void CommandOutcome::CouldNotWrite(const absl::Status& status) {
  std::cerr << "electsim: " << EscapeForTerminal(std::string(status.message())) << "\n";
  incomplete_ = true;
}

int CommandOutcome::Finish() {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // A reader that went away (a closed pipe) ends the command as SIGPIPE
    // does where it is not caught; a long run catches it to stop cleanly.
    if (StopSignal() == SIGPIPE) return kExitSignalBase + SIGPIPE;
    std::cerr << "electsim: standard output: write failed\n";
    incomplete_ = true;
  }
  if (failed_) return kExitFailed;
  return incomplete_ ? kExitIncomplete : kExitOk;
}

}  // namespace electsim
