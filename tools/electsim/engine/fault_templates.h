// The generator's fixed half (engine/scenario_generator.h is the random one):
// one scenario fragment per fault kind, heavy enough to break what an
// algorithm does not keep under that kind, and the scenarios check-guarantees
// builds from them to test every algorithm's declared guarantees.
#pragma once

#include <string>
#include <vector>

#include "electsim/algorithms/algorithm.h"
#include "electsim/algorithms/guarantees.h"
#include "nlohmann/json.hpp"

namespace electsim {

// {"network": {...}, "faults": [...]} inflicting faults of `kind` only, on 5
// election nodes over 30s; `has_store` adds steps aimed at the store.
nlohmann::json FaultTemplate(algorithms::FaultKind kind, bool has_store);

// A whole scenario for `algorithm` with `options` (a JSON object as a
// scenario writes them) under every kind in `kinds` at once (none: a healthy
// run), against an unfenced resource, with every safety checker on and
// nothing expected. `name` names it.
// Clock drift stays within the bound the algorithm declares for `values`
// (the options read; null: its defaults), when it declares one: past it,
// drift is a pause (Algorithm::clock_drift_bound).
nlohmann::json GuaranteeScenario(const algorithms::Algorithm& algorithm, const nlohmann::json& options,
                                 algorithms::FaultKinds kinds, const std::string& name,
                                 const algorithms::OptionValues* values = nullptr);

// Every checker but liveness.
std::vector<std::string> SafetyCheckers();

}  // namespace electsim
