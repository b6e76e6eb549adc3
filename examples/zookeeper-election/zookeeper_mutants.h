// Realistic bugs in the recipe's node, each a subclass of the reference
// that overrides one of its steps (electsim/algorithms/mutants.h). The
// "bug" option of the zookeeper algorithm picks one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "electsim/electsim.h"
#include "zookeeper_node.h"

namespace zookeeper {

// The recipe's mutants, in the "bug" option's order.
const std::vector<algorithms::Mutant>& Mutants();

// A node: the reference for bug 0, Mutants()[bug - 1] otherwise.
std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, Config config);

}  // namespace zookeeper
