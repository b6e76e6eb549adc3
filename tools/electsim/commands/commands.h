// Every command of the electsim command line, one thin file each: its flags,
// and the wiring from them to the engine, the campaign layer and the exports.
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tools/electsim/campaign/finish.h"
#include "tools/electsim/commands/flags.h"

namespace electsim::commands {

Command AddRunCommand(CLI::App& app);
Command AddReplayCommand(CLI::App& app);
Command AddExplainCommand(CLI::App& app);
Command AddListCommand(CLI::App& app);
Command AddSweepCommand(CLI::App& app);
Command AddFuzzCommand(CLI::App& app);
Command AddShrinkCommand(CLI::App& app);
Command AddBenchCommand(CLI::App& app);
Command AddMergeCommand(CLI::App& app);
Command AddCheckGuaranteesCommand(CLI::App& app);

// merge, as `electsim merge` and `electsim fuzz --merge` run it.
int MergeCommand(const std::vector<std::string>& paths, const campaign::SummaryOutputs& outputs, bool allow_incomplete);

}  // namespace electsim::commands
