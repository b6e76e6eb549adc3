// Bully's mutants: realistic bugs, each a subclass of the reference BullyNode
// that overrides one step (see electsim/algorithms/mutants.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/bully/bully_node.h"
#include "electsim/algorithms/mutants.h"
#include "electsim/sim/process.h"
#include "electsim/sim/types.h"

namespace algorithms::bully {

// The mutants, in the order the "bug" option lists them after "none".
const std::vector<Mutant>& Mutants();

// The node the "bug" option's value `bug` runs: 0 the reference, i the
// mutant Mutants()[i - 1].
std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, BullyConfig config);

}  // namespace algorithms::bully
