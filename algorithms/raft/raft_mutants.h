// Raft's mutants: realistic bugs, each a RaftNode that overrides one step
// (see electsim/algorithms/mutants.h).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "algorithms/raft/raft.h"
#include "electsim/algorithms/mutants.h"

namespace algorithms::raft {

const std::vector<Mutant>& Mutants();

// The node the "bug" option's value picks: 0 the reference, i the mutant
// Mutants()[i - 1].
std::unique_ptr<RaftNode> CreateNode(int64_t bug, sim::NodeId self, RaftConfig config);
// By name ("none" or a mutant's), for tests; a name that is neither fails a check.
std::unique_ptr<RaftNode> CreateNode(std::string_view bug, sim::NodeId self, RaftConfig config);

}  // namespace algorithms::raft
