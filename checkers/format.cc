#include "checkers/format.h"

#include <cstdint>

#include "fmt/format.h"

namespace checkers {

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
