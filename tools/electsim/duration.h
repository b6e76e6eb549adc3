// Durations as scenarios write them: an integer and a unit ("150ms", "2s").
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sim/types.h"

namespace electsim {

// Accepts ns, us, ms, s and m. A leading sign is accepted only when
// `allow_negative` (clock shifts); otherwise "-5ms" is an error.
absl::StatusOr<sim::TimeNs> ParseDuration(std::string_view text, bool allow_negative = false);

// Integer rendering in the largest exact unit ("1500ms", "2s", "0s").
std::string FormatDuration(sim::TimeNs duration);
// Milliseconds with three decimals, from integer ns: "186.328ms".
std::string FormatMillis(sim::TimeNs duration);
// Seconds with six decimals, from integer ns: "1.234567s".
std::string FormatSeconds(sim::TimeNs time);

}  // namespace electsim
