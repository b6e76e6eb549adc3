// Durations as scenarios write them. The grammar (scenarios/README.md):
//
//   duration  = [sign] component {component}     "150ms", "2.05s", "1m30s"
//   component = digits ["." digits] unit         at most 9 digits after the point
//   unit      = "ns" | "us" | "ms" | "s" | "m" | "h"
//   sign      = "+" | "-"                        only where negative durations are allowed
//
// The value must be a whole number of nanoseconds ("1.5ns" is not) and at most
// 1000000s either way. No spaces, no bare numbers ("0" needs a unit), no "inf".
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "electsim/sim/types.h"

namespace electsim {

// The longest duration either way. A million seconds (11.6 days) is far
// beyond any election run and keeps every sum of times in a scenario far
// from int64 overflow.
inline constexpr int64_t kMaxDurationSeconds = 1000000;

// The error message reads after "expected": "a duration such as ..., got
// "TEXT" (WHY)".
absl::StatusOr<sim::TimeNs> ParseDuration(std::string_view text, bool allow_negative = false);

}  // namespace electsim
