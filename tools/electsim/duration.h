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

}  // namespace electsim
