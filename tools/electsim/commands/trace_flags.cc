#include "tools/electsim/commands/trace_flags.h"

#include "tools/electsim/language/json_document.h"

namespace electsim::commands {

void TraceFlags::Add(CLI::App& app) {
  app.add_option("--trace", path, "write the whole trace to FILE (-: to standard output)");
  app.add_option("--trace-format", format,
                 "what --trace writes: jsonl (docs/trace.md), perfetto (Chrome trace-event JSON) or html")
      ->capture_default_str();
}

void TraceFlags::Declare(campaign::OutputPlan& plan) const {
  if (path) plan.AddFile("--trace", *path);
}

absl::StatusOr<std::unique_ptr<TraceExporter>> TraceFlags::Open(const campaign::OutputPlan& plan,
                                                                const Scenario& scenario, uint64_t seed) const {
  auto parsed = ParseTraceFormat(format);
  if (!parsed.ok()) return parsed.status();
  if (!path) return nullptr;
  if (path->empty()) return InputError("--trace: expected a file path, or - for standard output; got \"\"");
  if (ToStandardOutput()) return MakeTraceExporter(*parsed, TraceOutput::ToStandardOutput(), scenario, seed);
  auto output = TraceOutput::Open(*path, plan.inputs());
  if (!output.ok()) return output.status();
  return MakeTraceExporter(*parsed, std::move(*output), scenario, seed);
}

void CommitTrace(TraceExporter* trace, const RunResult& result, CommandOutcome& outcome) {
  if (trace == nullptr) return;
  trace->Finish(result);
  if (auto status = trace->Commit(); !status.ok()) outcome.CouldNotWrite(status);
}

}  // namespace electsim::commands
