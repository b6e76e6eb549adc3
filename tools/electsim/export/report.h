// Human-readable summaries of runs.
#pragma once

#include <string>

#include "tools/electsim/engine/runner.h"
#include "tools/electsim/language/scenario.h"

namespace electsim {

// Whether the summary says if the run met its scenario's expectations: left
// out where the run is judged otherwise (check-guarantees, by what its case
// declares).
enum class Expectations { kShown, kLeftOut };

// The multi-line summary `run` and `replay` print (ends with the trace hash).
std::string FormatSummary(const Scenario& scenario, const RunResult& result,
                          Expectations expectations = Expectations::kShown);

}  // namespace electsim
