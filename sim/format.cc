#include "sim/format.h"

#include <cstdint>

#include "fmt/format.h"

namespace sim {
namespace {
// Unsigned magnitude: negating INT64_MIN as a signed value would overflow.
uint64_t Magnitude(int64_t ns) { return ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns); }
const char* Sign(int64_t ns) { return ns < 0 ? "-" : ""; }
}  // namespace

std::string FormatDuration(TimeNs duration) {
  const int64_t ns = duration.ns();
  const uint64_t magnitude = Magnitude(ns);
  if (magnitude == 0) return "0s";
  if (magnitude % 1000000000u == 0) return fmt::format("{}{}s", Sign(ns), magnitude / 1000000000u);
  if (magnitude % 1000000u == 0) return fmt::format("{}{}ms", Sign(ns), magnitude / 1000000u);
  if (magnitude % 1000u == 0) return fmt::format("{}{}us", Sign(ns), magnitude / 1000u);
  return fmt::format("{}{}ns", Sign(ns), magnitude);
}

std::string FormatSeconds(TimeNs time) {
  const uint64_t magnitude = Magnitude(time.ns());
  return fmt::format("{}{}.{:06}s", Sign(time.ns()), magnitude / 1000000000u, (magnitude % 1000000000u) / 1000u);
}

std::string FormatMillis(TimeNs duration) {
  const uint64_t magnitude = Magnitude(duration.ns());
  return fmt::format("{}{}.{:03}ms", Sign(duration.ns()), magnitude / 1000000u, (magnitude % 1000000u) / 1000u);
}

}  // namespace sim
