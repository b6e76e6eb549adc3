#include "tools/electsim/duration.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace electsim {

absl::StatusOr<sim::TimeNs> ParseDuration(std::string_view text, bool allow_negative) {
  const std::string original(text);
  auto error = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("a duration such as \"150ms\" or \"2s\"{}, got \"{}\" ({})",
                                                  allow_negative ? " (a sign is allowed)" : "", original, why));
  };
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    if (!allow_negative) return error(text[0] == '-' ? "durations cannot be negative" : "no sign allowed here");
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  size_t digits = 0;
  int64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    const int digit = text[digits] - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return error("too large");
    value = value * 10 + digit;
    ++digits;
  }
  if (digits == 0) return error("missing number");
  const std::string_view unit = text.substr(digits);
  int64_t scale;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1000000;
  } else if (unit == "s") {
    scale = 1000000000;
  } else if (unit == "m") {
    scale = 60LL * 1000000000;
  } else {
    return error(unit.empty() ? "missing unit: use ns, us, ms, s or m" : "unknown unit: use ns, us, ms, s or m");
  }
  // A million seconds (11.6 days) is far beyond any election run and keeps
  // every sum of times in a scenario far from int64 overflow.
  constexpr int64_t kMaxNs = 1000000LL * 1000000000LL;
  if (value > kMaxNs / scale) return error("too large: at most 1000000s");
  const int64_t ns = value * scale;
  return sim::TimeNs(negative ? -ns : ns);
}

}  // namespace electsim
