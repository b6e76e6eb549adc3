// --trace and --trace-format, as run and replay take them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/export/trace_export.h"
#include "tools/electsim/io/exit_status.h"

namespace electsim::commands {

struct TraceFlags {
  std::optional<std::string> path;  // "-": standard output
  std::string format = "jsonl";

  void Add(CLI::App& app);
  void Declare(campaign::OutputPlan& plan) const;
  bool ToStandardOutput() const { return path && *path == "-"; }
  // The exporter, or null without --trace; the plan has been checked.
  absl::StatusOr<std::unique_ptr<TraceExporter>> Open(const campaign::OutputPlan& plan, const Scenario& scenario,
                                                      uint64_t seed) const;
};

// Commits the trace last, once the verdict and the repro are out.
void CommitTrace(TraceExporter* trace, const RunResult& result, CommandOutcome& outcome);

}  // namespace electsim::commands
