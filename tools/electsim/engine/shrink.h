// Shrinking a failing run (`electsim shrink REPRO`, and `electsim fuzz` for
// the repros it writes): the smallest scenario found, within a budget of
// runs, that still breaks the same invariant under the same seed. Zeller and
// Hildebrandt's delta debugging over the fault steps (in halves, then one at
// a time), then shorter faults, a shorter run, fewer nodes, calmer weather;
// when nothing more can go under that seed, the same again letting each
// candidate try the next seeds too (the result names its seed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

struct ShrinkResult {
  nlohmann::json document;           // the smallest scenario found
  Scenario scenario;                 // `document`, read
  RunResult result;                  // its run, under the seed it ended with
  std::string invariant;             // kept broken
  std::vector<std::string> removed;  // what went, readable, in the order it went
  uint64_t runs = 0;
  bool budget_exhausted = false;  // it stopped at max_runs
  int stopped_by_signal = 0;      // or at this terminating signal (0: none)

  // Why a smaller scenario may exist, for the printed line: "", "budget
  // spent" or "stopped by SIGINT".
  std::string CutShort() const;
};

// `document` must break `invariant` under `seed` (FailedPrecondition if it
// does not). At most `max_runs` simulations; `source` names the scenario in
// messages.
absl::StatusOr<ShrinkResult> ShrinkScenario(const nlohmann::json& document, const std::string& source, uint64_t seed,
                                            const std::string& invariant, uint64_t max_runs);

// Where `electsim shrink` writes: PREFIX.repro.json and PREFIX.json.
struct ShrinkOutputs {
  std::string repro;
  std::string scenario;
};
ShrinkOutputs ShrinkOutputsFor(const std::string& prefix);

// Writes both outputs of `shrunk` (checked by the caller), never over one
// of `inputs`; Unavailable when one could not be written. The repro names
// the scenario file written beside it as what ran, so that replaying one and
// running the other say the same.
absl::Status WriteShrinkOutputs(const ShrinkOutputs& outputs, const ShrinkResult& shrunk,
                                const std::vector<std::string>& inputs);

}  // namespace electsim
