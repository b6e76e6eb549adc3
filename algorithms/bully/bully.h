// Bully election (Garcia-Molina, 1982): the highest live id becomes
// coordinator. A node that suspects the coordinator (or boots) challenges
// every higher id; any live higher node answers and takes the election over;
// a node nobody higher answers announces itself. Each announcement carries an
// epoch (1 + the highest epoch the node has seen, kept in stable storage),
// which is the term reported to checkers and the leader's fencing token.
//
// There is no quorum: under a partition each side elects its own coordinator.
// That is the algorithm's known weakness, and exactly what the scenarios and
// checkers are there to show.
#pragma once

#include <string_view>

#include "algorithms/algorithm.h"

namespace algorithms {

// Message types. Every message carries field "epoch" (the sender's highest
// seen epoch; for coordinator and heartbeat it is the coordinator's epoch).
inline constexpr std::string_view kBullyElection = "bully.election";        // + round
inline constexpr std::string_view kBullyAnswer = "bully.answer";            // + round (echoed)
inline constexpr std::string_view kBullyCoordinator = "bully.coordinator";  // announcement
inline constexpr std::string_view kBullyHeartbeat = "bully.heartbeat";      // periodic re-announcement

// The algorithm, named "bully".
const Algorithm& BullyAlgorithm();

}  // namespace algorithms
