// Human-readable summaries of runs.
#pragma once

#include <string>

#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// The multi-line summary `run` and `replay` print (ends with the trace hash).
std::string FormatSummary(const Scenario& scenario, const RunResult& result);

}  // namespace electsim
