// How every campaign command ends: its summary and JUnit files written (or
// not), the last words, and the exit status, by one rule. A signal keeps
// what finished and exits 128 + N; bad input found mid-way (exit 2) takes
// back every file the command wrote; any other error (out of memory, say)
// still writes the summary, marked incomplete, and exits 3 (1 when a seed
// also failed).
#pragma once

#include <string>
#include <vector>

#include "tools/electsim/campaign/output_plan.h"
#include "tools/electsim/campaign/seed_campaign.h"
#include "tools/electsim/campaign/summary.h"
#include "tools/electsim/io/exit_status.h"

namespace electsim::campaign {

struct SummaryOutputs {
  std::string summary_path;     // --summary ("": none)
  std::string junit_path;       // --junit ("": none)
  bool json_to_stdout = false;  // --json: the summary on standard output
};

void DeclareSummaryOutputs(const SummaryOutputs& outputs, OutputPlan& plan);

// `error`: what stopped the command early (OK when nothing did).
int FinishCampaigns(const SummaryFile& file, double seconds, const absl::Status& error, const SummaryOutputs& outputs,
                    OutputPlan& plan, CommandOutcome& outcome);

}  // namespace electsim::campaign
