// electsim's exit statuses (DEVELOPERS.md, README.md) and how a command's
// findings combine into one.
#pragma once

#include <iostream>
#include <string>

#include "absl/status/status.h"

namespace electsim {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;        // a run broke what its scenario expects; a replay differs
inline constexpr int kExitBadInput = 2;      // scenario, repro file, option or output path
inline constexpr int kExitIncomplete = 3;    // an output could not be written, or memory ran out
inline constexpr int kExitSignalBase = 128;  // + the signal's number (130 for Ctrl-C)

// The exit status for an error that stopped a command: bad input unless the
// simulator itself failed (a failed run) or a resource ran out.
int ExitStatusFor(const absl::Status& status);

// Prints "electsim: MESSAGE" and returns ExitStatusFor(status).
int ReportError(const absl::Status& status);

// What a command that ran to its end found: the verdict, and outputs it could
// not write. A failed verdict wins over an output that could not be written.
class CommandOutcome {
 public:
  void Failed() { failed_ = true; }
  bool failed() const { return failed_; }
  // Reports an output that could not be written; the command goes on.
  void CouldNotWrite(const absl::Status& status);
  // Flushes standard output (the summary may be all that is left of a run)
  // and returns the exit status.
  int Finish();

 private:
  bool failed_ = false;
  bool incomplete_ = false;
};

}  // namespace electsim
