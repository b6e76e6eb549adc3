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

#include "electsim/algorithms/algorithm.h"

namespace algorithms {

// Message types. Every message carries field "epoch" (the sender's highest
// seen epoch; for coordinator and heartbeat it is the coordinator's epoch).
namespace bully {
// A challenge to every higher id.
struct Election {
  static constexpr sim::RecordType kType{"bully.election", {"epoch", "round"}};
  int64_t epoch = 0;
  int64_t round = 0;
};
// "I am alive and take over", to a lower challenger; round echoed.
struct Answer {
  static constexpr sim::RecordType kType{"bully.answer", {"epoch", "round"}};
  int64_t epoch = 0;
  int64_t round = 0;
};
// The announcement of a new coordinator.
struct Coordinator {
  static constexpr sim::RecordType kType{"bully.coordinator", {"epoch"}};
  int64_t epoch = 0;
};
// The coordinator's periodic re-announcement.
struct Heartbeat {
  static constexpr sim::RecordType kType{"bully.heartbeat", {"epoch"}};
  int64_t epoch = 0;
};
}  // namespace bully
inline constexpr const sim::RecordType& kBullyElection = bully::Election::kType;
inline constexpr const sim::RecordType& kBullyAnswer = bully::Answer::kType;
inline constexpr const sim::RecordType& kBullyCoordinator = bully::Coordinator::kType;
inline constexpr const sim::RecordType& kBullyHeartbeat = bully::Heartbeat::kType;

// The algorithm, named "bully".
const Algorithm& BullyAlgorithm();

}  // namespace algorithms
