// A run's summary as one JSON object (`run --json`), in the shape of
// scenarios/schema/summary.schema.json. Times are integer nanoseconds.
#pragma once

#include "nlohmann/json.hpp"
#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

nlohmann::json SummaryJson(const Scenario& scenario, const RunResult& result);

}  // namespace electsim
