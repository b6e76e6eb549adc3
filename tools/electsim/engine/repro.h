// The repro file format: what `run` writes when a run breaks an invariant
// (the scenario document itself, the seed and the trace hash) and what
// `replay` reads back, checked against scenarios/schema/repro.schema.json as
// strictly as a scenario file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The checkers among `violated` the scenario did not expect: what made a
// run fail, as run and sweep judge it (in the order given).
std::vector<std::string> UnexpectedViolations(const Scenario& scenario, std::vector<std::string> violated);
inline std::vector<std::string> UnexpectedViolations(const Scenario& scenario, const RunResult& result) {
  return UnexpectedViolations(scenario, result.violated_checkers());
}

// A repro replays without the original file. `failed_by`: the checkers
// whose violations made the run fail, as the command that wrote it judged
// (fuzz: the declared guarantees broken); what shrink keeps broken.
nlohmann::json MakeRepro(const Scenario& scenario, const RunResult& result, const std::string& repro_path,
                         const std::vector<std::string>& failed_by);

struct Repro {
  Scenario scenario;
  uint64_t seed = 0;
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  std::optional<TraceCheckpoints> checkpoints;  // repros written before checkpoints have none
  std::vector<std::string> violations;          // checker names, sorted
  std::vector<std::string> failed_by;           // as written (repros written before it have none)
  std::string scenario_file;                    // the file the scenario was read from, as it ran
};
absl::StatusOr<Repro> ParseRepro(std::string_view text, const std::string& path);

}  // namespace electsim
