#include "tools/electsim/language/duration.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fmt/format.h"

namespace electsim {
namespace {

constexpr int kMaxFractionDigits = 9;

// Nanoseconds per unit, longest names first so "ms" is not read as "m".
struct Unit {
  std::string_view name;
  int64_t ns;
};
constexpr Unit kUnits[] = {
    {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60LL * 1000000000}, {"h", 3600LL * 1000000000}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

absl::StatusOr<sim::TimeNs> ParseDuration(std::string_view text, bool allow_negative) {
  auto error = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("a duration such as \"150ms\", \"2.5s\" or \"1m30s\"{}, got \"{}\" ({})",
                    allow_negative ? " (a sign is allowed)" : "", text, why));
  };
  // absl::ParseDuration does the arithmetic; it is more lenient than the
  // grammar (bare "0", "inf", ".5s", any number of fraction digits, which it
  // rounds to a quarter nanosecond), so the text is checked here first.
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    if (!allow_negative) return error(text[i] == '-' ? "durations cannot be negative" : "no sign allowed here");
    ++i;
  }
  if (i == text.size()) return error("missing number");
  while (i < text.size()) {
    const size_t number = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == number)
      return error(number == 0 || text[number - 1] == '+' || text[number - 1] == '-'
                       ? "missing number"
                       : "expected a number after the unit");
    uint64_t fraction = 0;
    int fraction_digits = 0;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && IsDigit(text[i])) {
        if (++fraction_digits > kMaxFractionDigits) return error("at most 9 digits after the point");
        fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
        ++i;
      }
      if (fraction_digits == 0) return error("a digit must follow the point");
    }
    const size_t unit_start = i;
    while (i < text.size() && IsLetter(text[i])) ++i;
    const std::string_view unit_name = text.substr(unit_start, i - unit_start);
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit_name) unit = &candidate;
    }
    if (unit == nullptr) {
      return error(unit_name.empty() && i == text.size() ? "missing unit: use ns, us, ms, s, m or h"
                                                         : "unknown unit: use ns, us, ms, s, m or h");
    }
    // Whole nanoseconds, judged on the digits as written.
    uint64_t scale = 1;
    for (int d = 0; d < fraction_digits; ++d) scale *= 10;
    if ((static_cast<unsigned __int128>(fraction) * static_cast<uint64_t>(unit->ns)) % scale != 0) {
      return error("not a whole number of nanoseconds");
    }
  }
  absl::Duration parsed;
  // Only overflow is left to fail here: the text matches the grammar.
  if (!absl::ParseDuration(std::string(text), &parsed)) return error("too large: at most 1000000s");
  if (absl::AbsDuration(parsed) > absl::Seconds(kMaxDurationSeconds)) return error("too large: at most 1000000s");
  return sim::TimeNs(absl::ToInt64Nanoseconds(parsed));
}

}  // namespace electsim
