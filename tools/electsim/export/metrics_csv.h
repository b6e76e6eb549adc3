// `sweep --metrics`: one CSV row per seed (README, "Using it").
#pragma once

#include <string>

#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The header line, and one seed's row (both end in a newline).
std::string MetricsCsvHeader();
std::string MetricsCsvRow(const Scenario& scenario, const RunResult& result);

}  // namespace electsim
