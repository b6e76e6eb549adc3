// Human-readable summaries and the repro file format.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tools/electsim/runner.h"
#include "tools/electsim/scenario.h"

namespace electsim {

// The multi-line summary `run` and `replay` print (ends with the trace hash).
std::string FormatSummary(const Scenario& scenario, const RunResult& result);

// A repro: the scenario document itself, the seed and the trace hash, so a
// repro replays without the original file.
nlohmann::json MakeRepro(const Scenario& scenario, const RunResult& result, const std::string& repro_path);

// A repro file read back, checked as strictly as a scenario file.
struct Repro {
  Scenario scenario;
  uint64_t seed = 0;
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  std::vector<std::string> violations;  // checker names, sorted
};
absl::StatusOr<Repro> ParseRepro(std::string_view text, const std::string& path);

}  // namespace electsim
