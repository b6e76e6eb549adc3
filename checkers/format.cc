#include "checkers/format.h"

#include <cstdint>

#include "fmt/format.h"

namespace checkers {

std::string FormatSeconds(sim::TimeNs time) {
  const int64_t ns = time.ns();
  // Unsigned magnitude: negating INT64_MIN as a signed value would overflow.
  const uint64_t magnitude = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:06}s", ns < 0 ? "-" : "", magnitude / 1000000000u,
                     (magnitude % 1000000000u) / 1000u);
}

std::string NodesPhrase(const std::vector<sim::NodeId>& nodes) {
  if (nodes.empty()) return "no node";
  if (nodes.size() == 1) return fmt::format("node {}", nodes[0].value());
  std::string out = "nodes ";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) out += i + 1 == nodes.size() ? " and " : ", ";
    out += fmt::format("{}", nodes[i].value());
  }
  return out;
}

}  // namespace checkers
