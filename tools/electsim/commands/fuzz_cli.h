// The command lines of `electsim fuzz` and `electsim shrink`, kept out of
// main.cc: their flags, and the checks of what CLI11 cannot check itself
// (ranges "A..B", shards "K/N", durations).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tools/electsim/commands/fuzz.h"
#include "tools/electsim/engine/shrink.h"

namespace electsim {

struct FuzzCommandLine {
  FuzzOptions options;
  std::string seeds, nodes, duration, faults, shard, time_budget, guarantees_of = "options", liveness = "guarantee";
  std::optional<uint64_t> seed;
  bool emit_scenario = false;
  std::vector<std::string> merge;
};

CLI::App* AddFuzzCommand(CLI::App& app, FuzzCommandLine& command_line);
int RunFuzzCommand(FuzzCommandLine& command_line);

CLI::App* AddShrinkCommand(CLI::App& app, ShrinkOptions& options);

}  // namespace electsim
