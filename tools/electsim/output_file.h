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

class AtomicOutputFile {
 public:
  // Fails, creating nothing, unless `path` can become an output file: its
  // folder exists and is writable, and it is not a directory, a device or one
  // of `inputs` (a trace written over its own scenario). A symbolic link is
  // judged by, and written through to, the file it points to.
  static absl::StatusOr<std::unique_ptr<AtomicOutputFile>> Open(const std::string& path,
                                                                const std::vector<std::string>& inputs = {});
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  // Failures are remembered and reported by Commit.
  void Write(std::string_view bytes);
  // Renames the finished file into place.
  absl::Status Commit();

 private:
  AtomicOutputFile(std::string path, std::string target, std::string temp, std::FILE* file);
  std::string path_;    // as the user named it, for messages
  std::string target_;  // where the file lands (a symbolic link's target)
  std::string temp_;
  std::FILE* file_;
  int write_errno_ = 0;
  int slot_ = -1;  // in the interrupt clean-up list; -1 when it did not fit
};

absl::Status WriteFileAtomically(const std::string& path, std::string_view content);

// Streams the trace as JSON Lines, one record per line, into an AtomicOutputFile.
class JsonlTraceWriter final : public sim::TraceSink {
 public:
  static absl::StatusOr<std::unique_ptr<JsonlTraceWriter>> Open(const std::string& path,
                                                                const std::vector<std::string>& inputs = {});
  void OnRecord(const sim::TraceRecord& record) override;
  absl::Status Commit() { return file_->Commit(); }

 private:
  explicit JsonlTraceWriter(std::unique_ptr<AtomicOutputFile> file) : file_(std::move(file)) {}
  std::unique_ptr<AtomicOutputFile> file_;
};

// On SIGINT or SIGTERM, removes the temporary files of every AtomicOutputFile
// still open, then exits with 128 + the signal number. For commands that
// write files and have nothing else to save when interrupted.
void RemoveTemporaryFilesOnInterrupt();

}  // namespace electsim
