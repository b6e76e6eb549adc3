// The shards workload's mutants: realistic bugs kept out of the reference
// replica (see electsim/algorithms/mutants.h).
#pragma once

#include <memory>
#include <vector>

#include "algorithms/shards/shard_replica.h"
#include "electsim/algorithms/mutants.h"

namespace algorithms::shards {

const std::vector<Mutant>& Mutants();
// The reference replica for bug 0, else the mutant.
std::unique_ptr<sim::Process> CreateNode(int64_t bug, sim::NodeId self, ShardsConfig config);

}  // namespace algorithms::shards
