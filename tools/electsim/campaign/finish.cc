#include "tools/electsim/campaign/finish.h"

#include <iostream>

#include "fmt/format.h"
#include "tools/electsim/export/junit.h"
#include "tools/electsim/io/output_file.h"
#include "tools/electsim/io/termination.h"

namespace electsim::campaign {
namespace {

void WriteOutputs(const SummaryFile& file, double seconds, const SummaryOutputs& outputs, OutputPlan& plan,
                  CommandOutcome& outcome) {
  const std::string json = ToJson(file).dump(2) + "\n";
  if (!outputs.summary_path.empty()) {
    if (auto s = WriteFileAtomically(outputs.summary_path, json, plan.inputs()); s.ok()) {
      plan.Written(outputs.summary_path);
    } else {
      outcome.CouldNotWrite(s);
    }
  }
  if (!outputs.junit_path.empty()) {
    if (auto s = WriteFileAtomically(outputs.junit_path, JUnitXml(ToJUnit(file, seconds)), plan.inputs()); s.ok()) {
      plan.Written(outputs.junit_path);
    } else {
      outcome.CouldNotWrite(s);
    }
  }
  if (outputs.json_to_stdout) std::cout << json << std::flush;
}

}  // namespace

void DeclareSummaryOutputs(const SummaryOutputs& outputs, OutputPlan& plan) {
  plan.AddFile("--summary", outputs.summary_path);
  plan.AddFile("--junit", outputs.junit_path);
}

int FinishCampaigns(const SummaryFile& file, double seconds, const absl::Status& error, const SummaryOutputs& outputs,
                    OutputPlan& plan, CommandOutcome& outcome) {
  if (!error.ok() && ExitStatusFor(error) == kExitBadInput) {
    // Bad input is refused with nothing written, even when it shows only
    // at some seed.
    plan.Discard();
    outcome.Finish();
    return ReportError(error);
  }
  WriteOutputs(file, seconds, outputs, plan, outcome);
  std::ostream& notes = outputs.json_to_stdout ? std::cerr : std::cout;
  if (const int signal_number = StopSignal(); signal_number != 0) {
    notes << fmt::format("interrupted by {}: the results cover the seeds that finished\n", SignalName(signal_number))
          << std::flush;
    outcome.Finish();
    return kExitSignalBase + signal_number;
  }
  if (!error.ok()) {
    const int status = ReportError(error);
    const int verdict = outcome.Finish();
    return verdict == kExitFailed ? kExitFailed : status;  // a failed run wins over an incomplete one
  }
  return outcome.Finish();
}

}  // namespace electsim::campaign
