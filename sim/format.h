// Text for times and durations, from integer nanoseconds only, so a report or
// an error message reads the same on every machine. Shared by every layer.
#pragma once

#include <string>

#include "electsim/sim/types.h"

namespace sim {

// The largest unit that is exact: "1500ms", "2s", "250us", "7ns", "0s", "-3us".
std::string FormatDuration(TimeNs duration);
// Seconds with six decimals, truncated: "1.234567s".
std::string FormatSeconds(TimeNs time);
// Milliseconds with three decimals, truncated: "186.328ms".
std::string FormatMillis(TimeNs duration);

}  // namespace sim
