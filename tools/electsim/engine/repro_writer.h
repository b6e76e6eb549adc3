// Where run and sweep put repro files, and how they write them: the same
// name for the same scenario and seed, written whole or not at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// DIR/NAME-seedSEED.repro.json
std::string ReproFilePath(const std::string& dir, const std::string& scenario_name, uint64_t seed);

// The seed in `file_name` when it is the repro file name of `scenario_name`.
std::optional<uint64_t> SeedOfReproFileName(const std::string& file_name, const std::string& scenario_name);

// Writes the repro of `result` to `path`, creating its folder if needed,
// never over one of `inputs`; `failed_by` as MakeRepro takes it. Errors are
// Unavailable: an output that could not be written, whatever the reason,
// once the run is over.
absl::Status WriteReproFile(const std::string& path, const Scenario& scenario, const RunResult& result,
                            const std::vector<std::string>& failed_by, const std::vector<std::string>& inputs);

}  // namespace electsim
