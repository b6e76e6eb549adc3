// Trace exports: the documented JSON Lines trace, Chrome trace-event JSON
// for Perfetto UI, and a self-contained HTML timeline. Each is a trace sink
// that writes as the run goes (nothing holds the whole trace), then adds
// what only the end knows (violations) and commits its output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/trace.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

enum class TraceFormat { kJsonl, kPerfetto, kHtml };

// "jsonl", "perfetto" or "html"; InvalidArgument naming them otherwise.
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view text);

class TraceExporter : public sim::TraceSink {
 public:
  // After the last record: the run's end and its violations.
  virtual void Finish(const RunResult& result) = 0;
  // Moves the output into place (or flushes standard output).
  virtual absl::Status Commit() = 0;
};

std::unique_ptr<TraceExporter> MakeTraceExporter(TraceFormat format, std::unique_ptr<TraceOutput> output,
                                                 const Scenario& scenario, uint64_t seed);

}  // namespace electsim
