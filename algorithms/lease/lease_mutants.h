// Realistic bugs in the lease node, each a subclass of the reference that
// overrides one of its steps (electsim/algorithms/mutants.h). The lease's
// "bug" option picks one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/lease/lease_node.h"
#include "electsim/algorithms/mutants.h"
#include "electsim/sim/process.h"

namespace algorithms::lease {

// The lease's mutants, in the "bug" option's order.
const std::vector<algorithms::Mutant>& Mutants();

// A lease node: the reference for bug 0, Mutants()[bug - 1] otherwise.
std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, LeaseConfig config);

}  // namespace algorithms::lease
