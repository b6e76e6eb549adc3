// `electsim replay`: re-runs a repro file and checks that the trace hash and
// the violations are the same; when the trace differs, says where.
#include <iostream>
#include <memory>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "tools/electsim/commands/commands.h"
#include "tools/electsim/commands/trace_flags.h"
#include "tools/electsim/engine/repro.h"
#include "tools/electsim/export/replay_diff.h"
#include "tools/electsim/export/report.h"
#include "tools/electsim/io/termination.h"

namespace electsim::commands {
namespace {

struct ReplayFlags {
  std::string repro_path;
  TraceFlags trace;
  std::optional<std::string> expected_trace;
};

// Whether the run is the repro's; prints what differs when not.
bool SameAsRepro(const Repro& repro, const RunResult& result, const ReplayFlags& flags, std::ostream& out,
                 absl::Status& error) {
  bool same = true;
  bool only_the_hash = false;
  if (result.trace_hash == repro.trace_hash && result.trace_records == repro.trace_records) {
    out << fmt::format("replay: trace hash matches the repro ({})\n", sim::FormatTraceHash(result.trace_hash));
  } else {
    out << fmt::format("replay: trace DIFFERS: repro has {} over {} records, this run gave {} over {}\n",
                       sim::FormatTraceHash(repro.trace_hash), repro.trace_records,
                       sim::FormatTraceHash(result.trace_hash), result.trace_records);
    auto where = DescribeTraceDifference(repro, result, flags.expected_trace);
    if (!where.ok()) {
      error = where.status();
      return false;
    }
    out << where->text;
    only_the_hash = where->only_the_hash;
    same = false;
  }
  const auto names = [](const std::vector<std::string>& checkers) {
    return checkers.empty() ? std::string("none") : fmt::format("{}", fmt::join(checkers, ", "));
  };
  const std::vector<std::string> violated = result.violated_checkers();
  if (violated != repro.violations) {
    out << fmt::format("replay: the violations differ from the repro's: it has {}, this run {}\n",
                       names(repro.violations), names(violated));
    same = false;
  } else if (!repro.violations.empty() && same) {
    out << fmt::format("replay: the same violation{} reproduced: {}\n", violated.size() == 1 ? "" : "s",
                       names(violated));
  } else if (!repro.violations.empty()) {
    // A checker's name says nothing of when, in which term or between
    // which nodes: in another trace, that may be another violation.
    out << fmt::format("replay: the same checker{} fired ({}){}\n", violated.size() == 1 ? "" : "s", names(violated),
                       only_the_hash ? "" : ", in a different trace");
  }
  return same;
}

int Replay(const ReplayFlags& flags) {
  auto text = ReadFile(flags.repro_path);
  if (!text.ok()) return ReportError(text.status());
  auto repro = ParseRepro(*text, flags.repro_path);
  if (!repro.ok()) return ReportError(repro.status());
  campaign::OutputPlan outputs({flags.repro_path});
  if (flags.expected_trace) outputs.AddInput(*flags.expected_trace);
  flags.trace.Declare(outputs);
  if (auto status = outputs.Check(); !status.ok()) return ReportError(status);
  if (flags.expected_trace) {
    if (auto status = CheckExpectedTrace(*flags.expected_trace); !status.ok()) return ReportError(status);
    std::cerr << ExpectedTraceMismatch(*flags.expected_trace, *repro);
  }
  auto trace = flags.trace.Open(outputs, repro->scenario, repro->seed);
  if (!trace.ok()) return ReportError(trace.status());
  std::ostream& out = flags.trace.ToStandardOutput() ? std::cerr : std::cout;
  RunOptions options;
  if (*trace) options.extra_sinks.push_back(trace->get());
  auto result = RunScenario(repro->scenario, repro->seed, options);
  if (!result.ok()) return ReportError(result.status());
  CommandOutcome outcome;
  out << FormatSummary(repro->scenario, *result);
  absl::Status error;
  if (!SameAsRepro(*repro, *result, flags, out, error)) {
    if (!error.ok()) return ReportError(error);
    outcome.Failed();
  }
  out << std::flush;
  CommitTrace(trace->get(), *result, outcome);
  return outcome.Finish();
}

}  // namespace

Command AddReplayCommand(CLI::App& parent) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* app = parent.add_subcommand("replay", "re-run a repro file and check its trace hash");
  app->add_option("repro", flags->repro_path, "repro file written by run")->required();
  flags->trace.Add(*app);
  app->add_option("--expected", flags->expected_trace,
                  "when the trace differs, compare it record by record with this JSON Lines trace of a good run");
  return {app, [flags] {
            HandleTerminatingSignals(SignalResponse::kExitNow);
            return Replay(*flags);
          }};
}

}  // namespace electsim::commands
