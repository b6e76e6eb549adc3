// Ring election (Chang & Roberts, 1979) with the usual failure handling.
// Nodes sit on a logical ring in node order (the successor of i is i+1 mod n)
// and each has an election id. An election message carries the largest id it
// has met; it is dropped at any participant with a larger id, so only the
// largest id comes home, and its owner announces itself with an ELECTED
// message that travels once around the ring.
//
// Failures: every ring hop is acknowledged; a hop not acknowledged within
// ack_timeout is re-sent to the same successor, up to ack_retries times, so
// that one lost message does not cut a live node out; a successor that
// acknowledges none of them is marked dead and skipped. The leader
// heartbeats every node directly; a node that hears nothing for
// heartbeat_timeout, or whose round has no result after (ack_retries + 1)
// heartbeat timeouts, starts a new election. Each election round carries an
// epoch (1 + the highest epoch the initiator has seen, kept in stable
// storage): the term reported to checkers and the leader's fencing token.
// As with Bully there is no quorum: a partitioned ring elects one leader per
// side.
#pragma once

#include <string_view>

#include "algorithms/algorithm.h"

namespace algorithms {

// Message types. All carry field "epoch".
inline constexpr std::string_view kRingElection = "ring.election";    // + id (candidate's election id), seq
inline constexpr std::string_view kRingElected = "ring.elected";      // + id, leader (node), seq
inline constexpr std::string_view kRingAck = "ring.ack";              // + seq (echoed); epoch = receiver's highest
inline constexpr std::string_view kRingHeartbeat = "ring.heartbeat";  // + id, leader (node)

// The algorithm, named "ring".
const Algorithm& RingAlgorithm();

}  // namespace algorithms
