// Small text helpers for violation messages and reports. Integer arithmetic
// only, so a message reads the same on every machine.
#pragma once

#include <string>
#include <vector>

#include "electsim/sim/types.h"

namespace checkers {

// "node 2", "nodes 1 and 3", "nodes 0, 1 and 4".
std::string NodesPhrase(const std::vector<sim::NodeId>& nodes);

}  // namespace checkers
