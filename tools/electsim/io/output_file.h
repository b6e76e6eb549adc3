// Output files written whole or not at all. Every file electsim writes (a
// trace, a repro) goes to a private temporary file next to its destination
// and is renamed into place only when complete; an error, a destructor or
// Ctrl-C removes the temporary file instead. The simulation never sees files:
// it hands records to a sink, and this is the sink's file end.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/trace.h"

namespace electsim {

// Checks that `dir` is, or can be created as, a writable folder.
absl::Status CheckOutputDir(const std::string& dir);

// Whether the folder an output file goes into must exist already, or is
// created when the file is written (a repro folder).
enum class OutputFolder { kMustExist, kCreatedOnWrite };

// Fails unless `path` can become an output file: a legal name whose folder
// exists (or can be created) and is writable, and not a directory, a device,
// one of `inputs`, or the file standard output or standard error goes to.
// A symbolic link is judged by the file it points to.
absl::Status CheckOutputPath(const std::string& path, const std::vector<std::string>& inputs,
                             OutputFolder folder = OutputFolder::kMustExist);

// Whether two paths name one file, existing or not (symbolic links followed).
bool SameFile(const std::string& a, const std::string& b);

class AtomicOutputFile {
 public:
  // Fails, creating nothing, unless CheckOutputPath(path, inputs) passes. A
  // symbolic link is written through to the file it points to.
  static absl::StatusOr<std::unique_ptr<AtomicOutputFile>> Open(const std::string& path,
                                                                const std::vector<std::string>& inputs = {});
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  // Failures are remembered and reported by Commit.
  void Write(std::string_view bytes);
  // Renames the finished file into place; after a failed write, removes it
  // and says why (Unavailable).
  absl::Status Commit();

 private:
  AtomicOutputFile(std::string path, std::string target, std::string temp, std::FILE* file, int slot);
  std::string path_;    // as the user named it, for messages
  std::string target_;  // where the file lands (a symbolic link's target)
  std::string temp_;
  std::FILE* file_;
  int write_errno_ = 0;
  int slot_;  // in the clean-up list that a terminating signal empties
};

absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 const std::vector<std::string>& inputs = {});

// Where a trace export goes: an AtomicOutputFile, or straight to standard
// output ("-"), written as the run goes so that nothing holds the whole trace.
class TraceOutput {
 public:
  static absl::StatusOr<std::unique_ptr<TraceOutput>> Open(const std::string& path,
                                                           const std::vector<std::string>& inputs = {});
  static std::unique_ptr<TraceOutput> ToStandardOutput();
  // Failures are remembered and reported by Commit.
  void Write(std::string_view bytes);
  // Moves the file into place, or flushes standard output. Unavailable when
  // a write failed; nothing half-written is left in a file's place.
  absl::Status Commit();

 private:
  explicit TraceOutput(std::unique_ptr<AtomicOutputFile> file) : file_(std::move(file)) {}
  std::unique_ptr<AtomicOutputFile> file_;  // null when writing to standard output
  int stdout_errno_ = 0;
};

// Removes the temporary file of every AtomicOutputFile still open.
// Async-signal-safe: for the handlers of terminating signals.
void RemoveTemporaryOutputFiles();

}  // namespace electsim
